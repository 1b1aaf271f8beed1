"""Gemini thinking judges (#45): `google/gemini-*` by one model string through the real google-genai SDK and
Instructor's `from_genai`, the SDK pointed at the schema fake with a base URL (`HttpOptions(base_url=...)`),
which answers generateContent as Google documents per model (tests/fakes/model_rules.py: thinking budget
ranges, thinking levels, thoughts spent from maxOutputTokens and reported as thoughtsTokenCount)."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import MOSCOW_QUESTION, MOSCOW_REFERENCE, MOSCOW_WRONG, SchemaProvider
from fakes.model_rules import ModelRules, RuleError

from judgeflow import Judge
from judgeflow.errors import ConfigError

pytest.importorskip("google.genai", reason="google-genai is the google extra (pip install 'judgeflow[google]')")
pytest.importorskip("jsonref", reason="Instructor's Gemini schemas need jsonref (the google extra)")

ITEM = {"id": "m", "question": MOSCOW_QUESTION, "answer": MOSCOW_WRONG, "reference": MOSCOW_REFERENCE}


def judged(fake: SchemaProvider, model: str, **options: Any) -> Any:
    return Judge(model, base_url=fake.base_url, api_key="gm-fake", **options).judge(ITEM)


def sent(fake: SchemaProvider) -> list[tuple[str, dict[str, Any]]]:
    return [(e["path"], e["request"]) for e in fake.log if e.get("llm")]


def thinking(body: dict[str, Any]) -> dict[str, Any]:
    config = body["generationConfig"]
    return config.get("thinkingConfig") or config["thinking_config"]


def test_gemini_2_5_pro_is_judged_by_one_model_string_with_its_thinking_budget() -> None:
    rules = ModelRules()
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, "google/gemini-2.5-pro")
    assert j.status == "judged" and j.label in (0, 1), j.error
    requests = sent(fake)
    assert len(requests) == 2 and all(e["status"] == 200 for e in fake.log if e.get("llm"))
    for _, body in requests:
        assert body["model"] == "gemini-2.5-pro"
        budget = thinking(body).get("thinkingBudget", thinking(body).get("thinking_budget"))
        assert budget == 2048  # the low allowance, within 2.5 Pro's 128-32768
        assert body["generationConfig"]["maxOutputTokens"] > budget  # the thoughts share the output limit
        assert body["toolConfig"]["functionCallingConfig"]["mode"] == "ANY"
    spent = sum(n for _, _, n, _, _ in rules.log)
    assert j.usage.reasoning_tokens == spent > 0  # usage_metadata.thoughts_token_count
    assert j.usage.output_tokens > j.usage.reasoning_tokens and j.usage.calls == 2


def test_gemini_3_takes_a_thinking_level_and_never_a_budget_with_it() -> None:
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        j = judged(fake, "google/gemini-3-pro-preview", reasoning_effort="high")
    assert j.status == "judged", j.error
    for _, body in sent(fake):
        config = thinking(body)
        assert str(config.get("thinkingLevel", config.get("thinking_level"))).lower() == "high"
        assert "thinkingBudget" not in config and "thinking_budget" not in config


def test_gemini_2_5_flash_can_turn_thinking_off_but_2_5_pro_is_refused_before_any_call() -> None:
    rules = ModelRules()
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, "google/gemini-2.5-flash", reasoning_effort="none")
        assert j.status == "judged" and j.usage.reasoning_tokens == 0, j.error
        assert all(thinking(b).get("thinking_budget", thinking(b).get("thinkingBudget")) == 0 for _, b in sent(fake))
        with pytest.raises(ConfigError, match="--reasoning-effort none is not accepted by gemini-2.5-pro"):
            Judge("google/gemini-2.5-pro", base_url=fake.base_url, api_key="k", reasoning_effort="none")
        with pytest.raises(ConfigError, match="not accepted by gemini-3-pro"):
            Judge("google/gemini-3-pro-preview", base_url=fake.base_url, api_key="k", reasoning_effort="medium")
    assert len(sent(fake)) == 2


def test_a_gemini_reply_emptied_by_thinking_is_asked_again_then_unscored_naming_the_fix() -> None:
    rules = ModelRules(scale=2.5)  # high: 13,000 thoughts, more than the first 8,192 + the reply
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, "google/gemini-3-flash-preview", reasoning_effort="high")
    assert j.status == "judged", j.error
    emptied = [e for e in rules.log if e[4]]
    assert emptied and len(emptied) == len(rules.log) // 2
    assert j.usage.reasoning_tokens == sum(e[2] for e in rules.log)
    with SchemaProvider(seed=1, model_rules=ModelRules(scale=5)) as fake:
        j = judged(fake, "google/gemini-3-flash-preview", reasoning_effort="high")
    assert j.status == "unscored" and "reasoning used the whole budget" in j.error
    assert "unparseable" not in j.error and len(sent(fake)) == 2


@pytest.mark.parametrize(("model", "config", "refusal"), [
    ("gemini-2.5-pro", {"thinkingBudget": 0}, "Budget 0 is invalid. This model only works in thinking mode."),
    ("gemini-2.5-pro", {"thinkingBudget": 64}, "between 128 and 32768"),
    ("gemini-2.5-flash", {"thinkingBudget": 30000}, "between 1 and 24576"),
    ("gemini-2.5-flash-lite", {"thinkingBudget": 256}, "between 512 and 24576"),
    ("gemini-2.5-flash", {"thinkingLevel": "LOW"}, "Thinking level is not supported"),
    ("gemini-3-pro-preview", {"thinkingLevel": "MEDIUM"}, "supported levels are low, high"),
    ("gemini-3-flash-preview", {"thinkingLevel": "LOW", "thinkingBudget": 1024}, "only set one of"),
])
def test_the_fake_refuses_what_gemini_documents(model: str, config: dict[str, Any], refusal: str) -> None:
    with pytest.raises(RuleError) as e:
        ModelRules().check_gemini(model, {"generationConfig": {"thinkingConfig": config}})
    assert e.value.status == 400 and refusal in e.value.body["error"]["message"]
    assert e.value.body["error"]["status"] == "INVALID_ARGUMENT"
    for fine in ({"thinkingBudget": -1}, {}):
        ModelRules().check_gemini(model, {"generationConfig": {"thinkingConfig": fine}})  # dynamic, or none given
