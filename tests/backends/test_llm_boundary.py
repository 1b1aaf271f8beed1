"""The model boundary against real HTTP endpoints: schema-following fake server, dead or hostile
endpoints, lenient parsing, sized requests, structured-output modes, Azure.

The schema-following fake is tests/fakes/schema_provider.py on 127.0.0.1, port 0: it fills every reply
from the JSON schema the request carries and knows nothing else about judgeflow (as
../shared/tools/fake_llm.py does; tests/backends/test_schema_fake.py runs against that one too).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLM, RawArgs, SchemaProvider, Status, moscow, moscow_checks, moscow_claims
from fakes.labelled import factual_rows, faithfulness_rows, spec_rows, write_rows

from judgeflow import Judge, load_criterion
from judgeflow.backends import LLMJudge
from judgeflow.backends.llm import make_client
from judgeflow.cli import main
from judgeflow.errors import ConfigError
from judgeflow.schemas import checks_reply, claims_reply, repair_json

MOSCOW = moscow(reference="1147")
#: an answer that states nothing checkable: an empty claim list for it is a judged 0 in one call
REFUSAL = moscow(answer="I don't know.", reference="1147")


def fake_stats(base: str) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(f"{base}/_fake/stats") as r:
        return json.loads(r.read())


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- against the schema-following fake: every item scored --------------------------------------------

@pytest.mark.parametrize("wire", ["openai", "anthropic"])
@pytest.mark.parametrize("strategy", ["graph", "single"])
def test_schema_following_fake_scores_every_item(tmp_path: Path, wire: str, strategy: str) -> None:
    runs = [("factual", factual_rows(20), []), ("faithfulness", faithfulness_rows(10), []),
            ("spec", spec_rows(5), ["--mode", "spec"])]
    rows: list[dict[str, Any]] = []
    with SchemaProvider(seed=0) as fake:
        base = f"{fake.base_url}/v1" if wire == "openai" else fake.base_url
        for name, given, extra in runs:
            items = write_rows(tmp_path / f"in-{name}.jsonl", given)
            out = tmp_path / f"out-{name}.jsonl"
            code = main(["run", str(items), "-o", str(out), "--model", f"{wire}/fake-judge", "--base-url", base,
                         "--strategy", strategy, "--store", str(tmp_path / "runs.sqlite"), "--no-progress", *extra])
            assert code == 0
            rows += read_rows(out)
    scored = [r for r in rows if r["status"] == "judged"]
    assert len(rows) == 35 and len(scored) / len(rows) >= 0.99, [r["error"] for r in rows if r["error"]][:3]
    assert {r["structured"] for r in rows} == {"tools"}
    assert all(r["claims"] and [c["id"] for c in r["claims"]] == [f"c{i}" for i in range(1, len(r["claims"]) + 1)]
               for r in scored)  # ids assigned by code
    spec = [r for r in rows if r["criterion"] == "spec_compliance"]
    assert spec and all(r["requirements"] for r in spec)  # requirement coverage ran and was read


def test_the_schema_sent_carries_the_constraints() -> None:
    """What the model sees: enums from the criterion, checks keyed by exactly the claim ids, no titles."""
    seen: list[dict[str, Any]] = []
    llm = FakeLLM("openai", [lambda req: seen.append(req) or {"claims": [{"text": "Moscow was founded in 1247.",
                                                                          "kind": "date"}]},
                             lambda req: seen.append(req) or {"c1": {"evidence": "1147", "reason": "r",
                                                                    "basis": "reference", "verdict": "contradicted"}}])
    asks_kinds = load_criterion("factual_correctness").model_copy(update={"ask_kinds": True})
    r = Judge(backend=llm.backend(), criterion=asks_kinds).judge(MOSCOW)
    assert r.label == 1 and r.claims[0].id == "c1"
    dec = seen[0]["tools"][0]["function"]["parameters"]
    claim = dec["properties"]["claims"]["items"]
    assert claim["required"] == ["text", "kind", "quote"] and "id" not in claim["properties"]
    assert "date" in claim["properties"]["kind"]["enum"] and claim["additionalProperties"] is False
    chk = seen[1]["tools"][0]["function"]["parameters"]
    assert chk["required"] == ["c1"] and chk["additionalProperties"] is False
    entry = chk["properties"]["c1"]
    assert list(entry["properties"]) == ["evidence", "reason", "basis", "verdict"]  # decide last
    assert entry["properties"]["verdict"]["enum"] == ["supported", "contradicted", "false_fact", "unverifiable"] \
        or "contradicted" in entry["properties"]["verdict"]["enum"]
    assert "\"title\":" not in json.dumps(dec) and "\"title\":" not in json.dumps(chk)


# --- lenient parsing ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "fix"), [
    ('```json\n{"a": 1}\n```', "code fence"),
    ('Here you go: {"a": 1} Hope this helps.', "text around the JSON object"),
    ('{"a": "line one\nline two"}', "control characters in strings"),
    ('{"a": 1}', None),
])
def test_repair_json(raw: str, fix: str | None) -> None:
    value, fixed = repair_json(raw)
    assert value["a"] in (1, "line one\nline two") and fixed == fix


def test_a_reply_with_a_raw_newline_and_a_fence_is_repaired_not_reasked() -> None:
    claims = '```json\n{"claims": [{"text": "Moscow was founded\nin 1247.", "kind": "date"}]}\n```'
    check = 'Sure! {"c1": {"evidence": "1147", "reason": "the reference\tsays 1147", "basis": "reference", ' \
            '"verdict": "contradicted"}} Done.'

    llm = FakeLLM("openai", [RawArgs(claims), RawArgs(check)])
    r = Judge(backend=llm.backend()).judge(MOSCOW)
    assert r.status == "judged" and r.label == 1
    assert r.usage.repairs == 2 and r.usage.reasks == 0 and r.usage.calls == 2


def test_an_invalid_reply_is_reasked_and_counted() -> None:
    bad = {"c1": {"basis": "reference", "verdict": "wrong"}}
    good = {"c1": {"basis": "reference", "verdict": "supported"}}
    llm = FakeLLM("openai", [moscow_claims(), bad, good])  # the claim the answer makes (1247), nothing dropped
    r = Judge(backend=llm.backend()).judge(MOSCOW)
    assert r.status == "judged" and r.usage.reasks == 1 and r.usage.calls == 3
    assert "verdict 'wrong' is not one of" in json.dumps(llm.requests[2]["messages"])


# --- sized requests -----------------------------------------------------------------------------------

def test_max_tokens_is_sized_to_the_step() -> None:
    short = {**MOSCOW, "answer": "In 1247."}
    long = {**MOSCOW, "id": "long", "answer": "Moscow was founded in 1247 by Yuri Dolgorukiy. " * 12}
    sent: dict[str, list[int]] = {}
    for item in (short, long):
        llm = FakeLLM("openai", [{"claims": [{"text": f"claim {i}", "kind": "date"} for i in range(3)]},
                                 {f"c{i}": {"basis": "reference", "verdict": "supported"} for i in range(1, 4)}])
        Judge(backend=llm.backend()).judge(item)
        sent[item["id"]] = [r["max_tokens"] for r in llm.requests]
    assert sent["moscow"][0] < sent["long"][0] <= 4096  # decompose: from the answer's length
    assert sent["moscow"][1] == sent["long"][1] < 1000  # check: a budget per claim (3 claims each)
    llm = FakeLLM("openai", [{"claims": []}])
    Judge(backend=llm.backend(max_tokens=300)).judge(long)
    assert llm.requests[0]["max_tokens"] == 300  # --max-tokens overrides the sizing


def test_a_reply_cut_off_at_max_tokens_is_asked_again_with_a_larger_budget() -> None:
    llm = FakeLLM("openai", [RawArgs('{"claims": [{"text": "Mosc', cut_off=True), {"claims": []}])
    r = Judge(backend=llm.backend()).judge(REFUSAL)
    assert r.status == "judged" and r.label == 0 and r.usage.reasks == 1
    assert llm.requests[1]["max_tokens"] == 2 * llm.requests[0]["max_tokens"]


@pytest.mark.parametrize("message", [
    "This model's maximum context length is 4096 tokens. However, you requested 8689 tokens",
    "prompt is too long: 210000 tokens > 200000 maximum",
])
def test_a_context_length_error_is_not_retried_and_names_the_fix(message: str) -> None:
    llm = FakeLLM("openai", [Status(400, message)])
    r = Judge(backend=llm.backend(provider_retries=3)).judge(MOSCOW)
    assert r.status == "unscored" and len(llm.requests) == 1
    assert "--max-tokens" in r.error and "--max-source-chars" in r.error


def test_an_oversized_item_is_an_invalid_row(tmp_path: Path) -> None:
    items = tmp_path / "in.jsonl"
    items.write_text(json.dumps(MOSCOW) + "\n" + json.dumps({**MOSCOW, "id": "huge", "reference": "x" * 5000}) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["run", str(items), "-o", str(out), "--max-input-chars", "1000", "--store",
                 str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    rows = {r["id"]: r for r in read_rows(out)}
    assert rows["huge"]["status"] == "invalid" and "--max-input-chars" in rows["huge"]["error"]
    assert rows["moscow"]["status"] == "judged"


# --- structured-output modes --------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "base_url", "expect"), [
    ("openai/gpt-4o-mini", None, "tools_strict"),
    ("openai/local", "http://127.0.0.1:8000/v1", "tools"),
    ("anthropic/claude-x", None, "tools"),
    ("ollama/llama3.1", None, "json_schema"),
])
def test_auto_picks_the_mode_per_endpoint(monkeypatch: pytest.MonkeyPatch, model: str, base_url: str | None,
                                          expect: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert make_client(model, base_url=base_url).structured == expect


@pytest.mark.parametrize(("mode", "where", "check"), [
    ("tools_strict", "tools", lambda b: b["tools"][0]["function"]["strict"] is True),
    ("json_schema", "response_format", lambda b: b["response_format"]["type"] == "json_schema"
     and b["response_format"]["json_schema"]["strict"] is True),
    ("json", "response_format", lambda b: b["response_format"] == {"type": "json_object",
                                                                   "schema": b["response_format"]["schema"]}),
])
def test_each_mode_sends_its_request_shape(mode: str, where: str, check: Callable[[dict], bool]) -> None:
    seen: list[dict[str, Any]] = []

    def reply(req: dict[str, Any]) -> Any:
        seen.append(req)
        return {"claims": []}

    llm = FakeLLM("openai", [reply])
    if mode != "tools_strict":
        llm.replies = [lambda req: (seen.append(req), '{"claims": []}')[1]]
    r = Judge(backend=llm.backend(structured=mode)).judge(REFUSAL)
    assert r.status == "judged" and r.structured == mode and check(seen[0]) and where in seen[0]


def test_auto_falls_back_once_when_the_endpoint_rejects_the_shape(tmp_path: Path) -> None:
    """llama.cpp answers a json_schema/tools shape it does not support with an error naming it."""
    llm = FakeLLM("openai", [Status(500, "tools param requires --jinja flag"),
                             '{"claims": []}', '{"claims": []}'])
    backend = llm.backend()
    r = Judge(backend=backend).judge(REFUSAL)
    assert r.status == "judged" and r.structured == "json"
    assert llm.requests[1]["response_format"]["type"] == "json_object" and "tools" not in llm.requests[1]
    assert backend.client.notes and "falling back to --structured json" in backend.client.notes[0]


# --- systemic failures stop the run -------------------------------------------------------------------

class Hostile:
    """A loopback server answering every request with one status, counting the requests."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.calls = 0
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                outer.calls += 1
                self.rfile.read(int(self.headers.get("content-length") or 0))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def free_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return int(port)


