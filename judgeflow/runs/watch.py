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
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, InvalidItemError
from ..io.openinference import trace_records
from ..io.otlp import Span
from ..items import Item, items_from_record
from ..judging import Judging
from ..results import Judgment, Usage
from .run import Run
from .with_inputs import input_texts

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

    #: a WatchOutput (`watch -o FILE.jsonl`, runs/watch_output.py): each verdict written as it is judged
    output: Any = None

    def __init__(self, source: Any, run: Run, judging: Judging, *, rate: float = 1.0,
                 filters: Sequence[tuple[str, str]] = (), budget: Any = None,
                 period: float = 3600.0, exporter: Any = None, concurrency: int = 16, once: bool = False,
                 poll: float = POLL, settings: Any = None, clock: Any = time.monotonic) -> None:
        if not 0 <= rate <= 1:
            raise ConfigError(f"--sample-rate {rate}: give a share between 0 and 1, e.g. 0.1 for one trace in ten")
        self.source, self.run, self.rate, self.filters = source, run, rate, list(filters)
        self.budget, self.period, self.exporter = budget, period, exporter
        self.judging = judging  # built with `budget` (runs.budget.Budget): its client reserves before each call
        self.concurrency, self.once, self.poll_every, self.settings = concurrency, once, poll, settings
        self.clock = clock
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
        texts = input_texts(rows) if self.output is not None else {}
        async for j in self.run.judge(self.judging, rows, concurrency=self.concurrency):
            self.done.add(j.id)
            self.summary.add(j)
            if self.output is not None:
                self.output.write(j, texts.get(j.id))
            if self.exporter is not None:
                self.exporter.export(j)

    async def loop(self, stop: asyncio.Event) -> WatchSummary:
        """Until `stop` is set (SIGTERM), or with `once` until the source has nothing new."""
        started = self.clock()
        while not stop.is_set():
            if self.budget is not None and self.clock() - started >= self.period * self.summary.periods:
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
