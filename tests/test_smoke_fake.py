"""End-to-end through the real SDKs + Instructor against the HTTP fake, both wire formats."""

from __future__ import annotations

import pytest
from fakes import FakeLLM

from judgeflow import ClaimCheck, ClaimChecks, Claim, Claims, Judge

ITEM = {"id": "moscow", "question": "When was Moscow founded and by whom?",
        "answer": "Moscow was founded in 1247 by Yuri Dolgorukiy.", "reference": "1147, by Yuri Dolgorukiy"}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_wrong_date_with_right_name_is_caught(provider: str) -> None:
    llm = FakeLLM(provider, [
        Claims(claims=[Claim(id="c1", text="Moscow was founded in 1247.", kind="date"),
                       Claim(id="c2", text="Moscow was founded by Yuri Dolgorukiy.", kind="name")]),
        ClaimChecks(checks=[
            ClaimCheck(claim_id="c1", verdict="contradicted", basis="reference", evidence="1147", reason="year differs"),
            ClaimCheck(claim_id="c2", verdict="supported", basis="reference", evidence="by Yuri Dolgorukiy", reason="same"),
        ]),
    ])
    result = Judge(backend=llm.backend()).judge(ITEM)
    assert result.label == 1
    assert result.criterion == "factual_correctness"
    assert [c.verdict for c in result.claims] == ["contradicted", "supported"]
    assert result.usage.calls == 2 and result.usage.input_tokens == 200
    assert len(llm.requests) == 2
    assert "<answer>" in llm.user_prompts()[0] and "<reference>" in llm.user_prompts()[1]
