"""Provider rate limits: one limiter per endpoint, shared by everything in the process that calls it.

`limiter_for(provider, base_url, api_key, model)` returns the process-wide `Limiter` of that
endpoint (the key enters only as a hash), so every judge, panel member, cascade tier and sample
using it draws from one budget. `attach(sdk, limiter, wire)` puts it under the provider SDK's
HTTP client as a transport, so it sees every model request the SDK sends (its own retries, and
Instructor's re-asks) and every reply, and nothing else in judgeflow has to pace anything.

What it does per model request (POST .../chat/completions, .../messages, .../responses):
- **Costs** are estimated before sending the way the provider counts them: 1 request, and tokens
  as request bytes / 4 plus `max_tokens` on the OpenAI wire (OpenAI charges the reply budget),
  input tokens (bytes / 4) and output tokens (`max_tokens`) apart on the Anthropic wire.
- **Buckets**: requests and tokens per minute as continuously refilled token buckets, set by
  `--rpm` / `--tpm` or learned from the headers every reply carries (OpenAI
  `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`; Anthropic
  `anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`). A reply
  re-syncs the bucket to the provider's `remaining` (less what was counted since, and less what was
  counted before it but sent after it or not yet: a 429's re-send waiting out its retry-after), so
  other clients of the same key (other processes, Ray actors) are accounted for; the refill rate is the lowest
  one consistent with every reply's (remaining, reset) pair. A request reserves its cost and
  sleeps until its slot: waiters are spread over time by construction, never woken together.
- **429**: the limiter learns from the reply, waits as told (`retry-after-ms`, `retry-after`,
  with jitter), never less than a floor doubling from MIN_BACKOFF to MAX_BACKOFF (`retry_wait`),
  and sends the request again itself. The SDK never sees the 429, so it uses none
  of the retries meant for errors (`--retries`). A call gives up only when the wall-clock since the
  limit first held it up passes `max_wait` (`--max-wait`): `RateLimited` ("rate limited: ..."). A request whose cost is
  larger than a whole bucket can never pass: `RateLimited` at once, naming the limit and the
  flags that shrink requests.
- **Believed only so far**: a wait one reply claims (retry-after, a reset, a pace) is cut to
  MAX_BELIEVED_WAIT; a learned limit no reply confirms for BELIEVE_FOR is forgotten (`_expire`),
  and refuses requests unsent only after the provider itself refused one as too large.
- **One bucket per machine**: every process calling one endpoint with one key reserves from, and
  re-syncs, the same buckets in a state file under the user's cache folder (shared_limits.py).
- **Adaptive concurrency** (AIMD): on a 429 the requests in flight are halved (once per round);
  each success adds 1/window, and the window is dropped once it is back above the old peak.
  `--concurrency` stays the ceiling.

With no limit known (no headers, no flags, no 429 yet) a request costs a few attribute reads and
one header scan of its reply (`python benchmarks/cpu.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import logging
import math
import random
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..config.client import (
    DEFAULT_MAX_WAIT,  # the longest an item waits on rate limits, in all (--max-wait)
)
from ..redact import redact
from .shared_limits import MAX_DEBT, SharedState, wall_offset

log = logging.getLogger("judgeflow")

#: what a bucket's refill rate is taken to be before the replies tell more: the limit per minute
MINUTE = 60.0
#: the shortest wait before re-sending a 429 doubles from this (even when told `retry-after: 0`) ...
MIN_BACKOFF = 0.5
#: ... up to this
MAX_BACKOFF = 30.0
#: the longest wait one reply is believed for (retry-after, a reset time, a pace): a longer claim is
#: cut to this, and the endpoint is then asked again
MAX_BELIEVED_WAIT = 60.0
#: how long a limit learned from a reply is believed with no later reply confirming it
BELIEVE_FOR = 60.0
#: the paths of model requests (everything else, e.g. batch file uploads, passes unpaced)
MODEL_PATHS = ("/chat/completions", "/messages", "/responses")
DIMS = ("requests", "tokens", "input", "output")
_HEADER = re.compile(
    rb"^(?:x-ratelimit-(limit|remaining|reset)-(requests|tokens)|"
    rb"anthropic-ratelimit-(requests|input-tokens|output-tokens)-(limit|remaining|reset))$"
)
_ANTHROPIC_DIM = {b"requests": "requests", b"input-tokens": "input", b"output-tokens": "output"}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


class RateLimited(Exception):
    """A request the limiter gave up on (its item waited `max_wait`), or one too large to pass ever."""


@dataclass
class Call:
    """What the limiter needs to know of the request being sent (set by the ask loop)."""

    max_tokens: int = 0
    max_wait: float = DEFAULT_MAX_WAIT
    account: Any = None
    """An object with a float `rate_wait` (the item's Usage): waits on the limit add up there."""
    waited: float = 0.0
    limited_since: float | None = None
    """When this call was first held up by the limit (a 429, or a wait): --max-wait counts wall-clock from here."""


#: the call being sent in this task (a ContextVar: concurrent items each see their own)
CALL: contextvars.ContextVar[Call | None] = contextvars.ContextVar(
    "judgeflow_limits_call", default=None
)


@dataclass
class Bucket:
    """A provider budget per window as a continuously refilled token bucket. `level` may go below
    zero: a reservation for a request that sleeps until the refill covers it."""

    limit: float
    rate: float
    level: float
    at: float
    source: str
    low: float = 0.0
    high: float = math.inf
    seen: float = 0.0
    """When a reply last confirmed this bucket (learned ones are believed for BELIEVE_FOR after)."""

    def reserve(self, cost: float, now: float) -> float:
        """Take `cost` (at most a whole bucket); the seconds until it is covered."""
        self.level = min(self.limit, self.level + (now - self.at) * self.rate)
        self.at = now
        cost = min(cost, self.limit)
        wait = max(0.0, (cost - self.level) / self.rate)
        self.level -= cost
        return wait

    def learn(self, limit: float, remaining: float, reset: float | None, slack: float) -> None:
        """Narrow the refill rate from one reply: remaining in [r, r+1), reset in [t, t+slack]."""
        if limit != self.limit:
            self.limit, self.low, self.high = limit, 0.0, math.inf
        if reset is not None and reset > 0 and remaining < limit:
            self.low = max(self.low, (limit - remaining - 1) / (reset + slack))
            self.high = min(self.high, (limit - remaining) / reset)
            if (
                self.low > self.high
            ):  # the replies disagree (limit changed, clock moved): start again
                self.low, self.high = (
                    (limit - remaining - 1) / (reset + slack),
                    (limit - remaining) / reset,
                )
        self.rate = self.low if self.low > 0 else min(self.high, limit / MINUTE)


@dataclass(eq=False)
class Ticket:
    """One request sent: when, and the running cost totals just after it was counted."""

    costs: tuple[float, float, float, float]
    sent: float = 0.0
    """When it was counted, then when it was sent (after waiting for its slot)."""
    marks: tuple[float, ...] = ()
    resent: int = 0
    queued: bool = True
    """Still waiting for its slot (not sent yet)."""


@dataclass(eq=False)
class Limiter:
    """The rate limits of one endpoint (see the module docstring)."""

    name: str
    buckets: dict[str, Bucket] = field(default_factory=dict)
    spent: list[float] = field(default_factory=lambda: [0.0] * len(DIMS))
    blocked_until: float = 0.0
    window: float | None = None
    """Adaptive concurrency: requests allowed in flight, None while no 429 has been seen."""
    peak: int = 0
    in_flight: int = 0
    decreased_at: float = 0.0
    waiters: deque[asyncio.Future[None]] = field(default_factory=deque)
    pending: set[Ticket] = field(default_factory=set)
    """Requests counted against a limit and not answered yet (see `_behind`)."""
    rate_limited: int = 0
    """429s received."""
    waited: float = 0.0
    """Seconds requests spent waiting on the limit (summed over requests)."""
    waiting: int = 0
    sent: int = 0
    charged: float = 0.0
    """Tokens the provider's limiter was charged for (what the buckets count)."""
    gave_up: int = 0
    too_large_at: float = -math.inf
    """When the provider itself last refused a request as too large (a learned limit refuses
    requests unsent only for BELIEVE_FOR after that: one reply's header alone never does)."""
    shared: SharedState | None = field(default=None, repr=False)
    """The endpoint's state file shared with the other processes on this machine (shared_limits.py)."""
    set_limits: dict[str, float] = field(default_factory=dict)
    """The limits set by hand in this process (--rpm, --tpm), re-affirmed in the shared state."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- settings ------------------------------------------------------------------------------
    def configure(
        self, rpm: float | None = None, tpm: float | None = None, wire: str = "openai"
    ) -> None:
        """Limits per minute set by hand (`--rpm`, `--tpm`; tpm is input tokens on the Anthropic
        wire); replies' headers still refine them. This process's part of them (see `split`)."""
        from .providers import provider

        now = time.monotonic()
        dims = [
            (dim, float(n) / _SHARE[0])
            for dim, n in (("requests", rpm), (provider(wire).tpm_bucket(), tpm))
            if n
        ]
        self.set_limits.update(dims)
        with self._synced(create=bool(dims)):
            for dim, limit in dims:
                b = self.buckets.get(dim)
                if (
                    b is None or b.source != "set" or b.limit != limit
                ):  # (another process's bucket is kept)
                    self.buckets[dim] = Bucket(limit, limit / MINUTE, limit, now, "set", seen=now)

    @property
    def idle(self) -> bool:
        """True when nothing limits requests (the fast path): no limit known here, nor shared by
        another process (one stat of the state file)."""
        return (
            not self.buckets
            and self.window is None
            and not self.blocked_until
            and (self.shared is None or not self.shared.exists())
        )

    # -- the state shared with other processes -------------------------------------------------
    @contextlib.contextmanager
    def _synced(self, create: bool = True) -> Iterator[None]:
        """This limiter's lock, and the buckets as every process on the machine sees them: read
        from the shared state file before the body, written back after it (shared_limits.py)."""
        with self._lock:
            shared = self.shared if _SHARE[0] == 1 else None  # Ray actors split the limit instead
            if shared is None:
                yield
                return
            with shared.session(create=create) as data:
                if data is None:
                    yield
                    return
                offset = wall_offset()
                self._load(data, time.monotonic(), offset)
                yield
                data.update(self._state(offset))

    def _load(self, data: dict[str, Any], now: float, offset: float) -> None:
        buckets: dict[str, Bucket] = {}
        raw_buckets = data.get("buckets")
        for dim, b in raw_buckets.items() if isinstance(raw_buckets, dict) else ():
            try:
                if not all(_finite(b[k]) for k in ("limit", "rate", "level", "at", "low", "seen")):
                    continue  # NaN, inf or not a number: a value no process wrote
                bucket = Bucket(
                    float(b["limit"]),
                    float(b["rate"]),
                    float(b["level"]),
                    min(now, b["at"] - offset),
                    str(b["source"])[:16],
                    float(b["low"]),
                    float(b["high"]),
                    float(b["seen"]) - offset,
                )
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
            if dim in DIMS and bucket.limit > 0 and bucket.rate > 0:
                bucket.level = max(
                    bucket.level, -MAX_DEBT * bucket.limit
                )  # a corrupt file claims no endless debt
                buckets[dim] = bucket
        for (
            dim,
            limit,
        ) in self.set_limits.items():  # this process's --rpm/--tpm, unless a reply taught better
            if dim not in buckets or (buckets[dim].source == "set" and buckets[dim].limit != limit):
                level = min(limit, buckets[dim].level) if dim in buckets else limit
                buckets[dim] = Bucket(limit, limit / MINUTE, level, now, "set")
            if buckets[dim].source == "set":
                buckets[dim].seen = now
        self.buckets = buckets
        spent = data.get("spent")
        if isinstance(spent, list) and len(spent) == len(DIMS) and all(_finite(x) for x in spent):
            self.spent = [float(x) for x in spent]
        self.blocked_until = self._blocked(data.get("blocked_until"), now, offset)
        self._expire_locked(now)

    def _blocked(self, raw: Any, now: float, offset: float) -> float:
        """The shared `blocked_until`, validated: another process (or a stray file) may have written
        anything there. A time further ahead than any reply is believed for (MAX_BELIEVED_WAIT) is
        ignored with a warning, not clamped into a wait that blames --max-wait."""
        if not raw:
            return 0.0
        if not _finite(raw):
            log.warning(
                "rate limits: %s: the shared state's blocked_until %.40r is not a time; ignored",
                self.name,
                raw,
            )
            return 0.0
        blocked = float(raw) - offset
        if blocked > now + MAX_BELIEVED_WAIT + 1:
            log.warning(
                "rate limits: %s: the shared state says the endpoint is blocked for %.0f s more, over the %g s "
                "any reply is believed for; ignored (a stray or hostile file: %s)",
                self.name,
                blocked - now,
                MAX_BELIEVED_WAIT,
                self.shared.path if self.shared is not None else "?",
            )
            return 0.0
        return blocked

    def _state(self, offset: float) -> dict[str, Any]:
        return {
            "endpoint": self.name,
            "spent": list(self.spent),
            "blocked_until": self.blocked_until + offset if self.blocked_until else 0.0,
            "buckets": {
                dim: {
                    "limit": b.limit,
                    "rate": b.rate,
                    "level": b.level,
                    "at": b.at + offset,
                    "source": b.source,
                    "low": b.low,
                    "high": b.high if math.isfinite(b.high) else 1e300,
                    "seen": b.seen + offset,
                }
                for dim, b in self.buckets.items()
            },
        }

    # -- before a request ----------------------------------------------------------------------
    def too_large(self, costs: tuple[float, float, float, float]) -> str | None:
        """Why a request of `costs` can never pass (larger than a whole bucket), else None."""
        if not self.buckets:
            return None
        now = time.monotonic()
        self._expire(now)
        confirmed = now - self.too_large_at <= BELIEVE_FOR
        for dim, cost in zip(DIMS, costs):
            bucket = self.buckets.get(dim)
            if (
                bucket is not None
                and (bucket.source == "set" or confirmed)
                and dim != "requests"
                and cost > bucket.limit * _SHARE[0]
            ):
                what = {"tokens": "tokens", "input": "input tokens", "output": "output tokens"}[dim]
                return (
                    f"rate limited: request too large for {self.name}: about {cost:,.0f} {what} against a limit "
                    f"of {bucket.limit * _SHARE[0]:,.0f} per window ({bucket.source}); it can never pass: shorten it "
                    "with --max-source-chars or --max-tokens"
                )
        return None

    async def acquire(
        self, costs: tuple[float, float, float, float], call: Call | None, not_before: float = 0.0
    ) -> Ticket:
        """Wait for a slot (concurrency window, buckets, a 429's retry-after), count the request."""
        ticket = Ticket(costs)
        if self.idle and not not_before:
            self.in_flight += 1
            self._count(ticket, time.monotonic())
            ticket.queued = False
            return ticket
        if self.window is not None:
            await self._window_slot()
        else:
            self.in_flight += 1
        with self._synced(create=bool(self.buckets)):
            now = time.monotonic()
            wait = max(not_before, self.blocked_until) - now
            for dim, cost in zip(DIMS, costs):
                bucket = self.buckets.get(dim)
                if bucket is not None:
                    pace = bucket.reserve(cost, now)
                    wait = max(
                        wait, pace if bucket.source == "set" else min(pace, MAX_BELIEVED_WAIT)
                    )
            self._count(ticket, now)
            self.pending.add(ticket)
        if wait > 0:
            try:
                await self._sleep(wait, call)
            except BaseException:
                self.release(ok=False, ticket=ticket)
                raise
        ticket.sent, ticket.queued = time.monotonic(), False
        return ticket

    def _count(self, ticket: Ticket, now: float) -> None:
        spent = self.spent
        for i, cost in enumerate(ticket.costs):
            spent[i] += cost
        ticket.marks, ticket.sent = tuple(spent), now
        self.sent += 1
        self.charged += ticket.costs[1] or ticket.costs[2] + ticket.costs[3]

    def _expire(self, now: float) -> None:
        """Forget learned limits no reply has confirmed for BELIEVE_FOR (and a hold past the cap):
        one hostile or stale reply is never believed for the life of the process."""
        with self._lock:
            self._expire_locked(now)

    def _expire_locked(self, now: float) -> None:
        # a limit set by hand in another process is believed while that process re-affirms it
        for dim in [
            d
            for d, b in self.buckets.items()
            if now - b.seen > BELIEVE_FOR
            and (b.source == "learned" or (self.shared is not None and d not in self.set_limits))
        ]:
            del self.buckets[dim]
        self.blocked_until = min(self.blocked_until, now + MAX_BELIEVED_WAIT)

    async def _sleep(self, wait: float, call: Call | None) -> None:
        budget = call.max_wait - _spent(call, time.monotonic()) if call is not None else math.inf
        if wait > budget:
            self.gave_up += 1
            raise RateLimited(
                f"rate limited: {self.name} would make this item wait more than --max-wait "
                f"{call.max_wait:g}s in all ({self.describe() or 'limit unknown'}); "
                "lower --concurrency, raise --max-wait, or --resume later"
            )
        self.waiting += 1
        try:
            await asyncio.sleep(wait)
        finally:
            self.waiting -= 1
            self.waited += wait
            if call is not None:
                _add_wait(call, wait)

    async def _window_slot(self) -> None:
        while self.window is not None and self.in_flight >= self.window:
            fut = asyncio.get_running_loop().create_future()
            self.waiters.append(fut)
            await fut
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self, *, ok: bool, ticket: Ticket | None = None) -> None:
        """A request finished (its reply read, or failed): free its place in the window."""
        self.in_flight = max(0, self.in_flight - 1)
        if ticket is not None:
            self.pending.discard(ticket)
        if ok and self.window is not None:
            self.window += 1.0 / self.window
            if self.window > self.peak:
                self.window = None
        while self.waiters and (self.window is None or self.in_flight < self.window):
            fut = self.waiters.popleft()
            if not fut.done():
                fut.get_loop().call_soon_threadsafe(_wake, fut)
                if self.window is not None:
                    break

    # -- after a reply -------------------------------------------------------------------------
    def observe(self, headers: Any, ticket: Ticket, status: int) -> float | None:
        """Learn from a reply's headers; for a 429, the seconds the provider asked to wait (or None)."""
        found: dict[str, dict[str, bytes]] = {}
        retry: float | None = None
        retry_s: float | None = None
        for key, value in headers.raw:
            key = key.lower()
            if key.startswith((b"x-ratelimit-", b"anthropic-ratelimit-")):
                m = _HEADER.match(key)
                if m is not None:
                    if m.group(1):
                        found.setdefault("requests" if m.group(2) == b"requests" else "tokens", {})[
                            m.group(1).decode()
                        ] = value
                    else:
                        found.setdefault(_ANTHROPIC_DIM[m.group(3)], {})[m.group(4).decode()] = (
                            value
                        )
            elif key == b"retry-after-ms":
                retry = _number(value, 0.001)
            elif key == b"retry-after":
                retry_s = _number(value, 1.0)
        if found:
            self._learn(found, ticket)
        if status != 429:
            return None
        self._throttled(ticket)
        return retry if retry is not None else retry_s

    def _learn(self, found: dict[str, dict[str, bytes]], ticket: Ticket) -> None:
        now = time.monotonic()
        with self._synced():
            for dim, fields in found.items():
                limit, remaining = _number(fields.get("limit")), _number(fields.get("remaining"))
                if not limit or remaining is None:
                    continue
                limit, remaining = limit / _SHARE[0], remaining / _SHARE[0]  # this process's part
                reset, slack = _reset(fields.get("reset"))
                reset = min(reset, MAX_BELIEVED_WAIT) if reset is not None else None
                bucket = self.buckets.get(dim)
                if bucket is None or bucket.source == "set":
                    bucket = self.buckets[dim] = Bucket(
                        limit, limit / MINUTE, remaining, now, "learned"
                    )
                bucket.learn(limit, remaining, reset, slack)
                i = DIMS.index(dim)
                later = max(0.0, self.spent[i] - ticket.marks[i]) if ticket.marks else 0.0
                # the provider counted `remaining` when it admitted the request, somewhere between
                # `ticket.sent` and now (an event loop may be late to send): no refill is assumed
                # since, so the level is never above the provider's
                bucket.level = min(limit, remaining - later - self._behind(ticket, i))
                bucket.at = bucket.seen = now

    def _behind(self, ticket: Ticket, i: int) -> float:
        """The cost (in dimension `i`) of requests counted before `ticket` but sent after it, or
        not sent yet (a 429's re-send waiting out its retry-after, a request slower to leave):
        the provider's `remaining` in `ticket`'s reply has not counted them, and `later` has not
        either. Without this, a reply re-synced the bucket above the provider's by their cost."""
        if not ticket.marks:
            return 0.0
        mark, sent = ticket.marks[i], ticket.sent
        return sum(
            t.costs[i]
            for t in self.pending
            if t is not ticket and t.marks and t.marks[i] < mark and (t.queued or t.sent > sent)
        )

    def give_back(self, dim: str, tokens: float) -> None:
        """A reply used `tokens` less of bucket `dim` than was charged for it (its reply budget), and
        the provider gives that back when the reply ends (Anthropic's output tokens): so does this."""
        if tokens > 0 and dim in self.buckets:
            with self._synced():
                b = self.buckets.get(dim)
                if b is not None:
                    b.level = min(b.limit, b.level + tokens)
                    self.charged -= tokens

    def _throttled(self, ticket: Ticket) -> None:
        """A 429: count it and halve the window (once for the requests sent before the last cut)."""
        with self._lock:
            self.rate_limited += 1
            if ticket.sent >= self.decreased_at:
                self.peak = max(self.peak, self.in_flight)
                self.window = max(1.0, self.in_flight / 2)
                self.decreased_at = time.monotonic()

    def hold(self, seconds: float) -> float:
        """After a 429 with no buckets to pace by: every request waits `seconds` (with jitter);
        returns the time this request may be sent again."""
        now = time.monotonic()
        seconds = min(seconds, MAX_BELIEVED_WAIT)
        with self._synced():
            if not self.buckets:
                self.blocked_until = max(self.blocked_until, now + seconds)
        return now + seconds * (1.0 + 0.25 * random.random()) + 0.05 * random.random()

    # -- reporting -----------------------------------------------------------------------------
    def describe(self) -> str:
        """The limits known, e.g. "6.0 requests/s (learned), 3,000 tokens/s (learned)"."""
        parts = []
        for dim in DIMS:
            b = self.buckets.get(dim)
            if b is not None:
                unit = {
                    "requests": "requests",
                    "tokens": "tokens",
                    "input": "input tokens",
                    "output": "output tokens",
                }[dim]
                parts.append(f"{b.limit:,.0f} {unit} per window, {b.rate:,.1f}/s ({b.source})")
        split = f" (this process's 1/{_SHARE[0]} of the limit)" if _SHARE[0] > 1 and parts else ""
        return "; ".join(parts) + split


def _finite(x: Any) -> bool:
    """A number (not a bool, NaN or infinity), as a state file from another process must hold."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def _waited(call: Call) -> float:
    account = call.account
    return account.rate_wait if account is not None else call.waited


def _spent(call: Call, now: float) -> float:
    """What the call has spent of --max-wait: the wall-clock since the limit first held it up (the
    refused requests' round trips count too), or its waits, whichever is more."""
    since = now - call.limited_since if call.limited_since is not None else 0.0
    if call.limited_since is None:
        call.limited_since = now
    return max(since, _waited(call))


def backoff_floor(tries: int) -> float:
    """The least wait before the `tries`-th re-send of a 429: doubling from MIN_BACKOFF, capped."""
    return min(MAX_BACKOFF, MIN_BACKOFF * 2.0 ** min(max(tries - 1, 0), 30))


def retry_wait(told: float | None, tries: int) -> float:
    """The wait before the `tries`-th re-send of a 429: what the provider asked (cut to
    MAX_BELIEVED_WAIT), never less than the growing floor (`retry-after: 0` is not "at once")."""
    floor = backoff_floor(tries)
    return floor if told is None else max(floor, min(told, MAX_BELIEVED_WAIT))


def _add_wait(call: Call, seconds: float) -> None:
    call.waited += seconds
    if call.account is not None:
        call.account.rate_wait += seconds


def _number(value: bytes | None, scale: float = 1.0) -> float | None:
    if value is None:
        return None
    try:
        n = float(value) * scale
    except ValueError:
        return None
    return n if math.isfinite(n) and n >= 0 else None


def _reset(value: bytes | None) -> tuple[float | None, float]:
    """(seconds until the bucket is full, how much later it may be): OpenAI's "1.5s" / "6m0s" /
    "20ms" (exact), or Anthropic's RFC 3339 time (whole seconds, so up to a second later)."""
    if not value:
        return None, 0.0
    text = value.decode("ascii", "replace").strip()
    parts = _DURATION.findall(text)
    if parts and "".join(n + u for n, u in parts) == text:
        scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
        return sum(float(n) * scale[u] for n, u in parts), 0.0
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None, 0.0
    return max(0.0, when - time.time()), 1.0


# -- the registry ------------------------------------------------------------------------------
#: how many processes share each limit (Ray actors): each paces itself to its part of it
_SHARE = [1]


def split(processes: int) -> None:
    """Pace this process to 1/`processes` of every limit, set or learned (one of `processes` Ray
    actors sharing a key). Each actor still re-syncs to the provider's `remaining`, which counts
    every actor's requests."""
    processes = max(1, int(processes))
    with _REGISTRY_LOCK:
        scale, _SHARE[0] = _SHARE[0] / processes, processes
        for lim in _LIMITERS.values():
            with lim._lock:
                for b in lim.buckets.values():
                    b.limit, b.rate, b.level, b.low, b.high = (
                        b.limit * scale,
                        b.rate * scale,
                        b.level * scale,
                        b.low * scale,
                        b.high * scale,
                    )


_LIMITERS: dict[tuple[str, str, str, str], Limiter] = {}
_REGISTRY_LOCK = threading.Lock()


def limiter_for(provider: str, base_url: str | None, api_key: str | None, model: str) -> Limiter:
    """The process-wide limiter of (provider, base URL, key, model): one budget for all its callers."""
    digest = hashlib.sha256((api_key or "").encode()).hexdigest()[:16]
    key = (provider, base_url or "", digest, model)
    with _REGISTRY_LOCK:
        limiter = _LIMITERS.get(key)
        if limiter is None:
            where = (
                redact(base_url) if base_url else f"{provider}'s API"
            )  # never credentials in a URL
            limiter = _LIMITERS[key] = Limiter(
                name=f"{model} at {where}", shared=SharedState.for_key(key)
            )
        return limiter


def limiters() -> list[Limiter]:
    """The limiters of this process that have sent anything."""
    with _REGISTRY_LOCK:
        return [lim for lim in _LIMITERS.values() if lim.sent]


def forget() -> None:
    """Drop every limiter (what was learned with them) and any split: tests, or a process that changes keys."""
    with _REGISTRY_LOCK:
        for lim in _LIMITERS.values():
            if lim.shared is not None:
                lim.shared.close()
        _LIMITERS.clear()
        _SHARE[0] = 1


def progress_note() -> str:
    """One short line for a progress bar: the pace the limits allow and requests waiting on them."""
    parts = []
    for lim in limiters():
        pace = ", ".join(f"{_short(b.rate)} {_UNIT[d]}/s" for d, b in lim.buckets.items())
        if pace or lim.waiting:
            parts.append(
                f"limit {pace or 'unknown'}" + (f" · {lim.waiting} waiting" if lim.waiting else "")
            )
    return " | ".join(parts)


def report(elapsed: float, items: int) -> list[str]:
    """Summary lines of the limits met in this run (none when no limit was met)."""
    lines = []
    for lim in limiters():
        if not (lim.buckets or lim.rate_limited):
            continue
        lines.append(f"rate limit of {lim.name}: {lim.describe() or 'not announced (429s only)'}")
        per_item = (
            f"; limiter tokens per item {lim.charged / items:,.0f}" if items and lim.charged else ""
        )
        lines.append(
            f"  429s received: {lim.rate_limited} of {lim.sent} requests; waited on the limit "
            f"{lim.waited:,.1f}s in all{per_item}"
        )
        if lim.gave_up:
            lines.append(f"  {lim.gave_up} requests given up after --max-wait")
        if lim.waited and elapsed >= 120:
            lines.append(
                "  the rate limit set this run's pace: for large runs, --batch uses the provider's batch "
                "quota (separate and much larger) at about half the price"
            )
    return lines


_UNIT = {"requests": "req", "tokens": "tok", "input": "in-tok", "output": "out-tok"}


def _short(n: float) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else f"{n:.1f}"


def stats() -> list[dict[str, Any]]:
    """The limits met in this run, as data (`run --json`)."""
    return [
        {
            "endpoint": lim.name,
            "limits": lim.describe() or None,
            "responses_429": lim.rate_limited,
            "requests": lim.sent,
            "waited_s": round(lim.waited, 3),
            "given_up": lim.gave_up,
            "limiter_tokens": round(lim.charged),
        }
        for lim in limiters()
        if lim.buckets or lim.rate_limited
    ]
