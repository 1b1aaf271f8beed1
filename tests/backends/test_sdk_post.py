"""The prepared POST (backends/sdk_post.py) sends what the OpenAI SDK's own `post` sends, and ends
the way the SDK's request loop ends for the same replies: the same retries (with the same
`x-stainless-retry-count` headers and back-off arguments), the same reply bytes, the same error
classes and messages. Checked against the real SDK over an httpx2 MockTransport."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import openai
import pytest

from judgeflow.backends.sdk_post import prepared_post

PATH = "/chat/completions"
BODY = {"model": "m", "messages": [{"role": "user", "content": "é <x> \"q\""}], "max_tokens": 30,
        "tool_choice": {"type": "function", "function": {"name": "Claims"}}}
OK = {"id": "r", "object": "chat.completion", "created": 1, "model": "m", "choices": []}


class Replies:
    """A MockTransport handler: each request gets the next scripted reply (a status code, a
    (status, headers) pair, or an exception class to raise)."""

    def __init__(self, script: list[Any]) -> None:
        self.script = list(script)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        step = self.script.pop(0) if self.script else 200
        if isinstance(step, type) and issubclass(step, Exception):
            raise step("scripted failure", request=request)
        status, headers = step if isinstance(step, tuple) else (step, {})
        body = OK if status == 200 else {"error": {"message": f"scripted {status}", "type": "x"}}
        return httpx2.Response(status, json=body, headers=headers)


def _client(replies: Replies, **options: Any) -> openai.AsyncOpenAI:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(replies))
    return openai.AsyncOpenAI(api_key="sk-test", base_url="http://fake.test/v1", http_client=http,
                              **{"max_retries": 2, **options})


async def _warm(raw: openai.AsyncOpenAI, replies: Replies) -> None:
    """One call through the SDK: it fills in the platform headers the prepared POST reuses."""
    replies.script.insert(0, (200, {"set-cookie": "session=abc; Path=/"}))
    await raw.post(PATH, body=BODY, cast_to=bytes)
    replies.requests.clear()


def _sent(request: httpx2.Request) -> tuple[Any, ...]:
    return (request.method, str(request.url), list(request.headers.multi_items()), request.content,
            request.extensions.get("timeout"))


@pytest.mark.parametrize("timeout", [120.0, httpx2.Timeout(30.0, connect=5.0)])
def test_the_prepared_request_is_the_one_the_sdk_sends(timeout: Any) -> None:
    async def go() -> tuple[Any, Any, bytes, bytes]:
        replies = Replies([])
        raw = _client(replies, timeout=timeout)
        await _warm(raw, replies)
        sdk = await raw.post(PATH, body=BODY, cast_to=bytes)
        post = prepared_post(raw, PATH)
        assert post is not None
        ours = await post(BODY)
        await raw.close()
        return replies.requests[0], replies.requests[1], sdk, ours

    by_sdk, by_us, sdk_reply, our_reply = asyncio.run(go())
    assert _sent(by_us) == _sent(by_sdk)
    assert by_us.headers["cookie"] == "session=abc"  # the client's cookie jar, as the SDK sends it
    assert json.loads(by_us.content) == BODY
    assert our_reply == sdk_reply
    assert json.loads(our_reply) == OK


SCRIPTS = {
    "429 then ok": [(429, {"retry-after-ms": "1"}), 200],
    "500 until the retries run out": [500, 500, 500],
    "400 is not retried": [400],
    "x-should-retry false": [(503, {"x-should-retry": "false"})],
    "x-should-retry true on a 400": [(400, {"x-should-retry": "true"}), 200],
    "408 and 409 are retried": [408, 409, 200],
    "timeout then ok": [httpx2.ReadTimeout, 200],
    "timeouts until the retries run out": [httpx2.ConnectTimeout] * 3,
    "refused connections": [httpx2.ConnectError] * 3,
    "a long retry-after is not waited for": [(429, {"retry-after": "3600"})],
}


def _outcome(raw: openai.AsyncOpenAI, replies: Replies, send: Any, delays: list[Any]) -> dict[str, Any]:
    try:
        result: Any = asyncio.run(send())
    except openai.APIError as e:
        result = (type(e).__name__, getattr(e, "status_code", None), str(e), e.body)
    return {"result": result, "delays": delays,
            "sent": [(r.headers.get("x-stainless-retry-count"), r.content) for r in replies.requests]}


@pytest.mark.parametrize("name", SCRIPTS)
def test_failures_end_as_the_sdks_request_loop_ends_them(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, dict[str, Any]] = {}
    for path in ("sdk", "prepared"):
        replies = Replies([])
        raw = _client(replies)
        delays: list[Any] = []

        def delay(remaining: int, options: Any, headers: Any = None, delays: list[Any] = delays) -> float:
            delays.append((remaining, None if headers is None else dict(headers)))
            return 0.0  # no waiting in the test; what the back-off was asked is compared

        monkeypatch.setattr(raw, "_calculate_retry_timeout", delay)

        async def send(raw: openai.AsyncOpenAI = raw, replies: Replies = replies, path: str = path) -> bytes:
            try:
                await _warm(raw, replies)
                replies.script = list(SCRIPTS[name])
                if path == "sdk":
                    return await raw.post(PATH, body=BODY, cast_to=bytes)  # type: ignore[no-any-return]
                post = prepared_post(raw, PATH)
                assert post is not None
                return await post(BODY)
            finally:
                await raw.close()

        seen[path] = _outcome(raw, replies, send, delays)
    assert seen["prepared"] == seen["sdk"]


def test_used_only_for_a_plain_client_after_its_first_call() -> None:
    async def go() -> list[Any]:
        replies = Replies([])
        plain = _client(replies)
        before = prepared_post(plain, PATH)  # the SDK has not filled in its platform headers yet
        await _warm(plain, replies)
        query = _client(replies, default_query={"api-version": "1"})
        await _warm(query, replies)
        azure = openai.AsyncAzureOpenAI(api_key="k", azure_endpoint="http://fake.test", api_version="2024-10-21",
                                        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(replies)))
        await _warm(azure, replies)
        found = [before, prepared_post(plain, PATH), prepared_post(query, PATH), prepared_post(azure, PATH)]
        for raw in (plain, query, azure):
            await raw.close()
        return found

    before, plain, query, azure = asyncio.run(go())
    assert before is None and plain is not None
    assert query is None and azure is None
