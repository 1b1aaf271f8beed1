"""Aggregation in code: label 1 iff any claim's verdict is one of the criterion's error verdicts."""

from __future__ import annotations

import pytest

from judgeflow import Claim, ClaimCheck, load_criterion
from judgeflow.aggregate import aggregate, merge

#: criterion -> verdict -> label of a one-claim answer with that verdict (from the issue's rules)
EXPECTED = {
    "factual_correctness": {"supported": 0, "contradicted": 1, "false_fact": 1, "unverifiable": 0},
    "source_faithfulness": {"supported": 0, "contradicted": 1, "not_found": 1, "misattributed_citation": 1,
                            "fabricated_citation": 1},
    "reference_faithfulness": {"supported": 0, "contradicted": 1, "not_in_reference": 1},
    "spec_compliance": {"complies": 0, "violates_spec": 1, "false_fact": 1, "extra": 0},
}
CASES = [(c, v, label) for c, verdicts in EXPECTED.items() for v, label in verdicts.items()]


def results_for(criterion: str, verdicts: list[str | None]):
    crit = load_criterion(criterion)
    claims = [Claim(id=f"c{i}", text=f"claim {i}") for i in range(1, len(verdicts) + 1)]
    checks = [ClaimCheck(claim_id=c.id, verdict=v, basis="none") for c, v in zip(claims, verdicts) if v is not None]
    return merge(claims, checks, crit), crit


def test_expected_table_covers_every_verdict_of_every_shipped_criterion() -> None:
    for name, verdicts in EXPECTED.items():
        assert set(verdicts) == set(load_criterion(name).verdicts), name


@pytest.mark.parametrize("criterion, verdict, label", CASES)
def test_one_claim(criterion: str, verdict: str, label: int) -> None:
    results, crit = results_for(criterion, [verdict])
    got, reason = aggregate(results, crit)
    assert got == label
    assert results[0].error is bool(label)
    if label:
        assert reason.startswith(f"claim c1 fails (verdict {verdict})")


@pytest.mark.parametrize("criterion, verdict, label", CASES)
def test_one_bad_claim_among_good_ones_decides(criterion: str, verdict: str, label: int) -> None:
    passing = next(v for v, lab in EXPECTED[criterion].items() if lab == 0)
    results, crit = results_for(criterion, [passing, passing, verdict, passing])
    got, reason = aggregate(results, crit)
    assert got == label  # a correct core does not excuse a wrong detail
    if label:
        assert "c3" in reason


def test_reason_counts_further_errors() -> None:
    results, crit = results_for("source_faithfulness", ["not_found", "supported", "contradicted"])
    label, reason = aggregate(results, crit)
    assert label == 1 and reason.startswith("claim c1 fails (verdict not_found)") and reason.endswith("(+1 more)")


@pytest.mark.parametrize("criterion", list(EXPECTED))
def test_no_claims_is_0_with_reason(criterion: str) -> None:
    label, reason = aggregate([], load_criterion(criterion))
    assert label == 0 and "no checkable claims" in reason


@pytest.mark.parametrize("criterion", list(EXPECTED))
def test_an_unchecked_claim_makes_it_unscored(criterion: str) -> None:
    error_verdict = load_criterion(criterion).error_verdicts[0]
    results, crit = results_for(criterion, [error_verdict, None])
    assert results[1].verdict is None and results[1].basis is None
    label, reason = aggregate(results, crit)
    assert label is None and "c2" in reason and "no verdict" in reason


def test_merge_joins_by_id_not_position() -> None:
    crit = load_criterion("factual_correctness")
    claims = [Claim(id="a", text="A", kind="date"), Claim(id="b", text="B")]
    checks = [ClaimCheck(claim_id="b", verdict="supported", basis="reference", evidence="e", reason="r"),
              ClaimCheck(claim_id="a", verdict="false_fact", basis="knowledge")]
    a, b = merge(claims, checks, crit)
    assert (a.id, a.kind, a.verdict, a.basis, a.error) == ("a", "date", "false_fact", "knowledge", True)
    assert (b.verdict, b.evidence, b.reason, b.error) == ("supported", "e", "r", False)


def test_all_pass_reason_lists_verdicts() -> None:
    results, crit = results_for("factual_correctness", ["supported", "unverifiable"])
    label, reason = aggregate(results, crit)
    assert label == 0 and reason == "all 2 claims pass (supported, unverifiable)"


def test_reason_wording_reads_as_english() -> None:
    """'all 1 claims pass' and 'claim c1 is violates_spec' read badly (issue 11)."""
    results, crit = results_for("factual_correctness", ["supported"])
    assert aggregate(results, crit) == (0, "the one claim passes (supported)")
    results, crit = results_for("spec_compliance", ["violates_spec"])
    label, reason = aggregate(results, crit)
    assert label == 1 and reason.startswith("claim c1 fails (verdict violates_spec): ")
