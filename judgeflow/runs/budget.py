"""A hard spend cap shared by every model call of a run (`--budget 200` calls, `--budget '$1.50'`).

    budget = Budget(calls=200)                     # or Budget(usd=1.5), or both; Budget.parse("$1.50")
    judge = Judge("openai/gpt-4o-mini", budget=budget)   # panels, cascades, repeats: the same object
    budget.summary()   # {"calls": {"cap": 200, "spent": 12, ...}, "usd": None, "denied": 0, ...}

    hold = await budget.reserve(Cost(calls=3, usd=0.002))   # before a call is sent (waits or refuses)
    hold.settle(usage, model)                               # after it: what it really used
    budget.spent, budget.remaining, budget.new_period()     # `judgeflow watch`: a cap per period

The LLM client (`backends/llm/client.py`) reserves, before it sends a request, the most the request
can cost (`bound`): for calls, the attempts Instructor may make (a re-ask is a call); for dollars,
those attempts' request bytes (a token is at least one byte) and re-asks' growth plus their
`max_tokens`, at the model's dearest input rate. The reservation is held while the call is in flight
and then settled to what the call used (its replies and tokens, priced by `runs/pricing.py`), so
spent + held never passes the cap, whatever the concurrency. A call that does not fit now but would
once calls in flight settle waits for them (woken by their settling, from any thread or event loop);
one that cannot fit raises `BudgetExceeded` (its item ends unscored, reason "budget: ...").

A waiter never waits on a reservation that cannot come back: its own task's (a task holding one and
asking for more would wait for itself), or one whose task ended without settling it (a leak: it is
counted as spent at its full bound, the conservative reading). That was the hang of the first
version, which waited whenever anything was held.

`spent` counts replies received (what a provider bills) and their estimated dollars, and a request
that was sent and got no reply (timed out, cancelled) at its whole reservation: the provider may
bill it, so it is spent until the provider says otherwise (`Hold.settle(..., unanswered=n)`). One Budget is one cap for one
run (one invocation: a resume starts a new one); `new_period()` starts a new period of the same cap
(spent back to 0; calls in flight settle into the new period).
"""

from __future__ import annotations

import asyncio
import math
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from ..errors import BudgetExceeded, ConfigError
from ..results import Usage
from .pricing import Price, estimate_cost, load_prices, price_for

#: tokens a chat template may add around a request's text (role markers, tool framing)
TEMPLATE_TOKENS = 64
#: tokens a re-ask adds besides the rejected reply: Instructor's validation-error message
REASK_TOKENS = 1024
_SLACK = 1e-12


@dataclass(frozen=True)
class Cost:
    """An amount in both units: model calls and estimated US dollars."""

    calls: float = 0.0
    usd: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.calls + other.calls, self.usd + other.usd)

    def __sub__(self, other: Cost) -> Cost:
        return Cost(self.calls - other.calls, self.usd - other.usd)


class Hold:
    """A reservation on a Budget for one call in flight: `settle(usage, model)` once the call is
    done (or `release()` if it was never sent). Also an async context manager that releases on
    exit what was not settled."""

    def __init__(self, budget: Budget, amount: Cost, owner: asyncio.Task[Any] | None) -> None:
        self.budget, self.amount, self.owner = budget, amount, owner
        self.open = True

    def settle(self, usage: Usage, model: str, *, unanswered: int = 0) -> Cost:
        """Replace the reservation by what the call used; returns that cost. `unanswered`: requests
        that were sent and got no reply (a timeout, a cancel): the provider may bill them, so the
        call is charged its whole reservation (and at least one call per such request)."""
        cost = self.budget.cost(model, usage)
        if unanswered:
            cost = Cost(max(self.amount.calls, cost.calls + unanswered), max(self.amount.usd, cost.usd))
        return self.budget._close(self, cost, usage)

    def release(self) -> None:
        """Give the reservation back unspent (the call was not sent)."""
        self.budget._close(self, Cost(), None)

    async def __aenter__(self) -> Hold:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.open:
            self.release()


