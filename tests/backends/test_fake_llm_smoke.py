"""End-to-end through the real SDKs + Instructor against the HTTP fake, both wire formats."""

from __future__ import annotations

import pytest
from fakes import FakeLLM, moscow_by_whom, moscow_checks, moscow_claims

from judgeflow import Judge

ITEM = moscow_by_whom()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_wrong_date_with_right_name_is_caught(provider: str) -> None:
    llm = FakeLLM(provider, [moscow_claims(founder=True), moscow_checks(reason="year differs", founder=True)])
    result = Judge(backend=llm.backend()).judge(ITEM)
    assert result.label == 1
    assert result.criterion == "factual_correctness"
    assert [c.verdict for c in result.claims] == ["contradicted", "supported"]
    assert result.usage.calls == 2 and result.usage.input_tokens == 200
    assert len(llm.requests) == 2
    assert "<answer>" in llm.user_prompts()[0] and "<reference>" in llm.user_prompts()[1]
