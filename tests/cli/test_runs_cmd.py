"""`judgeflow runs`: list, show and diff the runs in the store; and `judgeflow --help` lists every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow.cli import COMMAND_NAMES, SUMMARIES, main
from judgeflow.runs.history import run_diff
from judgeflow.runs.store import RunStore

SAMPLE = Path(__file__).parents[2] / "examples" / "data" / "factual_qa_sample.jsonl"


@pytest.fixture
def two_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ids = []
    for model, out in (("baseline/lexical", "a.jsonl"), ("baseline/rouge-l", "b.jsonl")):
        assert main(["run", str(SAMPLE), "-o", out, "--model", model, "--store", "s.sqlite", "--no-progress",
                     "--json"]) == 0
        ids.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"])
    return ids


def labels(path: str) -> dict[str, int]:
    return {r["id"]: r["label"] for r in map(json.loads, Path(path).read_text().splitlines())}


def test_runs_diff_names_settings_rates_and_flipped_items(two_runs, capsys):
    a, b = two_runs
    la, lb = labels("a.jsonl"), labels("b.jsonl")
    flipped = sorted(i for i in la if la[i] != lb[i])
    with RunStore("s.sqlite") as store:
        d = run_diff(store, a, b)
    assert sorted(f.id for f in d.flipped) == flipped and d.paired == 48
    assert d.settings[0] == "model: 'baseline/lexical' -> 'baseline/rouge-l'"
    assert d.a.ones == sum(la.values()) and d.b.ones == sum(lb.values())
    assert main(["runs", "diff", "previous", "latest", "--store", "s.sqlite"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"{len(flipped)} flipped" in out and "model: 'baseline/lexical' -> 'baseline/rouge-l'" in out


def test_runs_list_and_show(two_runs, capsys):
    a, b = two_runs
    assert main(["runs", "--store", "s.sqlite", "--json"]) == 0
    cards = json.loads(capsys.readouterr().out)
    assert [c["run_id"] for c in cards] == [b, a] and cards[0]["rows"] == 48
    assert main(["runs", "show", a, "--store", "s.sqlite"]) == 0
    assert "answer rate" in capsys.readouterr().out
    assert main(["runs", "show", "--store", "s.sqlite"]) == 2
    assert "takes 1 run id(s)" in capsys.readouterr().err
    assert main(["runs", "show", "nope", "--store", "s.sqlite"]) == 2
    assert main(["runs", "--store", "missing.sqlite"]) == 2


def test_help_lists_every_command(capsys):
    assert set(SUMMARIES) == set(COMMAND_NAMES)  # tune was missing from --help
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(f"    {name}" in out for name in ("tune", "runs", "gate"))
