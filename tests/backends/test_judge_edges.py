"""Honesty at the judge's edges, faked at the HTTP boundary (#41): an empty decomposition of an
answer that states something is not a pass, and a detail no claim carries is still judged."""

from __future__ import annotations

from typing import Any

import pytest
from fakes import MOSCOW_FOUNDER, FakeLLM, moscow_by_whom
from fakes.provider import claim_lines

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Judge, SingleJudgment
from judgeflow.schemas import JudgedClaim

PROVIDERS = ["openai", "anthropic"]
MOSCOW_1147 = moscow_by_whom(answer="Moscow was founded by Yuri Dolgorukiy in 1147.")
MOSCOW_1247 = moscow_by_whom(answer="Moscow was founded by Yuri Dolgorukiy in 1247.")
BANNED = {"id": "dogs", "question": "Which films are still banned in New Zealand?",
          "answer": "Reservoir Dogs was banned in New Zealand.", "reference": "No film named is banned there."}


def user_text(req: dict[str, Any]) -> str:
    m = [m for m in req["messages"] if m["role"] == "user"][-1]
    c = m["content"]
    return c if isinstance(c, str) else "".join(p.get("text", "") for p in c)


def verdicts(by_text: dict[str, str]) -> Any:
    """A check reply answering every claim id in the prompt: the verdict of the first key its text holds."""
    def reply(req: dict[str, Any]) -> ClaimChecks:
        found = claim_lines(user_text(req))
        return ClaimChecks(checks=[
            ClaimCheck(claim_id=i, verdict=next((v for k, v in by_text.items() if k in t), "supported"),
                       basis="reference", evidence="1147", reason="r") for i, t in found])
    return reply


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("item", [MOSCOW_1147, BANNED], ids=["moscow", "banned"])
def test_empty_claims_for_a_stating_answer_is_reasked_then_unscored(provider: str, item: dict[str, Any]) -> None:
    llm = FakeLLM(provider, [Claims(claims=[]), Claims(claims=[])])
    result = Judge(backend=llm.backend()).judge(item)
    assert len(llm.requests) == 2, "the empty list is asked once more"
    assert "listed no claims" in user_text(llm.requests[1])
    assert result.label is None and result.status == "unscored"
    assert "returned no claims" in (result.error or "") and result.usage.calls == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_claims_then_claims_on_the_reask_is_judged(provider: str) -> None:
    llm = FakeLLM(provider, [Claims(claims=[]), Claims(claims=[Claim(id="c1", text=MOSCOW_1147["answer"], kind="date")]),
                             verdicts({})])
    result = Judge(backend=llm.backend()).judge(MOSCOW_1147)
    assert result.label == 0 and result.status == "judged" and len(llm.requests) == 3
    assert result.usage.reasks >= 1


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("answer", ["I have no comment.", "I don't know.", "What do you mean?"])
def test_a_refusal_with_no_claims_stays_0_with_its_reason(provider: str, answer: str) -> None:
    llm = FakeLLM(provider, [Claims(claims=[])])
    result = Judge(backend=llm.backend()).judge(dict(MOSCOW_1147, answer=answer))
    assert result.label == 0 and result.status == "judged" and len(llm.requests) == 1
    assert "no checkable claims" in (result.reason or "")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_single_strategy_empty_claims_for_a_stating_answer_is_unscored(provider: str) -> None:
    llm = FakeLLM(provider, [SingleJudgment(claims=[]), SingleJudgment(claims=[])])
    result = Judge(backend=llm.backend(), strategy="single").judge(BANNED)
    assert len(llm.requests) == 2 and result.label is None and result.status == "unscored"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_year_the_decomposer_dropped_is_checked_and_can_make_the_answer_1(provider: str) -> None:
    # the scripted decomposer keeps only the founder: the (wrong) year 1247 is in no claim
    llm = FakeLLM(provider, [Claims(claims=[Claim(id="c1", text=MOSCOW_FOUNDER, kind="name")]),
                             verdicts({"1247": "contradicted"})])
    result = Judge(backend=llm.backend(), check_dropped=True).judge(MOSCOW_1247)
    check_prompt = user_text(llm.requests[1])
    assert "1247" in check_prompt, "the dropped year reaches the check step"
    assert result.label == 1 and result.dropped == ["1247"]
    assert [c.kind for c in result.claims] == ["name", "date"]
    assert "checked as added claims: 1247" in (result.reason or "")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_dropping_the_year_1147_is_checked_and_recorded_in_the_row(provider: str) -> None:
    llm = FakeLLM(provider, [Claims(claims=[Claim(id="c1", text=MOSCOW_FOUNDER, kind="name")]), verdicts({})])
    result = Judge(backend=llm.backend(), check_dropped=True).judge(MOSCOW_1147)
    assert result.label == 0 and result.dropped == ["1147"] and result.to_row()["dropped"] == ["1147"]
    assert len(result.claims) == 2 and "1147" in result.claims[1].text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_by_default_a_dropped_wrong_year_is_checked_and_makes_the_answer_1(provider: str) -> None:
    # the study's rule, at the defaults: judge the answer whole (a correct core does not excuse a wrong year)
    llm = FakeLLM(provider, [Claims(claims=[Claim(id="c1", text=MOSCOW_FOUNDER, kind="name")]),
                             verdicts({"1247": "contradicted"})])
    result = Judge(backend=llm.backend()).judge(MOSCOW_1247)
    assert len(llm.requests) == 2 and "1247" in user_text(llm.requests[1])
    assert result.label == 1 and result.dropped == ["1247"]
    assert "checked as added claims: 1247" in (result.reason or "")
    assert Judge(backend=llm.backend()).spec().check_dropped is True


@pytest.mark.parametrize("provider", PROVIDERS)
def test_check_dropped_off_names_a_dropped_year_in_the_row_as_not_checked(provider: str) -> None:
    llm = FakeLLM(provider, [Claims(claims=[Claim(id="c1", text=MOSCOW_FOUNDER, kind="name")]), verdicts({})])
    result = Judge(backend=llm.backend(), check_dropped=False).judge(MOSCOW_1247)
    assert len(llm.requests) == 2 and "1247" not in user_text(llm.requests[1])
    assert result.label == 0, "off: the wrong year no claim carries is not judged (the old behaviour, opted into)"
    assert result.dropped == ["1247"] and "not checked (no claim carried them): 1247" in (result.reason or "")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_single_strategy_names_a_detail_it_did_not_check(provider: str) -> None:
    one = SingleJudgment(claims=[JudgedClaim(id="c1", text=MOSCOW_FOUNDER, verdict="supported", basis="reference")])
    result = Judge(backend=FakeLLM(provider, [one]).backend(), strategy="single").judge(MOSCOW_1247)
    assert result.dropped == ["1247"] and "not checked" in (result.reason or "") and "1247" in (result.reason or "")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_detail_carried_adds_nothing(provider: str) -> None:
    claims = Claims(claims=[Claim(id="c1", text="Moscow was founded in 1147.", kind="date"),
                            Claim(id="c2", text=MOSCOW_FOUNDER, kind="name")])
    result = Judge(backend=FakeLLM(provider, [claims, verdicts({})]).backend()).judge(MOSCOW_1147)
    assert result.dropped is None and len(result.claims) == 2 and "dropped" not in result.to_row()
