"""The provider SDK client of the running event loop: its HTTP transport, and when it closes.

An async SDK client's connections belong to the event loop that opened them. `LoopClient`
builds the client on first use in a loop and closes it in that loop:
- when the loop ends: an async generator started in the loop is finalised by `asyncio.run`
  (`loop.shutdown_asyncgens()`, also on Ctrl-C), and closes the client there;
- earlier, on `aclose()` (`Judge.aclose()`, `async with Judge(...)`).
A later loop (a second `asyncio.run`) gets a new client, and so does a loop running beside
another (the sync facade's background loop beside `asyncio.run`, Jupyter's or a server's): one
Judge used sync, then async, then sync judges every item. A client left behind by a loop that
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
import threading
import weakref
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from ..errors import ConfigError
from ..redact import remember_secret
from .local_pace import DEADLINE
from .wrapping import WrappedTransport

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
            kwargs["http_client"] = sdk.DefaultAioHttpClient(timeout=kwargs.get("timeout"), verify=tls_context())
        except (AttributeError, RuntimeError):
            if transport == "aiohttp":
                raise ConfigError(f"--http-transport aiohttp needs aiohttp: pip install '{module}[aiohttp]'") from None
    if kwargs.get("http_client") is None and hasattr(sdk, "DefaultAsyncHttpxClient"):
        kwargs["http_client"] = sdk.DefaultAsyncHttpxClient(timeout=kwargs.get("timeout"), verify=tls_context())
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


@lru_cache(maxsize=1)
def tls_context() -> Any:
    """One TLS context for every SDK client this process builds, made as the SDKs make theirs
    (httpx2's default: the system's CA store, or SSL_CERT_FILE / SSL_CERT_DIR as set when the
    first client is built). Each SDK client used to load the CA store itself: about 70 ms of CPU a
    client, paid again by every event loop that judges (one client per loop) and every process.
    A context is safe to share between connections, threads and event loops."""
    import httpx2

    return httpx2.create_ssl_context()


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
class _Opened:
    """One event loop's SDK client, and the async generator that closes it when that loop ends."""

    raw: Any
    loop: weakref.ref[asyncio.AbstractEventLoop]
    closer: AsyncGenerator[None, None] | None = None

    def alive(self) -> bool:
        loop = self.loop()
        return loop is not None and not loop.is_closed()


@dataclass(eq=False)
class LoopClient:
    """The SDK client (`make()`) of the running event loop, one per loop; see the module docstring.

    Each loop gets its own client, also while another loop still runs: the sync facade's
    background loop (`judge()`, `Runnable.batch`) and the caller's own (`asyncio.run(ajudge())`,
    Jupyter, FastAPI, pytest-asyncio) alternate on one Judge, and an aiohttp session or httpx pool
    used from a loop that did not open it fails every request ("Connection error")."""

    make: Callable[[], Any]
    _by_loop: dict[int, _Opened] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def raw(self) -> Any:
        """The running loop's client (None outside a loop, or before its first request)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        opened = self._by_loop.get(id(loop))
        return opened.raw if opened is not None and opened.loop() is loop else None

    async def get(self) -> Any:
        """The client for the running loop, built (and set to close with the loop) on first use."""
        loop = asyncio.get_running_loop()
        opened = self._by_loop.get(id(loop))
        if opened is not None and opened.loop() is loop:
            return opened.raw
        opened = _Opened(self.make(), weakref.ref(loop))
        with self._lock:  # registered before any await: a second task of this loop finds it
            self._by_loop[id(loop)] = opened
        _OPEN.add(self)
        opened.closer = self._close_with_loop(opened)
        await opened.closer.__anext__()  # started in this loop, so the loop finalises it when it ends
        await self._close_dead()
        return opened.raw

    async def aclose(self) -> None:
        """Close the running loop's client now (and those left by loops that ended); the next
        `get()` builds a new one. Another loop's, still running (the sync facade's), closes with it."""
        loop = asyncio.get_running_loop()
        opened = self._by_loop.get(id(loop))
        if opened is not None and opened.loop() is loop:
            await self._close(opened)
        await self._close_dead()

    def opened(self) -> list[_Opened]:
        with self._lock:
            return list(self._by_loop.values())

    async def _close_dead(self) -> None:
        """Close the clients of loops that ended without finalising them (a hand-made loop
        closed with `loop.close()`): their transports are dead."""
        for dead in [o for o in self.opened() if not o.alive()]:
            with contextlib.suppress(Exception):
                await self._close(dead)

    async def _close(self, opened: _Opened) -> None:
        if opened.closer is not None:
            await opened.closer.aclose()  # runs its `finally`, which closes the client
        else:
            self._forget(opened)
            await opened.raw.close()

    def _forget(self, opened: _Opened) -> bool:
        with self._lock:
            for key, value in list(self._by_loop.items()):
                if value is opened:
                    del self._by_loop[key]
                    return True
        return False

    def __del__(self) -> None:
        for opened in self.opened():
            if not opened.alive():
                _close_without_loop(opened.raw)

    async def _close_with_loop(self, opened: _Opened) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            if self._forget(opened):
                await opened.raw.close()


@atexit.register
def _close_at_exit() -> None:
    """Close clients nobody closed, in their own loop if it still runs (another thread), else
    with no loop (their loop has ended): an unclosed aiohttp session prints an error at exit."""
    for client in list(_OPEN):
        for opened in client.opened():
            loop = opened.loop()
            with contextlib.suppress(Exception):
                if loop is not None and loop.is_running():
                    asyncio.run_coroutine_threadsafe(client._close(opened), loop).result(timeout=5)
                elif loop is None or loop.is_closed():
                    client._forget(opened)
                    _close_without_loop(opened.raw)


def _close_without_loop(raw: Any) -> None:
    """Close a client whose loop has ended, with no loop: closing marks its sessions closed
    before its first wait, and their transports died with the loop."""
    closing = raw.close()
    with contextlib.suppress(BaseException):
        closing.send(None)
    closing.close()
