"""`judgeflow run --knowledge commit-first --evidence FILE` (#52): the decided-by shares in the summary and
`run --json`, the flags recorded and resumed, `calibrate --by decided_by` (offline judge: no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow.cli import main
from judgeflow.cli.flags import resume_command
from judgeflow.config.judging import JudgeSpec
from judgeflow.config.run import RunSpec

# a reference of more than 40 words: the offline judge reads a claim it lacks as unsettled, not as contradicting it
LONG = ("Paris is the capital and the most populous city of France, with an estimated population of two million "
        "residents, the centre of the Ile-de-France region, and since the seventeenth century one of the major "
        "centres of finance, diplomacy, commerce, culture, fashion and gastronomy in the whole of Europe.")
ITEMS = [
    # the reference settles the year
    {"id": "a", "question": "When was Moscow founded?", "reference": "Moscow was founded in 1147.",
     "answer": "Moscow was founded in 1147.",
     "label": 0},
    # the reference is about something else: the evidence documents settle it
    {"id": "b", "question": "Tell me about Paris.", "reference": LONG,
     "answer": "The Eiffel Tower opened in 1889.", "label": 0},
    # nothing settles it (the offline judge has no knowledge)
    {"id": "c", "question": "Tell me about Canberra.", "reference": LONG,
     "answer": "Canberra has many lovely parks designed by Walter Burley Griffin.", "label": 1},
]
# documents of a realistic length (the offline judge reads a claim that shares almost nothing with a
# text of 40 words or fewer as contradicting it: its rule for short reference answers)
MORE = (" The city has a long history of trade, learning and government, with museums, libraries, theatres and "
        "universities, and it is known for its architecture, its parks and its river.")
DOCS = [{"id": "d1", "text": "Moscow was founded in 1147 by Yuri Dolgorukiy." + MORE},
        {"id": "d2", "title": "Paris", "text": "The Eiffel Tower opened in 1889 for the World's Fair." + MORE},
        {"id": "d3", "text": "Canberra became the capital of Australia in 1913." + MORE}]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_run_with_commit_first_and_evidence_prints_decided_by_and_resumes_with_both(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items, docs = write(tmp_path / "items.jsonl", ITEMS), write(tmp_path / "docs.jsonl", DOCS)
    out, store = tmp_path / "out.jsonl", tmp_path / "s.sqlite"
    flags = ["--model", "baseline/lexical", "--criterion", "factual_correctness", "--store", str(store), "--no-progress"]
    code = main(["run", str(items), "-o", str(out), *flags, "--knowledge", "commit-first", "--evidence", str(docs),
                 "--json"])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and set(summary["decided_by"]) == {"reference", "knowledge", "evidence", "unverifiable"}
    rows = {r["id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert rows["a"]["claims"][0]["basis"] == "reference"
    b = rows["b"]["claims"][0]
    assert b["basis"] == "evidence" and b["evidence_found"] is True and "1889" in b["evidence"]
    assert rows["c"]["claims"][0]["verdict"] == "unverifiable" and rows["c"]["label"] == 0
    assert summary["decided_by"] == {"reference": round(1 / 3, 4), "knowledge": 0.0, "evidence": round(1 / 3, 4),
                                     "unverifiable": round(1 / 3, 4)}
    # the plain summary says it too
    main(["run", str(items), "-o", str(tmp_path / "again.jsonl"), *flags, "--knowledge", "commit-first",
          "--evidence", str(docs)])
    printed = capsys.readouterr()
    assert "claims decided by: reference 33%, knowledge 0%, evidence 33%, unverifiable 33% (of 3 claims)" in \
        printed.out + printed.err
    # recorded: a resume without the flags is refused, the resume command repeats them
    assert main(["run", str(items), "-o", str(out), *flags, "--resume"]) == 2
    assert "knowledge" in capsys.readouterr().err
    settings = RunSpec(judging=JudgeSpec(model="baseline/lexical", knowledge="commit-first", evidence=str(docs)),
                       input="i.jsonl", output="o.jsonl")
    command = resume_command(settings)
    assert "--knowledge commit-first" in command and f"--evidence {docs}" in command


def test_calibrate_by_decided_by_groups_items_by_what_settled_them(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    items, docs = write(tmp_path / "items.jsonl", ITEMS), write(tmp_path / "docs.jsonl", DOCS)
    out = tmp_path / "out.jsonl"
    assert main(["run", str(items), "-o", str(out), "--model", "baseline/lexical", "--criterion", "factual_correctness",
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--evidence", str(docs)]) == 0
    capsys.readouterr()
    assert main(["calibrate", str(out), "--by", "decided_by", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    groups = {g["group"] if "group" in g else g["value"]: g for g in report["groups"]}
    assert {"reference", "evidence", "unverifiable"} <= set(groups)
    assert report["decided_by"]["evidence"] > 0
