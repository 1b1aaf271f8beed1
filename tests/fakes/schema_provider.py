"""A schema-following fake LLM provider: a real HTTP server on 127.0.0.1 (standard library only).

It answers with a JSON value generated from the JSON schema each request carries and nothing else
(it never reads the prompt), so any judge, criterion or tool runs against it; verdicts come out
random but reproducible: the same `seed` and request body give the same reply.

  OpenAI    POST /v1/chat/completions: `tools` (+ `tool_choice`) -> a tool call;
            `response_format` json_schema -> JSON content; json_object -> JSON content for the
            first JSON schema found in the messages (Instructor's JSON modes put it there).
  Anthropic POST /v1/messages: `tools` (+ `tool_choice`) -> a tool_use block.
  Responses POST /v1/responses: function `tools` -> a function_call output item.
  Gemini    POST /v1beta/models/MODEL:generateContent: `tools` functionDeclarations -> a functionCall
            part; generationConfig.responseSchema (or responseJsonSchema) -> JSON text.

Schemas: objects get every required property (optional ones too), `enum`/`const`, strings within
minLength/maxLength, numbers within minimum/maximum, arrays within minItems/maxItems, `$ref` into
`$defs`/`definitions`, `anyOf`/`oneOf` (a seeded choice), `allOf` (merged), type lists.
Usage is characters / 4. The in-repository stand-in for ../shared/tools/fake_llm.py (which stays an
extra check), with its test-facing features, one module each:
  batch APIs      schema_batches.py: OpenAI Files + Batches, Anthropic Message Batches (polls, expiry,
                  cancel, failed lines), `batch_polls=` / `batch_expire_fraction=`;
  faults          faults.py: `error_rate=` (429 / 500 in turn), `garbage_rate=` (unreadable JSON);
  rate limits     limited.py: `limit=ProviderLimit(rpm=, tpm=, window=)`, the providers' headers;
  latency         `latency=` seconds per online model request;
  model families  model_rules.py: `model_rules=ModelRules()` (--model-rules): each family's parameter
                  rules and error texts, hidden reasoning tokens spent from the completion budget.
`log` holds one entry per request, as fake_llm.py's --log lines: method, path, status, llm (a model
request), batch and custom_id (a batch line), prompt_tokens, fault, request (the body).

    python tests/fakes/schema_provider.py --seed 3   # prints PORT=N, like fake_llm.py
    with SchemaProvider(seed=3) as fake: ... fake.base_url, fake.requests, fake.log
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

try:
    from .faults import Faults, error_body, fault_reply, garble
    from .model_rules import ModelRules, RuleError
    from .schema_batches import SchemaBatches
    from .wire import anthropic_body, openai_body
except ImportError:  # run as a script
    from faults import Faults, error_body, fault_reply, garble  # type: ignore[no-redef]
    from model_rules import ModelRules, RuleError  # type: ignore[no-redef]
    from schema_batches import SchemaBatches  # type: ignore[no-redef]
    from wire import anthropic_body, openai_body  # type: ignore[no-redef]

_WORDS = ["the", "claim", "holds", "per", "source", "because", "stated", "answer", "reference", "text", "fact", "date", "name"]


_PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages", "gemini": "/v1beta/models:generateContent",
          "responses": "/v1/responses"}


class Instance:
    """A value for a JSON schema, drawn from `rng`; `$ref`s resolve against `root`."""

    def __init__(self, root: dict[str, Any], rng: random.Random, depth: int = 8, array_len: int | None = None) -> None:
        self.root, self.rng, self.depth, self.array_len = root, rng, depth, array_len

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        for _ in range(32):
            ref = schema.get("$ref") if isinstance(schema, dict) else None
            if not isinstance(ref, str) or not ref.startswith("#"):
                return schema if isinstance(schema, dict) else {}
            node: Any = self.root
            for part in ref[1:].strip("/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")] if part else node
            schema = {**node, **{k: v for k, v in schema.items() if k != "$ref"}}
        raise ValueError(f"$ref loop at {schema.get('$ref')}")

    def value(self, schema: Any, depth: int = 0) -> Any:
        s = self.resolve(schema)
        if "allOf" in s:
            merged: dict[str, Any] = {k: v for k, v in s.items() if k != "allOf"}
            for part in s["allOf"]:
                part = self.resolve(part)
                merged["properties"] = {**merged.get("properties", {}), **part.get("properties", {})}
                merged["required"] = [*merged.get("required", []), *part.get("required", [])]
                merged.update({k: v for k, v in part.items() if k not in ("properties", "required")})
            return self.value(merged, depth)
        if "const" in s:
            return s["const"]
        if "enum" in s:
            return self.rng.choice(s["enum"])
        for key in ("anyOf", "oneOf"):
            if s.get(key):
                options = s[key] if depth < self.depth else [o for o in s[key] if self.resolve(o).get("type") == "null"] or s[key]
                return self.value(self.rng.choice(options), depth + 1)
        kind = s.get("type")
        if isinstance(kind, list):
            kind = self.rng.choice(kind) if kind else None
        if kind is None:
            kind = "object" if "properties" in s else "array" if "items" in s else "string"
        return getattr(self, "_" + kind)(s, depth)

    def _object(self, s: dict[str, Any], depth: int) -> dict[str, Any]:
        return {name: self.value(sub, depth + 1) for name, sub in (s.get("properties") or {}).items()}

    def _array(self, s: dict[str, Any], depth: int) -> list[Any]:
        low = int(s.get("minItems", 0))
        high = int(s.get("maxItems", max(low, 3)))
        if depth >= self.depth:
            n = low
        elif self.array_len is not None:  # fake_llm.py's --array-len: this many, within the bounds
            n = max(low, min(self.array_len, high))
        else:
            n = self.rng.randint(max(low, min(1, high)), max(low, min(high, low + 2)))
        return [self.value(s.get("items") or {}, depth + 1) for _ in range(n)]

    def _string(self, s: dict[str, Any], depth: int) -> str:
        low, high = int(s.get("minLength", 0)), int(s.get("maxLength", 10**6))
        text = " ".join(self.rng.choice(_WORDS) for _ in range(self.rng.randint(2, 6)))
        while len(text) < low:
            text += " x"
        return text[:high]

    def _integer(self, s: dict[str, Any], depth: int) -> int:
        low = s.get("minimum", s["exclusiveMinimum"] + 1 if "exclusiveMinimum" in s else 0)
        high = s.get("maximum", s["exclusiveMaximum"] - 1 if "exclusiveMaximum" in s else low + 100)
        return self.rng.randint(int(low), int(high))

    def _number(self, s: dict[str, Any], depth: int) -> float:
        low = float(s.get("minimum", s.get("exclusiveMinimum", 0.0)))
        high = float(s.get("maximum", s.get("exclusiveMaximum", low + 1.0)))
        return round(self.rng.uniform(low, high), 4)

    def _boolean(self, s: dict[str, Any], depth: int) -> bool:
        return self.rng.random() < 0.5

    def _null(self, s: dict[str, Any], depth: int) -> None:
        return None


def fake_instance(schema: dict[str, Any], seed: Any = 0) -> Any:
    """A value valid for `schema`, the same for the same seed."""
    return Instance(schema, random.Random(str(seed))).value(schema)


def schema_in_text(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` that looks like a JSON schema (has properties or $defs)."""
    decoder, start = json.JSONDecoder(), text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and ("properties" in obj or "$defs" in obj):
            return obj
        start = text.find("{", start + 1)
    return None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _chosen(tools: list[dict[str, Any]], name: str | None) -> dict[str, Any]:
    return next((t for t in tools if name in (t.get("name"), t.get("function", {}).get("name"))), tools[0])


