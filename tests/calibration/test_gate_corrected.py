"""`gate --labels`: both runs' rates corrected for the judge's measured errors, and when a regression
could be the judge's (`gate_corrected.py`)."""

from __future__ import annotations

import json
from pathlib import Path

from judgeflow.calibration.gate import gate
from judgeflow.calibration.gate_report import gate_markdown
from judgeflow.cli import main
from judgeflow.results import Judgment


def run(labels: list[int]) -> list[Judgment]:
    return [Judgment(id=f"q{i:03d}", label=x, criterion="factual_correctness", model="m") for i, x in enumerate(labels)]


def write_labels(path: Path, labels: dict[str, int]) -> Path:
    path.write_text("".join(json.dumps({"id": k, "label": v}) + "\n" for k, v in labels.items()), encoding="utf-8")
    return path


BASE = [1] * 22 + [0] * 178
CAND = [1] * 20 + [0, 0] + [1] * 10 + [0] * 168  # 10 items went 0 -> 1, 2 went 1 -> 0


def test_a_regression_a_noisy_judge_could_have_made_is_flagged(tmp_path: Path):
    # of the judge's 20 labelled 1s, people confirm 6: most of its flags are false alarms, so up to about 8.6
    # of the 10 new flags may be false alarms: as many as the net regression of 8
    labels = {f"q{i:03d}": int(i < 6) for i in range(20)} | {f"q{i:03d}": 0 for i in range(20, 60)}
    r = gate(run(CAND), run(BASE), labels=write_labels(tmp_path / "l.jsonl", labels))
    assert not r.passed and r.rule == "paired"  # the gate still decides on the paired test
    c = r.corrected
    assert c is not None and c.labelled == 60 and c.judge_could_explain
    assert c.baseline.estimate is not None and c.candidate.estimate is not None
    assert c.baseline.estimate < 0.1 < r.baseline.rate  # type: ignore[operator]
    assert "could be the judge's" in r.verdict and "could be the judge's" in gate_markdown(r)


def test_a_judge_people_agree_with_leaves_the_regression_standing(tmp_path: Path):
    labels = {f"q{i:03d}": 1 for i in range(22)} | {f"q{i:03d}": 0 for i in range(22, 80)}
    r = gate(run(CAND), run(BASE), labels=write_labels(tmp_path / "l.jsonl", labels))
    c = r.corrected
    assert c is not None and not c.judge_could_explain and c.low is not None and c.low > 0
    assert "could be the judge's" not in r.verdict


def test_the_cli_prints_the_corrected_rates(tmp_path: Path, capsys):
    paths = []
    for name, rows in (("b.jsonl", run(BASE)), ("c.jsonl", run(CAND))):
        p = tmp_path / name
        p.write_text("".join(json.dumps(j.to_row()) + "\n" for j in rows), encoding="utf-8")
        paths.append(p)
    labels = write_labels(tmp_path / "l.jsonl", {f"q{i:03d}": 1 for i in range(20)} | {"q100": 0, "q101": 0})
    assert main(["gate", str(paths[1]), "--baseline", str(paths[0]), "--labels", str(labels), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["corrected"]["labelled"] == 22 and out["corrected"]["candidate"]["estimate"] is not None
