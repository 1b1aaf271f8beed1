"""`run --json` and the run summary carry the answers' citation precision and recall (#53)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow.cli import main

SOURCES = ["Paris is the capital of France.", "Berlin is the capital of Germany."]
ANSWERS = {"right": "Paris is the capital of France [1].", "misattributed": "Berlin is the capital of Germany [1].",
           "fabricated": "Paris is the capital of France [7].", "uncited": "Berlin is the capital of Germany."}


def _items(tmp_path: Path) -> Path:
    path = tmp_path / "rag.jsonl"  # RAGAS field names: the contexts are numbered from 1
    path.write_text("".join(json.dumps({"id": k, "user_input": "Capital?", "retrieved_contexts": SOURCES,
                                        "response": a}) + "\n" for k, a in ANSWERS.items()))
    return path


def test_run_json_has_citation_precision_and_recall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    code = main(["run", str(_items(tmp_path)), "-o", str(out), "--store", str(tmp_path / "s.sqlite"),
                 "--model", "baseline/lexical", "--no-progress", "--json"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert [rows[k]["label"] for k in ANSWERS] == [0, 1, 1, 0]
    assert rows["misattributed"]["claims"][0]["verdict"] == "misattributed_citation"
    assert rows["fabricated"]["claims"][0]["verdict"] == "fabricated_citation"
    assert "citations" not in rows["uncited"]
    c = summary["citations"]
    assert (c["answers"], c["pairs"], c["supporting"], c["claims"], c["supported_claims"]) == (3, 3, 1, 3, 1)
    assert c["precision"] == pytest.approx(1 / 3, abs=1e-4) and c["recall"] == pytest.approx(1 / 3, abs=1e-4)
    assert (c["fabricated"], c["misattributed"]) == (1, 1)


def test_the_run_summary_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(_items(tmp_path)), "-o", str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "s.sqlite"),
                 "--model", "baseline/lexical", "--no-progress"]) == 0
    seen = capsys.readouterr()
    text = " ".join((seen.out + seen.err).split())
    assert "citations: precision 33% (1 of 3 claim-source pairs hold the claim), recall 33%" in text
    assert "fabricated 1, misattributed 1" in text
