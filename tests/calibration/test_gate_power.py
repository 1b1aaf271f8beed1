"""The gate's paired test is one-sided at --alpha, and every gate says what it could have caught (#41)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from test_gate import labels, runs

from judgeflow.calibration.comparison import mcnemar_exact
from judgeflow.calibration.gate import gate
from judgeflow.calibration.gate_power import detectable, is_worse, needed_n, power, worse_p
from judgeflow.cli import main


def test_five_flips_all_worse_fail_at_alpha_005(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 5 went 0 -> 1, none back: one-sided p = 1/32 = 0.031 < 0.05 (the two-sided 0.0625 let it pass)
    base = labels(200, set(range(20)))
    cand, b = runs(tmp_path, base, labels(200, set(range(25))))
    assert main(["gate", str(cand), "--baseline", str(b)]) == 1
    assert "one-sided exact McNemar p = 0.0312" in capsys.readouterr().out
    r = gate(cand, b)
    assert r.rule == "paired" and r.worse_p == pytest.approx(1 / 32)


def test_the_one_sided_p_is_scipys_binomtest() -> None:
    stats = pytest.importorskip("scipy.stats")
    for w, b in [(5, 0), (7, 1), (10, 4), (3, 3), (0, 4), (30, 12)]:
        want = stats.binomtest(w, w + b, 0.5, alternative="greater").pvalue
        assert worse_p(w, b) == pytest.approx(want, rel=1e-12)


def _flips(rng: random.Random, n: int, p01: float, p10: float) -> tuple[int, int]:
    worse = better = 0
    for _ in range(n):
        u = rng.random()
        worse += u < p01
        better += p01 <= u < p01 + p10
    return worse, better


def test_false_fail_rate_on_identical_noisy_runs_is_at_most_alpha_and_power_matches_simulation() -> None:
    rng = random.Random(41)
    n, noise, alpha, sims = 200, 0.06, 0.05, 3000
    draws = [_flips(rng, n, noise / 2, noise / 2) for _ in range(sims)]
    fails = sum(is_worse(w, b, alpha) for w, b in draws)
    assert fails / sims <= alpha
    two_sided = sum(w > b and mcnemar_exact(w, b) < alpha for w, b in draws)  # the old rule: a test at alpha/2
    assert two_sided < fails
    caught = sum(is_worse(*_flips(rng, n, noise / 2 + 0.05, noise / 2), alpha) for _ in range(1000))
    assert caught / 1000 == pytest.approx(power(n, 0.05, noise, alpha), abs=0.05)


def test_detectable_and_needed_n_agree_with_power() -> None:
    d = detectable(200, 0.06)
    assert d is not None and power(200, d, 0.06) >= 0.8 > power(200, d - 0.005, 0.06)
    need = needed_n(0.05, 0.06)
    assert need is not None and power(need, 0.05, 0.06) >= 0.8 and power(need // 2, 0.05, 0.06) < 0.8
    assert needed_n(0.02, 0.06) > need  # type: ignore[operator]


def test_every_gate_prints_its_power_and_the_items_a_named_regression_needs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = labels(200, set(range(0, 200, 7)))
    cand, b = runs(tmp_path, base, base)
    assert main(["gate", str(cand), "--baseline", str(b), "--detect", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "with 80% power" in out and "a 5-point regression needs about" in out
    md = tmp_path / "gate.md"
    assert main(["gate", str(cand), "--baseline", str(b), "--markdown", str(md), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert 0 < data["detectable"] < 0.5 and "80% power" in md.read_text()