@pytest.mark.parametrize("case", ["401", "404", "refused"])
def test_a_dead_or_hostile_endpoint_stops_the_run_fast(tmp_path: Path, capsys: Any, case: str) -> None:
    items = write_rows(tmp_path / "in.jsonl", factual_rows(20))
    server = None
    if case == "refused":
        base = f"http://127.0.0.1:{free_port()}/v1"
    else:
        server = Hostile(int(case), {"error": {"message": "Incorrect API key provided" if case == "401"
                                               else "The model `x` does not exist", "type": "invalid_request_error"}})
        base = f"{server.url}/v1"
    out = tmp_path / "out.jsonl"
    start = time.monotonic()
    try:
        code = main(["run", str(items), "-o", str(out), "--model", "openai/x", "--base-url", base,
                     "--store", str(tmp_path / "s.sqlite"), "--no-progress"])
    finally:
        if server is not None:
            server.close()
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err
    assert code == 3 and elapsed < 30
    assert err.count("error:") == 1 and "stopped after 3 identical provider failures" in err
    if case == "refused":  # the aiohttp transport calls a refused connect a timeout: the line says what happened
        assert "timed out" not in err and "Connect call failed" in err, err
    if server is not None:
        assert server.calls <= 3  # at most a handful of calls, not 20 items x retries
    rows = read_rows(out)
    assert len(rows) <= 3 and all(r["status"] == "unscored" for r in rows)
    # --resume after the outage re-judges the unscored items (and judges the rest)
    assert main(["run", str(items), "-o", str(out), "--model", "baseline/lexical", "--store",
                 str(tmp_path / "s2.sqlite"), "--no-progress"]) in (0, 1)


