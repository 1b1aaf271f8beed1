"""compare: each run's kappa (scikit-learn), paired bootstrap, McNemar exact, refusals of mismatched runs."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgeflow.calibration.agreement import bootstrap_indices
from judgeflow.calibration.comparison import compare, mcnemar_exact
from judgeflow.cli import main
from judgeflow.errors import InvalidItemError
from judgeflow.results import ClaimResult, Judgment

HUMAN = [0] * 12 + [1] * 12
# A (strict): flags 9 of the 12 correct answers; B (lenient) flags 2
A = [1] * 9 + [0] * 3 + [1] * 11 + [0]
B = [1] * 2 + [0] * 10 + [1] * 9 + [0] * 3


def run(labels: list[int | None], criterion: str, human: list[int] = HUMAN, **extra: object) -> list[Judgment]:
    out = []
    for i, (h, j) in enumerate(zip(human, labels)):
        verdict = "not_in_reference" if criterion == "reference_faithfulness" else "contradicted"
        claims = [ClaimResult(id="c1", text=f"answer {i}", verdict=verdict if j else "supported", error=bool(j))]
        out.append(Judgment(id=f"q{i}", label=j, status="judged" if j is not None else "unscored", human_label=h,
                            criterion=criterion, model="m", strategy="graph", claims=claims,
                            reason=f"claim c1 is {verdict}" if j else "all 1 claims pass",
                            extra={"dataset": "d", **extra}))
    return out


def exact_binomial_p(b: int, c: int) -> float:
    """Two-sided exact test, written independently: sum P(k) over every k no more likely than the observed."""
    n = b + c
    probs = [Fraction(math.comb(n, k), 2**n) for k in range(n + 1)]
    return float(sum(p for p in probs if p <= probs[b]))


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (7, 1), (3, 3), (2, 9), (20, 11), (0, 12), (60, 40)])
def test_mcnemar_matches_an_independent_exact_binomial(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(exact_binomial_p(b, c), rel=1e-12)


def test_kappas_difference_and_mcnemar_on_fixed_data() -> None:
    r = compare(run(A, "reference_faithfulness"), run(B, "factual_correctness"))
    assert (r.a.name, r.b.name) == ("reference_faithfulness", "factual_correctness")
    assert r.n == 24
    assert r.a.agreement.kappa == pytest.approx(cohen_kappa_score(HUMAN, A))
    assert r.b.agreement.kappa == pytest.approx(cohen_kappa_score(HUMAN, B))
    assert r.kappa_diff == pytest.approx(cohen_kappa_score(HUMAN, B) - cohen_kappa_score(HUMAN, A))
    h, a, b = map(np.array, (HUMAN, A, B))
    a_only = int(((a == h) & (b != h)).sum())
    b_only = int(((b == h) & (a != h)).sum())
    assert (r.a_right_b_wrong, r.b_right_a_wrong) == (a_only, b_only) == (2, 7)
    assert r.mcnemar_p == pytest.approx(exact_binomial_p(a_only, b_only))
    assert r.a.agreement.false_alarms == 9 and r.b.agreement.misses == 3
    # the items where they disagree, each with the claim that decided the 1
    assert {d.id for d in r.disagreements} == {f"q{i}" for i in range(24) if A[i] != B[i]}
    d = next(d for d in r.disagreements if d.a.label == 1)
    assert d.a.claim is not None and d.a.claim.verdict == "not_in_reference"
    assert d.b.claim is None and "pass" in (d.b.reason or "")
    assert all(d.right == ("a" if A[int(d.id[1:])] == d.human else "b") for d in r.disagreements)
    assert "McNemar" in r.verdict and any("only 24 paired items" in w for w in r.warnings)


def test_paired_bootstrap_uses_the_same_resamples_for_both_runs() -> None:
    r = compare(run(A, "reference_faithfulness"), run(B, "factual_correctness"), seed=5)
    idx = bootstrap_indices(24, seed=5, n_boot=2000)
    from fakes.kappas import resampled_kappas

    ka, ok_a = resampled_kappas(HUMAN, A, idx)
    kb, ok_b = resampled_kappas(HUMAN, B, idx)
    diffs = (kb - ka)[ok_a & ok_b]
    assert r.kappa_diff_ci == pytest.approx(tuple(np.percentile(diffs, [2.5, 97.5])))
    assert r.kappa_diff_ci[0] < r.kappa_diff < r.kappa_diff_ci[1]


def test_identical_runs_differ_by_nothing() -> None:
    r = compare(run(A, "reference_faithfulness"), run(A, "reference_faithfulness"))
    assert r.kappa_diff == 0 and r.mcnemar_p == 1.0 and not r.disagreements
    assert any("run-to-run noise" in w for w in r.warnings)
    assert r.a.name != r.b.name


def test_different_item_sets_are_refused_naming_the_ids() -> None:
    with pytest.raises(InvalidItemError, match=r"1 id\(s\) only in run A \(q23\), 0 only in run B"):
        compare(run(A, "reference_faithfulness"), run(B, "factual_correctness")[:-1])


def test_same_ids_from_different_inputs_are_refused() -> None:
    other = run(B, "factual_correctness", human=[1 - h for h in HUMAN])
    with pytest.raises(InvalidItemError, match="human_label"):
        compare(run(A, "reference_faithfulness"), other)
    with pytest.raises(InvalidItemError, match="different 'dataset'"):
        compare(run(A, "reference_faithfulness"), run(B, "factual_correctness", dataset="other"))


def test_unscored_in_either_run_leaves_the_pair_out() -> None:
    b = list(B)
    b[0] = None
    r = compare(run(A, "reference_faithfulness"), run(b, "factual_correctness"))
    assert r.n == 23 and r.b.unscored == 1 and r.a.unscored == 0
    assert r.a.agreement.kappa == pytest.approx(cohen_kappa_score(HUMAN[1:], A[1:]))


def test_labels_file_overrides_human_label(tmp_path: Path) -> None:
    rows_a = run(A, "reference_faithfulness", human=[None] * 24)
    rows_b = run(B, "factual_correctness", human=[None] * 24)
    p = tmp_path / "labels.jsonl"
    p.write_text("".join(json.dumps({"id": f"q{i}", "label": "yes" if h else "no"}) + "\n" for i, h in enumerate(HUMAN)))
    r = compare(rows_a, rows_b, p)
    assert r.n == 24 and r.a.agreement.kappa == pytest.approx(cohen_kappa_score(HUMAN, A))
    with pytest.raises(InvalidItemError, match="nothing to compare"):
        compare(rows_a, rows_b)


def test_cli_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pa, pb = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    pa.write_text("".join(json.dumps(j.to_row()) + "\n" for j in run(A, "reference_faithfulness")))
    pb.write_text("".join(json.dumps(j.to_row()) + "\n" for j in run(B, "factual_correctness")))
    html = tmp_path / "c.html"
    assert main(["compare", str(pa), str(pb), "--html", str(html)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "McNemar exact" in out and "reference_faithfulness" in out
    assert "<svg" in html.read_text()
    assert main(["compare", str(pa), str(pb), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["b_right_a_wrong"] == 7
    pb.write_text("".join(json.dumps(j.to_row()) + "\n" for j in run(B, "factual_correctness")[:5]))
    assert main(["compare", str(pa), str(pb)]) == 2
    assert "different items" in capsys.readouterr().err


def test_verdict_names_the_test_that_decided() -> None:
    human = [0, 0, 0, 0, 1, 1, 1, 1]
    a = run([1, 1, 1, 1, 1, 1, 1, 1], "reference_faithfulness", human=human)  # 4 false alarms
    b = run([0, 0, 0, 0, 1, 1, 1, 1], "factual_correctness", human=human)  # all right
    r = compare(a, b)
    assert r.mcnemar_p == 0.125
    assert "McNemar p = 0.125 >= 0.05" in r.verdict
    assert "clearly better" not in r.verdict and "within the noise" not in r.verdict
    many = [0] * 18 + [1] * 18
    big = compare(run([1] * 36, "reference_faithfulness", human=many), run(many, "factual_correctness", human=many))
    assert "clearly better: McNemar p = " in big.verdict and "< 0.05 and the bootstrap interval excludes 0" in big.verdict
