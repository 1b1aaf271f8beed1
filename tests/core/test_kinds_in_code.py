"""A criterion's `ask_kinds = false` (#50): the decompose request leaves the fact-kind enum out and
the claim's kind is found in code. source_faithfulness ships it (no verdict of its refers to a
kind) and factual_correctness too: its false_fact verdict names the kinds, but the check sees
each claim as `cN: text`, never the decompose step's kind, so the kind only labels reports.

Faked at the HTTP boundary (`FakeLLM`: the real SDK and Instructor run).
"""

from __future__ import annotations

import json

import pytest
from fakes import FakeLLM

from judgeflow import ClaimCheck, ClaimChecks, Judge, load_criterion
from judgeflow.details import code_kind
from judgeflow.schemas import claims_reply

KINDS = ["date", "number", "name", "place", "title", "quantity", "event", "other"]
ITEM = {"id": "b", "answer": "Albert Brooks was born on July 22, 1947. He is an actor.",
        "source": ["Albert Lawrence Brooks (born July 22, 1947) is an American actor."]}


@pytest.mark.parametrize(("text", "kind"), [
    ("Albert Brooks was born on July 22, 1947.", "date"),
    ("Moscow was founded in 1147.", "date"),
    ("The film earned 12 awards.", "number"),
    ("The film was directed by Andrew Stanton.", "name"),
    ("He is an actor.", "other"),
])
def test_code_kind(text: str, kind: str) -> None:
    assert code_kind(text, KINDS) == kind
    assert code_kind(text, ["other"]) == "other"  # a kind the criterion does not list


def test_the_reply_schema_without_kinds_stays_strict() -> None:
    schema = claims_reply(tuple(KINDS), 4, False).model_json_schema()
    entry = schema["properties"]["claims"]["items"]
    assert set(entry["properties"]) == {"text", "quote"} == set(entry["required"])
    assert entry["additionalProperties"] is False
    with_kinds = claims_reply(tuple(KINDS), 4).model_json_schema()["properties"]["claims"]["items"]
    assert with_kinds["properties"]["kind"]["enum"] == KINDS


def test_shipped_criteria() -> None:
    assert load_criterion("source_faithfulness").ask_kinds is False
    assert load_criterion("factual_correctness").ask_kinds is False
    assert load_criterion("reference_faithfulness").ask_kinds is True


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_faithfulness_asks_no_kind_and_finds_it_in_code(provider: str) -> None:
    claims = {"claims": [
        {"text": "Albert Brooks was born on July 22, 1947.", "quote": "born on July 22, 1947"},
        {"text": "Albert Brooks is an actor.", "quote": "He is an actor."}]}
    checks = ClaimChecks(checks=[
        ClaimCheck(claim_id="c1", verdict="supported", basis="source", evidence="July 22, 1947"),
        ClaimCheck(claim_id="c2", verdict="supported", basis="source", evidence="actor")])
    llm = FakeLLM(provider, [claims, checks])
    r = Judge(backend=llm.backend(), criterion="source_faithfulness").judge(ITEM)
    assert r.label == 0 and [c.kind for c in r.claims] == ["date", "other"]
    decompose = json.dumps(llm.requests[0].get("tools"))
    assert '"quote"' in decompose and '"kind"' not in decompose and '"event"' not in decompose
    assert "kind" not in llm.user_prompts()[0]


def test_factual_asks_no_kind_but_its_check_still_names_the_concrete_kinds() -> None:
    claims = {"claims": [{"text": "Moscow was founded in 1147.", "quote": "founded in 1147"}]}
    checks = ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="reference")])
    llm = FakeLLM("openai", [claims, checks])
    r = Judge(backend=llm.backend(), criterion="factual_correctness").judge(
        {"id": "m", "answer": "Moscow was founded in 1147.", "reference": "1147"})
    assert [c.kind for c in r.claims] == ["date"]  # found in code
    assert '"kind"' not in json.dumps(llm.requests[0].get("tools"))
    check = llm.user_prompts()[1]
    assert "Concrete fact kinds: date, number, name, place, title, quantity, event." in check  # "other" is no kind
    assert "c1: Moscow was founded in 1147." in check


def test_a_criterion_that_asks_for_kinds_keeps_the_models_kind() -> None:
    claims = {"claims": [
        {"text": "Moscow was founded in 1147.", "kind": "event", "quote": "founded in 1147"}]}
    checks = ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="reference")])
    llm = FakeLLM("openai", [claims, checks])
    asks = load_criterion("factual_correctness").model_copy(update={"ask_kinds": True})
    r = Judge(backend=llm.backend(), criterion=asks).judge(
        {"id": "m", "answer": "Moscow was founded in 1147.", "reference": "1147"})
    assert [c.kind for c in r.claims] == ["event"]  # the model's kind, not code's "date"
    assert '"kind"' in json.dumps(llm.requests[0].get("tools"))
