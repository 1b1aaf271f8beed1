"""The corrected hallucination rate and the verdict on the judge (`corrected.py`, `trust.py`, `calibrate`).

Simulated runs: answers with a known true rate judged by a judge with known sensitivity and
specificity, a person labelling a sample of the judged rows. The coverage test draws 300 runs of
one cell where the judge's bias is large; `benchmarks/interval_coverage.py` measures the whole grid.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from judgeflow.calibration.agreement import calibrate
from judgeflow.calibration.corrected import corrected_rate, rogan_gladen, weighted_sens_spec
from judgeflow.calibration.trust import MIN_LABELS, judge_verdict
from judgeflow.cli import main
from judgeflow.results import ClaimResult, Judgment


def simulate(rng: np.random.Generator, rate: float, sens: float, spec: float, judged: int
             ) -> tuple[np.ndarray, np.ndarray]:
    h = rng.random(judged) < rate
    j = np.where(h, rng.random(judged) < sens, rng.random(judged) >= spec)
    return h, j


def counts(h: np.ndarray, j: np.ndarray) -> tuple[int, int, int, int]:
    return int((h & j).sum()), int((~h & j).sum()), int((h & ~j).sum()), int((~h & ~j).sum())


def rows_of(h: np.ndarray, j: np.ndarray, labelled: set[int]) -> list[Judgment]:
    out = []
    for i, (hi, ji) in enumerate(zip(h, j)):
        claim = ClaimResult(id="c1", text=f"claim {i}", kind="date" if i % 2 else "name",
                            verdict="contradicted" if ji else "supported", error=bool(ji))
        out.append(Judgment(id=f"q{i}", label=int(ji), criterion="factual_correctness", model="m", claims=[claim],
                            human_label=int(hi) if i in labelled else None))
    return out


def test_the_stratified_estimate_is_rogan_gladen_with_weighted_sensitivity_and_specificity():
    c = corrected_rate(300, 1000, tp=12, fp=8, fn=3, tn=27)
    sens, spec = weighted_sens_spec(0.3, 12 / 20, 3 / 30)
    assert sens is not None and spec is not None
    assert c.estimate == pytest.approx(rogan_gladen(0.3, sens, spec))
    assert c.estimate == pytest.approx(0.3 * 0.6 + 0.7 * 0.1)
    assert c.low is not None and c.high is not None and 0 <= c.low < c.estimate < c.high <= 1


def test_the_interval_holds_the_true_rate_and_leaves_out_a_biased_raw_rate():
    """True rate 0.10, a judge with many false alarms (spec 0.7): its raw rate is about 0.35."""
    rng = np.random.default_rng(5)
    held = outside = 0
    runs = 300
    for d in range(runs):
        h, j = simulate(rng, 0.10, 0.9, 0.7, 2000)
        idx = rng.choice(2000, 50, replace=False)
        c = corrected_rate(int(j.sum()), 2000, *counts(h[idx], j[idx]), seed=d, draws=2000)
        assert c.low is not None and c.high is not None
        held += c.low <= 0.10 <= c.high
        outside += bool(c.raw_outside)
    assert held / runs >= 0.91, held / runs
    assert outside / runs >= 0.9, outside / runs


def test_labels_stratified_by_the_judges_label_are_not_biased():
    """`sample --results --equal`: half the labels on the judge's 1s though it flags 35% of rows; Rogan-Gladen
    with the sample's plain sensitivity and specificity is biased (here to about 0), the stratified estimate is not."""
    rng = np.random.default_rng(2)
    estimates, naive = [], []
    for d in range(200):
        h, j = simulate(rng, 0.10, 0.9, 0.7, 2000)
        ones, zeros = np.flatnonzero(j), np.flatnonzero(~j)
        idx = np.concatenate([rng.choice(ones, 25, replace=False), rng.choice(zeros, 25, replace=False)])
        tp, fp, fn, tn = counts(h[idx], j[idx])
        estimates.append(corrected_rate(int(j.sum()), 2000, tp, fp, fn, tn, seed=d, draws=500).estimate)
        naive.append((rogan_gladen(j.mean(), tp / (tp + fn), tn / (tn + fp)) if tp + fn else None) or 0.0)
    assert abs(np.mean(estimates) - 0.10) < 0.01
    assert np.mean(naive) < 0.05


def test_a_judge_no_better_than_chance_is_said_so():
    c = corrected_rate(500, 1000, tp=10, fp=30, fn=10, tn=30)  # PPV = FOR = 0.25
    assert c.informative is False and c.defined is False
    assert "no better than chance" in c.note and "undefined" in c.note
    assert rogan_gladen(0.5, 0.5, 0.5) is None


