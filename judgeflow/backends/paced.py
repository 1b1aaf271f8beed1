"""The limiter under the provider SDK: an HTTP transport that paces model requests and re-sends 429s.

`attach(sdk, limiter, wire)` wraps the transport of an openai/anthropic SDK client's httpx2 client
(its aiohttp or httpx stack, or a test's MockTransport) in `Paced`. Every model request the SDK
sends passes through `Paced.handle_async_request`: it waits for the limiter's slot, sends, lets
the limiter read the reply's headers, and on a 429 waits as told and sends the same request
again, so the SDK (and its retry budget) never sees a 429. When the limiter gives up (the item's
`--max-wait` is spent, or the request is larger than a whole limit), the SDK gets a
`RateLimited` error of its own family, which it raises as is, without retrying.
"""

from __future__ import annotations

import math
import time
from functools import lru_cache
from typing import Any

from .limits import CALL, MODEL_PATHS, Call, Limiter, RateLimited, retry_wait
from .wrapping import WrappedTransport


@lru_cache(maxsize=4)
def _refusal(sdk: str) -> type[RateLimited]:
    """RateLimited as an error of the SDK's own family (which it neither wraps nor retries)."""
    import importlib

    from .providers import known, provider

    base = provider(sdk).error_base if known(sdk) else None
    module = importlib.import_module(sdk) if base else None
    bases = (RateLimited, getattr(module, base)) if module is not None and base else (RateLimited,)
    return type("RateLimited", bases, {"__module__": __name__})


def attach(raw: Any, limiter: Limiter, wire: str) -> None:
    """Pace the model requests of SDK client `raw` with `limiter` (once; other clients unchanged)."""
    client = getattr(raw, "_client", None)
    transport = getattr(client, "_transport", None)
    if transport is None or isinstance(transport, Paced):
        return
    refusal = _refusal(type(raw).__module__.split(".")[0])
    client._transport = Paced(transport, limiter, wire, refusal)
    mounts = getattr(client, "_mounts", None)
    if isinstance(mounts, dict):  # proxies from the environment: their transports too
        client._mounts = {k: Paced(v, limiter, wire, refusal) if v is not None else v for k, v in mounts.items()}


def costs(request: Any, call: Call | None, wire: str) -> tuple[float, float, float, float]:
    """(requests, tokens, input tokens, output tokens) a request costs, as its provider counts them."""
    try:
        size = len(request.content)
    except Exception:  # noqa: BLE001 - a streamed body not read yet: its declared length
        size = int(request.headers.get("content-length") or 0)
    tokens = math.ceil(size / 4)
    out = float(call.max_tokens) if call is not None else 0.0
    return _family(wire).costs(float(tokens), out)


@lru_cache(maxsize=8)
def _family(wire: str) -> Any:
    """The provider whose wire family is `wire` ("openai", "anthropic"): how it counts a request."""
    from .providers import provider

    return provider(wire)


class Paced(WrappedTransport):
    """An httpx2 transport that sends model requests through a `Limiter` (see the module docstring)."""

    def __init__(self, inner: Any, limiter: Limiter, wire: str, refusal: type[RateLimited]) -> None:
        self.inner, self.limiter, self.wire, self.refusal = inner, limiter, wire, refusal

    async def handle_async_request(self, request: Any) -> Any:
        if not request.url.path.endswith(MODEL_PATHS):
            return await self.inner.handle_async_request(request)
        call = CALL.get()
        cost = costs(request, call, self.wire)
        try:
            return await self._send(request, call, cost)
        except RateLimited as e:
            if isinstance(e, self.refusal):
                raise
            raise self.refusal(str(e)) from None

    async def _send(self, request: Any, call: Call | None, cost: tuple[float, float, float, float]) -> Any:
        limiter = self.limiter
        not_before, tries = 0.0, 0
        while True:
            if why := limiter.too_large(cost):
                raise RateLimited(why)
            ticket = await limiter.acquire(cost, call, not_before)
            try:
                response = await self.inner.handle_async_request(request)
            except BaseException:
                limiter.release(ok=False, ticket=ticket)
                raise
            status = response.status_code
            retry = limiter.observe(response.headers, ticket, status)
            limiter.release(ok=status != 429, ticket=ticket)
            if status != 429:
                return response
            await response.aread()
            text = response.content[:2000].decode("utf-8", "replace")
            await response.aclose()
            if "too large" in text.lower():
                limiter.too_large_at = time.monotonic()  # the provider's own word: believed for a while
                raise RateLimited(limiter.too_large(cost) or f"rate limited: request too large for {limiter.name} "
                                  f"({' '.join(text.split())[:200]}); it can never pass: shorten it with "
                                  "--max-source-chars or --max-tokens")
            tries += 1
            if call is not None and call.limited_since is None:
                call.limited_since = ticket.sent  # --max-wait is wall-clock from the first refused request
            not_before = limiter.hold(retry_wait(retry, tries))  # a growing floor, a cap; jitter in hold

