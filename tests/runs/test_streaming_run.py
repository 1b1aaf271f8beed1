"""`judgeflow run` in constant memory: the input is streamed (twice), results are read back from the
store in pages, and the summary is tallied while the output is written. These tests check that
streaming changes nothing a user sees: every row once, in input order, error rows kept, resume,
and a summary equal to the one computed from the output file. A run served from the response cache
imports no provider SDK and no LangGraph.
"""

from __future__ import annotations

import codecs
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import FakeProvider, start_cli

from judgeflow import files
from judgeflow.cli import main
from judgeflow.files import read_rows
from judgeflow.results import Judgment, Usage
from judgeflow.runs.store import RunStore
from judgeflow.runs.summary import Tally, summarize, summary_json

COUNTS = ("rows", "label_1", "label_0", "unscored", "invalid", "calls", "input_tokens", "output_tokens")


def mixed_items(path: Path, n: int = 60) -> list[str]:
    """n rows in a shuffled id order, with a broken JSON line, a row without an answer and blank
    lines; returns the ids the output must hold, in input order."""
    ids, lines = [], []
    for i in range(n):
        k = (i * 37) % n  # ids not in sorted order: the output follows the input, not the ids
        if i == 7:
            lines.append('{"answer": "no id, and broken", ')  # not JSON, no id to read: an invalid row named line-8
            ids.append("line-8")
        elif i == 13:
            lines.append(json.dumps({"id": f"q{k:03d}", "question": "Capital?", "reference": "Paris"}))
            ids.append(f"q{k:03d}")  # no answer: an invalid row keeping its id
        else:
            answer = "Paris is the capital of France." if k % 3 else "The Moon orbits Jupiter every Tuesday."
            lines.append(json.dumps({"id": f"q{k:03d}", "question": f"What is the capital of France ({k})?",
                                     "reference": "Paris is the capital of France.", "answer": answer}))
            ids.append(f"q{k:03d}")
        if i % 10 == 9:
            lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ids


def out_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_jsonl_is_streamed_and_reads_exactly_as_the_whole_file_reader(tmp_path: Path, monkeypatch) -> None:
    p = tmp_path / "in.jsonl"
    body = (codecs.BOM_UTF8 + b'{"id": "a", "answer": "x"}\r\n\n  \n{"id": "b", "answer": "\\ud83d"}\n'
            b'{"id": "c", "answer": \n{"id": "d", "answer": "caf\xc3\xa9 \xe2\x9c\x93"}\n[1, 2]\n"text"')
    p.write_bytes(body)
    whole = list(read_rows(p, data=body))

    def no_whole_read(path: object) -> bytes:
        raise AssertionError("a UTF-8 JSONL file was read whole")

    monkeypatch.setattr(files, "read_bytes", no_whole_read)
    streamed = list(read_rows(p))
    assert [(n, str(r) if isinstance(r, Exception) else r) for n, r in streamed] == \
           [(n, str(r) if isinstance(r, Exception) else r) for n, r in whole]
    assert [n for n, _ in streamed] == [1, 4, 5, 6, 7, 8]


def test_a_file_with_bytes_that_are_not_utf8_is_still_judged_as_a_whole(tmp_path: Path) -> None:
    """The streaming reader leaves non-UTF-8 files to the whole-file decision (one bad line is that
    row's error; a file in another encoding is one clear error), unchanged."""
    one_bad = tmp_path / "one.jsonl"
    one_bad.write_bytes(b'{"id": "a", "answer": "caf\xc3\xa9"}\n{"id": "b", "answer": "caf\xe9"}\n')
    rows = list(read_rows(one_bad))
    assert rows[0][1] == {"id": "a", "answer": "café"}
    assert "not UTF-8" in str(rows[1][1]) and rows[1][0] == 2
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"answer": "caf\xe9"}\n{"answer": "na\xefve"}\n')
    with pytest.raises(Exception, match="is not UTF-8 text"):
        list(read_rows(latin))


def test_output_keeps_input_order_and_error_rows_and_the_summary_equals_the_output(tmp_path: Path, capsys) -> None:
    inp = tmp_path / "in.jsonl"
    ids = mixed_items(inp)
    out = tmp_path / "out.jsonl"
    args = ["run", str(inp), "-o", str(out), "--store", str(tmp_path / "s.sqlite"), "--no-progress",
            "--concurrency", "7", "--json"]
    assert main(args) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = out_rows(out)
    assert [r["id"] for r in rows] == ids
    assert {r["id"]: r["status"] for r in rows}["line-8"] == "invalid"
    assert sum(r["status"] == "invalid" for r in rows) == 2
    from_file = summary_json([Judgment.from_row(r) for r in rows], run_id="", model="", output=out, prices=None,
                             elapsed=0, session_items=0)
    assert {k: summary[k] for k in COUNTS} == {k: from_file[k] for k in COUNTS}
    assert summary["rows"] == len(ids) and summary["label_1"] > 0 and summary["label_0"] > 0
    assert summary["cached"] == 0  # (the output rows do not say whether a row came from the cache)

    assert main(args) == 0  # a re-run: every judged row from the cache, the same rows
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [r["id"] for r in out_rows(out)] == ids
    assert again["cached"] == len(ids) - 2 and again["rows"] == len(ids)


