"""Issue 25 (items 2, 6, 8, 9, 13, 14a): what a hostile or broken endpoint may not do to a run.

The endpoints are real servers on 127.0.0.1 (tests/fakes/hostile.py writes raw bytes: a reply
that trickles in, a body cut off, an error echoing the key) reached by the real SDKs over both
transports, or scripted replies behind an httpx MockTransport (tests/fakes/scripted.py).
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from fakes import FakeLLM, moscow
from fakes.hostile import HostileServer, dropped, trickle

from judgeflow import Judge
from judgeflow.backends.llm import make_client
from judgeflow.errors import LLMError
from judgeflow.schemas import claims_reply

Claims = claims_reply(("other",))

MESSAGES = [{"role": "user", "content": "Split into claims: Moscow was founded in 1247."}]
TRANSPORTS = ["httpx", "aiohttp"]


def completion(args: dict, name: str = "Claims") -> bytes:
    return json.dumps({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                     "tool_calls": [{"id": "call_1", "type": "function",
                                     "function": {"name": name, "arguments": json.dumps(args)}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}).encode()


def ask(url: str, transport: str, **options) -> tuple[BaseException | Claims, float]:
    """One typed call (no retries unless `options` say so) against `url`: (its result or error, seconds it
    took); gives up at 60 s."""
    options = {"provider_retries": 0, "max_retries": 0, **options}
    client = make_client("openai/m", base_url=url + "/v1", api_key="sk-test-key-0123456789", http_transport=transport,
                         **options)

    async def once() -> Claims:
        try:
            return await asyncio.wait_for(client.ask(Claims, MESSAGES), 60)
        finally:
            await client.aclose()

    start = time.monotonic()
    try:
        result: BaseException | Claims = asyncio.run(once())
    except Exception as e:  # noqa: BLE001 - the error is what is checked
        result = e
    return result, time.monotonic() - start


# 2. --timeout is a deadline for the whole reply ---------------------------------------------------

@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_reply_trickling_in_is_cut_at_the_timeout(transport: str) -> None:
    body = completion({"claims": [{"text": "Moscow was founded in 1247.", "kind": "other"}]})
    slow = trickle(body, every=0.2)  # never idle for 1 s; all of it would take ~80 s
    with HostileServer(slow) as server:
        result, _ = ask(server.url, transport, timeout=1.0)
        deadline = time.monotonic() + 10
        while not slow.cut and time.monotonic() < deadline:  # the server notices the close on its next byte
            time.sleep(0.05)
    assert isinstance(result, LLMError) and "timed out" in str(result).lower(), result
    assert len(slow.cut) == 1 and slow.cut[0] < 5, slow.cut  # cut at the 1 s deadline (a loaded machine: later)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_reply_within_the_timeout_is_read(transport: str) -> None:
    body = completion({"claims": [{"text": "Moscow was founded in 1247.", "kind": "other"}]})
    with HostileServer(trickle(body, every=0.0)) as server:
        result, _ = ask(server.url, transport, timeout=5.0)
    assert isinstance(result, Claims) and result.claims[0].text == "Moscow was founded in 1247."


# 8. the key judgeflow sent is masked by value, whatever its shape ----------------------------------

def _recorded(tmp_path) -> str:
    import sqlite3

    text = (tmp_path / "out.jsonl").read_text() if (tmp_path / "out.jsonl").exists() else ""
    db = sqlite3.connect(tmp_path / "runs.sqlite")
    for table in ("runs", "results", "cache"):
        text += json.dumps(db.execute(f"SELECT * FROM {table}").fetchall())
    return text


@pytest.mark.parametrize("key", ["AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW",  # Google
                                 "tgp_v1_Xk3vQm9sLp2WzR8tYb5NcE7hJf4Ad6Gu",     # Together
                                 "Qx7Lm2Vb9Rt4Kp8Wz3Nc6Hy1Jd5Fg0Sa",             # Mistral-like: no prefix at all
                                 "vllm-local-7c1e94b2a8f3"])                      # a vLLM server's --api-key
def test_a_key_echoed_without_bearer_is_masked_in_rows_store_stderr_and_logs(tmp_path, monkeypatch, capsys, caplog,
                                                                            key: str) -> None:
    import logging

    from fakes.hostile import echoing

    from judgeflow.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", key)
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps(moscow(id=f"q{i}")) + "\n" for i in range(2)))
    with caplog.at_level(logging.DEBUG), HostileServer(echoing(400)) as server:
        code = main(["run", str(inp), "-o", str(tmp_path / "out.jsonl"), "--model", "openai/judge",
                     "--base-url", server.url + "/v1", "--store", str(tmp_path / "runs.sqlite"), "--no-progress",
                     "--trace", "--retries", "0", "--concurrency", "1"])
        assert server.requests[0][2]["authorization"] == f"Bearer {key}"  # the real key went out
    assert code == 1
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert "Incorrect API key provided: ***" in rows[0]["error"]  # the echo is there, the key is not
    everything = _recorded(tmp_path) + capsys.readouterr().err + caplog.text
    assert key[:8] not in everything


def test_the_start_of_a_known_key_is_masked_and_a_short_key_only_whole() -> None:
    from judgeflow.redact import redact, remember_secret

    remember_secret("AIzaSyQ9w8e7r6t5y4u3i2o1pLkJhGfDsA")
    assert redact("key AIzaSyQ9w8e7r6... is invalid") == "key ***... is invalid"
    assert redact("AIzaSyQ9w8e7r6t5y4u3i2o1pLkJhGfDsA.") == "***."
    remember_secret("hunter2hunter")  # a short local key: masked whole, its start is any text
    assert redact("hunter2hunter and hunter2h") == "*** and hunter2h"
    remember_secret("ollama")  # placeholders are not secrets
    assert redact("ollama/llama3.1") == "ollama/llama3.1"


# 9. --batch sends the credentials in --base-url, never their mask -------------------------------------

@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_batch_sends_the_real_credentials_of_the_base_url(tmp_path, monkeypatch, capsys, provider: str) -> None:
    import base64

    from fakes import FakeProvider

    from judgeflow.cli import main

    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps(moscow(id=f"q{i}")) + "\n" for i in range(2)))
    with FakeProvider() as fake:
        seen: list[str] = []
        route = fake.batch.route

        def recording(method: str, path: str, headers, raw: bytes):
            if not path.endswith("/results"):  # the fake's own results_url has no credentials in it
                seen.append(headers.get("Authorization"))
            return route(method, path, headers, raw)

        monkeypatch.setattr(fake.batch, "route", recording)
        real = "Basic " + base64.b64encode(b"judge:s3cret-pass-123").decode()
        url = fake.base_url.replace("http://", "http://judge:s3cret-pass-123@") + ("/v1" if provider == "openai" else "")
        store = ["--store", str(tmp_path / "runs.sqlite")]
        assert main(["run", str(inp), "-o", str(tmp_path / "out.jsonl"), "--model", f"{provider}/judge",
                     "--base-url", url, *store, "--no-progress", "--batch"]) == 0
        run_id = capsys.readouterr().err.split("judgeflow batch collect ")[1].split()[0]
        assert seen and set(seen) == {real}, set(seen)  # the upload and the submission
        assert main(["batch", "collect", run_id, *store]) == 2  # the store keeps no password: ask for the URL
        assert "give the same URL again with --base-url" in capsys.readouterr().err
        assert main(["batch", "collect", run_id, *store, "--base-url", url, "--wait", "0.01"]) == 0
    assert len(seen) >= 6 and set(seen) == {real}, set(seen)
    assert "s3cret-pass-123" not in _recorded(tmp_path)


# 13. a dropped reply is not "cannot connect"; out of file descriptors is not the endpoint -----------

@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_connection_dropped_mid_body_on_the_first_call_is_not_a_bad_base_url(transport: str) -> None:
    with HostileServer(dropped()) as server:
        result, _ = ask(server.url, transport)
        again, _ = ask(server.url, transport, provider_retries=1)
        assert len(server.requests) == 1 + 2  # a transient failure: the SDK's retry was taken
    for error in (result, again):
        assert isinstance(error, LLMError), error
        assert "cannot connect" not in str(error) and "--base-url" not in str(error), str(error)
        assert "provider error after retries: APIConnectionError" in str(error)


EMFILE_SCRIPT = """
import asyncio, os, resource, sys
from judgeflow.backends.llm import make_client
from judgeflow.schemas import claims_reply

