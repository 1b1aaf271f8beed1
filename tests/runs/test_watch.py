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
from judgeflow.io.otlp import spans_of
from judgeflow.io.sources import Assembler, FileSource
from judgeflow.results import Judgment, Usage
from judgeflow.runs.watch import matches, parse_filters, sampled
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


class _Calls:
    """A judging that spends one model call per item through the real Budget, as the LLM client does."""

    model = "fake/calls"

    def __init__(self, budget):
        self.budget = budget

    def fingerprint(self, item):
        return None

    async def ajudge(self, item):
        from judgeflow.errors import BudgetExceeded
        from judgeflow.runs.budget import Cost

        try:
            hold = await self.budget.reserve(Cost(calls=1))
        except BudgetExceeded as e:
            return Judgment.unscored(item.id, str(e), extra=item.extra)
        await asyncio.sleep(0.001)
        hold.settle(Usage(calls=1), self.model)
        return Judgment(id=item.id, label=0, usage=Usage(calls=1), extra=item.extra)

    async def aclose(self):
        pass


class _Polls:
    """A source giving one batch of traces a poll, then nothing."""

    name, project = "batches", None

    def __init__(self, batches):
        self.batches = list(batches)

    def poll(self):
        return self.batches.pop(0) if self.batches else []

    def close(self):
        pass


def test_each_period_starts_the_cap_anew_and_rows_over_it_are_unscored_budget(tmp_path):
    """3 calls a period of 10 s: 5 traces in the first period, 5 in the second (the clock moves 10 s a
    poll): 3 judged and 2 unscored 'budget' in each; the unscored are not judged again."""
    from judgeflow.config.judging import JudgeSpec
    from judgeflow.config.run import RunSpec
    from judgeflow.runs.budget import Budget
    from judgeflow.runs.run import Run
    from judgeflow.runs.store import RunStore
    from judgeflow.runs.watch import Watch

    batches = [[spans_of(request(rag_trace(n))) for n in range(k, k + 5)] for k in (0, 5)]
    budget, now = Budget(calls=3), [0.0]

    def clock():
        now[0] += 5.0
        return now[0]

    with RunStore(tmp_path / "s.sqlite") as store:
        settings = RunSpec(judging=JudgeSpec(model="baseline/lexical"), input="batches", output="batches")
        judge = _Calls(budget)
        run = Run.online(store, settings, judging=judge, key="watch:batches")
        watch = Watch(_Polls(batches), run, judge, budget=budget, period=10, once=True, clock=clock)
        summary = asyncio.run(watch.loop(asyncio.Event()))
        rows = list(store.results(run.run_id))
    assert summary.periods == 2 and summary.judged == 6 and summary.budget_denied == 4
    assert sorted(r.status for r in rows) == ["judged"] * 6 + ["unscored"] * 4
    assert all(r.error.startswith("budget") and r.label is None for r in rows if r.status == "unscored")


def test_watch_at_concurrency_16_through_the_schema_fake_never_passes_the_cap(tmp_path, monkeypatch, capsys):
    """The real openai SDK and Instructor against the in-repo fake: the fake answered at most --budget
    requests; the rows that did not fit are unscored 'budget' in the results; a restart judges none again."""
    from tests.fakes.schema_provider import SchemaProvider

    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(n)) for n in range(40)])
    out = tmp_path / "out.jsonl"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-watch")
    args = ["watch", str(path), "--once", "--budget", "25", "--concurrency", "16", "--model", "openai/gpt-4o-mini",
            "--store", str(tmp_path / "s.sqlite"), "--no-cache", "-o", str(out)]
    with SchemaProvider(seed=5) as fake:
        assert main([*args, "--base-url", fake.base_url + "/v1"]) == 0
        first = fake.received
        assert main([*args, "--base-url", fake.base_url + "/v1"]) == 0
        assert fake.received == first  # nothing judged twice
    rows = _rows(out)
    assert first <= 25 and len(rows) == 40
    over = [r for r in rows if r["status"] == "unscored" and r["error"].startswith("budget")]
    assert over and all(r["label"] is None for r in over)
    assert "budget: " in capsys.readouterr().err


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


def test_watch_otel_never_sends_to_its_own_receiver_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """`watch otlp://127.0.0.1:4318 ... --otel` (as docs/production.md showed) sent its verdicts to
    itself: --otel's default endpoint is localhost:4318. Now refused, naming where spans would go;
    an --otel-endpoint naming the receiver is asked for, and another collector is fine."""
    from judgeflow.cli import build_parser
    from judgeflow.cli.otel_args import loops_back

    for var in ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(var, raising=False)

    def args(*flags: str):
        return build_parser().parse_args(["watch", "otlp://127.0.0.1:4318", *flags])

    why = loops_back(args("--otel"), "otlp://127.0.0.1:4318")
    assert why is not None and "own receiver otlp://127.0.0.1:4318" in why and "http://localhost:4318" in why
    assert loops_back(args("--otel"), "otlp://127.0.0.1:4319") is None
    assert loops_back(args("--otel-endpoint", "http://127.0.0.1:4318"), "otlp://127.0.0.1:4318") is None  # asked
    assert loops_back(args(), "otlp://127.0.0.1:4318") is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:6006")
    assert loops_back(args("--otel"), "otlp://127.0.0.1:4318") is None
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4318/")
    assert "$OTEL_EXPORTER_OTLP_ENDPOINT is http://localhost:4318/" in loops_back(args("--otel"), "otlp://127.0.0.1:4318")
