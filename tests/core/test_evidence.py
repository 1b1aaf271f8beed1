"""Each evidence quote is checked against the evidence it names (audit only; verdicts unchanged)."""

from __future__ import annotations

import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, ClaimResult, Claims, Judge
from judgeflow.aggregate import verify_evidence

SOURCE = "The 2023 annual report: revenue rose 12%, driven mainly by cloud sales.\n\nHeadcount was flat."


def _c(evidence: str, basis: str = "source") -> ClaimResult:
    return ClaimResult(id="c1", text="t", verdict="supported", basis=basis, evidence=evidence)


@pytest.mark.parametrize(("evidence", "basis", "found"), [
    pytest.param("revenue rose 12%", "source", True, id="verbatim"),
    pytest.param("  Revenue   ROSE 12%  ", "source", True, id="case-and-spacing"),
    pytest.param("\u201crevenue rose 12%, driven\u201d", "source", True, id="quoted"),
    pytest.param("revenue rose 12% ... cloud sales", "source", True, id="ellipsis-fragments"),
    pytest.param("[document 1, passage 2] Headcount was flat.", "source", True, id="passage-citation"),
    pytest.param("revenue rose 21%", "source", False, id="fabricated"),
    pytest.param("revenue rose 12% ... in Europe", "source", False, id="one-fragment-fabricated"),
    pytest.param("", "source", None, id="no-quote"),
    pytest.param("revenue rose 12%", "knowledge", None, id="knowledge-basis"),
])
def test_verify_evidence(evidence: str, basis: str, found: bool | None) -> None:
    [out] = verify_evidence([_c(evidence, basis)], {"source": SOURCE, "reference": None, "spec": None})
    assert out.evidence_found is found
    assert out.verdict == "supported"  # never changes a verdict


def test_a_fabricated_quote_is_flagged_in_the_result() -> None:
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Revenue rose 12%."), Claim(id="c2", text="Headcount grew.")]),
        ClaimChecks(checks=[
            ClaimCheck(claim_id="c1", verdict="supported", basis="source", evidence="revenue rose 12%"),
            ClaimCheck(claim_id="c2", verdict="supported", basis="source", evidence="headcount grew by 10%"),
        ]),
    ])
    r = Judge(backend=llm.backend()).judge({"id": "r", "answer": "Revenue rose 12%. Headcount grew.",
                                           "source": [SOURCE]})
    assert [c.evidence_found for c in r.claims] == [True, False]
    assert r.to_row()["claims"][1]["evidence_found"] is False
