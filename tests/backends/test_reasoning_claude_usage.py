"""Claude's thinking tokens in usage (#45): the current Messages API reports them apart
(usage.output_tokens_details.thinking_tokens, the anthropic SDK's `OutputTokensDetails`); where a reply has
a thinking block and no such count (a gateway, an older API version), nothing is estimated and the run's
summary says "reasoning tokens not reported by the provider" rather than showing 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import MOSCOW_QUESTION, MOSCOW_REFERENCE, MOSCOW_WRONG, SchemaProvider
from fakes.model_rules import ModelRules

from judgeflow import Judge

ITEM = {"id": "m", "question": MOSCOW_QUESTION, "answer": MOSCOW_WRONG, "reference": MOSCOW_REFERENCE}
UNREPORTED = "reasoning tokens not reported by the provider"


def judged(rules: ModelRules, effort: str) -> tuple:
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        j = Judge("anthropic/claude-sonnet-4-5", base_url=fake.base_url, api_key="sk-fake",
                  reasoning_effort=effort).judge(ITEM)
    return j, sum(n for _, _, n, _, _ in rules.log)


def test_claude_thinking_tokens_reported_apart_are_counted() -> None:
    j, spent = judged(ModelRules(), "low")
    assert j.status == "judged", j.error
    assert j.usage.reasoning_tokens == spent > 0 and j.usage.output_tokens > spent
    assert j.usage.reasoning_unreported == 0


def test_claude_thinking_with_no_count_apart_is_not_estimated_but_said() -> None:
    j, spent = judged(ModelRules(thinking_split=False), "low")
    assert j.status == "judged" and spent > 0, j.error
    assert j.usage.reasoning_tokens == 0 and j.usage.output_tokens > spent  # billed in out, not guessed
    assert j.usage.reasoning_unreported == j.usage.calls == 2
    plain, _ = judged(ModelRules(thinking_split=False), "none")  # no thinking block: nothing to say
    assert plain.usage.reasoning_unreported == 0


@pytest.mark.parametrize(("split", "said"), [(False, UNREPORTED), (True, "(reasoning ")])
def test_the_run_summary_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                 split: bool, said: str) -> None:
    from judgeflow.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fake")
    (tmp_path / "items.jsonl").write_text(json.dumps(ITEM) + "\n", encoding="utf-8")
    with SchemaProvider(seed=1, model_rules=ModelRules(thinking_split=split)) as fake:
        code = main(["run", "items.jsonl", "-o", "out.jsonl", "--model", "anthropic/claude-sonnet-4-5",
                     "--base-url", fake.base_url, "--reasoning-effort", "low", "--store", "s.sqlite", "--no-progress"])
    printed = capsys.readouterr()
    text = printed.out + printed.err
    line = next(x for x in text.splitlines() if "tokens in" in x)
    assert code == 0 and said in line, text
    assert ("(reasoning 0" not in line) and (split or UNREPORTED in line and "2 calls" in line)


def test_reasoning_unreported_is_kept_in_results_only_when_some() -> None:
    from judgeflow.results import Usage

    assert "reasoning_unreported" not in Usage(calls=1).model_dump()  # rows of every other judge are unchanged
    some = Usage(calls=2, output_tokens=900, reasoning_unreported=2)
    assert Usage.model_validate_json(some.model_dump_json()).reasoning_unreported == 2
    total = Usage()
    total.add(some)
    total.add(Usage(reasoning_tokens=5, reasoning_unreported=0))
    assert (total.reasoning_unreported, total.reasoning_tokens) == (2, 5)
