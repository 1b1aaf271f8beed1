"""The statistics agree with scipy (exact binomial test, Wilson interval) and with the formulas."""

from __future__ import annotations

import math

import pytest

from judgeflow.calibration.comparison import mcnemar_exact
from judgeflow.calibration.rates import wilson_interval
from judgeflow.ensembles.cascade import wilson
from judgeflow.text import sentences


def enumerated(b: int, c: int) -> float:
    n = b + c
    return 1.0 if n == 0 else min(1.0, 2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n)


@pytest.mark.parametrize("b,c", [(0, 0), (0, 5), (3, 9), (10, 10), (40, 12), (1, 200)])
def test_mcnemar_is_the_exact_binomial_test(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(enumerated(b, c), rel=1e-9)


@pytest.mark.parametrize("k,n", [(0, 20), (20, 20), (3, 40), (120, 1000), (1, 1), (0, 1), (7, 9)])
def test_wilson_is_scipys_and_the_closed_form(k, n):
    from scipy.stats import binomtest  # the oracle: wilson_interval is its closed form

    for level in (0.8, 0.9, 0.95, 0.99):
        ci = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
        assert wilson_interval(k, n, level) == pytest.approx((ci.low, ci.high), abs=1e-12)
    lo, hi = wilson_interval(k, n, 0.95)
    assert (lo, hi) == pytest.approx(wilson(k, n, 1.959963984540054), abs=1e-9)
    assert wilson_interval(k, 0) is None


def test_sentences_do_not_cut_at_a_number_sign_or_an_abbreviation():
    assert sentences("The song spent nine weeks at No. 1 on the Billboard Hot 100.") == [
        "The song spent nine weeks at No. 1 on the Billboard Hot 100."]  # was cut after "No."
    assert sentences("No. The war ended in 1945.") == ["No.", "The war ended in 1945."]
    assert len(sentences("Dr. Smith founded it in 1990. J. K. Rowling wrote it.")) == 2
    assert sentences('She said "It is late." Then she left.') == ['She said "It is late."', "Then she left."]