class Budget:
    """A cap on model calls and/or estimated US dollars, reserved before each call is sent.
    Thread-safe: one budget may be shared by several event loops (the sync facade's, a run's)."""

    def __init__(self, calls: float | None = None, usd: float | None = None, *,
                 prices: dict[str, Price] | None = None) -> None:
        if calls is None and usd is None:
            raise ConfigError("a Budget needs a cap: Budget(calls=200), Budget(usd=1.5) or both")
        for name, cap in (("calls", calls), ("usd", usd)):
            if cap is not None and (isinstance(cap, bool) or not isinstance(cap, (int, float))
                                    or not math.isfinite(cap) or cap < 0):
                raise ConfigError(f"a budget's {name} cap must be a finite number, 0 or more; got {cap!r}")
        if calls is not None and calls != int(calls):
            raise ConfigError(f"a calls budget is a whole number, got {calls!r} (or give dollars: '${calls}')")
        self.calls_cap = None if calls is None else int(calls)
        self.usd_cap = None if usd is None else float(usd)
        self.prices = prices if prices is not None else (load_prices() if usd is not None else None)
        self.spent = Cost()
        """What settled calls spent this period."""
        self.usage = Usage()
        """Their calls and tokens, in all periods."""
        self.denied = 0
        """Calls refused this period because they did not fit."""
        self._holds: set[Hold] = set()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._watched: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, text: str | int | float | None, *, prices: dict[str, Price] | None = None) -> Budget | None:
        """`200` (calls), `$1.50` or `1.5usd` (estimated US dollars); None or "": no cap."""
        if text is None or text == "":
            return None
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            return cls(calls=text, prices=prices)
        t = str(text).strip().lower()
        money = t.startswith("$") or t.endswith("usd")
        number = t.removeprefix("$").removesuffix("usd").strip()
        try:
            value = float(number)
        except ValueError:
            raise ConfigError(f"--budget {text!r} is not a number of calls (200) or dollars ('$1.50', 1.5usd)") from None
        if not math.isfinite(value) or value < 0:
            raise ConfigError(f"--budget {text!r}: a budget is a finite amount, 0 or more")
        if money:
            return cls(usd=value, prices=prices)
        if value != int(value):
            raise ConfigError(f"--budget {text!r}: a number of calls is a whole number; for dollars write '${number}'")
        return cls(calls=int(value), prices=prices)

    def check_model(self, model: str) -> None:
        """Raise ConfigError when a dollar cap cannot price `model` (at start, before any call)."""
        if self.usd_cap is not None and price_for(model, self.prices) is None:
            raise ConfigError(f"--budget in dollars needs a price for {model}, and none is known: give --prices FILE "
                              f"(USD per 1M tokens, e.g. [\"{model}\"] input = 0.15, output = 0.60) or cap calls "
                              "instead (--budget 200)")

    def bound(self, model: str, *, attempts: int, request_bytes: int, max_tokens: int) -> Cost:
        """The most `attempts` requests of `request_bytes` with `max_tokens` replies can cost. A re-ask
        carries the rejected reply and the validation error too."""
        if self.usd_cap is None:
            return Cost(calls=attempts)
        price = price_for(model, self.prices)
        if price is None:
            raise BudgetExceeded(f"budget: no price is known for {model}; give --prices FILE or cap calls")
        rate = max(price.input, price.cache_write or 0.0)
        grown = max_tokens + REASK_TOKENS + TEMPLATE_TOKENS
        tokens_in = sum(request_bytes + TEMPLATE_TOKENS + k * grown for k in range(attempts))
        return Cost(calls=attempts, usd=(tokens_in * rate + attempts * max_tokens * price.output) / 1_000_000)

    def cost(self, model: str, usage: Usage) -> Cost:
        """What `usage` on `model` spent (dollars only when this budget caps them)."""
        usd = (estimate_cost(model, usage, prices=self.prices) or 0.0) if self.usd_cap is not None else 0.0
        return Cost(calls=usage.calls, usd=usd)

    # -- reserving ---------------------------------------------------------------------------------

    def _fits(self, total: Cost) -> bool:
        return ((self.calls_cap is None or total.calls <= self.calls_cap + _SLACK)
                and (self.usd_cap is None or total.usd <= self.usd_cap + _SLACK))

    def _held(self, holds: set[Hold] | list[Hold]) -> Cost:
        total = Cost()
        for h in holds:
            total = total + h.amount
        return total

    def _try(self, amount: Cost, me: asyncio.Task[Any] | None) -> Hold | bool:
        """A Hold: reserved; True: may fit once other calls in flight settle; False: cannot fit."""
        with self._lock:
            self._reap()
            held = self._held(self._holds)
            if self._fits(self.spent + held + amount):
                hold = Hold(self, amount, me)
                self._holds.add(hold)
                return hold
            others = [h for h in self._holds if h.owner is not me]
            if others and self._fits(self.spent + (held - self._held(others)) + amount):
                return True
            self.denied += 1
            return False

    def _reap(self) -> None:
        """Holds whose task ended unsettled: counted as spent at their full bound (lock held)."""
        for h in [h for h in self._holds if h.owner is not None and h.owner.done()]:
            self._holds.discard(h)
            h.open = False
            self.spent = self.spent + h.amount

    async def reserve(self, amount: Cost) -> Hold:
        """Hold `amount` for a call about to be sent: at once if it fits, after calls in flight settle
        if it may fit then; raise BudgetExceeded ("budget: ...") if it cannot fit."""
        me = asyncio.current_task()
        while True:
            loop = asyncio.get_running_loop()
            woken: asyncio.Future[None] = loop.create_future()
            with self._lock:
                self._waiters.append((loop, woken))
            got = self._try(amount, me)
            if isinstance(got, Hold):
                self._forget(loop, woken)
                self._watch(me)
                return got
            if got is False:
                self._forget(loop, woken)
                raise BudgetExceeded(f"budget: {self.describe()} spent; the next call needs up to "
                                     f"{self._fmt(amount)} (resume with a larger --budget)")
            try:
                await woken  # a settle, a release or a new period wakes every waiter to look again
            finally:
                self._forget(loop, woken)

    def _watch(self, task: asyncio.Task[Any] | None) -> None:
        """Once per task: when it ends, a hold it left unsettled is reaped and the waiters woken."""
        if task is None:
            return
        with self._lock:
            new = task not in self._watched
            self._watched.add(task)
        if new:
            task.add_done_callback(lambda _t: self._wake_after_reap())

    def _forget(self, loop: asyncio.AbstractEventLoop, woken: asyncio.Future[None]) -> None:
        with self._lock:
            self._waiters = [(lp, f) for lp, f in self._waiters if f is not woken]

    def _wake(self) -> None:
        with self._lock:
            waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, fut)

    def _wake_after_reap(self) -> None:
        with self._lock:
            self._reap()
        self._wake()

    def _close(self, hold: Hold, spent: Cost, usage: Usage | None) -> Cost:
        with self._lock:
            if hold.open:
                hold.open = False
                self._holds.discard(hold)
                self.spent = self.spent + spent
                if usage is not None:
                    self.usage.add(usage)
        self._wake()
        return spent

    def charge(self, usage: Usage, model: str) -> Cost:
        """Count spend made outside a reservation (a client not carrying this cap, e.g. a backend
        `tune` was handed); returns its cost."""
        cost = self.cost(model, usage)
        with self._lock:
            self.spent = self.spent + cost
            self.usage.add(usage)
        return cost

    # -- reading -----------------------------------------------------------------------------------

    @property
    def reserved(self) -> Cost:
        """What calls in flight hold."""
        with self._lock:
            return self._held(self._holds)

    @property
    def remaining(self) -> Cost:
        """What is left of each cap this period (inf for a unit not capped), holds counted as spent."""
        with self._lock:
            used = self.spent + self._held(self._holds)
        return Cost(math.inf if self.calls_cap is None else max(self.calls_cap - used.calls, 0.0),
                    math.inf if self.usd_cap is None else max(self.usd_cap - used.usd, 0.0))

    @property
    def exhausted(self) -> bool:
        """True once a call was refused for want of budget this period."""
        return self.denied > 0

    def new_period(self) -> None:
        """Start a new period of the same cap (`judgeflow watch`): spent and denied back to 0; calls
        in flight keep their holds and settle into the new period."""
        with self._lock:
            self.spent, self.denied = Cost(), 0
        self._wake()

    def restore(self, spent: Cost) -> None:
        """Count `spent` as spent this period already (a restarted watch's period, from its run store)."""
        with self._lock:
            self.spent = Cost(max(self.spent.calls, spent.calls), max(self.spent.usd, spent.usd))
        self._wake()

    def _fmt(self, amount: Cost) -> str:
        parts = ([f"{amount.calls:g} call(s)"] if self.calls_cap is not None else []) + \
                ([f"${amount.usd:.4f}"] if self.usd_cap is not None else [])
        return " and ".join(parts)

    def describe(self) -> str:
        """"12 of 200 call(s)", "$0.0123 of $1.5000", or both."""
        parts = ([f"{self.spent.calls:g} of {self.calls_cap} call(s)"] if self.calls_cap is not None else []) + \
                ([f"${self.spent.usd:.4f} of ${self.usd_cap:.4f}"] if self.usd_cap is not None else [])
        return " and ".join(parts)

    def summary(self) -> dict[str, Any]:
        """Spent vs cap, for the run summary and `--json`."""
        held = self.reserved
        with self._lock:
            spent = self.spent
            return {"calls": None if self.calls_cap is None else
                    {"cap": self.calls_cap, "spent": int(spent.calls), "held": int(held.calls)},
                    "usd": None if self.usd_cap is None else
                    {"cap": self.usd_cap, "spent": round(spent.usd, 8), "held": round(held.usd, 8)},
                    "denied": self.denied, "exhausted": self.denied > 0}


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def spend_cap(spec: Any) -> Budget | None:
    """A new Budget for a run's `--budget` (a `RunSpec`'s `budget`, priced by its `prices`): one per
    invocation, shared by every member; None without a cap."""
    from .pricing import load_prices

    return Budget.parse(spec.budget, prices=load_prices(spec.prices) if spec.budget else None)
