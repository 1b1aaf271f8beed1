"""A local fake LLM provider: a real HTTP server on 127.0.0.1 with a fixed latency.

It speaks the OpenAI chat-completions wire format (and Anthropic's /v1/messages) with tool calls,
answering judgeflow's requests (Claims, ClaimChecks, SingleJudgment, Commitments) from the prompt alone
(and `tune`'s CriterionEdits with one fixed edit):
claims are the answer's sentences (at most 4), and a claim is `contradicted` when it holds a
digit, else `supported`. Token usage is estimated as characters / 4.

    python tests/fakes/provider.py --latency 0.05      # prints: READY http://127.0.0.1:PORT
    with FakeProvider(latency=0.0) as fake: ... fake.base_url, fake.requests

Used by benchmarks/cpu.py and panels.py (in a separate process, so the server does not compete with
the judge for the interpreter) and by tests that need a server another process can reach.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import email.policy
import json
import re
import socket
import sys
import threading
import time
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

try:
    from .wire import anthropic_body, openai_body
except ImportError:  # run as a script: python tests/fakes/provider.py
    from wire import anthropic_body, openai_body  # type: ignore[no-redef]

_ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)
_LINE = re.compile(r"^([A-Za-z0-9_.:-]+): (.*)$", re.M)  # one `id: text` line an entry
_SENT = re.compile(r"(?<=[.!?])\s+")


def listed_lines(prompt: str, name: str) -> list[tuple[str, str]]:
    """The (id, text) of every `id: text` line in the prompt's last <name> block (claims, slots)."""
    blocks = re.findall(rf"<{name}>\n(.*?)\n</{name}>", prompt, re.S)
    return _LINE.findall(blocks[-1]) if blocks else []


def claim_lines(prompt: str) -> list[tuple[str, str]]:
    """The (id, text) of every claim in a check prompt's <claims> block."""
    return listed_lines(prompt, "claims")


def _claims(answer: str) -> list[dict[str, str]]:
    parts = [s.strip() for s in _SENT.split(answer.strip()) if s.strip()][:4] or [answer.strip() or "empty"]
    return [{"id": f"c{i}", "text": s, "kind": "other"} for i, s in enumerate(parts, 1)]


def _verdict(text: str, prompt: str) -> dict[str, str]:
    basis = "source" if "<source" in prompt else "reference"
    bad = any(ch.isdigit() for ch in text)
    return {"verdict": "contradicted" if bad else "supported", "basis": basis,
            "evidence": "", "reason": "fake provider"}


def answer_for(tool: str, prompt: str) -> dict[str, Any]:
    """The tool arguments judgeflow expects for request `tool`, from the user prompt."""
    if tool == "ClaimChecks":
        return {"checks": [{"claim_id": cid, **_verdict(text, prompt)}
                           for cid, text in claim_lines(prompt)]}
    if tool == "Commitments":  # commit-first: this fake knows nothing, so every claim ends unverifiable
        return {cid: {"values": ""} for cid, _ in listed_lines(prompt, "slots")}
    if tool == "CriterionEdits":  # `judgeflow tune`'s editor: one edit that always applies
        return {"edits": [{"field": "not_errors", "action": "add", "new": "correct extra details",
                           "addresses": [], "why": "fake provider"}]}
    found = _ANSWER.findall(prompt)  # the last one: the system prompt may name the tag too
    claims = _claims(found[-1] if found else "")
    if tool == "SingleJudgment":
        return {"claims": [{**c, **_verdict(c["text"], prompt)} for c in claims]}
    return {"claims": claims}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _prompt(body: dict[str, Any]) -> str:
    system = body.get("system")
    return "\n".join([_text(system) if system else "", *(_text(m.get("content")) for m in body.get("messages", []))])


