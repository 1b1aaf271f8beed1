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
from fakes import FakeLLM, moscow, moscow_claims
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
    """One typed call (no retries) against `url`: (its result or error, seconds it took); gives up at 30 s."""
    client = make_client("openai/m", base_url=url + "/v1", api_key="sk-test-key-0123456789", provider_retries=0,
                         max_retries=0, http_transport=transport, **options)

    async def once() -> Claims:
        try:
            return await asyncio.wait_for(client.ask(Claims, MESSAGES), 30)
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
    with HostileServer(trickle(body, every=0.2)) as server:  # never idle for 1 s; all of it takes ~80 s
        result, took = ask(server.url, transport, timeout=1.0)
    assert isinstance(result, LLMError), result
    assert "timed out" in str(result).lower() and took < 10, (took, result)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_reply_within_the_timeout_is_read(transport: str) -> None:
    body = completion({"claims": [{"text": "Moscow was founded in 1247.", "kind": "other"}]})
    with HostileServer(trickle(body, every=0.0)) as server:
        result, _ = ask(server.url, transport, timeout=5.0)
    assert isinstance(result, Claims) and result.claims[0].text == "Moscow was founded in 1247."
