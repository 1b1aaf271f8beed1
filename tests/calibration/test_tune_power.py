"""`tune` says how big a gain its labels could have detected (#41): the smallest held-out gain
caught with 80% power at its label count and acceptance level, and the labels a named gain needs.

Checked against a hand computation (no noise: every flip is a fix, so the exact two-sided McNemar
p is 2 / 2**m and an edit needs m >= 6 fixes at 0.05), against a simulation of tunes' flips tested
the way `tune` tests them (scipy's binomtest), and end to end: the API and the CLI through fakes at
the HTTP boundary."""

from __future__ import annotations

import functools
import json
import math
import random
from pathlib import Path

import pytest
from fakes.schema_provider import SchemaProvider
from fakes.tuning import ReadingFake, capital_items
from scipy.stats import binomtest
from test_tune import STRICT

from judgeflow.calibration.gate_power import noise_of
from judgeflow.calibration.tune import tune
from judgeflow.calibration.tune_power import tune_power
from judgeflow.cli import main


def _at_least(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


def test_with_no_noise_the_detectable_gain_is_the_hand_computed_one() -> None:
    # by hand: 2 / 2**5 = 0.0625 >= 0.05 and 2 / 2**6 = 0.031 < 0.05, so 6 fixes are needed;
    # P(Bin(40, d) >= 6) first reaches 0.8 on the half-point grid at d = 0.195 (0.819; 0.798 at 0.19)
    assert binomtest(0, 6, 0.5).pvalue < 0.05 <= binomtest(0, 5, 0.5).pvalue
    assert _at_least(6, 40, 0.19) < 0.8 <= _at_least(6, 40, 0.195)
    p = tune_power(40, 0.0, ranks=1)
    assert p.detectable == pytest.approx(0.195) and p.level == 0.05
    # 3 ranks tested: p < 0.05 / 3 needs 2 / 2**m < 0.0167, so m >= 7: P(Bin(40, d) >= 7) >= 0.8 from d = 0.22
    assert _at_least(7, 40, 0.215) < 0.8 <= _at_least(7, 40, 0.22)
    assert tune_power(40, 0.0, ranks=3).detectable == pytest.approx(0.22)


def test_the_detectable_gain_matches_a_simulation_of_tunes_tested_as_tune_tests_them() -> None:
    labels, noise = 40, 0.10
    p = tune_power(labels, noise, ranks=1)
    assert p.detectable is not None

    @functools.cache  # a few hundred distinct (broken, n) pairs among 6,000 simulated tunes
    def p_value(broken: int, n: int) -> float:
        return binomtest(broken, n, 0.5).pvalue

    def accepted_share(gain: float, runs: int = 3000) -> float:
        rng, won = random.Random(7), 0
        for _ in range(runs):
            fixed = broken = 0
            for _ in range(labels):
                u = rng.random()
                fixed += u < noise / 2 + gain
                broken += noise / 2 + gain <= u < noise + gain
            won += fixed > broken and p_value(broken, fixed + broken) < 0.05
        return won / runs

    assert accepted_share(p.detectable) >= 0.8 - 0.025  # 3,000 runs: sd of a share near 0.8 is 0.007
    assert accepted_share(p.detectable - 0.03) < 0.8


def test_needed_labels_reach_the_power_and_fewer_do_not() -> None:
    p = tune_power(40, 0.05, ranks=1, detect=0.10)
    assert p.needed is not None and p.needed > 40
    assert tune_power(p.needed, 0.05).detectable <= 0.10 < tune_power(p.needed // 2, 0.05).detectable
    assert "a 10-point gain needs about" in p.text() and "more than these" in p.text()


def test_a_tune_reports_its_detectable_gain_and_the_labels_a_named_gain_needs() -> None:
    result = tune(capital_items(), STRICT, backend=ReadingFake().backend(), folds=4, candidates=1, detect=0.10)
    power = result.report.power
    assert power is not None, "the report says what its labels could have detected"
    cmp = result.report.ranks[0].comparison
    assert cmp is not None and power.labels == cmp.n == 40
    assert power.noise == noise_of(cmp.a_right_b_wrong, cmp.b_right_a_wrong, cmp.n)
    assert power.detectable == tune_power(40, power.noise).detectable and power.needed is not None
    assert json.loads(result.report.model_dump_json())["power"]["needed"] == power.needed


def test_the_cli_prints_the_detectable_gain_and_the_labels_needed(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in capital_items()), encoding="utf-8")
    with SchemaProvider(seed=3) as fake:
        code = main(["tune", str(items), "--criterion", "factual_correctness", "--model", "openai/fake",
                     "--base-url", f"{fake.base_url}/v1", "--store", str(tmp_path / "s.sqlite"), "--folds", "2",
                     "--candidates", "1", "-o", str(tmp_path / "out"), "--detect", "0.10"])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0, text
    assert "power: with 40 labels" in text and "a 10-point gain needs about" in text
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["power"]["detect"] == 0.10 and report["power"]["needed"] > 40