def test_resume_rejudges_unscored_items_never_judged_ones(tmp_path: Path) -> None:
    items = tmp_path / "in.jsonl"
    refusals = ["I don't know.", "I do not know.", "No comment."]  # an empty claim list for these is a judged 0
    items.write_text("".join(json.dumps({**MOSCOW, "id": f"m{i}", "answer": refusals[i]}) + "\n"
                             for i in range(3)))  # distinct answers: no item is served from the cache
    out, store = tmp_path / "out.jsonl", tmp_path / "s.sqlite"
    # first run: the judge fails on m1 and m2 (a provider outage), m0 is judged
    replies: list[Any] = [{"claims": []}] + [500] * 2
    llm = FakeLLM("openai", replies)
    args = ["run", str(items), "-o", str(out), "--model", "openai/gpt-fake", "--base-url", "http://llm.test/v1",
            "--store", str(store), "--no-progress", "--concurrency", "1", "--retries", "0"]
    with patched_client(llm):
        assert main(args) == 1  # 2 of 3 unscored: above --max-unscored
    assert [r["status"] for r in read_rows(out)] == ["judged", "unscored", "unscored"]
    llm2 = FakeLLM("openai", [{"claims": []}, {"claims": []}])
    with patched_client(llm2):
        assert main([*args, "--resume"]) == 0
    assert [r["status"] for r in read_rows(out)] == ["judged"] * 3 and len(llm2.requests) == 2


