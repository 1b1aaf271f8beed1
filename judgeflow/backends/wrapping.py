"""The one shape of judgeflow's httpx2 transport wrappers (the deadline, the rate limiter's pacing, a
local endpoint's pace): each holds the transport it wraps as `inner` and hands it closing and the
context manager; a subclass adds only its `handle_async_request`."""

from __future__ import annotations

from typing import Any, TypeVar

W = TypeVar("W", bound="WrappedTransport")


class WrappedTransport:
    """An httpx2 transport around `inner`: closing and `async with` go to `inner`."""

    inner: Any

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self: W) -> W:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.inner.__aexit__(*exc)
