"""The benchmarks' metrics against hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from judgeflow.bench.metrics import balanced_accuracy, f1_macro, f1_positive, figure, kappa

# people:  1 1 1 1 0 0 0 0 0 0 ; judge: 1 1 1 0 1 1 0 0 0 0  -> tp 3, fn 1, fp 2, tn 4
HUMAN = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
JUDGE = [1, 1, 1, 0, 1, 1, 0, 0, 0, 0]


def test_balanced_accuracy_f1_and_kappa_by_hand():
    h, j = np.array(HUMAN), np.array(JUDGE)
    assert balanced_accuracy(h, j) == pytest.approx((3 / 4 + 4 / 6) / 2)  # 0.7083
    assert f1_positive(h, j) == pytest.approx(2 * 3 / (2 * 3 + 2 + 1))  # 6/9
    assert f1_macro(h, j) == pytest.approx((6 / 9 + 2 * 4 / (2 * 4 + 1 + 2)) / 2)  # (6/9 + 8/11) / 2
    po, pe = 7 / 10, 0.4 * 0.5 + 0.6 * 0.5
    assert kappa(h, j) == pytest.approx((po - pe) / (1 - pe))  # 0.4


def test_a_figure_has_a_seeded_interval_around_its_value():
    a = figure("balanced accuracy", balanced_accuracy, HUMAN * 5, JUDGE * 5, seed=3)
    assert a.value == pytest.approx(0.7083, abs=1e-4) and a.n == 50
    assert a.ci[0] < a.value < a.ci[1]
    assert a == figure("balanced accuracy", balanced_accuracy, HUMAN * 5, JUDGE * 5, seed=3)
    assert a.ci != figure("balanced accuracy", balanced_accuracy, HUMAN * 5, JUDGE * 5, seed=4).ci


def test_one_class_only_is_undefined_not_a_number():
    f = figure("balanced accuracy", balanced_accuracy, [1, 1, 1], [1, 0, 1])
    assert f.value is None and "one class" in f.note
    assert figure("F1-macro", f1_macro, [], []).value is None
