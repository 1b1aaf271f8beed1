"""Responses-only models (#45: o1-pro, o3-pro, gpt-5-pro, the codex models) judged through OpenAI's Responses
API by one model string: the real openai SDK's `responses.create` and Instructor's RESPONSES_TOOLS mode,
against the schema fake's /v1/responses with OpenAI's documented rules (tests/fakes/model_rules.py:
max_output_tokens, reasoning.effort per family, reasoning tokens spent from the output budget)."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import MOSCOW_QUESTION, MOSCOW_REFERENCE, MOSCOW_WRONG, SchemaProvider
from fakes.model_rules import ModelRules, RuleError

from judgeflow import Judge

ITEM = {"id": "m", "question": MOSCOW_QUESTION, "answer": MOSCOW_WRONG, "reference": MOSCOW_REFERENCE}


def judged(fake: SchemaProvider, model: str, **options: Any) -> Any:
    return Judge(model, base_url=fake.base_url + "/v1", api_key="sk-fake", **options).judge(ITEM)


@pytest.mark.parametrize(("model", "effort"), [("openai/o3-pro", "low"), ("openai/gpt-5-pro", "high"),
                                               ("openai/gpt-5.1-codex", "low")])
def test_responses_only_models_are_judged_through_v1_responses(model: str, effort: str) -> None:
    rules = ModelRules()
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, model)
    assert j.status == "judged" and j.label in (0, 1), j.error
    llm = [e for e in fake.log if e.get("llm")]
    assert len(llm) == 2 and {e["path"] for e in llm} == {"/v1/responses"} and {e["status"] for e in llm} == {200}
    for e in llm:
        body = e["request"]
        assert body["reasoning"] == {"effort": effort} and "temperature" not in body
        assert "max_tokens" not in body and body["max_output_tokens"] > 2048  # the reply + the allowance
        assert body["tool_choice"]["type"] == "function" and body["tools"][0]["type"] == "function"
    assert j.usage.reasoning_tokens == sum(n for _, _, n, _, _ in rules.log) > 0
    assert j.usage.output_tokens > j.usage.reasoning_tokens


def test_a_responses_reply_emptied_by_reasoning_is_widened_once_then_unscored() -> None:
    rules = ModelRules(scale=2)  # high: 10,400 reasoning tokens, more than 8,192 + the reply
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, "openai/o3-pro", reasoning_effort="high")
    assert j.status == "judged", j.error
    emptied = [e for e in rules.log if e[4]]
    assert emptied and len(emptied) == len(rules.log) // 2  # never re-asked at the same budget
    with SchemaProvider(seed=1, model_rules=ModelRules(scale=5)) as fake:
        j = judged(fake, "openai/o3-pro", reasoning_effort="high")
    assert j.status == "unscored" and "reasoning used the whole budget" in j.error
    assert len([e for e in fake.log if e.get("llm")]) == 2


@pytest.mark.parametrize(("body", "refusal"), [
    ({"model": "o3-pro", "max_tokens": 100}, "Unknown parameter: 'max_tokens'."),
    ({"model": "o3-pro", "max_completion_tokens": 100}, "Unknown parameter: 'max_completion_tokens'."),
    ({"model": "gpt-5-pro", "reasoning": {"effort": "low"}}, "Supported values are: 'high'."),
    ({"model": "o3-pro", "temperature": 0}, "'temperature' is not supported with this model"),
    ({"model": "gpt-4o-mini", "reasoning": {"effort": "low"}}, "'reasoning.effort' is not supported"),
])
def test_the_fake_refuses_what_the_responses_api_refuses(body: dict[str, Any], refusal: str) -> None:
    with pytest.raises(RuleError) as e:
        ModelRules().check_responses(body)
    assert e.value.status == 400 and refusal in e.value.body["error"]["message"]


def test_responses_only_models_are_still_refused_on_chat_completions() -> None:
    with pytest.raises(RuleError) as e:
        ModelRules().check_openai({"model": "o3-pro", "max_completion_tokens": 100})
    assert e.value.status == 404 and "only supported in v1/responses" in e.value.body["error"]["message"]