def test_the_tally_gives_the_same_summary_as_the_results_list() -> None:
    results = [
        Judgment(id="a", label=1, usage=Usage(calls=2, input_tokens=100, output_tokens=10)),
        Judgment(id="b", label=0, cached=True),
        Judgment(id="c", label=None, status="unscored", error="timeout", usage=Usage(calls=3)),
        Judgment(id="d", label=None, status="invalid", error="no answer"),
    ]
    tally = Tally()
    for j in results:
        tally.add(j)
    kw = dict(model="openai/gpt-4o-mini", prices=None, elapsed=1.0, session=Usage(calls=5), session_items=3)
    assert summarize(tally, **kw) == summarize(results, **kw)
    assert summarize(tally, **kw)[0] == "4 rows: label 1: 1, label 0: 1; unscored: 1; invalid: 1; served from cache: 1"


@pytest.mark.slow
def test_stdin_is_spooled_and_judged_like_the_file(tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    ids = mixed_items(inp, 25)
    cmd = [sys.executable, "-m", "judgeflow", "run", "-", "-o", str(tmp_path / "out.jsonl"),
           "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    done = subprocess.run(cmd, input=inp.read_bytes(), capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    assert [r["id"] for r in out_rows(tmp_path / "out.jsonl")] == ids


def test_store_results_come_back_in_pages_in_input_order(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.sqlite") as store:
        run = store.start_run(settings={})
        order = [(i * 7919) % 1203 for i in range(1203)]  # recorded out of order, as completions are
        for seq in order:
            store.record(run, seq, Judgment(id=f"x{seq:05d}", label=seq % 2))
        store.record(run, 5, Judgment(id="x00005", label=1))  # re-judged: replaced, not duplicated
        got = [j.id for j in store.results(run, page=100)]
    assert got == [f"x{i:05d}" for i in range(1203)]


@pytest.mark.slow
def test_resume_after_ctrl_c_gives_every_row_once_in_input_order(tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    ids = mixed_items(inp, 30)
    out = tmp_path / "out.jsonl"
    with FakeProvider(latency=0.05) as fake:
        args = ["run", str(inp), "-o", str(out), "--model", "openai/fake-judge", "--base-url", fake.base_url + "/v1",
                "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--concurrency", "2"]
        proc = start_cli(args, tmp_path)  # SIGINT as in a terminal, however pytest was started
        while len(fake.requests) < 12 and proc.poll() is None:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, err
        saved = out_rows(out)
        assert 0 < len(saved) < len(ids)
        assert [r["id"] for r in saved] == [i for i in ids if i in {r["id"] for r in saved}]  # input order
        fake.latency = 0.0
        assert main([*args, "--resume"]) == 0
    rows = out_rows(out)
    assert [r["id"] for r in rows] == ids
    assert all(r["label"] in (0, 1) for r in rows if r["status"] != "invalid")


CACHED_RUN = """
import json, sys
from judgeflow.cli import main
code = main(sys.argv[1:])
HEAVY = ("openai", "openai.resources", "anthropic", "instructor", "langgraph", "numpy", "genai_prices", "rich.progress", "httpx2",
         "judgeflow.runs.batch", "judgeflow.calibration", "judgeflow.cli.calibrate_cmd", "judgeflow.cli.label_app_cmd")
print(json.dumps({"code": code, "loaded": sorted(m for m in HEAVY if m in sys.modules)}))
"""


@pytest.mark.slow
def test_a_run_served_from_the_cache_imports_no_provider_sdk_no_langgraph_no_numpy(tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    ids = mixed_items(inp, 12)
    with FakeProvider() as fake:
        args = ["run", str(inp), "-o", str(tmp_path / "out.jsonl"), "--model", "openai/fake-judge",
                "--base-url", fake.base_url + "/v1", "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--json"]
        first = subprocess.run([sys.executable, "-c", CACHED_RUN, *args], capture_output=True, text=True, timeout=300)
        assert first.returncode == 0, first.stderr
        judged = json.loads(first.stdout.strip().splitlines()[-1])
        assert judged["code"] == 0
        assert "anthropic" not in judged["loaded"]  # an openai/ model never loads the Anthropic SDK
        assert "openai" in judged["loaded"]  # (it did judge through the real SDK)
        assert "openai.resources" not in judged["loaded"]  # every SDK resource module: 0.8 s of CPU judging never uses
        asked = len(fake.requests)
        again = subprocess.run([sys.executable, "-c", CACHED_RUN, *args], capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert len(fake.requests) == asked
    # nor the other subcommands' code (batch, calibration, review), the price library or the progress bar
    assert json.loads(again.stdout.strip().splitlines()[-1]) == {"code": 0, "loaded": []}
    summary = json.loads(again.stdout.strip().splitlines()[-2])
    judged_rows = [r for r in out_rows(tmp_path / "out.jsonl") if r["status"] == "judged"]
    assert summary["cached"] == len(judged_rows) == len(ids) - 1  # all but the broken line-8
    assert json.loads(again.stdout.strip().splitlines()[-1]) == {"code": 0, "loaded": []}
