"""The provider SDK client of the running event loop: its HTTP transport, and when it closes.

An async SDK client's connections belong to the event loop that opened them. `LoopClient`
builds the client on first use in a loop and closes it in that loop:
- when the loop ends: an async generator started in the loop is finalised by `asyncio.run`
  (`loop.shutdown_asyncgens()`, also on Ctrl-C), and closes the client there;
- earlier, on `aclose()` (`Judge.aclose()`, `async with Judge(...)`).
A later loop (a second `asyncio.run`) gets a new client. A client left behind by a loop that
ended without finalising its async generators (a hand-made loop closed with `loop.close()`) is
closed when the next loop asks for one, when it is dropped, or at interpreter exit; so is a
client of a loop still running in another thread at exit (the sync facade's background loop).

Transport (`transport=`): `aiohttp` is the SDKs' own `DefaultAioHttpClient` (the `aiohttp`
extra of openai and anthropic); it spends about 1.5 ms less client CPU per request than the
SDKs' default httpx stack (`python benchmarks/cpu.py`), which matters when the client, not the
provider, is what limits a run. `httpx` is the SDK default. `auto` takes aiohttp when installed,
except for a base URL with credentials in it (`http://user:pass@host/v1`: aiohttp refuses them
beside the SDK's Authorization header; httpx sends them). A caller's own `http_client` (tests
use an httpx MockTransport) is used as given.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib
import weakref
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from .local_pace import DEADLINE
from .wrapping import WrappedTransport
from ..redact import remember_secret

TRANSPORTS = ("auto", "aiohttp", "httpx")
#: clients built and not yet closed (closed at interpreter exit if still open)
_OPEN: weakref.WeakSet[LoopClient] = weakref.WeakSet()


def check_transport(transport: str) -> str:
    if transport not in TRANSPORTS:
        raise ConfigError(f"--http-transport {transport!r} is not one of {', '.join(TRANSPORTS)}")
    return transport


def sdk_client(module: str, cls: str, *, transport: str = "auto", limiter: Any = None, pace: Any = None,
               **kwargs: Any) -> Any:
    """The provider SDK's client `module.cls(**kwargs)`, imported on first use, over `transport`;
    its model requests paced by `limiter` (a `limits.Limiter`) when one is given, and a local
    endpoint's by `pace` (a `local_pace.LocalPace`: requests in flight and each one's deadline)."""
    sdk = importlib.import_module(module)
    url = urlsplit(str(kwargs.get("base_url") or kwargs.get("azure_endpoint") or ""))
    remember_secret(kwargs.get("api_key"))  # masked by value in everything judgeflow records
    remember_secret(url.password)
    if transport == "auto" and (url.username or url.password):
        transport = "httpx"
    given = kwargs.get("http_client") is not None
    if transport != "httpx" and not given:
        try:  # the SDK's aiohttp client raises RuntimeError when aiohttp is not installed
            kwargs["http_client"] = sdk.DefaultAioHttpClient(timeout=kwargs.get("timeout"))
        except (AttributeError, RuntimeError):
            if transport == "aiohttp":
                raise ConfigError(f"--http-transport aiohttp needs aiohttp: pip install '{module}[aiohttp]'") from None
    client = getattr(sdk, cls)(**kwargs)
    if not given and isinstance(kwargs.get("timeout"), (int, float)):
        with_deadline(client, float(kwargs["timeout"]))
    if limiter is not None:  # outside the deadline: waiting for the limiter's slot is not the request's time
        from .paced import attach

        attach(client, limiter, module)  # the SDK's package ("openai", "anthropic") names its wire family
    if pace is not None:  # outermost: what it counts in flight is what the endpoint is computing
        from .local_pace import attach as pace_attach

        pace_attach(client, pace)
    return client


def with_deadline(raw: Any, seconds: float) -> None:
    """End every request of SDK client `raw` after `seconds` in all (see `Deadline`)."""
    http = getattr(raw, "_client", None)
    transport = getattr(http, "_transport", None)
    if transport is not None and not isinstance(transport, Deadline):
        http._transport = Deadline(transport, seconds)


class Deadline(WrappedTransport):
    """An httpx2 transport whose requests end `seconds` after they are sent: connect, headers and
    the whole body. The transports' own timeouts are per read, so a reply trickling in a byte at a
    time would never end. A request cut off raises httpx2's ReadTimeout, which the SDK retries like
    any other timeout."""

    def __init__(self, inner: Any, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds

    async def handle_async_request(self, request: Any) -> Any:
        seconds = request.extensions.get(DEADLINE, self.seconds)  # a local endpoint's pace sets its own (local_pace)
        end = asyncio.get_running_loop().time() + seconds
        response = await _by(end, self.inner.handle_async_request(request), request, seconds)
        response.stream = _deadline_stream()(response.stream, end, request, seconds)
        return response



@lru_cache(maxsize=1)
def _deadline_stream() -> type:
    """A reply body read chunk by chunk, each read bounded by what is left of the request's time
    (an httpx2 AsyncByteStream, as httpx2 requires of a transport's reply; built on first use)."""
    import httpx2

    class DeadlineStream(httpx2.AsyncByteStream):
        def __init__(self, inner: Any, end: float, request: Any, seconds: float) -> None:
            self.inner, self.end, self.request, self.seconds = inner, end, request, seconds

        async def __aiter__(self) -> Any:
            chunks = self.inner.__aiter__()
            while True:
                try:
                    chunk = await _by(self.end, chunks.__anext__(), self.request, self.seconds)
                except StopAsyncIteration:
                    return
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    return DeadlineStream


async def _by(end: float, step: Any, request: Any, seconds: float) -> Any:
    """Await `step`, cut at loop time `end` with httpx2's ReadTimeout."""
    import httpx2

    left = end - asyncio.get_running_loop().time()
    try:
        return await asyncio.wait_for(step, max(left, 0.0)) if not hasattr(asyncio, "timeout_at") \
            else await _within(end, step)
    except (TimeoutError, asyncio.TimeoutError):
        raise httpx2.ReadTimeout(f"no complete reply within {seconds:g} s", request=request) from None


async def _within(end: float, step: Any) -> Any:
    async with asyncio.timeout_at(end):  # Python 3.11+: no task per step
        return await step


@dataclass(eq=False)
class LoopClient:
    """The SDK client (`make()`) of the running event loop; see the module docstring."""

    make: Callable[[], Any]
    raw: Any = None
    _loop: weakref.ref[asyncio.AbstractEventLoop] | None = field(default=None, repr=False)
    _closer: AsyncGenerator[None, None] | None = field(default=None, repr=False)

    async def get(self) -> Any:
        """The client for the running loop, built (and set to close with the loop) on first use."""
        loop = asyncio.get_running_loop()
        opened_in = self._loop() if self._loop is not None else None
        if self.raw is not None and opened_in is not None and (opened_in is loop or not opened_in.is_closed()):
            return self.raw  # this loop's, or one still running in another thread
        with contextlib.suppress(Exception):  # left by a loop that ended without closing it: its transports are dead
            await self.aclose()
        self.raw = self.make()
        _OPEN.add(self)
        self._loop = weakref.ref(loop)
        self._closer = self._close_with_loop(self.raw)
        await self._closer.__anext__()  # started in this loop, so the loop finalises it when it ends
        return self.raw

    async def aclose(self) -> None:
        """Close the client now, in the running loop; the next `get()` builds a new one."""
        closer, raw = self._closer, self.raw
        if closer is not None:
            await closer.aclose()  # runs its `finally`, which closes the client
        elif raw is not None:
            self.raw = None
            await raw.close()

    def __del__(self) -> None:
        loop = self._loop() if self._loop is not None else None
        if self.raw is not None and (loop is None or loop.is_closed()):
            _close_without_loop(self.raw)

    async def _close_with_loop(self, raw: Any) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            if raw is self.raw:
                self.raw = self._closer = None
                await raw.close()


@atexit.register
def _close_at_exit() -> None:
    """Close clients nobody closed, in their own loop if it still runs (another thread), else in
    a new one (their loop has ended): an unclosed aiohttp session prints an error at exit."""
    for client in list(_OPEN):
        loop = client._loop() if client._loop is not None else None
        if client.raw is None:
            continue
        with contextlib.suppress(Exception):
            if loop is not None and loop.is_running():
                asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(timeout=5)
            elif loop is None or loop.is_closed():
                raw, client.raw = client.raw, None
                _close_without_loop(raw)


def _close_without_loop(raw: Any) -> None:
    """Close a client whose loop has ended, with no loop: closing marks its sessions closed
    before its first wait, and their transports died with the loop."""
    closing = raw.close()
    with contextlib.suppress(BaseException):
        closing.send(None)
    closing.close()
