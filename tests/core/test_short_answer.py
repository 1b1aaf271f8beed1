"""The opt-in short-answer path (#50): a criterion's `short_answer_words` takes an answer of one
sentence and at most that many words as its one claim, with no decompose call. Off (0) by default.

Faked at the HTTP boundary (`FakeLLM`: the real SDK and Instructor run); only the check (and the
commit-first) replies are scripted where the decompose call is skipped.
"""

from __future__ import annotations

import pytest
from fakes import MOSCOW_RIGHT, MOSCOW_WRONG, FakeLLM, moscow, moscow_checks, moscow_claims

from judgeflow import ClaimCheck, ClaimChecks, Criterion, Judge, load_criterion
from judgeflow.details import short_claim

KINDS = ["date", "number", "name", "place", "title", "quantity", "event", "other"]


def short(words: int = 15) -> Criterion:
    return load_criterion("factual_correctness").model_copy(update={"short_answer_words": words})


def kind(answer: str, kinds: list[str] = KINDS) -> str:
    claim = short_claim(answer, 15, kinds)
    assert claim is not None
    return claim.kind


def test_a_short_sentence_is_its_own_claim_with_its_quote_and_a_kind_found_in_code() -> None:
    claim = short_claim(f"  {MOSCOW_WRONG}\n", 15, KINDS)
    assert claim is not None
    got = (claim.id, claim.text, claim.quote, claim.kind)
    assert got == ("c1", MOSCOW_WRONG, MOSCOW_WRONG, "date")
    assert kind("Paris  is the capital of France.") == "name"
    assert kind("Nothing happens.") == "other"
    assert kind(MOSCOW_WRONG, ["name", "other"]) == "other"  # a kind the criterion lacks


@pytest.mark.parametrize("answer", [
    "Moscow was founded in 1247. Yuri Dolgorukiy founded it.",  # two sentences
    "Moscow was founded in 1247; Yuri Dolgorukiy founded it.",  # two clauses
    "Moscow was founded in 1247\nby Yuri Dolgorukiy",  # two lines
    " ".join(f"word{n}" for n in range(16)),  # 16 words
    "I have no comment.",  # nothing checkable: the model decides
    "When was Moscow founded?",
    "Moscow was founded in 1247 [1].",  # a citation marker: the decompose step keeps it
    "",
])
def test_anything_else_goes_to_the_decompose_step(answer: str) -> None:
    assert short_claim(answer, 15, KINDS) is None


def test_off_by_default_and_at_zero() -> None:
    assert load_criterion("factual_correctness").short_answer_words == 0
    assert short_claim(MOSCOW_WRONG, 0, KINDS) is None


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_on_one_call_judges_the_whole_answer(provider: str) -> None:
    llm = FakeLLM(provider, [moscow_checks("contradicted")])
    r = Judge(backend=llm.backend(), criterion=short()).judge(moscow())
    assert r.label == 1 and len(llm.requests) == 1 and r.usage.calls == 1
    assert [(c.id, c.text, c.quote) for c in r.claims] == [("c1", MOSCOW_WRONG, MOSCOW_WRONG)]
    assert [t.step for t in r.trace] == ["check"]
    assert f"c1: {MOSCOW_WRONG}" in llm.user_prompts()[0]


def test_off_the_model_decomposes_as_before() -> None:
    llm = FakeLLM("openai", [moscow_claims(MOSCOW_RIGHT), moscow_checks("supported")])
    judge = Judge(backend=llm.backend(), criterion="factual_correctness")
    r = judge.judge(moscow(answer=MOSCOW_RIGHT))
    assert r.label == 0 and len(llm.requests) == 2
    assert [t.step for t in r.trace] == ["decompose", "check"]


def test_on_commit_first_masks_the_whole_answer_claim() -> None:
    item = {"id": "m", "question": "When was Moscow founded and by whom?", "reference": "1147",
            "answer": "Moscow was founded in 1147 by Ivan the Terrible."}
    checks = ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="knowledge",
                                            evidence="", reason="from knowledge")])
    llm = FakeLLM("openai", [checks, {"c1": {"values": "1147; Yuri Dolgorukiy"}}])
    r = Judge(backend=llm.backend(), criterion=short(), knowledge="commit-first").judge(item)
    assert [t.step for t in r.trace] == ["check", "commit"] and r.usage.calls == 2
    prompt = llm.user_prompts()[-1]
    assert "[blank" in prompt and "Ivan" not in prompt and "Terrible" not in prompt
    assert r.claims[0].verdict == "unverifiable" and "Ivan the Terrible" in r.claims[0].reason
