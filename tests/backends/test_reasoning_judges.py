"""Reasoning judges (#45): the study's judges by one model string, through the real openai / anthropic SDKs
and Instructor, against the schema fake answering as each provider documents per model family
(tests/fakes/model_rules.py: parameter rules and error texts, hidden reasoning tokens spent from the
completion budget, Anthropic's thinking rules, a local Qwen3-style server's think blocks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import MOSCOW_QUESTION, MOSCOW_REFERENCE, MOSCOW_WRONG, SchemaProvider
from fakes.model_rules import ModelRules

from judgeflow import Judge
from judgeflow.backends.providers.profiles import PLAIN, profile_of
from judgeflow.errors import ConfigError

ITEM = {"id": "m", "question": MOSCOW_QUESTION, "answer": MOSCOW_WRONG, "reference": MOSCOW_REFERENCE}
EATEN = "reasoning used the whole budget: raise --max-tokens or lower --reasoning-effort"


def judged(fake: SchemaProvider, model: str, **options: Any) -> Any:
    url = fake.base_url + ("" if model.startswith("anthropic/") else "/v1")
    return Judge(model, base_url=url, api_key="sk-fake", **options).judge(ITEM)


def model_requests(fake: SchemaProvider) -> list[dict]:
    return [e["request"] for e in fake.log if e.get("llm")]


@pytest.mark.parametrize("model", ["openai/gpt-5.4", "openai/gpt-5-mini", "openai/o4-mini"])
def test_openai_reasoning_models_are_judged_at_the_defaults(model: str) -> None:
    rules = ModelRules()
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, model)
    assert j.status == "judged" and j.label in (0, 1), j.error
    sent = model_requests(fake)
    assert all(e["status"] == 200 for e in fake.log if e.get("llm"))  # nothing refused for its parameters
    for body in sent:
        assert "max_tokens" not in body and body["max_completion_tokens"] > 2048  # the reply + the low allowance
        assert "temperature" not in body and body["reasoning_effort"] == "low"
    spent = sum(n for _, _, n, _, _ in rules.log)
    assert j.usage.reasoning_tokens == spent > 0  # reported, and part of the output tokens
    assert j.usage.output_tokens > j.usage.reasoning_tokens


def test_gpt_4o_mini_requests_are_unchanged() -> None:
    """A model not known to reason: max_tokens, temperature 0, no reasoning field (the request main sends)."""
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        j = judged(fake, "openai/gpt-4o-mini")
    assert j.status == "judged"
    for body in model_requests(fake):
        assert set(body) == {"model", "messages", "max_tokens", "temperature", "tools", "tool_choice"}
        assert body["temperature"] == 0 and body["max_tokens"] <= 4096
    assert j.usage.reasoning_tokens == 0


def test_a_reply_emptied_by_reasoning_is_asked_again_with_twice_the_allowance() -> None:
    rules = ModelRules(scale=2)  # high: 10,400 reasoning tokens, more than the first 8,192 + the reply
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, "openai/gpt-5-mini", reasoning_effort="high")
    assert j.status == "judged" and j.label in (0, 1), j.error
    emptied = [e for e in rules.log if e[4]]
    assert emptied and len(emptied) == len(rules.log) // 2  # each step's first budget eaten, the second enough
    budgets = [b["max_completion_tokens"] for b in model_requests(fake)]
    assert budgets[1] - budgets[0] == 8192  # the allowance doubled, the reply's budget kept
    assert j.usage.reasks >= len(emptied) and j.usage.reasoning_tokens == sum(e[2] for e in rules.log)


def test_a_reply_emptied_twice_is_unscored_naming_the_fix() -> None:
    with SchemaProvider(seed=1, model_rules=ModelRules(scale=5)) as fake:
        j = judged(fake, "openai/gpt-5-mini", reasoning_effort="high")
    assert j.status == "unscored" and j.label is None and EATEN in j.error
    assert "judge output rejected" not in j.error
    assert len(model_requests(fake)) == 2


def test_a_fixed_max_tokens_is_the_whole_budget_and_is_not_widened() -> None:
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        j = judged(fake, "openai/o4-mini", max_tokens=300)
    assert j.status == "unscored" and EATEN in j.error
    assert [b["max_completion_tokens"] for b in model_requests(fake)] == [300]


def test_an_azure_deployment_takes_its_models_rules_by_profile() -> None:
    rules = ModelRules(deployments={"judge-deploy": "gpt-5.1"})
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        without = Judge("azure/judge-deploy", base_url=fake.base_url, api_key="k").judge(ITEM)
        refused = [e for e in fake.log if e.get("llm")]
        j = Judge("azure/judge-deploy", base_url=fake.base_url, api_key="k", profile="openai/gpt-5.1").judge(ITEM)
    assert without.status == "unscored" and "Use 'max_completion_tokens' instead" in without.error
    assert refused and all(e["status"] == 400 for e in refused)
    assert j.status == "judged", j.error
    body = model_requests(fake)[-1]
    assert body["reasoning_effort"] == "low" and "temperature" not in body and "max_completion_tokens" in body


def test_responses_only_models_refuse_other_structured_modes_before_any_call() -> None:
    """They are judged through /v1/responses (tests/backends/test_reasoning_responses.py), with a function tool."""
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        for model in ("openai/gpt-5-pro", "openai/o3-pro", "openai/gpt-5.1-codex"):
            with pytest.raises(ConfigError, match="Responses API"):
                Judge(model, base_url=fake.base_url + "/v1", api_key="k", structured="json_schema")
    assert fake.log == []


def test_an_effort_the_family_does_not_take_is_refused_before_any_call() -> None:
    with pytest.raises(ConfigError, match="minimal is not accepted by gpt-5.1"):
        Judge("openai/gpt-5.1", base_url="http://127.0.0.1:9/v1", api_key="k", reasoning_effort="minimal")
    with pytest.raises(ConfigError, match="does not reason"):
        Judge("openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="k", reasoning_effort="high")
    with pytest.raises(ConfigError, match="--profile 'gpt-5.1' must be provider/model"):
        Judge("azure/x", base_url="http://127.0.0.1:9", api_key="k", profile="gpt-5.1")


def test_gpt_5_1_at_effort_none_keeps_its_temperature() -> None:
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        j = judged(fake, "openai/gpt-5.1", reasoning_effort="none")
    assert j.status == "judged", j.error
    body = model_requests(fake)[0]
    assert body["temperature"] == 0 and body["reasoning_effort"] == "none" and "max_tokens" not in body


def test_claude_opus_4_7_without_thinking_is_asked_as_before() -> None:
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        j = judged(fake, "anthropic/claude-opus-4-7")
    assert j.status == "judged", j.error
    body = model_requests(fake)[0]
    assert "thinking" not in body and body["tool_choice"]["type"] == "tool" and body["max_tokens"] <= 4096


def test_claude_opus_4_7_with_adaptive_thinking() -> None:
    rules = ModelRules()
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, "anthropic/claude-opus-4-7", reasoning_effort="medium")
    assert j.status == "judged", j.error
    for body in model_requests(fake):
        assert body["thinking"] == {"type": "adaptive"} and body["output_config"] == {"effort": "medium"}
        assert body["tool_choice"] == {"type": "auto"} and "temperature" not in body
    assert all(not emptied for *_, emptied in rules.log) and j.usage.output_tokens > sum(e[2] for e in rules.log)


def test_claude_budgeted_thinking_keeps_the_budget_below_max_tokens() -> None:
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        j = judged(fake, "anthropic/claude-sonnet-4-5", reasoning_effort="low")
    assert j.status == "judged", j.error
    for body in model_requests(fake):
        assert 1024 <= body["thinking"]["budget_tokens"] < body["max_tokens"]
        assert body["tool_choice"] == {"type": "auto"}


def test_claude_thinking_rules_are_the_fakes_too() -> None:
    """The fake refuses what Anthropic refuses (so the tests above could fail)."""
    from fakes.model_rules import RuleError

    rules = ModelRules()
    for body, text in [({"thinking": {"type": "enabled", "budget_tokens": 500}, "max_tokens": 900}, "1024"),
                       ({"thinking": {"type": "enabled", "budget_tokens": 2000}, "max_tokens": 900}, "max_tokens"),
                       ({"thinking": {"type": "adaptive"}, "tool_choice": {"type": "tool", "name": "x"}},
                        "Thinking may not be enabled when tool_choice forces tool use."),
                       ({"thinking": {"type": "adaptive"}, "temperature": 0}, "only be set to 1"),
                       ({"model": "claude-opus-4-7", "thinking": {"type": "enabled", "budget_tokens": 2000},
                         "max_tokens": 4000}, "adaptive")]:
        with pytest.raises(RuleError, match=text.replace(".", r"\.")):
            rules.check_anthropic(body)


@pytest.mark.parametrize("structured", ["tools", "json_schema", "json"])
def test_a_local_qwen3_servers_think_blocks_never_become_claims(structured: str) -> None:
    rules = ModelRules()
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = judged(fake, "openai/qwen3:8b", structured=structured)
    assert j.status == "judged", j.error
    assert rules.log and all(model == "qwen3:8b" for model, *_ in rules.log)  # every reply began with a think block
    assert j.claims and all("Germany" not in c.text for c in j.claims)
    assert profile_of("openai/qwen3:8b").family == "local-thinking"


def test_profiles_per_family() -> None:
    assert profile_of("openai/gpt-4o-mini") is PLAIN and profile_of("ollama/llama3.1") is PLAIN
    assert profile_of("openai/gpt-5.4").efforts[-1] == "xhigh" and profile_of("openai/gpt-5-mini").efforts[0] == "minimal"
    assert profile_of("openai/gpt-5-chat-latest").reasons is False
    assert profile_of("azure/gpt-5-mini").family == "gpt-5"  # a deployment named after its model
    assert profile_of("azure/judge", "openai/o3").family == "o-series"
    assert profile_of("google/gemini-2.5-pro").knob == "thinking_budget"
    assert profile_of("anthropic/claude-opus-4-7").knob == "adaptive"


def test_samples_work_with_a_reasoning_model() -> None:
    from judgeflow.build import build
    from judgeflow.config import ClientConfig
    from judgeflow.config.judging import JudgeSpec, PanelSpec

    key = ClientConfig(api_key="k")
    build(PanelSpec(members=[JudgeSpec(model="openai/gpt-5-mini", client=key)], samples=3))
    with pytest.raises(ConfigError, match="every sample would give the same"):
        build(PanelSpec(members=[JudgeSpec(model="openai/gpt-4o-mini", client=key)], samples=3))


def test_the_effort_is_in_the_cache_key() -> None:
    low = Judge("openai/gpt-5-mini", base_url="http://127.0.0.1:9/v1", api_key="k", reasoning_effort="low")
    high = Judge("openai/gpt-5-mini", base_url="http://127.0.0.1:9/v1", api_key="k", reasoning_effort="high")
    plain = Judge("openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert "effort=low" in low.backend.fingerprint and low.backend.fingerprint != high.backend.fingerprint
    assert "effort" not in plain.backend.fingerprint


def test_cli_records_the_effort_and_reports_reasoning_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from judgeflow.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(ITEM) + "\n", encoding="utf-8")
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        code = main(["run", str(items), "-o", "out.jsonl", "--model", "openai/o4-mini", "--base-url",
                     fake.base_url + "/v1", "--reasoning-effort", "medium", "--store", "s.sqlite", "--no-progress"])
    printed = capsys.readouterr()
    assert code == 0 and "(reasoning " in printed.out + printed.err
    assert main(["runs", "show", "latest", "--store", "s.sqlite"]) == 0  # into a pipe: the card as JSON
    shown = json.loads(capsys.readouterr().out)
    assert shown["settings"]["reasoning_effort"] == "medium" and shown["reasoning_tokens"] > 0
    import sys

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["runs", "show", "latest", "--store", "s.sqlite"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "reasoning_effort" in shown and "medium" in shown and "reasoning" in shown.split("model calls")[1]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["openai/gpt-5.4", "openai/gpt-5-mini", "openai/o4-mini", "openai/gpt-4o-mini"])
def test_the_study_judges_score_every_item_against_fake_llm_model_rules(fake_llm_rules: str, model: str) -> None:
    j = Judge(model, base_url=fake_llm_rules, api_key="sk-fake").judge(ITEM)
    assert j.status == "judged" and j.label in (0, 1), j.error


def test_the_spend_cap_reserves_the_reasoning_allowance_too() -> None:
    from judgeflow.runs.budget import Budget

    asked: list[int] = []

    class Seen(Budget):
        def bound(self, model: str, *, attempts: int, request_bytes: int, max_tokens: int) -> Any:
            asked.append(max_tokens)
            return super().bound(model, attempts=attempts, request_bytes=request_bytes, max_tokens=max_tokens)

    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        j = judged(fake, "openai/gpt-5-mini", budget=Seen(usd=50.0))
    sent = [b["max_completion_tokens"] for b in model_requests(fake)]
    assert j.status == "judged" and asked == sent and min(asked) > 2048  # the reply's budget + the low allowance


def test_a_panel_gives_the_effort_to_its_reasoning_members_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from judgeflow.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    (tmp_path / "items.jsonl").write_text(json.dumps(ITEM) + "\n", encoding="utf-8")
    with SchemaProvider(seed=1, model_rules=ModelRules()) as fake:
        code = main(["run", "items.jsonl", "-o", "out.jsonl", "--panel", "openai/gpt-5-mini,openai/gpt-4o-mini",
                     "--base-url", fake.base_url + "/v1", "--reasoning-effort", "medium", "--store", "s.sqlite",
                     "--no-progress"])
    row = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8"))
    assert code == 0 and row["status"] == "judged"
    efforts = {b["model"]: b.get("reasoning_effort") for b in model_requests(fake)}
    assert efforts == {"gpt-5-mini": "medium", "gpt-4o-mini": None}
    assert all(e["status"] == 200 for e in fake.log if e.get("llm"))
