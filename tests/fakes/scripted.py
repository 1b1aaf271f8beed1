"""A fake LLM at the HTTP boundary: the real openai/anthropic SDKs and Instructor's real parsing
and re-asking run; only the HTTP responses are scripted.

    llm = FakeLLM("openai", [Claims(claims=[...]), ClaimChecks(checks=[...])])
    judge = Judge(backend=LLMJudge(llm.client()))
    llm.requests  # the JSON bodies the judge sent, for assertions

A reply may be a pydantic model (sent as a tool call named after its class), a dict (sent as
that tool call's arguments, for malformed replies), a str (plain text content, no tool call),
`RawArgs(text)` (tool-call arguments sent as exactly this, possibly broken, text; optionally cut
off at max_tokens), an int HTTP status or `Status(code, message)` (an error response), or a
callable(request_json) -> one of those.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx2  # openai 3.x / anthropic 2.x are built on httpx2
from pydantic import BaseModel

from judgeflow.backends import LLMJudge
from judgeflow.backends.llm import LLMClient, make_client

from .wire import anthropic_body, openai_body

Reply = BaseModel | dict | str | int | Callable[[dict], Any]


class RawArgs:
    """Tool-call arguments sent verbatim (OpenAI wire); cut_off=True ends with finish_reason "length"."""

    def __init__(self, text: str, *, cut_off: bool = False) -> None:
        self.text, self.cut_off = text, cut_off


class Status(int):
    """An HTTP error status with the provider's error message."""

    message: str

    def __new__(cls, code: int, message: str) -> Status:
        obj = super().__new__(cls, code)
        obj.message = message
        return obj


class FakeLLM:
    """Scripted HTTP replies for one provider's wire format."""

    def __init__(self, provider: str, replies: Sequence[Reply] = (), *, usage: tuple[int, int] = (100, 20)) -> None:
        assert provider in ("openai", "anthropic")
        self.provider = provider
        self.replies = list(replies)
        self.usage = usage
        self.requests: list[dict] = []
        self.paths: list[str] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content) if request.content else {}
        self.requests.append(body)
        self.paths.append(request.url.path)
        if not self.replies:
            return httpx2.Response(500, json={"error": {"message": "fake LLM: no scripted reply left"}})
        reply = self.replies.pop(0)
        if callable(reply) and not isinstance(reply, BaseModel):
            reply = reply(body)
        if isinstance(reply, int):
            message = reply.message if isinstance(reply, Status) else f"fake status {reply}"
            return httpx2.Response(int(reply), json={"error": {"message": message, "type": "fake"}})
        if isinstance(reply, RawArgs):
            out = openai_body({}, body, self.usage)
            out["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = reply.text
            if reply.cut_off:
                out["choices"][0]["finish_reason"] = "length"
            return httpx2.Response(200, json=out)
        make = openai_body if self.provider == "openai" else anthropic_body
        return httpx2.Response(200, json=make(reply, body, self.usage))

    def http_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler))

    def client(self, **kwargs: Any) -> LLMClient:
        model = "openai/gpt-fake" if self.provider == "openai" else "anthropic/claude-fake"
        kwargs.setdefault("provider_retries", 0)
        return make_client(model, api_key="test-key", base_url="http://llm.test/v1" if self.provider == "openai" else "http://llm.test",
                           http_client=self.http_client(), **kwargs)

    def backend(self, **kwargs: Any) -> LLMJudge:
        chunk = kwargs.pop("max_claims_per_check", 25)
        return LLMJudge(self.client(**kwargs), max_claims_per_check=chunk)

    def user_prompts(self) -> list[str]:
        """The user-message text of every request sent."""
        out = []
        for r in self.requests:
            for m in r.get("messages", []):
                if m.get("role") == "user":
                    c = m["content"]
                    out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c))
        return out
