"""`judgeflow watch`: sampling by trace id, filters, the cap per period, resumable, written back (runs/watch.py)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from judgeflow.cli import main
from judgeflow.io.sources import Assembler, FileSource
from judgeflow.results import Judgment, Usage
from judgeflow.runs.watch import BudgetDenied, Capped, PeriodBudget, item_bound, matches, parse_filters, sampled
from judgeflow.io.otlp import spans_of
from tests.fakes.otel_traces import agent_trace, rag_trace, request, trace_id, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _watch(tmp_path, source, *flags):
    return main(["watch", str(source), "--once", "--model", "baseline/lexical", "--store", str(tmp_path / "s.sqlite"),
                 *flags])


@pytest.mark.parametrize("rate", [0.1, 0.25, 0.5])
def test_sampling_keeps_the_rate_and_the_same_traces(rate):
    ids = [trace_id(n) for n in range(4000)]
    kept = [t for t in ids if sampled(t, rate)]
    assert abs(len(kept) / len(ids) - rate) < 0.03
    assert kept == [t for t in ids if sampled(t, rate)]  # deterministic
    assert set(kept) <= {t for t in ids if sampled(t, min(rate * 2, 1))}  # a higher rate keeps a superset
    assert all(sampled(t, 1) for t in ids) and not any(sampled(t, 0) for t in ids)


def test_watch_once_judges_the_sampled_share_and_a_restart_judges_nothing_again(tmp_path, capsys):
    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(n, wrong=n % 3 == 0)) for n in range(40)])
    out = tmp_path / "out.jsonl"
    assert _watch(tmp_path, path, "--sample-rate", "0.5", "-o", str(out)) == 0
    want = {trace_id(n) for n in range(40) if sampled(trace_id(n), 0.5)}
    assert {r["id"] for r in _rows(out)} == want and len(_rows(out)) == len(want)
    assert all(r["trace_id"] == r["id"] for r in _rows(out))
    write_jsonl(path, [request(rag_trace(n)) for n in range(40, 60)], mode="a")  # the file grew
    assert _watch(tmp_path, path, "--sample-rate", "0.5", "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert f"traces seen 60: {len(want)} judged before" in err
    want |= {trace_id(n) for n in range(40, 60) if sampled(trace_id(n), 0.5)}
    ids = [r["id"] for r in _rows(out)]
    assert sorted(ids) == sorted(want)  # every sampled trace exactly once, across the restart


def test_filters_keep_traces_with_a_matching_span(tmp_path):
    spans = spans_of(request(agent_trace(1)))
    assert matches(spans, parse_filters(["kind=tool", "name=get_weather"]))
    assert not matches(spans, parse_filters(["kind=RETRIEVER"]))
    assert matches(spans, parse_filters(["tool.name=get_weather"]))
    with pytest.raises(Exception, match="KEY=VALUE"):
        parse_filters(["kind"])
    path = write_jsonl(tmp_path / "t.jsonl", [request(agent_trace(1)), request(rag_trace(2))])
    out = tmp_path / "o.jsonl"
    assert _watch(tmp_path, path, "--filter", "kind=RETRIEVER", "-o", str(out)) == 0
    assert [r["id"] for r in _rows(out)] == [trace_id(2)]


def test_a_growing_file_is_read_on_whole_lines_only(tmp_path):
    path = tmp_path / "t.jsonl"
    write_jsonl(path, [request(rag_trace(1))])
    src = FileSource(path)
    assert [t[0].trace_id for t in src.poll()] == [trace_id(1)]
    assert src.poll() == []
    line = json.dumps(request(rag_trace(2)))
    with open(path, "a") as f:
        f.write(line[:50])  # the writer is mid-line
    assert src.poll() == []
    with open(path, "a") as f:
        f.write(line[50:] + "\n")
    assert [t[0].trace_id for t in src.poll()] == [trace_id(2)]


def test_a_trace_is_given_once_its_root_is_in_or_after_it_settles():
    now = [0.0]
    asm = Assembler(settle=10, clock=lambda: now[0])
    child, root = spans_of(request(rag_trace(1)[1:])), spans_of(request(rag_trace(1)[:1]))
    assert asm.add(child) == []
    assert [len(t) for t in asm.add(root)] == [3]
    assert asm.add(spans_of(request(rag_trace(1)))) == []  # given already
    assert asm.add(spans_of(request(rag_trace(2)[1:]))) == []
    now[0] = 11
    assert [t[0].trace_id for t in asm.add([])] == [trace_id(2)]


class _Slow:
    """A judging that takes a while and spends `calls` model calls per item (counted at its peak)."""

    model = "fake/slow"

    def __init__(self, calls: int) -> None:
        self.calls, self.live, self.peak = calls, 0, 0

    def fingerprint(self, item):
        return None

    async def ajudge(self, item):
        self.live += 1
        self.peak = max(self.peak, self.live)
        await asyncio.sleep(0.01)
        self.live -= 1
        return Judgment(id=item.id, label=0, usage=Usage(calls=self.calls))

    async def aclose(self):
        pass


def test_the_cap_holds_at_concurrency_16_and_the_rest_is_unscored_budget():
    from judgeflow.items import Item
    from judgeflow.judging import judge_stream

    async def go():
        budget = PeriodBudget(21)
        inner = _Slow(calls=2)
        capped = Capped(inner, budget, bound=3)
        items = [Item(id=f"i{n}", answer="a", extra={"trace_id": trace_id(n)}) for n in range(60)]
        results = [j async for _, j in judge_stream(capped, items, concurrency=16)]
        return budget, inner, results

    budget, inner, results = asyncio.run(go())
    judged = [j for j in results if j.status == "judged"]
    denied = [j for j in results if j.status == "unscored"]
    assert budget.spent <= budget.cap and budget.spent == 2 * len(judged)
    assert inner.peak > 1  # items did run concurrently
    assert len(judged) == 10 and len(denied) == 50  # 10 x 2 = 20 spent; one more would need up to 3: 23 > 21
    assert all(j.label is None and j.error.startswith("budget:") for j in denied)
    assert denied[0].extra["trace_id"]  # still linked to its span when exported
    budget.new_period()
    assert budget.spent == 0 and budget.total == 20 and budget.peak == 20


@pytest.mark.parametrize("used, fits", [(2, False), (1, True)])
def test_a_reservation_that_may_fit_waits_for_the_items_in_flight(used, fits):
    """2 of 2 calls reserved: one more may fit only if the item in flight uses fewer; it waits for it."""
    async def go():
        budget = PeriodBudget(2)
        held = await budget.reserve(2)
        waiter = asyncio.create_task(budget.reserve(1))
        await asyncio.sleep(0.05)
        assert not waiter.done()
        budget.settle(held, "m", Usage(calls=used))
        if fits:
            assert await waiter == 1
        else:
            with pytest.raises(BudgetDenied, match="budget: 2 of 2 calls"):
                await waiter
    asyncio.run(asyncio.wait_for(go(), 5))


def test_the_bound_counts_steps_reasks_and_retries():
    assert item_bound(strategy="graph", coverage=False, reasks=0, retries=0) == 2
    assert item_bound(strategy="single", coverage=True, reasks=2, retries=4) == 2 * 3 * 5


@pytest.mark.slow
def test_watch_on_a_receiver_stops_cleanly_on_sigterm_with_a_summary(tmp_path):
    """Traces POSTed to judgeflow's receiver are judged; SIGTERM ends the process with exit 0, the
    summary, and every verdict committed; a second watch of the same source judges none again."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store, out = tmp_path / "s.sqlite", tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "judgeflow", "watch", f"otlp://127.0.0.1:{port}", "--model", "baseline/lexical",
           "--store", str(store), "-o", str(out), "--poll", "0.1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        body = json.dumps(request(rag_trace(1) + rag_trace(2, wrong=True) + agent_trace(3)))
        for _ in range(100):
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/v1/traces", content=body,
                               headers={"Content-Type": "application/json"}, timeout=2)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        assert r.status_code == 200
        bad = httpx.post(f"http://127.0.0.1:{port}/v1/traces", content=b'{"resourceSpans": 3}',
                         headers={"Content-Type": "application/json"}, timeout=2)
        assert bad.status_code == 400 and "resourceSpans" in bad.json()["message"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "verdicts 3" not in _store_count(store):
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "verdicts 3: 3 judged" in err
    assert sorted(r["id"] for r in _rows(out)) == sorted([trace_id(1), trace_id(2), trace_id(3)])


def _store_count(store: Path) -> str:
    import sqlite3

    if not store.exists():
        return ""
    try:
        with sqlite3.connect(store) as db:
            return f"verdicts {db.execute('SELECT COUNT(*) FROM results').fetchone()[0]}"
    except sqlite3.Error:
        return ""