def test_nothing_labelled_gives_no_estimate():
    c = corrected_rate(30, 100, 0, 0, 0, 0)
    assert c.estimate is None and c.low is None and "label a sample" in c.note


def test_verdict_is_inconclusive_at_10_labels_and_decides_at_200():
    """A judge with sensitivity and specificity 0.9 at 10% and at 30% prevalence (kappa about 0.59 and 0.77:
    a kappa threshold of 0.6 would leave the first undecided), and one at 0.6."""
    rng = np.random.default_rng(11)
    for rate in (0.1, 0.3):
        h, j = simulate(rng, rate, 0.9, 0.9, 600)
        for n, expect in ((10, "INCONCLUSIVE"), (200, "TRUSTED")):
            report = calibrate(rows_of(h, j, set(range(n))), seed=0, n_boot=500)
            assert report.judge_verdict == expect, report.verdict.text
            if n == 10:
                assert report.labels_needed >= MIN_LABELS - 10
                assert (report.verdict.labels_needed_judge_1 + report.verdict.labels_needed_judge_0
                        == report.labels_needed)
            else:
                assert report.labels_needed == 0
    bad = calibrate(rows_of(*simulate(rng, 0.3, 0.6, 0.6, 600), set(range(200))), n_boot=500)
    assert bad.judge_verdict == "UNTRUSTED"


def test_labels_needed_grow_as_the_judge_nears_the_threshold():
    far = judge_verdict(40, 0.35, (0.1, 0.6), q=0.3, tp=10, fp=3, fn=4, tn=23, threshold=0.5)
    near = judge_verdict(40, 0.45, (0.2, 0.7), q=0.3, tp=10, fp=3, fn=4, tn=23, threshold=0.5)
    assert far.verdict == near.verdict == "INCONCLUSIVE"
    assert 0 < far.labels_needed < near.labels_needed
    assert "judge labelled 1" in far.text and str(far.labels_needed) in far.text


def test_calibrate_json_has_the_corrected_rate_the_verdict_and_per_type_rates(tmp_path: Path, capsys):
    rng = np.random.default_rng(3)
    h, j = simulate(rng, 0.2, 0.85, 0.8, 400)
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(r.to_row()) + "\n" for r in rows_of(h, j, set(range(60)))), encoding="utf-8")
    assert main(["calibrate", str(path), "--json", "--n-boot", "300"]) == 0
    out = json.loads(capsys.readouterr().out)
    c = out["corrected_rate"]
    assert 0 <= c["low"] <= c["estimate"] <= c["high"] <= 1
    assert out["judge_verdict"] in ("TRUSTED", "UNTRUSTED", "INCONCLUSIVE")
    assert isinstance(out["labels_needed"], int)
    assert {t["type"] for t in out["corrected_by_type"]} == {"date", "name"}
    assert main(["calibrate", str(path), "--n-boot", "300"]) == 0
    text = capsys.readouterr().out
    assert "hallucination rate: corrected" in text and "judge:" in text


def test_the_run_summary_gives_the_corrected_rate_when_rows_carry_labels():
    from judgeflow.calibration.corrected import rate_line
    from judgeflow.runs.summary import Tally

    rng = np.random.default_rng(8)
    h, j = simulate(rng, 0.1, 0.9, 0.7, 300)
    (line,) = rate_line(Tally.of(rows_of(h, j, set(range(80)))))
    assert line.startswith("hallucination rate: corrected") and "80 labelled" in line
    assert rate_line(Tally.of(rows_of(h, j, set()))) == []
    injected = Judgment(id="a#inj-date", label=1, extra={"injected": [{"type": "date", "start": 0, "end": 4}]})
    assert "inject --report" in rate_line(Tally.of([injected]))[0]


def test_the_estimate_always_lies_in_its_interval():
    for counts_ in ((0, 10, 0, 40), (10, 0, 0, 40), (0, 0, 0, 50), (5, 5, 5, 5), (0, 3, 2, 0)):
        c = corrected_rate(150, 1000, *counts_, draws=1000)
        assert c.low is not None and c.high is not None and c.low <= c.estimate <= c.high, (counts_, c)


def test_labels_from_a_focus_sample_void_the_correction(tmp_path: Path):
    rng = np.random.default_rng(4)
    h, j = simulate(rng, 0.2, 0.85, 0.8, 300)
    rows = rows_of(h, j, set())
    labels = tmp_path / "to_label.jsonl"
    labels.write_text("".join(json.dumps({"id": f"q{i}", "label": int(h[i]), "sample_focus": "disagreement"}) + "\n"
                              for i in range(40)), encoding="utf-8")
    report = calibrate(rows, labels, n_boot=200)
    assert report.corrected_rate is not None and not report.corrected_rate.defined
    assert "NOT VALID HERE" in report.corrected_rate.note and any("--focus" in w for w in report.warnings)
