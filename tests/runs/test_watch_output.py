"""`watch -o FILE.jsonl` (#47): each verdict reaches the file as it is judged, with the trace's texts, while the
watch runs; a restart appends, never repeats (runs/watch_output.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgeflow.cli import main
from tests.fakes.otel_traces import rag_trace, request, trace_id, write_jsonl

ROOT = Path(__file__).resolve().parents[2]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _wait_rows(path: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = _rows(path)
        if len(rows) >= n:
            return rows
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.1)
    pytest.fail(f"{path} had {len(_rows(path))} rows, not {n}, after {timeout} s")


@pytest.mark.slow
def test_rows_reach_the_file_with_their_texts_while_the_watch_runs(tmp_path):
    source, out = tmp_path / "traces.jsonl", tmp_path / "out.jsonl"
    write_jsonl(source, [request(rag_trace(1)), request(rag_trace(2, wrong=True))])
    cmd = [sys.executable, "-m", "judgeflow", "watch", str(source), "--model", "baseline/lexical", "--store",
           str(tmp_path / "s.sqlite"), "-o", str(out), "--poll", "0.1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        first = _wait_rows(out, 2, proc)  # the watch is still running: nothing has stopped it
        assert proc.poll() is None
        assert {r["id"] for r in first} == {trace_id(1), trace_id(2)}
        for r in first:  # the texts beside the verdict, as `run` writes them
            assert r["question"] and r["answer"] and r["source"] and r["label"] in (0, 1)
        write_jsonl(source, [request(rag_trace(3))], mode="a")  # a new trace arrives
        rows = _wait_rows(out, 3, proc)
        assert rows[2]["id"] == trace_id(3) and proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert [r["id"] for r in _rows(out)] == [r["id"] for r in rows]  # the stop rewrote nothing


def test_a_restart_appends_and_a_new_file_starts_with_what_the_run_judged(tmp_path):
    source, out = tmp_path / "traces.jsonl", tmp_path / "out.jsonl"
    write_jsonl(source, [request(rag_trace(n)) for n in range(3)])
    args = ["watch", str(source), "--once", "--model", "baseline/lexical", "--store", str(tmp_path / "s.sqlite"),
            "-o", str(out)]
    assert main(args) == 0
    assert len(_rows(out)) == 3 and all(r["answer"] for r in _rows(out))
    write_jsonl(source, [request(rag_trace(n)) for n in range(3, 5)], mode="a")
    assert main(args) == 0
    assert sorted(r["id"] for r in _rows(out)) == sorted(trace_id(n) for n in range(5))  # each once
    other = tmp_path / "other.jsonl"  # a new -o file: the run's verdicts so far, then the new ones
    write_jsonl(source, [request(rag_trace(5))], mode="a")
    assert main([*args[:-1], str(other)]) == 0
    rows = _rows(other)
    assert sorted(r["id"] for r in rows) == sorted(trace_id(n) for n in range(6))
    assert rows[-1]["id"] == trace_id(5) and rows[-1]["answer"]
