"""Slow local endpoints (#41): how many requests are in flight and how long each may take follow
what the endpoint shows, so a single-slot server is never sent a queue that times out behind it.

A local server (llama.cpp, ollama, LM Studio on a laptop) often computes one request at a time;
requests sent beside it wait in its queue, and their deadline runs out while they wait (then they
are sent again, or scored as nothing). `LocalPace`, one per local endpoint and shared by every
client of it, sits under the SDK as a transport (`attach`) and
- **concurrency**: starts at START request in flight and grows on evidence that the server serves
  requests side by side: k flat replies, the last sent with k in flight (a latency within the larger
  of FLAT x and QUEUED x k x the latency of requests sent alone), raise the limit to GROWTH x k
  (OPENING after the first reply, sent alone; k + 1 at k = 2); the limit is what the endpoint
  showed, never its host name. A slower reply (latency growing with the requests in flight: the
  server queued it), or a 503 ("no slot available"), sets the limit to the slots the endpoint
  showed (k x solo latency / its latency, at least 1) and holds it there (a ceiling, raised by one
  after REPROBE flat replies at it, and at least a round trip's); a timeout sets it to 1. The
  caller's own limit (`--concurrency`) stays the ceiling of what is asked for. A server that
  serves 16 at once reaches 16 in flight in two round trips (1, 3, 16: slow start, geometric while
  latency stays flat); a one-slot server is sent three (one computing, two waiting their turn: at
  2 s a call the third waits 4 s, far inside the deadline), held at one by the second's queued
  reply, and sent two again now and then (a probe, which the next queued reply takes back).
- **deadline**: the local default (`providers.LOCAL_TIMEOUT`) is a floor; once replies arrive, each
  request may take FACTOR x the slowest reply seen, and a timeout doubles the deadline of the
  requests after it, up to CAP.

A given `--timeout` (or a caller's own `http_client`) turns the pace off: the deadline and the
concurrency are then as set (a localhost proxy to a hosted API is not a single-slot server).

Requests are counted where they are sent (the limiter, `usage.calls`); this module only decides when.
`stats()` and the timed-out row's reason say what the endpoint showed.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from .wrapping import WrappedTransport

#: requests in flight to a local endpoint before it has shown it can take more
START = 1
#: a reply within this factor of the requests-sent-alone latency is "flat" ...
FLAT = 1.5
#: ... and so is one sent with k in flight within QUEUED x k of it (in a queue each request ahead adds a
#: whole solo latency, divided by the slots: a server with fewer than 1 / QUEUED slots is held at its
#: slots; one that batches requests slows them far less than that)
QUEUED = 0.25
#: a flat reply sent with k > 2 in flight allows GROWTH x k (k = 2: k + 1; a one-slot server's
#: second request can look flat when its replies are fast beside the client's own delays); 6 takes
#: 3 to the default 16 in one step (4 took a round trip more, at 12: a server with fewer slots is
#: held at them by its queued replies all the same)
GROWTH = 6
#: requests in flight once the first reply, sent alone, is in (the solo latency known): sent
#: together, a one-slot server queues the second and third, which shows at once (2, as before #50,
#: cost a 16-slot server a round trip of 14 idle slots more: 0.96 of the unpaced speed)
OPENING = 3
#: flat replies at a ceiling (at least the limit's: a round trip) before one more request in flight is
#: tried (20 held a limit that the client's own delays had set too low, at 50 ms replies, for seconds)
REPROBE = 4
#: a request may take this many times the slowest reply seen (above the floor)
FACTOR = 4.0
#: the longest deadline the pace ever gives (seconds)
CAP = 4 * 3600.0
#: the request extension holding a request's own deadline in seconds (read by `connections.Deadline`)
DEADLINE = "judgeflow_deadline"
#: weight of the newest solo latency in its running mean
_WEIGHT = 0.3


@dataclass(eq=False)
class LocalPace:
    """Concurrency and deadline of one local endpoint (see the module docstring)."""

    name: str
    floor: float
    """The deadline before any reply, and its lower bound (the local default, or the given --timeout)."""
    adaptive: bool = True
    """False with a given --timeout: the deadline stays `floor`."""
    limit: int = START
    in_flight: int = 0
    peak: int = 0
    """The most requests ever in flight at once."""
    ceiling: int | None = None
    """The limit a queued (slow) reply set; None while latency has stayed flat."""
    solo: float | None = None
    """Latency of requests sent with nothing else in flight: the lowest at once, a running mean upwards."""
    slowest: float = 0.0
    flat: int = 0
    widest: int = 0
    """The most requests in flight beside one of the flat replies counted in `flat`."""
    timeouts: int = 0
    stretched: float = 0.0
    """The deadline a timeout doubled to (later requests get at least this)."""
    last_deadline: float = 0.0
    waiters: deque[asyncio.Future[None]] = field(default_factory=deque)

    def deadline(self) -> float:
        """Seconds the next request may take."""
        if not self.adaptive:
            return self.floor
        return min(CAP, max(self.floor, FACTOR * self.slowest, self.stretched))

    async def acquire(self) -> tuple[float, int]:
        """Wait for a place in flight; (when sent, requests in flight with it, itself included)."""
        while self.in_flight >= self.limit:
            fut = asyncio.get_running_loop().create_future()
            self.waiters.append(fut)
            try:
                await fut
            except BaseException:
                self.waiters = deque(w for w in self.waiters if w is not fut)
                raise
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        return time.monotonic(), self.in_flight

    def release(self, sent: float, crowd: int, outcome: str, deadline: float) -> None:
        """A request sent with `crowd` in flight ended: "ok" (a reply), "busy" (503: no free slot),
        "timeout", or "error"; learn from it, wake the next."""
        self.in_flight = max(0, self.in_flight - 1)
        if outcome == "timeout":
            self.timeouts += 1
            self.limit, self.ceiling, self.flat = 1, 1, 0
            self.stretched = min(CAP, max(self.stretched, 2 * deadline))
        elif outcome == "busy":
            self._hold(max(1, crowd - 1))
        elif outcome == "ok":
            self._learn(time.monotonic() - sent, crowd)
        self._wake()

    def _hold(self, slots: int) -> None:
        """The endpoint showed `slots` at once: the limit and its ceiling (never above the limit now)."""
        self.limit = self.ceiling = max(1, min(self.limit, slots))
        self.flat = self.widest = 0

    def _learn(self, latency: float, crowd: int) -> None:
        self.slowest = max(self.slowest, latency)
        if crowd <= 1:
            # down at once (the first request's latency includes opening the connection), up slowly
            self.solo = latency if self.solo is None else min(latency, (1 - _WEIGHT) * self.solo + _WEIGHT * latency)
        elif self.solo is not None:
            # any reply shows the server can answer that fast: a queue only ever adds (the first
            # reply, sent alone, may have been slow with the connection's opening)
            self.solo = min(self.solo, latency)
        solo = self.solo
        if crowd > 1 and solo is not None and latency > solo * max(FLAT, QUEUED * crowd):  # it waited in a queue
            self._hold(round(crowd * solo / latency))
            return
        self.flat += 1
        if self.ceiling is None:  # no queue seen yet: grow from what was served side by side, once
            # as many flat replies are in as were in flight with this one (the first of k served by
            # a one-slot server is flat too: its queue shows in the others); also with no request
            # waiting here: the run's other requests may still be on their way (the limit at 1)
            self.widest = k = max(self.widest, crowd)
            if self.flat < k:
                return
            grown = max(self.limit, GROWTH * k if k > 2 else max(OPENING, k + 1))
            if grown > self.limit:
                self.limit, self.flat, self.widest = grown, 0, 0
        elif self.waiters and self.flat >= max(self.limit, REPROBE):  # at a ceiling: probe one more
            self.limit = self.ceiling = self.limit + 1
            self.flat = 0

    def _wake(self) -> None:
        free = self.limit - self.in_flight
        while self.waiters and free > 0:
            fut = self.waiters.popleft()
            if not fut.done():
                fut.get_loop().call_soon_threadsafe(_set, fut)
                free -= 1

    def describe(self) -> str:
        solo = f", {self.solo:.3g} s a request alone" if self.solo is not None else ""
        return (f"{self.limit} request(s) in flight at most (peak {self.peak}){solo}, slowest reply "
                f"{self.slowest:.3g} s, deadline {self.deadline():.3g} s, {self.timeouts} timeout(s)")


def _set(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


#: the pace of each local endpoint, by its limiter (one per endpoint, key and model)
_PACES: weakref.WeakKeyDictionary[Any, LocalPace] = weakref.WeakKeyDictionary()


def pace_for(limiter: Any, *, floor: float, adaptive: bool) -> LocalPace:
    """The process-wide pace of the endpoint `limiter` stands for."""
    pace = _PACES.get(limiter)
    if pace is None or pace.floor != floor or pace.adaptive != adaptive:
        pace = _PACES[limiter] = LocalPace(getattr(limiter, "name", "local endpoint"), floor, adaptive)
    return pace


def pace_of(limiter: Any) -> LocalPace | None:
    return _PACES.get(limiter) if limiter is not None else None


def forget() -> None:
    """Forget every endpoint's pace (tests; a new process starts with none)."""
    _PACES.clear()


