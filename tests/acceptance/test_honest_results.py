"""#34 and #35 (items 5, 13): `gate` of a run against itself passes with invalid rows in it (compared
as invalid, not as regressions); a row that says "unscored" but carries label 0 is refused by every
reader, never read as a score; `gate` refuses rows with no criterion as it refuses a changed model;
`stability` refuses one file given twice and exits non-zero when nothing could be measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.generated import EXAMPLE, read_jsonl, write_jsonl

from judgeflow.cli import main

pytestmark = pytest.mark.acceptance


@pytest.fixture
def readme_run(tmp_path) -> Path:
    """The README's 9-item example (one row invalid: nothing to judge against), judged offline."""
    out = tmp_path / "results.jsonl"
    assert main(["run", str(EXAMPLE), "-o", str(out), "--store", str(tmp_path / "runs.sqlite"), "--no-progress"]) == 0
    assert any(r["status"] == "invalid" for r in read_jsonl(out))
    return out


def test_gate_of_the_readme_run_against_itself_passes(readme_run, capsys):
    assert main(["gate", str(readme_run), "--baseline", str(readme_run), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and not report["got_worse"] and report["invalid_both"] == 1


def test_a_row_invalid_in_the_candidate_only_still_counts(readme_run, tmp_path, capsys):
    rows = read_jsonl(readme_run)
    k = next(i for i, r in enumerate(rows) if r["status"] == "judged")
    rows[k] = {**rows[k], "status": "invalid", "label": None, "error": "bad row"}
    cand = write_jsonl(tmp_path / "cand.jsonl", rows)
    assert main(["gate", str(cand), "--baseline", str(readme_run)]) == 1
    assert "max_unscored" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["calibrate", "gate", "stability", "compare", "sample"])
def test_an_unscored_row_with_label_0_is_refused_by_every_reader(command, readme_run, tmp_path, capsys):
    rows = [{**r, "status": "unscored", "label": 0, "error": "timeout"} if r["status"] == "judged" else r
            for r in read_jsonl(readme_run)]
    filled = write_jsonl(tmp_path / "filled.jsonl", rows)  # what df.fillna(0) makes of an unscored run
    argv = {"calibrate": ["calibrate", str(filled)], "gate": ["gate", str(filled), "--baseline", str(readme_run)],
            "stability": ["stability", str(filled), str(readme_run)], "compare": ["compare", str(filled), str(readme_run)],
            "sample": ["sample", str(EXAMPLE), "-n", "5", "-o", str(tmp_path / "s.jsonl"), "--results", str(filled)]}[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "filled.jsonl:1" in err and "label" in err and "null" in err


def test_gate_refuses_candidate_rows_with_no_criterion(readme_run, tmp_path, capsys):
    rows = [{**r, "criterion": None} for r in read_jsonl(readme_run)]
    cand = write_jsonl(tmp_path / "cand.jsonl", rows)
    assert main(["gate", str(cand), "--baseline", str(readme_run)]) == 2
    assert "criterion" in capsys.readouterr().err


def test_stability_refuses_one_file_given_twice(readme_run, capsys):
    assert main(["stability", str(readme_run), str(readme_run)]) == 2
    assert "given twice" in capsys.readouterr().err


def test_stability_that_measured_nothing_exits_non_zero(tmp_path, capsys):
    rows = [{"id": f"q{k}", "label": None, "status": "unscored", "error": "timeout", "criterion": "factual_correctness"}
            for k in range(5)]
    a, b = write_jsonl(tmp_path / "a.jsonl", rows), write_jsonl(tmp_path / "b.jsonl", rows)
    assert main(["stability", str(a), str(b)]) == 1
    assert "cannot be measured" in capsys.readouterr().out
