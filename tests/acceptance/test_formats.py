"""#34: every output format read back by every command that takes results, with the same figures as
from JSONL (a table: formats x commands). CSV used to be refused ("field 'label': Input should be 0
or 1 (input '0')") and Parquet read as "a binary file"."""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from fakes.generated import generated_items, write_jsonl

from judgeflow.cli import main

pytestmark = pytest.mark.acceptance
FORMATS = ("jsonl", "csv", "parquet", "stdout")
COMMANDS = ("calibrate", "compare", "gate", "stability", "sample", "review", "label", "tune --labels")


def _run(argv: list[str], capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    return code, capsys.readouterr().out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One offline run of 120 generated items (a few invalid) written in each format, and a second
    JSONL run of the same items (the repeat `stability` and `compare` take)."""
    d = tmp_path_factory.mktemp("formats")
    items = write_jsonl(d / "items.jsonl", generated_items(120, invalid_every=23))
    store = d / "runs.sqlite"
    out = {}
    for fmt in ("jsonl", "csv", "parquet"):
        out[fmt] = d / f"results.{fmt}"
        assert main(["run", str(items), "-o", str(out[fmt]), "--store", str(store), "--no-progress"]) == 0
    assert main(["run", str(items), "-o", str(d / "again.jsonl"), "--store", str(store), "--no-progress"]) == 0
    return d, items, store, out


def _stdout_of(argv: list[str]) -> str:
    """What `judgeflow ARGV` writes to stdout (what `> file` saves; the summary goes to stderr),
    in-process."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    assert code == 0, out.getvalue()[-2000:]
    return out.getvalue()


@pytest.fixture(scope="module")
def stdout_file(runs):
    d, items, store, _ = runs
    text = _stdout_of(["run", str(items), "-o", "-", "--store", str(store), "--no-progress"])
    (d / "stdout").mkdir()
    path = d / "stdout" / "results.jsonl"  # what `-o - > results.jsonl` saves (JSONL, the default for stdout)
    path.write_text(text)
    return path


def _figures(text: str, path: Path, d: Path) -> str:
    """A report with the file's name replaced (the only thing that may differ between formats)."""
    text = text.replace(str(path), "RESULTS").replace(str(path.parent), "DIR").replace(path.name, "RESULTS")
    return re.sub(r"\s+", " ", text.replace(str(d), "DIR"))


def _cell(command: str, results: Path, runs, capsys, monkeypatch, tag: str) -> str:
    d, items, store, out = runs
    again = d / "again.jsonl"
    if command == "calibrate":
        code, text = _run(["calibrate", str(results), "--json", "--n-boot", "50"], capsys)
    elif command == "compare":
        code, text = _run(["compare", str(results), str(again), "--json"], capsys)
    elif command == "gate":
        code, text = _run(["gate", str(results), "--baseline", str(again), "--json"], capsys)
    elif command == "stability":
        code, text = _run(["stability", str(results), str(again), "--json", "--n-boot", "50"], capsys)
    elif command == "sample":
        target = d / f"sample-{tag}.jsonl"
        code, _ = _run(["sample", str(items), "-n", "30", "-o", str(target), "--results", str(results)], capsys)
        text = target.read_text()
    elif command == "review":
        from judgeflow.calibration.label_app.session import ReviewSession

        labels = d / f"review-{tag}.jsonl"
        s = ReviewSession(results, labels, items=items)
        code, text = 0, json.dumps([(j.id, j.label, j.status, j.criterion) for j in s.results]) + labels.read_text()
    elif command == "label":
        target = d / f"to-label-{tag}.jsonl"
        assert main(["sample", str(items), "-n", "10", "-o", str(target), "--results", str(results)]) == 0
        answers = iter(["1", "0", "s", "1", "q"])
        monkeypatch.setattr(builtins, "input", lambda prompt="": next(answers))
        code, _ = _run(["label", str(target)], capsys)
        text = re.sub(r'"labelled_at": "[^"]*"', "", target.read_text())
    else:  # tune --labels: the results file as labels (its label column, typed), against the schema fake
        from fakes import SchemaProvider

        monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-acceptance")
        small = write_jsonl(d / f"tune-items-{tag}.jsonl", [json.loads(x) for x in items.read_text().splitlines()[:12]])
        with SchemaProvider(seed=1) as fake:
            code, text = _run(["tune", str(small), "--criterion", "factual_correctness", "--model", "openai/gpt-4o-mini",
                               "--base-url", fake.base_url + "/v1", "--labels", str(results), "--folds", "2",
                               "--candidates", "1", "--store", str(d / f"tune-{tag}.sqlite"), "--json",
                               "-o", str(d / f"tune-{tag}")], capsys)
        text = re.sub(r'"(elapsed|seconds|started|finished|at)[a-z_]*": [^,}]*', "", text)
    assert code in (0, 1), f"{command} on {results.name} exited {code}"
    return _figures(text, results, d)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("fmt", FORMATS[1:])
def test_every_format_reads_back_with_jsonls_figures(fmt, command, runs, stdout_file, capsys, monkeypatch):
    d, items, store, out = runs
    results = stdout_file if fmt == "stdout" else out[fmt]
    want = _cell(command, out["jsonl"], runs, capsys, monkeypatch, f"{command}-jsonl".replace(" ", ""))
    got = _cell(command, results, runs, capsys, monkeypatch, f"{command}-{fmt}".replace(" ", ""))
    assert got == want


def test_a_csv_written_to_stdout_reads_back_as_the_file_does(runs, tmp_path):
    d, items, store, out = runs
    text = _stdout_of(["run", str(items), "-o", "-", "--format", "csv", "--store", str(store),
                       "--no-progress"])
    (tmp_path / "r.csv").write_text(text)
    from judgeflow.io import read_results

    assert [j.model_dump() for j in read_results(tmp_path / "r.csv")] == [j.model_dump() for j in read_results(out["csv"])]
    assert [(j.id, j.label, j.status) for j in read_results(out["csv"])] == \
        [(j.id, j.label, j.status) for j in read_results(out["jsonl"])]