def openai_reply(body: dict[str, Any], rng: random.Random, array_len: int | None = None) -> dict[str, Any]:
    prompt = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
    tools, choice = body.get("tools") or [], body.get("tool_choice")
    fmt = body.get("response_format") or {}
    if tools and choice != "none":
        name = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
        fn = _chosen(tools, name)["function"]
        data = Instance(fn.get("parameters") or {}, rng, array_len=array_len).value(fn.get("parameters") or {})
        request = {**body, "tools": [{"function": fn}]}
        return openai_body(data, request, (len(prompt + json.dumps(tools)) // 4, len(json.dumps(data)) // 4))
    schema = None
    if fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
    elif fmt.get("type") == "json_object":
        schema = schema_in_text(prompt) or {"type": "object"}
    text = json.dumps(Instance(schema, rng, array_len=array_len).value(schema)) if schema else "fake reply"
    return openai_body(text, body, (len(prompt) // 4, len(text) // 4))


def anthropic_reply(body: dict[str, Any], rng: random.Random, array_len: int | None = None) -> dict[str, Any]:
    system = body.get("system")
    prompt = "\n".join([_text(system) if system else "", *(_text(m.get("content")) for m in body.get("messages", []))])
    tools, choice = body.get("tools") or [], body.get("tool_choice") or {}
    if not tools or choice.get("type") == "none":
        return anthropic_body("fake reply", body, (len(prompt) // 4, 3))
    tool = _chosen(tools, choice.get("name"))
    schema = tool.get("input_schema") or {"type": "object"}
    data = Instance(schema, rng, array_len=array_len).value(schema)
    return anthropic_body(data, {**body, "tools": [tool]}, (len(prompt + json.dumps(tools)) // 4, len(json.dumps(data)) // 4))


def responses_reply(body: dict[str, Any], rng: random.Random, array_len: int | None = None) -> dict[str, Any]:
    items = body.get("input") or []
    prompt = "\n".join([str(body.get("instructions") or ""), *(_text(m.get("content")) for m in items
                                                                if isinstance(m, dict))])
    tools = [t for t in body.get("tools") or [] if t.get("type") == "function"]
    if tools:
        choice = body.get("tool_choice")
        fn = _chosen(tools, choice.get("name") if isinstance(choice, dict) else None)
        data = Instance(fn.get("parameters") or {}, rng, array_len=array_len).value(fn.get("parameters") or {})
        args = json.dumps(data)
        item: dict[str, Any] = {"type": "function_call", "id": "fc_fake", "call_id": "call_1", "name": fn["name"],
                                "arguments": args, "status": "completed"}
        sizes = (len(prompt + json.dumps(tools)) // 4, len(args) // 4)
    else:
        item = {"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "fake reply", "annotations": []}]}
        sizes = (len(prompt) // 4, 3)
    return {"id": "resp_fake", "object": "response", "created_at": 0, "status": "completed", "model": body.get("model"),
            "output": [item], "parallel_tool_calls": False, "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [], "incomplete_details": None, "error": None,
            "usage": {"input_tokens": sizes[0], "output_tokens": sizes[1], "total_tokens": sum(sizes),
                      "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}


def _lowered(schema: Any) -> Any:
    """A Gemini schema (types in capitals, "OBJECT") as JSON schema's lower-case types."""
    if isinstance(schema, list):
        return [_lowered(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: (v.lower() if k == "type" and isinstance(v, str) else _lowered(v)) for k, v in schema.items()}


def gemini_reply(body: dict[str, Any], rng: random.Random, array_len: int | None = None) -> dict[str, Any]:
    texts = [p.get("text", "") for c in [body.get("systemInstruction") or {}, *body.get("contents", [])]
             for p in (c.get("parts") or []) if isinstance(p, dict)]
    prompt = "\n".join(texts)
    config = body.get("generationConfig") or {}
    declarations = [d for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
    if declarations:
        fn = declarations[0]
        schema = _lowered(fn.get("parameters") or fn.get("parametersJsonSchema") or {"type": "object"})
        data = Instance(schema, rng, array_len=array_len).value(schema)
        part: dict[str, Any] = {"functionCall": {"name": fn["name"], "args": data}}
        sizes = (len(prompt + json.dumps(declarations)) // 4, len(json.dumps(data)) // 4)
    else:
        schema = _lowered(config.get("responseSchema") or config.get("responseJsonSchema"))
        text = json.dumps(Instance(schema, rng, array_len=array_len).value(schema)) if schema else "fake reply"
        part, sizes = {"text": text}, (len(prompt) // 4, len(text) // 4)
    return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": sizes[0], "candidatesTokenCount": sizes[1],
                              "totalTokenCount": sum(sizes)},
            "modelVersion": body.get("model", "gemini")}


class SchemaProvider:
    """The server in a background thread. `requests` holds every model request body answered (batch
    lines included), `log` one entry per request (see the module docstring)."""

    def __init__(self, *, seed: Any = 0, latency: float = 0.0, port: int = 0, error_rate: float = 0.0,
                 garbage_rate: float = 0.0, limit: Any = None, batch_polls: int = 1,
                 batch_expire_fraction: float = 0.0, array_len: int | None = None,
                 model_rules: ModelRules | None = None) -> None:
        self.seed, self.latency, self.array_len = seed, latency, array_len
        self.rules = model_rules
        """`model_rules.ModelRules` (or None): requests refused and replies shaped per model family."""
        """`array_len`: items in every generated array the schema allows that many in (None: 1-3, seeded)."""
        self.limit = limit
        """A `limited.ProviderLimit` (or None): online model requests over it get 429, all its headers."""
        self.faults = Faults(error_rate=error_rate, garbage_rate=garbage_rate, seed=seed)
        self.batches = SchemaBatches(self.answer, lambda: self.base_url, seed=seed, polls=batch_polls,
                                     expire_fraction=batch_expire_fraction)
        self.requests: list[dict[str, Any]] = []
        self.log: list[dict[str, Any]] = []
        self.received = 0
        """Requests received, counted on arrival (before the latency), answered or not."""
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def rng_for(self, raw: bytes) -> random.Random:
        return random.Random(hashlib.sha256(f"{self.seed}\0".encode() + raw).hexdigest())

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.log.append(entry)

    def stats(self) -> dict[str, Any]:
        """Totals of the log, as fake_llm.py's /_fake/stats: llm_calls (model requests, 429s included) and
        by_status (every request, by its status as a string)."""
        with self._lock:
            log = list(self.log)
        by_status: dict[str, int] = {}
        for e in log:
            by_status[str(e["status"])] = by_status.get(str(e["status"]), 0) + 1
        return {"llm_calls": sum(1 for e in log if e.get("llm")), "by_status": by_status}

    def answer(self, wire: str, body: dict[str, Any], batch: str | None = None, custom_id: str | None = None,
               raw: bytes | None = None) -> tuple[int, dict[str, Any], str | None]:
        """(status, reply, fault) for one model request (online, or a batch line), logged; the reply
        is drawn from the seed and the request's bytes (a batch line's: its body as sorted JSON)."""
        raw = raw if raw is not None else json.dumps(body, sort_keys=True).encode()
        entry: dict[str, Any] = {"method": "POST", "path": _PATHS[wire], "llm": True, "batch": batch,
                                 "custom_id": custom_id, "request": body}
        structured = bool(body.get("tools") or body.get("response_format")
                          or (body.get("generationConfig") or {}).get("responseSchema"))
        fault = self.faults.draw(structured)
        entry["fault"] = fault
        refused = self._refused(wire, body)
        if refused is not None:
            status, reply = refused.status, refused.body
        elif fault in ("http429", "http500"):
            status, reply, _ = fault_reply(wire, fault)
        else:
            rng = self.rng_for(raw)
            make = {"openai": openai_reply, "anthropic": anthropic_reply, "gemini": gemini_reply,
                    "responses": responses_reply}[wire]
            reply = make(body, rng, self.array_len)
            if self.rules is not None and wire == "gemini":
                reply = self.rules.shape_gemini(str(body.get("model")), body, reply)
            elif self.rules is not None and wire == "responses":
                reply = self.rules.shape_responses(body, reply)
            elif self.rules is not None:
                reply = (self.rules.shape_openai if wire == "openai" else self.rules.shape_anthropic)(body, reply)
            reply, status = garble(reply, rng) if fault == "garbage" else reply, 200
            usage = reply.get("usage") or reply["usageMetadata"]
            entry["prompt_tokens"] = usage.get("prompt_tokens", usage.get("input_tokens", usage.get("promptTokenCount")))
            with self._lock:
                self.requests.append(body)
        entry["status"] = status
        self.record(entry)
        return status, reply, fault

    def _refused(self, wire: str, body: dict[str, Any]) -> RuleError | None:
        """The provider's refusal of this request for its model family (None: accepted, or no rules)."""
        if self.rules is None:
            return None
        try:
            if wire == "gemini":
                self.rules.check_gemini(str(body.get("model")), body)
            elif wire == "responses":
                self.rules.check_responses(body)
            else:
                (self.rules.check_openai if wire == "openai" else self.rules.check_anthropic)(body)
        except RuleError as e:
            return e
        return None

    def reply(self, method: str, path: str, query: dict[str, str], headers: Any,
              raw: bytes) -> tuple[int, Any, dict[str, str]]:
        """(status, JSON value or bytes, headers) for one HTTP request."""
        if "/files" in path or "/batches" in path:
            status, data = self.batches.route(method, path, query, headers.get("Content-Type") or "", raw)
            self.record({"method": method, "path": path, "status": status, "llm": False})
            return status, data, {}
        wire = ("anthropic" if path.endswith("/messages") else "gemini" if path.endswith(":generateContent")
                else "responses" if path.endswith("/responses") else "openai")
        if method != "POST" or not path.endswith(("/chat/completions", "/messages", ":generateContent", "/responses")):
            return 404, error_body(wire, "not_found_error", f"schema fake: no route {method} {path}"), {}
        status, headers_out, error = self.limit.admit(wire, raw) if self.limit else (200, {}, None)
        if status != 200:
            self.record({"method": method, "path": path, "status": status, "llm": True, "fault": "ratelimit"})
            return status, error_body(wire, "rate_limit_error", str(error)), headers_out
        if self.latency:
            time.sleep(self.latency)
        body = json.loads(raw or b"{}")
        if wire == "gemini":  # the model is in the path (models/MODEL:generateContent), not the body
            body = {**body, "model": path.rpartition("/models/")[2].partition(":")[0]}
        status, data, fault = self.answer(wire, body, raw=raw)
        return status, data, {**headers_out, **(fault_reply(wire, fault)[2] if fault == "http429" else {})}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                self._serve(b"")

            def do_DELETE(self) -> None:  # noqa: N802
                self._serve(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def do_POST(self) -> None:  # noqa: N802
                fake.received += 1
                self._serve(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _serve(self, raw: bytes) -> None:
                path, _, qs = self.path.partition("?")
                query = dict(urllib.parse.parse_qsl(qs))
                try:
                    status, data, headers = fake.reply(self.command, path, query, self.headers, raw)
                except (ValueError, KeyError, TypeError, AttributeError) as e:
                    status, data, headers = 400, {"error": {"message": f"schema fake: {e}",
                                                            "type": "invalid_request_error"}}, {}
                out = data if isinstance(data, bytes) else json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream" if isinstance(data, bytes)
                                 else "application/json")
                self.send_header("Content-Length", str(len(out)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(out)

        return Handler

    @property
    def base_url(self) -> str:
        """The root URL; OpenAI clients take base_url + "/v1", Anthropic clients the root."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> SchemaProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--seed", default="0", help="seed for the replies and the faults (default 0)")
    p.add_argument("--latency-ms", type=float, default=0.0, help="milliseconds per online model request")
    p.add_argument("--error-rate", type=float, default=0.0, help="share of model requests answered 429 / 500")
    p.add_argument("--garbage-rate", type=float, default=0.0, help="share of structured replies made unreadable")
    p.add_argument("--array-len", type=int, default=None, help="items in every generated array (default 1-3)")
    p.add_argument("--batch-polls", type=int, default=1, help="a batch ends on its N-th GET (0: at once)")
    p.add_argument("--batch-expire-fraction", type=float, default=0.0, help="last share of a batch left unanswered")
    p.add_argument("--model-rules", action="store_true", help="refuse and answer as each model family does "
                   "(model_rules.py: parameter rules, error texts, hidden reasoning tokens)")
    p.add_argument("--reasoning-scale", type=float, default=1.0, help="reasoning tokens per effort x this")
    p.add_argument("--rpm", type=float, default=0.0, help="requests per rate-limit window (0: no limit)")
    p.add_argument("--tpm", type=float, default=0.0, help="tokens per rate-limit window (0: no limit)")
    p.add_argument("--ratelimit-window-s", type=float, default=60.0, help="the window, in seconds (default 60)")
    args = p.parse_args(argv)
    limit = None
    if args.rpm or args.tpm:
        from limited import (
            ProviderLimit,  # needs httpx2 (limited.py's scripted fake): only when asked for
        )

        limit = ProviderLimit(rpm=args.rpm, tpm=args.tpm, window=args.ratelimit_window_s)
    fake = SchemaProvider(seed=args.seed, latency=args.latency_ms / 1000, port=args.port, error_rate=args.error_rate,
                          garbage_rate=args.garbage_rate, limit=limit, batch_polls=args.batch_polls,
                          batch_expire_fraction=args.batch_expire_fraction, array_len=args.array_len,
                          model_rules=ModelRules(scale=args.reasoning_scale) if args.model_rules else None)
    print(f"PORT={fake.server.server_address[1]}", flush=True)
    try:
        fake.server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