class patched_client:
    """Route every client judgeflow builds through a FakeLLM's MockTransport."""

    def __init__(self, llm: FakeLLM) -> None:
        self.llm = llm

    def __enter__(self) -> None:
        import judgeflow.backends.llm as seam

        self.original = seam.make_client
        llm = self.llm

        def make(model: str, config: Any = None, **kw: Any) -> Any:
            from judgeflow.config import ClientConfig

            config = ClientConfig.of(config, kw)
            return self.original(model, config.model_copy(update={"http_client": llm.http_client(),
                                                                  "api_key": config.api_key or "test"}))

        seam.make_client = make

    def __exit__(self, *exc: object) -> None:
        import judgeflow.backends.llm as seam

        seam.make_client = self.original


def test_bad_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a valid URL"):
        make_client("openai/x", base_url="127.0.0.1:8000/v1")
    with pytest.raises(ConfigError, match="not a valid URL"):
        make_client("openai/x", base_url="http://")


def test_run_help_documents_the_exit_codes(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "exit codes" in out and "3 stopped on a systemic provider error" in " ".join(out.split())


# --- other providers ----------------------------------------------------------------------------------

def test_azure_openai_at_the_http_boundary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    llm = FakeLLM("openai", [moscow_claims(), moscow_checks()])
    client = make_client("azure/my-deployment", base_url="https://res.openai.azure.com",
                         http_client=llm.http_client(), provider_retries=0)
    r = Judge(backend=LLMJudge(client)).judge(MOSCOW)
    assert r.label == 1 and r.structured == "tools_strict"
    assert llm.paths[0] == "/openai/deployments/my-deployment/chat/completions"


@pytest.mark.parametrize(("model", "extra"), [("google/gemini-2.5-flash", "google"), ("bedrock/x", "bedrock"),
                                              ("mistral/mistral-large-latest", "mistral")])
def test_a_missing_optional_sdk_names_the_pip_extra(monkeypatch: pytest.MonkeyPatch, model: str, extra: str) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.split(".")[0] in ("google", "boto3", "mistralai") else real(name, *a))
    with pytest.raises(ConfigError, match=rf"pip install 'judgeflow\[{extra}\]'"):
        make_client(model)


def test_keyed_checks_read_the_older_array_form_too() -> None:
    model = checks_reply(("reference", "none"), ("supported", "contradicted"), ("c1", "c2"))
    ok = model.model_validate({"checks": [{"claim_id": "c2", "verdict": "supported", "basis": "reference"},
                                          {"claim_id": "c1", "verdict": "contradicted", "basis": "reference"}]})
    assert [(c.claim_id, c.verdict) for c in ok.to_checks()] == [("c1", "contradicted"), ("c2", "supported")]
    with pytest.raises(ValueError, match=r"no verdict for claim ids \['c2'\]"):
        model.model_validate({"checks": [{"claim_id": "c1", "verdict": "supported", "basis": "reference"}]})
    assert claims_reply(("date",), 5).model_json_schema()["properties"]["claims"]["maxItems"] == 5


def test_base_url_with_a_from_provider_model_is_refused_not_passed_on() -> None:
    """instructor.from_provider would pass base_url to the create call (TypeError), not to the client
    (google/ takes one: its genai client is built by judgeflow, tests/backends/test_reasoning_gemini.py)."""
    with pytest.raises(ConfigError, match="--base-url is not supported for bedrock/"):
        make_client("bedrock/anthropic.claude-3-haiku", base_url="http://127.0.0.1:1/v1")