def stats() -> list[dict[str, Any]]:
    """Each local endpoint's pace, for a run's summary and the tests."""
    return [{"endpoint": p.name, "limit": p.limit, "peak": p.peak, "timeouts": p.timeouts,
             "deadline": p.deadline(), "slowest": p.slowest} for p in _PACES.values()]


def attach(raw: Any, pace: LocalPace) -> None:
    """Put SDK client `raw`'s model requests under `pace` (outermost, so its count is what is in flight)."""
    client = getattr(raw, "_client", None)
    transport = getattr(client, "_transport", None)
    if transport is not None and not isinstance(transport, Paced):
        client._transport = Paced(transport, pace)


class Paced(WrappedTransport):
    """An httpx2 transport that sends model requests when the endpoint's `LocalPace` allows."""

    def __init__(self, inner: Any, pace: LocalPace) -> None:
        self.inner, self.pace = inner, pace

    async def handle_async_request(self, request: Any) -> Any:
        from .limits import MODEL_PATHS

        if not request.url.path.endswith(MODEL_PATHS):
            return await self.inner.handle_async_request(request)
        pace = self.pace
        sent, crowd = await pace.acquire()
        deadline = pace.last_deadline = pace.deadline()
        if pace.adaptive:
            request.extensions[DEADLINE] = deadline
        outcome = "error"
        try:
            response = await self.inner.handle_async_request(request)
            status = response.status_code
            outcome = "ok" if status < 400 else "busy" if status == 503 else "error"
            return response
        except BaseException as e:
            if type(e).__name__ in ("ReadTimeout", "TimeoutException", "WriteTimeout", "PoolTimeout"):
                outcome = "timeout"
            raise
        finally:
            pace.release(sent, crowd, outcome, deadline)

