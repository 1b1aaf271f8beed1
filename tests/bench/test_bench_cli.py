"""`judgeflow bench` end to end with the offline judge: from a benchmark's own files (on disk or
downloaded from a local server) through a normal run to the benchmark's metric."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from fakes import bench_files as fx
from test_bench_data import Server

from judgeflow.bench import benchmark
from judgeflow.cli import main


def bench(tmp_path, *args: str) -> int:
    return main(["bench", *args, "--workdir", str(tmp_path / "wd"), "--store", str(tmp_path / "runs.sqlite"),
                 "--no-progress"])


def test_faithbench_from_a_copy_on_disk_prints_its_metric_beside_the_published_and_resumes(tmp_path, capsys):
    data = fx.write(fx.faithbench_files(), tmp_path / "release")
    assert bench(tmp_path, "faithbench", "--data", str(data)) == 0
    out, err = capsys.readouterr()
    assert re.search(r"balanced accuracy +\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", out)
    assert re.search(r"F1-macro +\d\.\d{3}", out) and "span-level F1" in out
    assert "GPT-4o as a judge: balanced accuracy" in out and "on these 6 items" in out
    assert "not the pinned file" in err  # the fixture is not the release: said, and used
    results = tmp_path / "wd/faithbench/baseline_lexical.results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows) == 6 and rows[0]["input_spans"][0]["labels"] == ["Unwanted", "Unwanted.Intrinsic"]
    assert [r["human_label"] for r in rows] == [1, 0, 1, 0, 1, 0]
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:
        (command,) = db.execute("SELECT command FROM runs").fetchone()
    assert command.startswith(f"judgeflow bench faithbench --data {data} --workdir ") and command.endswith("--resume")
    assert bench(tmp_path, "faithbench", "--data", str(data), "--resume") == 0
    out2, err2 = capsys.readouterr()
    assert "resuming run" in err2 and "6 of 6 rows already done" in err2
    assert out2.splitlines()[:4] == out.splitlines()[:4]  # the same figures


def test_ragtruth_prints_response_and_span_level_f1(tmp_path, capsys):
    data = fx.write(fx.ragtruth_files(), tmp_path / "rt")
    assert bench(tmp_path, "ragtruth", "--data", str(data)) == 0
    out = capsys.readouterr().out
    assert "RAGTruth: baseline/lexical on 3 items" in out
    assert re.search(r"response-level F1 +(\d\.\d{3}|undefined)", out) and "span-level F1" in out
    assert "lettucedetect-large-v1: response-level F1 0.792" in out


def test_halueval_downloaded_sampled_and_ab_compared(tmp_path, capsys, monkeypatch):
    import judgeflow.bench.halueval as module

    monkeypatch.setenv("JUDGEFLOW_CACHE_DIR", str(tmp_path / "cache"))
    files = fx.halueval_files()
    pinned = fx.pinned_to(benchmark("halueval_qa"), files, git_blob=True)
    monkeypatch.setattr(module, "BENCHMARK", pinned)
    server = Server({f"/{pinned.repo}/{pinned.commit}/{p}": d for p, d in files.items()})
    try:
        assert bench(tmp_path, "halueval_qa", "--download-from", server.url, "--limit", "6", "--seed", "2",
                     "--ab") == 0
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
    out, err = capsys.readouterr()
    assert "MIT License" in err and "6 items (3 labelled 1, 3 labelled 0), a sample stratified by label" in err
    assert len(server.requests) == 1
    assert "HaluEval QA: baseline/lexical, reference_faithfulness on 6 items" in out  # one per criterion
    assert "HaluEval QA: baseline/lexical, factual_correctness on 6 items" in out
    assert re.search(r"reference_faithfulness +kappa", out) and re.search(r"factual_correctness +kappa", out)
    assert "McNemar exact p = " in out
    wd = tmp_path / "wd/halueval_qa"
    assert {p.name for p in wd.iterdir()} == {
        "items.limit6.seed2.jsonl", "baseline_lexical.reference_faithfulness.limit6.seed2.results.jsonl",
        "baseline_lexical.factual_correctness.limit6.seed2.results.jsonl"}


def test_ab_needs_reference_criteria(tmp_path, capsys):
    data = fx.write(fx.faithbench_files(), tmp_path / "release")
    assert bench(tmp_path, "faithbench", "--data", str(data), "--ab") == 2
    assert "has no reference answers" in capsys.readouterr().err


def test_no_consent_no_download_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JUDGEFLOW_CACHE_DIR", str(tmp_path / "cache"))
    assert bench(tmp_path, "faithbench", "--download-from", "http://127.0.0.1:9") == 2
    err = capsys.readouterr().err
    assert "CC BY-NC-SA 4.0" in err and "--accept-licence" in err


@pytest.mark.parametrize("name", ["truthfulqa"])
def test_truthfulqa_prints_kappa_and_balanced_accuracy(tmp_path, capsys, name):
    data = fx.write(fx.FILES[name](), tmp_path / "d")
    assert bench(tmp_path, name, "--data", str(data)) == 0
    out = capsys.readouterr().out
    assert re.search(r"kappa +", out) and "balanced accuracy" in out and "GPT-judge" in out


def test_a_model_bench_is_capped_by_budget_and_resumed(tmp_path, capsys, monkeypatch):
    """A bench with a model (the in-repo schema fake): --budget stops it like any run; --resume finishes it."""
    from fakes import SchemaProvider

    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    data = fx.write(fx.halueval_files(), tmp_path / "h")
    with SchemaProvider(seed=1) as fake:
        model = ["--data", str(data), "--model", "openai/gpt-4o-mini", "--base-url", fake.base_url + "/v1",
                 "--concurrency", "1"]
        assert bench(tmp_path, "halueval_qa", *model, "--budget", "4") == 1
        first = len(fake.requests)
        out = capsys.readouterr().out
        assert first <= 4 and "HaluEval QA: openai/gpt-4o-mini on 10 items" in out
        results = tmp_path / "wd/halueval_qa/openai_gpt-4o-mini.results.jsonl"
        rows = [json.loads(line) for line in results.read_text().splitlines()]
        assert sum(r["status"] == "unscored" and "budget" in (r.get("error") or r.get("reason") or "")
                   for r in rows) >= 8
        assert bench(tmp_path, "halueval_qa", *model, "--resume") == 0
        rows = [json.loads(line) for line in results.read_text().splitlines()]
        assert all(r["status"] == "judged" for r in rows) and len(rows) == 10
        assert len(fake.requests) - first <= 2 * 10
    assert re.search(r"kappa +(-?\d\.\d{3}|undefined)", capsys.readouterr().out)
