"""The trace keeps what was sent, the accepted reply, and every rejected reply before it."""

from __future__ import annotations

import pytest
from fakes import MOSCOW_WRONG, FakeLLM, moscow_checks

from judgeflow import Claim, Claims, Judge


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_rejected_replies_are_kept_in_the_trace(provider: str) -> None:
    llm = FakeLLM(provider, [
        Claims(claims=[Claim(id="c1", text=MOSCOW_WRONG)]),
        {"checks": [{"claim_id": "c1", "verdict": "maybe", "basis": "reference"}]},  # outside the vocabulary
        moscow_checks(),
    ])
    r = Judge(backend=llm.backend()).judge({"id": "m", "answer": MOSCOW_WRONG, "reference": "1147"})
    assert r.label == 1 and r.usage.calls == 3
    decompose, check = r.trace
    assert decompose.step == "decompose" and decompose.rejected == []
    assert check.step == "check" and check.reply["c1"]["verdict"] == "contradicted"
    assert len(check.rejected) == 1 and "maybe" in check.rejected[0]
    assert check.messages[0]["role"] == "system" and "<claims>" in check.messages[-1]["content"]