async def main(transport):
    # the loopback fake stands in for a provider's API: a given timeout keeps every request in flight at
    # once (a local endpoint without one is paced, one request at a time to start: no new sockets)
    client = make_client("openai/m", base_url=sys.argv[1] + "/v1", api_key="k", provider_retries=0, max_retries=0,
                         http_transport=transport, timeout=60)
    ask = lambda: client.ask(claims_reply(("other",)), [{"role": "user", "content": "hi"}])
    await ask()  # the client is built and one connection is open and idle
    busy = len(os.listdir("/proc/self/fd")) - 1
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (busy, limits[1]))
    try:
        for r in await asyncio.gather(*(ask() for _ in range(5)), return_exceptions=True):
            print(transport, "|", type(r).__name__, "|", r)  # one takes the idle connection; the others need a new socket
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)
        await client.aclose()

for transport in sys.argv[2:]:  # each transport with a client of its own, in one process
    asyncio.run(main(transport))
"""


@pytest.mark.slow
def test_too_many_open_files_is_reported_as_a_local_limit(tmp_path) -> None:
    import os
    import subprocess
    import sys

    from fakes import FakeProvider

    script = tmp_path / "emfile.py"
    script.write_text(EMFILE_SCRIPT)
    with FakeProvider() as fake:  # one child for both transports (a child's start-up was most of its CPU)
        proc = subprocess.run([sys.executable, str(script), fake.base_url, *TRANSPORTS], capture_output=True,
                              text=True, timeout=120, check=False,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    lines = proc.stdout.splitlines()
    assert len(lines) == 5 * len(TRANSPORTS), proc.stdout + proc.stderr
    for transport in TRANSPORTS:
        first, *rest = (line.partition(" | ")[2] for line in lines if line.startswith(f"{transport} |"))
        assert first.startswith("Claims |"), (transport, proc.stdout + proc.stderr)
        assert len(rest) == 4, (transport, proc.stdout)
        for line in rest:
            assert "ran out of file descriptors" in line and "ulimit -n" in line, (transport, line)
            assert "cannot connect" not in line and "unparseable" not in line, (transport, line)


# 6. a reply's list is cut to its schema's bound ----------------------------------------------------------

@pytest.mark.parametrize("strategy", ["graph", "single"])
def test_ten_thousand_claims_to_a_two_word_answer_are_cut_to_the_bound(strategy: str) -> None:
    listed = [{"text": f"Moscow, 1147: claim {i}.", "kind": "other", "evidence": "", "reason": "r",
               "basis": "reference", "verdict": "supported"} for i in range(10_000)]

    def check_all(request: dict) -> dict:  # a verdict for every claim asked about
        ids = request["tools"][0]["function"]["parameters"]["required"]
        return {i: {"evidence": "", "reason": "r", "basis": "reference", "verdict": "supported"} for i in ids}

    llm = FakeLLM("openai", [{"claims": listed}, check_all] if strategy == "graph" else [{"claims": listed}])
    judge = Judge(backend=llm.backend(), strategy=strategy)
    result = judge.judge(moscow(answer="Moscow, 1147."))
    bound = llm.requests[0]["tools"][0]["function"]["parameters"]["properties"]["claims"]["maxItems"]
    assert bound == 4 and len(result.claims) == bound
    assert result.usage.over_bound == 10_000 - bound and result.usage.calls == len(llm.requests)
    assert f"{10_000 - bound} more listed beyond the reply's bound were cut, not checked" in result.reason
    if strategy == "graph":
        assert len(llm.requests) == 2 and len(check_all(llm.requests[1])) == bound  # one check call, 4 claims


# 14a. a tool call to another function is not judged ------------------------------------------------------

@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_tool_call_to_another_function_is_unscored(provider: str) -> None:
    """The arguments would answer the request; the tool named is another one: not judged."""
    from fakes.provider import anthropic_reply, openai_reply

    def other_tool(request: dict) -> dict:
        if provider == "openai":
            body = openai_reply(request)
            body["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = "delete_all_files"
        else:
            body = anthropic_reply(request)
            body["content"][0]["name"] = "delete_all_files"
        return body

    llm = FakeLLM(provider)
    llm.handler = _serving(llm, other_tool)  # whole reply bodies: the tool's name is what is wrong
    result = Judge(backend=llm.backend(max_retries=1)).judge(moscow())
    assert result.status == "unscored" and result.label is None, result
    assert "called the tool 'delete_all_files'" in result.error and len(llm.requests) == 2  # re-asked once


def _serving(llm: FakeLLM, reply):
    import httpx2

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        llm.requests.append(body)
        return httpx2.Response(200, json=reply(body))

    return handler


def test_two_keys_with_one_start_are_both_masked_whole() -> None:
    from judgeflow.redact import redact, remember_secret

    remember_secret("sk-same-start-key-one-0123456789")
    remember_secret("sk-same-start-SECRET-two-987654")
    assert redact("sent sk-same-start-SECRET-two-987654 and sk-same-start-SECRET-tw...") == "sent *** and ***..."
