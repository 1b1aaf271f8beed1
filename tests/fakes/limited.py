"""A provider's rate limiter for the fakes: requests and tokens per window as continuously refilled
token buckets, counted as providers count them (OpenAI: request bytes / 4 + max_tokens; Anthropic:
input tokens = bytes / 4), with the provider's headers on every reply and 429 + retry-after over it.

    limit = ProviderLimit(rpm=5, window=1.0)
    FakeProvider(limit=limit)            # a real server
    LimitedLLM("openai", replies, limit)  # scripted replies behind a MockTransport
"""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

import httpx2

try:
    from .scripted import FakeLLM
except ImportError:  # run as a script (provider.py)
    from scripted import FakeLLM  # type: ignore[no-redef]


class ProviderLimit:
    """The provider side of a rate limit (see the module docstring)."""

    def __init__(self, *, rpm: float = 0, tpm: float = 0, window: float = 60.0, headers: bool = True,
                 too_large_text: str = "request too large") -> None:
        self.window = window
        self.headers = headers
        self.too_large_text = too_large_text
        now = time.monotonic()
        self.buckets = {name: [float(n), float(n), now] for name, n in (("requests", rpm), ("tokens", tpm)) if n}
        self.admitted: list[float] = []
        self.refused = 0
        self._lock = threading.Lock()

    @staticmethod
    def tokens(wire: str, raw: bytes) -> int:
        n = math.ceil(len(raw) / 4)
        if wire == "openai":
            body = json.loads(raw or b"{}")
            budget = body.get("max_completion_tokens", body.get("max_tokens"))
            n += budget if isinstance(budget, int) else 0
        return n

    def admit(self, wire: str, raw: bytes) -> tuple[int, dict[str, str], str | None]:
        """(status, headers, error message) for one model request."""
        need = {"requests": 1.0, "tokens": float(self.tokens(wire, raw))}
        with self._lock:
            now = time.monotonic()
            wait = 0.0
            for name, b in self.buckets.items():
                rate = b[0] / self.window
                b[1] = min(b[0], b[1] + (now - b[2]) * rate)
                b[2] = now
                wait = math.inf if need[name] > b[0] else max(wait, (need[name] - b[1]) / rate)
            if wait <= 0:
                for name, b in self.buckets.items():
                    b[1] -= need[name]
                self.admitted.append(now)
            else:
                self.refused += 1
            headers = self._headers(wire) if self.headers else {}
        if wait <= 0:
            return 200, headers, None
        if math.isinf(wait):
            return 429, headers, f"{self.too_large_text}: {need['tokens']:.0f} tokens, limit {self.buckets['tokens'][0]:.0f}"
        return 429, {**headers, "retry-after": str(max(1, math.ceil(wait))),
                     "retry-after-ms": str(max(1, math.ceil(wait * 1000)))}, f"rate limited: retry in {wait:.3f}s"

    def _headers(self, wire: str) -> dict[str, str]:
        h = {}
        for name, (limit, level, _) in self.buckets.items():
            reset = (limit - level) / (limit / self.window)
            if wire == "anthropic":
                n = "input-tokens" if name == "tokens" else name
                h[f"anthropic-ratelimit-{n}-limit"] = str(int(limit))
                h[f"anthropic-ratelimit-{n}-remaining"] = str(int(max(0.0, level)))
                h[f"anthropic-ratelimit-{n}-reset"] = time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                    time.gmtime(time.time() + reset))
            else:
                h[f"x-ratelimit-limit-{name}"] = str(int(limit))
                h[f"x-ratelimit-remaining-{name}"] = str(int(max(0.0, level)))
                h[f"x-ratelimit-reset-{name}"] = f"{reset:.3f}s"
        return h


class LimitedLLM(FakeLLM):
    """FakeLLM behind a `ProviderLimit`: scripted replies, or with none scripted, the fake
    provider's replies made from the prompt (any number of items)."""

    def __init__(self, provider: str, replies: Any = (), limit: ProviderLimit | None = None, **kwargs: Any) -> None:
        super().__init__(provider, replies, **kwargs)
        self.limit = limit or ProviderLimit()
        self.statuses: list[int] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        status, headers, error = self.limit.admit(self.provider, request.content)
        self.statuses.append(status)
        if status != 200:
            return httpx2.Response(status, headers=headers, json={"error": {"message": error, "type": "rate_limit_error"}})
        if not self.replies:
            from .provider import anthropic_reply, openai_reply

            body = json.loads(request.content)
            self.requests.append(body)
            reply = openai_reply(body) if self.provider == "openai" else anthropic_reply(body)
            return httpx2.Response(200, headers=headers, json=reply)
        response = super().handler(request)
        return httpx2.Response(response.status_code, headers=headers, content=response.content)
