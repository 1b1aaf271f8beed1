"""CLI conventions a newcomer expects (issue 11): --version, "did you mean", quiet broken pipes,
documented exit codes, JSON output, tables that never cut numbers, notices in the right order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

import judgeflow
from judgeflow.cli import EXIT_CODES, main
from judgeflow.cli.render import PIPE_WIDTH, console, fit

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_ITEMS = ROOT / "examples" / "qa_items.jsonl"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGEFLOW_MODEL", raising=False)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"judgeflow {judgeflow.__version__}"


@pytest.mark.parametrize(("argv", "typo", "meant"), [
    (["run", "x.jsonl", "-o", "y.jsonl", "--concurency", "4"], "--concurency", "--concurrency"),
    (["criteria", "show", "factual_correctness", "--jsn"], "--jsn", "--json"),
    (["calibrate", "r.jsonl", "--lables", "l.jsonl"], "--lables", "--labels"),
])
def test_misspelt_option_gets_did_you_mean(argv: list[str], typo: str, meant: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"unrecognized arguments: {typo} (did you mean {meant}?)" in err


def test_unknown_option_with_nothing_close_has_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["criteria", "list", "--zzzzzz"])
    err = capsys.readouterr().err
    assert "unrecognized arguments: --zzzzzz" in err and "did you mean" not in err


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert EXIT_CODES in out
    for code in ("0 ", "1 ", "2 ", "3 ", "130 "):
        assert f"\n  {code}" in EXIT_CODES
    guide = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for line in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert line in guide, f"the CLI guide's exit-code table lacks {line}"


@pytest.mark.slow
def test_closing_the_pipe_early_prints_no_traceback() -> None:
    """`judgeflow criteria show X --json | head -1`: the reader goes away before we finish."""
    r, w = os.pipe()
    os.close(r)   # nobody will read: the first write hits EPIPE
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, "-m", "judgeflow", "criteria", "show", "factual_correctness", "--json"],
                          stdout=w, stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    os.close(w)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.returncode == 0


def test_criteria_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["criteria", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = [r["name"] for r in rows]
    assert names == judgeflow.list_criteria()
    fc = rows[names.index("factual_correctness")]
    assert fc["error_verdicts"] == ["contradicted", "false_fact"] and fc["requires"][0] == "answer"


def test_criteria_list_is_not_cut_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["criteria", "list"]) == 0
    out = capsys.readouterr().out
    assert "reference_faithfulness" in out and "factual_correctness" in out and "…" not in out


def test_console_is_wide_when_not_a_terminal() -> None:
    assert console().width == PIPE_WIDTH   # pytest captures stdout: not a terminal


def test_fit_keeps_numbers_whole_in_a_narrow_terminal() -> None:
    t = Table("run", "kappa [95% CI]", "accuracy", "F1", "false alarms", "misses", "unscored", "description")
    t.add_row("A reference_faithfulness_strict_version", "0.35 [0.29, 0.41]", "0.68", "0.71", "239 (77%)",
              "70 (23%)", "12", "a long description " * 5)
    narrow = Console(width=80, record=True, color_system=None)
    narrow.print(fit(t))
    text = narrow.export_text()
    for number in ("0.35 [0.29, 0.41]", "0.68", "0.71", "239 (77%)", "70 (23%)"):
        assert number in text, f"{number!r} was cut:\n{text}"
    assert "…" not in text


def test_run_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(EXAMPLE_ITEMS), "-o", str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "s.sqlite"),
                 "--no-progress", "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    rows = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert summary["rows"] == len(rows) == 9
    assert summary["label_1"] == sum(r["label"] == 1 for r in rows)
    assert summary["label_0"] == sum(r["label"] == 0 for r in rows)
    assert summary["invalid"] == sum(r["status"] == "invalid" for r in rows)
    assert summary["model"] == "baseline/lexical" and summary["cost_usd"] is None


def test_no_model_notice_is_not_printed_before_a_missing_file_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "missing.jsonl", "-o", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "missing.jsonl" in err and "no model configured" not in err


def test_summary_says_no_1_0_labels_not_no_labels() -> None:
    from judgeflow.results import Judgment, Usage
    from judgeflow.runs.summary import summarize

    lines = summarize([Judgment(id="a", label=None, status="unscored", error="x")], model="baseline/lexical",
                      prices=None, elapsed=0, session=Usage(), session_items=0)
    assert lines[0].startswith("1 rows: no 1/0 labels;")
