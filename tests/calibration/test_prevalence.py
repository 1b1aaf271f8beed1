"""The base rate and the prevalence-adjusted figures beside kappa."""

from __future__ import annotations

import pytest
from sklearn.metrics import balanced_accuracy_score

from judgeflow.calibration.agreement import agreement
from judgeflow.calibration.prevalence import prevalence_figures, prevalence_text


def test_the_kappa_paradox_is_visible_beside_kappa():
    # 100 items, 5 hallucinations: the judge agrees on 91, yet kappa is low; PABAK is not
    human = [1] * 5 + [0] * 95
    judge = [1, 0, 0, 0, 0] + [1] * 5 + [0] * 90
    a = agreement(human, judge, n_boot=200)
    assert a.prevalence == pytest.approx(0.05) and a.judge_rate == pytest.approx(0.06)
    assert a.pabak == pytest.approx(2 * a.accuracy - 1) == pytest.approx(0.82)
    assert a.kappa < 0.2 < a.pabak
    assert a.balanced_accuracy == pytest.approx(balanced_accuracy_score(human, judge))


def test_a_constant_judge_scores_half_on_balanced_accuracy_at_any_base_rate():
    for ones in (5, 50):
        human = [1] * ones + [0] * (100 - ones)
        assert agreement(human, [0] * 100).balanced_accuracy == pytest.approx(0.5)


def test_one_class_and_no_items():
    assert prevalence_figures(3, 1, 0, 0).balanced_accuracy is None
    assert prevalence_figures(0, 0, 0, 0).prevalence is None
    assert prevalence_text(prevalence_figures(40, 10, 5, 45)) == "base rate 50% (judge 55%); PABAK 0.70; balanced accuracy 0.85"


def test_calibrate_and_compare_print_them(tmp_path, capsys):
    import json

    from judgeflow.cli import main
    from judgeflow.results import Judgment

    rows = [Judgment(id=f"q{i}", label=i % 2 if i < 30 else 1, human_label=i % 2).to_row() for i in range(40)]
    f = tmp_path / "r.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["calibrate", str(f), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "base rate" in out and "PABAK" in out and "balanced accuracy" in out
    assert main(["compare", str(f), str(f), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "PABAK" in out and "base rate on the paired items: 50%" in out