def openai_reply(body: dict[str, Any]) -> dict[str, Any]:
    tool = body["tools"][0]["function"]["name"]
    prompt = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
    data = answer_for(tool, prompt)
    return openai_body(data, body, (len(prompt) // 4, len(json.dumps(data)) // 4))


def anthropic_reply(body: dict[str, Any]) -> dict[str, Any]:
    prompt = _prompt(body)
    data = answer_for(body["tools"][0]["name"], prompt)
    return anthropic_body(data, body, (len(prompt) // 4, len(json.dumps(data)) // 4))


def _multipart_file(content_type: str, raw: bytes) -> tuple[str, bytes]:
    """(file name, content) of the multipart upload's `file` part."""
    msg = BytesParser(policy=email.policy.default).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    for part in msg.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_filename() or "upload", part.get_payload(decode=True)
    raise ValueError("no file part")


class FakeBatches:
    """OpenAI Batch API and Anthropic Message Batches, answered with the same fake replies.

    A batch reports in progress for `polls` status checks, then finished. `corrupt` maps an
    item token (e.g. "Item-003") to tool arguments sent instead of a valid reply for it.
    """

    def __init__(self, base_url: Any) -> None:
        self.base_url = base_url
        self.polls = 1
        self.corrupt: dict[str, Any] = {}
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.submitted: list[list[str]] = []
        """custom_ids of each batch, in submission order."""
        self.deleted: list[str] = []
        """ids of the files and message batches deleted."""
        self.names: dict[str, str] = {}
        """file id -> the name it was uploaded under."""
        self.stall_create: threading.Event | None = None
        """When set to an Event: a batch create waits for it, then fails without creating anything (a
        client killed meanwhile leaves its uploaded input file behind)."""
        self.create_calls = 0
        self.damage: Any = None
        """When set: a function applied once to the lines of the next batch output served (a torn or
        malformed line, as a provider's file can hold); later outputs are served as they are."""

    def _reply(self, body: dict[str, Any], make: Any) -> dict[str, Any]:
        reply = make(body)
        text = json.dumps(body.get("messages"))
        for token, args in self.corrupt.items():
            if token in text:
                if "choices" in reply:
                    reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = json.dumps(args)
                else:
                    reply["content"][0]["input"] = args
        return reply

    def route(self, method: str, path: str, headers: Any, raw: bytes) -> tuple[int, Any]:
        n = len(self.batches) + 1
        if method == "POST" and path == "/v1/files":
            fid = f"file-{len(self.files) + 1}"
            self.names[fid], self.files[fid] = _multipart_file(headers["Content-Type"], raw)
            return 200, self._file(fid)
        if method == "GET" and path == "/v1/files":  # newest first, one page
            live = [f for f in reversed(self.files) if f not in self.deleted and f in self.names]
            return 200, {"object": "list", "data": [self._file(f) for f in live], "has_more": False,
                         "first_id": live[0] if live else None, "last_id": live[-1] if live else None}
        if method == "POST" and path == "/v1/batches":
            req = json.loads(raw)
            lines = [json.loads(x) for x in self.files[req["input_file_id"]].decode().splitlines() if x.strip()]
            out = [{"id": f"req-{i}", "custom_id": x["custom_id"], "error": None,
                    "response": {"status_code": 200, "request_id": f"r{i}", "body": self._reply(x["body"], openai_reply)}}
                   for i, x in enumerate(lines)]
            self.files[f"file-out-{n}"] = "".join(json.dumps(o) + "\n" for o in out).encode()
            self.submitted.append([x["custom_id"] for x in lines])
            self.batches[f"batch_{n}"] = {"polls": 0, "kind": "openai", "output": f"file-out-{n}", "n": len(lines),
                                          "input": req["input_file_id"], "metadata": req.get("metadata")}
            return 200, self._openai_batch(f"batch_{n}")
        if method == "GET" and path == "/v1/batches":  # newest first, one page
            data = [self._openai_batch(b) for b in reversed(self.batches) if self.batches[b]["kind"] == "openai"]
            return 200, {"object": "list", "data": data, "has_more": False,
                         "first_id": data[0]["id"] if data else None, "last_id": data[-1]["id"] if data else None}
        if method == "GET" and path.startswith("/v1/batches/"):
            return 200, self._openai_batch(path.rsplit("/", 1)[1], poll=True)
        if method == "GET" and path.startswith("/v1/files/") and path.endswith("/content"):
            return 200, self._damaged(self.files[path.split("/")[3]])
        if method == "POST" and path == "/v1/messages/batches":
            reqs = json.loads(raw)["requests"]
            results = [{"custom_id": r["custom_id"], "result": {"type": "succeeded",
                        "message": self._reply(r["params"], anthropic_reply)}} for r in reqs]
            self.submitted.append([r["custom_id"] for r in reqs])
            self.batches[f"msgbatch_{n}"] = {"polls": 0, "kind": "anthropic", "results": results, "n": len(reqs)}
            return 200, self._anthropic_batch(f"msgbatch_{n}")
        if method == "GET" and path.startswith("/v1/messages/batches/") and path.endswith("/results"):
            results = self.batches[path.split("/")[4]]["results"]
            return 200, self._damaged("".join(json.dumps(r) + "\n" for r in results).encode())
        if method == "GET" and path.startswith("/v1/messages/batches/"):
            return 200, self._anthropic_batch(path.rsplit("/", 1)[1], poll=True)
        if method == "DELETE" and path.startswith("/v1/files/"):
            self.deleted.append(path.rsplit("/", 1)[1])
            return 200, {"id": path.rsplit("/", 1)[1], "object": "file", "deleted": True}
        if method == "DELETE" and path.startswith("/v1/messages/batches/"):
            self.deleted.append(path.rsplit("/", 1)[1])
            return 200, {"id": path.rsplit("/", 1)[1], "type": "message_batch_deleted"}
        return 404, {"error": {"message": f"fake provider: no route {method} {path}"}}

    def _damaged(self, raw: bytes) -> bytes:
        if self.damage is None:
            return raw
        lines, self.damage = self.damage(raw.decode().splitlines()), None
        return "\n".join(lines).encode()

    def _file(self, fid: str) -> dict[str, Any]:
        return {"id": fid, "object": "file", "bytes": len(self.files[fid]), "created_at": int(time.time()),
                "filename": self.names[fid], "purpose": "batch", "status": "processed"}

    def _done(self, bid: str, poll: bool) -> bool:
        b = self.batches[bid]
        if poll:
            b["polls"] += 1
        return b["polls"] > self.polls

    def _openai_batch(self, bid: str, poll: bool = False) -> dict[str, Any]:
        b, done = self.batches[bid], self._done(bid, poll)
        return {"id": bid, "object": "batch", "endpoint": "/v1/chat/completions", "input_file_id": b["input"],
                "completion_window": "24h", "status": "completed" if done else "in_progress",
                "created_at": int(time.time()), "metadata": b.get("metadata"),
                "output_file_id": b["output"] if done else None, "error_file_id": None,
                "request_counts": {"total": b["n"], "completed": b["n"] if done else 0, "failed": 0}}

    def _anthropic_batch(self, bid: str, poll: bool = False) -> dict[str, Any]:
        b, done = self.batches[bid], self._done(bid, poll)
        return {"id": bid, "type": "message_batch", "processing_status": "ended" if done else "in_progress",
                "request_counts": {"processing": 0 if done else b["n"], "succeeded": b["n"] if done else 0,
                                   "errored": 0, "canceled": 0, "expired": 0},
                "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z",
                "ended_at": "2026-01-01T00:01:00Z" if done else None, "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"{self.base_url()}/v1/messages/batches/{bid}/results" if done else None}


class FakeProvider:
    """The server, run in a background thread. `requests` holds every request body received."""

    def __init__(self, *, latency: float = 0.0, port: int = 0, limit: Any = None) -> None:
        self.latency = latency
        self.limit = limit
        """A `limited.ProviderLimit`: model requests over it get 429 (all replies its headers)."""
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.batch = FakeBatches(lambda: self.base_url)
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                with fake._lock:
                    self._send(*fake.batch.route("GET", self.path.split("?")[0], self.headers, b""))

            def do_DELETE(self) -> None:  # noqa: N802
                with fake._lock:
                    self._send(*fake.batch.route("DELETE", self.path.split("?")[0], self.headers, b""))

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                stall = fake.batch.stall_create
                if self.path.endswith("/v1/batches") and stall is not None:
                    fake.batch.create_calls += 1
                    stall.wait(60)
                    self._send(503, {"error": {"message": "fake provider: the batch create stalled"}})
                    return
                if "/batches" in self.path or self.path.endswith("/files"):
                    with fake._lock:
                        self._send(*fake.batch.route("POST", self.path, self.headers, raw))
                    return
                body = json.loads(raw or b"{}")
                wire = "anthropic" if self.path.endswith("/messages") else "openai"
                status, headers, error = fake.limit.admit(wire, raw) if fake.limit else (200, {}, None)
                with fake._lock:
                    fake.statuses.append(status)
                    if status == 200:
                        fake.requests.append(body)
                if status != 200:
                    self._send(status, {"error": {"message": error, "type": "rate_limit_error"}}, headers)
                    return
                if fake.latency:
                    time.sleep(fake.latency)
                if self.path.endswith("/chat/completions"):
                    self._send(200, openai_reply(body), headers)
                elif self.path.endswith("/messages"):
                    self._send(200, anthropic_reply(body), headers)
                else:
                    self._send(404, {"error": {"message": f"fake provider: no route {self.path}"}})

            def setup(self) -> None:
                super().setup()
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _send(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
                raw = data if isinstance(data, bytes) else json.dumps(data).encode()
                extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
                head = (f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                        f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n{extra}\r\n")
                self.wfile.write(head.encode() + raw)  # one write: no Nagle / delayed-ACK stall

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256  # the default 5 drops SYNs when 16+ clients connect at once

            def handle_error(self, request: Any, client_address: Any) -> None:
                # a client that went away (or a closed socket file on 3.10) is fine
                if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, OSError, ValueError)):
                    super().handle_error(request, client_address)

        self.server = Server(("127.0.0.1", port), Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The root URL; OpenAI clients take base_url + "/v1", Anthropic clients the root."""
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_async_fake(latency: float, slots: int = 0) -> tuple[Any, str]:
    """This file's --asyncio server in its own process (stops when the parent closes its stdin):
    (process, base URL). For benchmarks: little CPU per request, so the rate measures the client.
    `slots`: model requests computed at once (the others wait their turn, as in llama.cpp); 0: all."""
    import subprocess
    from pathlib import Path

    proc = subprocess.Popen([sys.executable, str(Path(__file__)), "--latency", str(latency), "--asyncio",
                             "--slots", str(slots)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("READY "):
        proc.kill()
        raise SystemExit(f"fake provider did not start: {line!r}")
    return proc, line.split()[1]


def stop_async_fake(proc: Any) -> None:
    """Stop a server from `start_async_fake`: close its stdin (its signal to exit), then make sure."""
    if proc.stdin:
        proc.stdin.close()
    proc.terminate()
    proc.wait(timeout=10)


async def serve_async(latency: float, port: int = 0, slots: int = 0) -> None:
    """The same model replies from one asyncio loop (no thread per connection): the benchmark's server.
    With `slots`, at most that many requests are computed (`latency`) at once; the rest wait in turn."""
    slot = asyncio.Semaphore(slots) if slots else contextlib.nullcontext()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                length = next((int(v) for k, _, v in (x.partition(":") for x in lines[1:])
                               if k.strip().lower() == "content-length"), 0)
                body = json.loads(await reader.readexactly(length) or b"{}")
                async with slot:
                    await asyncio.sleep(latency)
                data = anthropic_reply(body) if path.endswith("/messages") else openai_reply(body)
                raw = json.dumps(data).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             + f"Content-Length: {len(raw)}\r\n\r\n".encode() + raw)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=256)
    print(f"READY http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    loop = asyncio.get_running_loop()
    eof = loop.run_in_executor(None, sys.stdin.read)  # stop when the parent goes away
    async with server:
        await eof


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency", type=float, default=0.05, help="seconds per request (default 0.05)")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--stdin-eof-exit", action="store_true", help="stop when stdin closes (the parent exited)")
    p.add_argument("--asyncio", action="store_true",
                   help="serve model calls only, from one asyncio loop (less CPU per request; implies --stdin-eof-exit)")
    p.add_argument("--slots", type=int, default=0, help="with --asyncio: requests computed at once (default 0: all)")
    args = p.parse_args()
    if args.asyncio:
        asyncio.run(serve_async(args.latency, args.port, args.slots))
        return
    fake = FakeProvider(latency=args.latency, port=args.port)
    print(f"READY {fake.base_url}", flush=True)
    if args.stdin_eof_exit:
        threading.Thread(target=lambda: (sys.stdin.read(), fake.server.shutdown()), daemon=True).start()
    try:
        fake.server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
