"""Untrusted text is never rendered as a template: `{{ 7*7 }}` stays literal, `{% if %}` cannot crash a run."""

from __future__ import annotations

import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Judge


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("answer", ["The total is {{ 7*7 }} apples.", "Use {% if x %} carefully {{ undefined.attr }}"])
def test_template_syntax_in_answers_reaches_the_model_verbatim(provider: str, answer: str) -> None:
    llm = FakeLLM(provider, [
        Claims(claims=[Claim(id="c1", text=answer)]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="reference", evidence="", reason="ok")]),
    ])
    result = Judge(backend=llm.backend()).judge({"id": "t", "answer": answer, "reference": "{{ 6*7 }} apples"})
    assert result.status == "judged" and result.label == 0
    prompts = llm.user_prompts()
    assert answer in prompts[0]
    assert "{{ 6*7 }} apples" in prompts[1] and "42" not in prompts[1]


def test_validation_context_still_reaches_the_validators() -> None:
    # The check reply omits c2: the validator must see the expected ids and force a re-ask.
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="a"), Claim(id="c2", text="b")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="reference")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="reference"),
                            ClaimCheck(claim_id="c2", verdict="contradicted", basis="reference")]),
    ])
    result = Judge(backend=llm.backend()).judge({"id": "t", "answer": "a. b.", "reference": "r"})
    assert len(llm.requests) == 3 and result.label == 1
