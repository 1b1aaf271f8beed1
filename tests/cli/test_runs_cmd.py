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
    assert main(["runs", "show", a, "--store", "s.sqlite"]) == 0  # into a pipe (captured): the card as JSON
    assert json.loads(capsys.readouterr().out)["answer_rate"] is not None
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


def test_runs_diff_names_inputs_and_criteria_and_separates_answer_from_judge_changes(tmp_path, monkeypatch, capsys):
    """Before: two runs over different inputs were compared without naming either, the routed
    criterion showed as None, and every flip looked like the judge's."""
    monkeypatch.chdir(tmp_path)
    rows = [json.loads(x) for x in SAMPLE.read_text().splitlines()]
    Path("a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    changed = {r["id"] for r in rows[:6]}
    for r in rows[:6]:
        r["answer"] = "It is not so: " + r["answer"]
    Path("b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for inp, model in (("a.jsonl", "baseline/lexical"), ("b.jsonl", "baseline/rouge-l")):
        assert main(["run", inp, "-o", f"r-{inp}", "--model", model, "--store", "s.sqlite", "--no-progress"]) == 0
    capsys.readouterr()
    with RunStore("s.sqlite") as store:
        ids = [r.run_id for r in sorted(store.runs(), key=lambda r: r.created)]
        d = run_diff(store, *ids)
    assert d.same_input is False and d.a.criteria == {"factual_correctness": 48}
    assert d.flipped and all(f.answer_changed == (f.id in changed) for f in d.flipped)
    assert d.answer_changes() and d.judge_changes()
    assert main(["runs", "diff", "previous", "latest", "--store", "s.sqlite"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "a.jsonl judged by baseline/lexical, criterion routed (factual_correctness 48)" in out
    assert "inputs: different" in out
    assert (f"of the flips: {len(d.answer_changes())} with a changed answer or evidence (the input changed), "
            f"{len(d.judge_changes())} on the same text (the judge changed)") in out


def test_runs_show_writes_json_into_a_pipe_and_fits_a_terminal(two_runs, capsys, monkeypatch):
    import sys

    a, _ = two_runs
    assert main(["runs", "show", a, "--store", "s.sqlite"]) == 0  # captured output is a pipe
    card = json.loads(capsys.readouterr().out)
    assert card["run_id"] == a and card["criteria"] == {"factual_correctness": 48}
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["runs", "show", a, "--store", "s.sqlite"]) == 0
    out = capsys.readouterr().out
    settings = [line for line in out.splitlines() if line.startswith("  ")]
    assert "answer rate" in out and "\u2503" not in out  # no table: one setting a line, each within the width
    # the recorded RunSpec, one field a line by its short name (the judging's own: model, strategy, ...)
    assert settings and max(len(line) for line in settings) <= 80
    assert "  model: baseline/lexical" in settings and "  strategy: graph" in settings


def test_a_resume_with_another_budget_is_the_resume_command_runs_show_gives(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    base = ["run", str(SAMPLE), "-o", "o.jsonl", "--store", "s.sqlite", "--no-progress", "--model", "baseline/lexical"]
    main([*base, "--budget", "1"])
    main([*base, "--budget", "500", "--resume"])
    capsys.readouterr()
    with RunStore("s.sqlite") as store:
        (info,) = store.runs()
    assert "--budget 500" in info.command and "--budget 1 " not in info.command + " "
