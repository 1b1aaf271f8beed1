"""Online judging: new traces from a source, sampled, filtered, judged under a cap per period, written back.

    with RunStore(store_path) as store:
        run = Run.online(store, settings, judging=judge, key="watch:" + source.name)
        summary = await Watch(source, run, judge, rate=0.25, cap=PeriodBudget(200), period=3600,
                              exporter=exporter).run(stop)

Each trace is considered once: its id is its item's id, and a trace whose item has any result in
the run (judged, unscored or invalid) is never judged again, also after a restart (the run is the
same one: `Run.online` resumes it). Sampling is deterministic by trace id (`sampled`): the same
traces are kept at the same rate, whichever process or restart sees them. Filters (`--filter
KEY=VALUE`) keep a trace when one of its spans matches: `name=...` a span name, `kind=RETRIEVER`
an OpenInference span kind, anything else an attribute's value.

The cap (`cap`, in model calls) holds whatever the concurrency: an item's worst case (`bound`) is
reserved before it is judged and replaced by what it used after; an item that does not fit ends
unscored with a reason starting "budget", exported as unscored. Each period starts a new cap. Every
result is committed to the run store, then sent to the exporter (OTel spans: a child of the judged
span, in the source's project), then counted in the summary.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, InvalidItemError, JudgeflowError
from ..io.openinference import trace_records
from ..io.otlp import Span
from ..items import Item, items_from_record
from ..judging import ItemLike, Judging
from ..results import Judgment, Usage
from .run import Run

#: seconds between polls of a source that had nothing new
POLL = 1.0


def sampled(trace_id: str, rate: float) -> bool:
    """Whether the trace is in the sample: sha256(trace id) below `rate` of its range (stable across
    processes and restarts, and not correlated with an upstream sampler's trace-id ratio)."""
    if rate >= 1:
        return True
    if rate <= 0:
        return False
    return int(hashlib.sha256(trace_id.encode()).hexdigest()[:16], 16) < math.floor(rate * 2 ** 64)


def parse_filters(pairs: Sequence[str] | None) -> list[tuple[str, str]]:
    out = []
    for pair in pairs or ():
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise ConfigError(f"--filter {pair!r}: write KEY=VALUE, e.g. --filter kind=RETRIEVER or "
                              "--filter name=rag or --filter llm.model_name=gpt-4o-mini")
        out.append((key.strip(), value.strip()))
    return out


def matches(spans: Sequence[Span], filters: Sequence[tuple[str, str]]) -> bool:
    """Every filter matched by some span of the trace."""
    def one(s: Span, key: str, value: str) -> bool:
        if key == "name":
            return s.name == value
        if key == "kind":
            return s.kind == value.upper()
        return key in s.attributes and str(s.attributes[key]) == value

    return all(any(one(s, k, v) for s in spans) for k, v in filters)


class BudgetDenied(JudgeflowError):
    """An item's worst case does not fit in what is left of the period's cap."""


class PeriodBudget:
    """A cap on model calls per period, reserved before each item (its worst case) and settled after.

    The same shape as `runs.budget.Budget` (reserve / settle / spent / new_period), so the watch can
    take that one once it reserves per call."""

    def __init__(self, cap: float) -> None:
        if cap < 0 or cap != int(cap):
            raise ConfigError(f"--budget {cap!r}: give a whole number of model calls per period, 0 or more")
        self.cap, self.spent, self.reserved, self.denied = float(cap), 0.0, 0.0, 0
        self.total = 0.0
        """Spent over all periods."""
        self.peak = 0.0
        """The most spent in one period."""
        self._lock = threading.Lock()

    async def reserve(self, amount: float) -> float:
        """Hold `amount` calls; wait while it could fit once items in flight settle; BudgetDenied if not."""
        while True:
            with self._lock:
                if self.spent + self.reserved + amount <= self.cap:
                    self.reserved += amount
                    return amount
                if self.spent + amount > self.cap or self.reserved == 0:
                    self.denied += 1
                    raise BudgetDenied(f"budget: {self.spent:g} of {self.cap:g} calls this period spent and "
                                       f"{self.reserved:g} reserved; the item needs up to {amount:g}")
            await asyncio.sleep(0.005)

    def settle(self, reserved: float, model: str, usage: Usage) -> None:
        with self._lock:
            self.reserved = max(self.reserved - reserved, 0.0)
            self.spent += usage.calls
            self.total += usage.calls
            self.peak = max(self.peak, self.spent)

    def new_period(self) -> None:
        with self._lock:
            self.spent, self.denied = 0.0, 0

    def describe(self) -> str:
        """"12 of 200 call(s)" this period (as `runs.budget.Budget` says it)."""
        return f"{self.spent:g} of {self.cap:g} call(s)"

    def summary(self) -> dict[str, Any]:
        return {"unit": "calls", "cap_per_period": self.cap, "spent_this_period": self.spent,
                "spent_total": self.total, "peak_period": self.peak, "denied": self.denied}


def item_bound(*, strategy: str, coverage: bool, reasks: int, retries: int) -> int:
    """The most model calls one item can make: each step, each re-ask, each retry."""
    steps = (1 if strategy == "single" else 2) + (1 if coverage else 0)
    return steps * (1 + reasks) * (1 + retries)


class Capped:
    """A Judging whose items reserve their worst case from `budget` first (cache hits cost nothing:
    this sits under the response cache)."""

    def __init__(self, inner: Judging, budget: PeriodBudget, bound: int) -> None:
        self.inner, self.budget, self.bound = inner, budget, bound

    @property
    def model(self) -> str:
        return self.inner.model

    def fingerprint(self, item: Item) -> str | None:
        return self.inner.fingerprint(item)

    def spec(self) -> Any:
        return self.inner.spec()  # type: ignore[attr-defined]

    async def ajudge(self, item: ItemLike) -> Judgment:
        if not isinstance(item, Item):
            return await self.inner.ajudge(item)
        try:
            held = await self.budget.reserve(self.bound)
        except BudgetDenied as e:
            return Judgment.unscored(item.id, str(e), extra=item.extra, human_label=item.label)
        j = None
        try:
            j = await self.inner.ajudge(item)
            return j
        finally:
            self.budget.settle(held, self.model, j.usage if j is not None else Usage(calls=self.bound))

    async def aclose(self) -> None:
        await self.inner.aclose()


class WatchSummary:
    """What a watch saw and did."""

    def __init__(self) -> None:
        self.traces = self.already = self.not_sampled = self.filtered = 0
        self.judged = self.unscored = self.invalid = self.label_1 = self.budget_denied = 0
        self.usage = Usage()
        self.periods = 1

    def add(self, j: Judgment) -> None:
        self.usage.add(j.usage)
        if j.status == "judged":
            self.judged += 1
            self.label_1 += j.label == 1
        elif j.status == "invalid":
            self.invalid += 1
        else:
            self.unscored += 1
            self.budget_denied += (j.error or "").startswith("budget")

    def lines(self) -> list[str]:
        taken = self.traces - self.already - self.not_sampled - self.filtered
        return [f"traces seen {self.traces}: {self.already} judged before, {self.not_sampled} not in the sample, "
                f"{self.filtered} filtered out, {taken} taken now",
                f"verdicts {self.judged + self.unscored + self.invalid}: {self.judged} judged ({self.label_1} "
                f"hallucination), {self.unscored} unscored ({self.budget_denied} over the budget), {self.invalid} invalid",
                f"calls {self.usage.calls}, tokens {self.usage.input_tokens + self.usage.output_tokens:,}, "
                f"periods {self.periods}"]


class Watch:
    """The loop: poll the source, choose the traces, judge them, commit, export."""

    def __init__(self, source: Any, run: Run, judging: Judging, *, rate: float = 1.0,
                 filters: Sequence[tuple[str, str]] = (), budget: Any = None, bound: int | None = None,
                 period: float = 3600.0, exporter: Any = None, concurrency: int = 16, once: bool = False,
                 poll: float = POLL, settings: Any = None) -> None:
        if not 0 <= rate <= 1:
            raise ConfigError(f"--sample-rate {rate}: give a share between 0 and 1, e.g. 0.1 for one trace in ten")
        self.source, self.run, self.rate, self.filters = source, run, rate, list(filters)
        self.budget, self.period, self.exporter = budget, period, exporter
        # a bound: the cap is reserved per item here (PeriodBudget); None: the judging's own client reserves
        # per call (runs.budget.Budget), and the watch only starts its periods
        self.judging: Judging = Capped(judging, budget, bound) if budget is not None and bound is not None else judging
        self.concurrency, self.once, self.poll_every, self.settings = concurrency, once, poll, settings
        self.done = run.store.done_ids(run.run_id)
        self.summary = WatchSummary()

    def keep(self, trace_id: str) -> bool:
        """Whether a trace is new and in the sample (asked before its spans are fetched, where a source can)."""
        return trace_id not in self.done and sampled(trace_id, self.rate)

    def choose(self, traces: list[list[Span]]) -> list[Item | InvalidItemError]:
        rows: list[Item | InvalidItemError] = []
        for spans in traces:
            tid = spans[0].trace_id
            self.summary.traces += 1
            if tid in self.done:
                self.summary.already += 1
            elif not sampled(tid, self.rate):
                self.summary.not_sampled += 1
            elif not matches(spans, self.filters):
                self.summary.filtered += 1
            else:
                rows.extend(self._items(spans))
        return rows

    def _items(self, spans: list[Span]) -> list[Item | InvalidItemError]:
        s = self.settings
        out: list[Item | InvalidItemError] = []
        for line, rec in trace_records(spans):
            if isinstance(rec, InvalidItemError):
                rec.item_id = rec.item_id or spans[0].trace_id
                out.append(rec)
                continue
            try:
                out.extend(items_from_record(rec, path=spans[0].path, line=line,
                                             system=bool(s and s.system_prompt)))
            except InvalidItemError as e:
                e.item_id = e.item_id or rec["id"]
                out.append(e)
        return out

    async def judge(self, rows: list[Item | InvalidItemError]) -> None:
        async for j in self.run.judge(self.judging, rows, concurrency=self.concurrency):
            self.done.add(j.id)
            self.summary.add(j)
            if self.exporter is not None:
                self.exporter.export(j)

    async def loop(self, stop: asyncio.Event) -> WatchSummary:
        """Until `stop` is set (SIGTERM), or with `once` until the source has nothing new."""
        started = time.monotonic()
        while not stop.is_set():
            if self.budget is not None and time.monotonic() - started >= self.period * self.summary.periods:
                self.budget.new_period()
                self.summary.periods += 1
            traces = await asyncio.to_thread(self.source.poll)
            rows = self.choose(traces)
            step = max(self.concurrency * 2, 1)  # a stop is seen between chunks: in-flight items finish, no more start
            for i in range(0, len(rows), step):
                if stop.is_set():
                    break
                await self.judge(rows[i:i + step])
            if not traces:
                if self.once:
                    break
                try:
                    await asyncio.wait_for(stop.wait(), self.poll_every)
                except asyncio.TimeoutError:
                    pass
        return self.summary
