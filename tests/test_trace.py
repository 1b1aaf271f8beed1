"""The trace keeps what was sent, the accepted reply, and every rejected reply before it."""

from __future__ import annotations

import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Judge


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_rejected_replies_are_kept_in_the_trace(provider: str) -> None:
    llm = FakeLLM(provider, [
        Claims(claims=[Claim(id="c1", text="Moscow was founded in 1247.")]),
        {"checks": [{"claim_id": "c1", "verdict": "maybe", "basis": "reference"}]},  # outside the vocabulary
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="contradicted", basis="reference", evidence="1147")]),
    ])
    r = Judge(backend=llm.backend()).judge({"id": "m", "answer": "Moscow was founded in 1247.", "reference": "1147"})
    assert r.label == 1 and r.usage.calls == 3
    decompose, check = r.trace
    assert decompose.step == "decompose" and decompose.rejected == []
    assert check.step == "check" and check.reply["c1"]["verdict"] == "contradicted"
    assert len(check.rejected) == 1 and "maybe" in check.rejected[0]
    assert check.messages[0]["role"] == "system" and "<claims>" in check.messages[-1]["content"]
