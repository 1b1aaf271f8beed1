"""Online judging: new traces from a source, sampled, filtered, judged under a cap per period, written back.

    with RunStore(store_path) as store:
        budget = Budget(calls=200)                      # runs.budget: reserved before each call
        judge = Judge("openai/gpt-4o-mini", budget=budget)
        run = Run.online(store, settings, judging=judge, key="watch:" + source.name)
        summary = await Watch(source, run, judge, rate=0.25, budget=budget, period=3600,
                              exporter=exporter).loop(stop)   # budget.new_period() every period

Each trace is considered once: its id is its item's id, and a trace whose item has any result in
the run (judged, unscored or invalid) is never judged again, also after a restart (the run is the
same one: `Run.online` resumes it). Sampling is deterministic by trace id (`sampled`): the same
traces are kept at the same rate, whichever process or restart sees them. Filters (`--filter
KEY=VALUE`) keep a trace when one of its spans matches: `name=...` a span name, `kind=RETRIEVER`
an OpenInference span kind, anything else an attribute's value.

The cap is `runs.budget.Budget`, the judging's own (each request reserves the most it can cost before
it is sent, so concurrency cannot pass it); the watch starts a new period of it every `period`
seconds. A row whose calls did not fit ends unscored with a reason starting "budget", is exported
as unscored, and is not judged again (it has a result). Every
result is committed to the run store, written to `output` (`watch -o`, a line as it is judged:
`runs/watch_output.py`), then sent to the exporter (OTel spans linked to the judged span, in the
source's project; Phoenix span annotations on it), then counted in the summary.

Nothing a source sends ends the watch: input it cannot read comes as an InvalidItemError and is
written as an invalid row (once: its id is the span or trace, else `file:line`); a poll that fails
is reported (its URLs masked) and retried after a backoff. The poll runs in a daemon thread, so a
stop is seen at once even while a poll is stuck. The period's spend is kept in the run store
(`RunStore.set_state`): a restart inside a period goes on with it.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, InvalidItemError
from ..io.openinference import trace_records
from ..io.otlp import Span
from ..items import DEFAULT_MAX_INPUT_CHARS, Item, checked_item, items_from_record
from ..judging import Judging
from ..redact import mask_urls, redact
from ..results import Judgment, Usage
from .budget import Cost
from .run import Run
from .with_inputs import input_texts

#: seconds between polls of a source that had nothing new
POLL = 1.0
#: after a failed poll the watch waits BACKOFF seconds, doubling to BACKOFF_CAP while polls keep failing
BACKOFF, BACKOFF_CAP = 1.0, 60.0
#: with --once, polls that fail in a row before the watch stops (it never stops on one)
ONCE_TRIES = 3


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


class WatchSummary:
    """What a watch saw and did."""

    def __init__(self) -> None:
        self.traces = self.already = self.not_sampled = self.filtered = 0
        self.judged = self.unscored = self.invalid = self.label_1 = self.budget_denied = 0
        self.source_errors = 0
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
                f"periods {self.periods}" + (f"; {self.source_errors} failed poll(s) of the source, retried"
                                             if self.source_errors else "")]


class Watch:
    """The loop: poll the source, choose the traces, judge them, commit, export."""

    #: a WatchOutput (`watch -o FILE.jsonl`, runs/watch_output.py): each verdict written as it is judged
    output: Any = None

    def __init__(self, source: Any, run: Run, judging: Judging, *, rate: float = 1.0,
                 filters: Sequence[tuple[str, str]] = (), budget: Any = None,
                 period: float = 3600.0, exporter: Any = None, concurrency: int = 16, once: bool = False,
                 poll: float = POLL, settings: Any = None, clock: Any = time.monotonic,
                 backoff: float = BACKOFF, warn: Any = None) -> None:
        if not 0 <= rate <= 1:
            raise ConfigError(f"--sample-rate {rate}: give a share between 0 and 1, e.g. 0.1 for one trace in ten")
        self.source, self.run, self.rate, self.filters = source, run, rate, list(filters)
        self.budget, self.period, self.exporter = budget, period, exporter
        self.judging = judging  # built with `budget` (runs.budget.Budget): its client reserves before each call
        self.concurrency, self.once, self.poll_every, self.settings = concurrency, once, poll, settings
        self.clock, self.backoff = clock, backoff
        self.warn = warn or (lambda line: print(line, file=sys.stderr, flush=True))
        self.done = run.store.done_ids(run.run_id)
        self._state_key, self._period_start = f"watch-budget:{run.run_id}", time.time()
        self.summary = WatchSummary()

    def keep(self, trace_id: str) -> bool:
        """Whether a trace is new and in the sample (asked before its spans are fetched, where a source can)."""
        return trace_id not in self.done and sampled(trace_id, self.rate)

    def choose(self, traces: list[list[Span] | InvalidItemError]) -> list[Item | InvalidItemError]:
        rows: list[Item | InvalidItemError] = []
        for spans in traces:
            self.summary.traces += 1
            if isinstance(spans, InvalidItemError):  # input the source could not read: an invalid row, once
                spans.item_id = spans.item_id or f"{spans.path or 'source'}:{spans.line or 0}"
                if spans.item_id in self.done:
                    self.summary.already += 1
                else:
                    rows.append(spans)
                continue
            tid = spans[0].trace_id
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
            limit = getattr(s, "max_input_chars", None) or DEFAULT_MAX_INPUT_CHARS
            try:
                out.extend(checked_item(it, limit, path=spans[0].path) if isinstance(it, Item) else it
                           for it in items_from_record(rec, path=spans[0].path, line=line,
                                                       system=bool(s and s.system_prompt)))
            except InvalidItemError as e:
                e.item_id = e.item_id or rec["id"]
                out.append(e)
        return out

    async def judge(self, rows: list[Item | InvalidItemError]) -> None:
        texts = input_texts(rows) if self.output is not None else {}
        async for j in self.run.judge(self.judging, rows, concurrency=self.concurrency, done=self.done):
            self.done.add(j.id)
            self.summary.add(j)
            if self.output is not None:
                self.output.write(j, texts.get(j.id))
            if self.exporter is not None:
                self.exporter.export(j)

    async def loop(self, stop: asyncio.Event) -> WatchSummary:
        """Until `stop` is set (SIGTERM), or with `once` until the source has nothing new. A poll
        that fails is retried after a backoff (BACKOFF doubling to BACKOFF_CAP), never the end."""
        started = self.clock() - self._resume_period()
        self._failed, self._polled = 0, False
        while not stop.is_set():
            if self.budget is not None and self.clock() - started >= self.period * self.summary.periods:
                self.budget.new_period()
                self.summary.periods += 1
                self._period_start = time.time()
                self._save_period()
            try:
                traces = await self._poll(stop)
            except Exception as e:  # noqa: BLE001 - a source error never ends the watch: back off and poll again
                if not await self._failed_poll(e, stop):
                    break
                continue
            if stop.is_set() and traces is None:
                break
            self._failed, self._polled = 0, True
            rows = self.choose(traces or [])
            step = max(self.concurrency * 2, 1)  # a stop is seen between chunks: in-flight items finish, no more start
            for i in range(0, len(rows), step):
                if stop.is_set():
                    break
                await self.judge(rows[i:i + step])
                self._save_period()
            if not traces:
                if self.once:
                    rest = self.source.flush() if hasattr(self.source, "flush") else []
                    if rest:  # traces whose root never came: judged as they are, not dropped
                        await self.judge(self.choose(rest))
                    break
                await _wait(stop, self.poll_every)
        return self.summary

    async def _failed_poll(self, e: Exception, stop: asyncio.Event) -> bool:
        """Say why a poll failed and wait the backoff; False: stop (--once after ONCE_TRIES in a row)."""
        if not self._polled and isinstance(e, ConfigError):
            raise e  # the first poll says the source is not what it was said to be
        self._failed += 1
        self.summary.source_errors += 1
        wait = min(self.backoff * 2 ** (self._failed - 1), BACKOFF_CAP)
        self.warn(f"warning: polling {mask_urls(str(self.source.name))} failed ({self._failed} in a row): "
                  f"{mask_urls(redact(str(e)))[:300]}; trying again in {wait:g} s")
        if self.once and self._failed >= ONCE_TRIES:
            return False
        await _wait(stop, wait)
        return True

    def _resume_period(self) -> float:
        """Seconds the current budget period had run before this process (0: a new one): a restart
        inside a period goes on with what that period spent (kept in the run store), never a fresh cap."""
        self._period_start = time.time()
        if self.budget is None:
            return 0.0
        saved = self.run.store.get_state(self._state_key)
        try:
            elapsed = time.time() - float(saved["start"])
            spent = Cost(float(saved["calls"]), float(saved["usd"]))
        except (TypeError, KeyError, ValueError):
            return 0.0
        if not 0 <= elapsed < self.period or not all(map(math.isfinite, (spent.calls, spent.usd))):
            return 0.0  # that period is over (or the record is not one): a new period
        self.budget.restore(spent)
        self._period_start = float(saved["start"])
        return elapsed

    def _save_period(self) -> None:
        if self.budget is not None:
            spent = self.budget.spent + self.budget.reserved  # in flight counts: a kill may leave it billed
            self.run.store.set_state(self._state_key, {"start": self._period_start, "calls": spent.calls,
                                                       "usd": spent.usd})

    async def _poll(self, stop: asyncio.Event) -> list[Any] | None:
        """The source's poll, in a daemon thread: a stop returns at once (None) while a stuck poll
        goes on in its thread, which the process does not wait for."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def settle(ok: bool, value: Any) -> None:
            if not done.done():
                (done.set_result if ok else done.set_exception)(value)

        def run() -> None:
            try:
                got, ok = self.source.poll(), True
            except BaseException as e:  # noqa: BLE001 - handed to the loop, raised there
                got, ok = e, False
            try:
                loop.call_soon_threadsafe(settle, ok, got)
            except RuntimeError:
                pass  # the loop closed: the watch stopped while this poll was stuck

        threading.Thread(target=run, name="watch-poll", daemon=True).start()
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({done, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
        if done.done():
            return done.result()
        return None


async def _wait(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except asyncio.TimeoutError:
        pass
