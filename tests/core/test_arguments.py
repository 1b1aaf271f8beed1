"""Tool-call arguments traced to where they came from (#53): in code, an ungrounded value is an error claim."""

from __future__ import annotations

import json

import pytest

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Item, Judge
from judgeflow.arguments import found_in, trace_arguments
from tests.fakes.scripted import FakeLLM


def _trace(date: str, *, answer: str = "Your flight BA117 on March 5 is booked.") -> dict:
    return {"id": "t", "messages": [
        {"role": "user", "content": "Find me a flight to New York on March 5th, 2025, for 2 adults."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "function": {"name": "search_flights",
                                          "arguments": json.dumps({"to": "JFK", "date": date, "adults": 2,
                                                                   "limit": 10, "nonstop": True})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"flights": [{"id": "BA117", "dep": "09:40"}]})},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_2", "function": {"name": "book", "arguments": json.dumps({"flight": "BA117"})}}]},
        {"role": "tool", "tool_call_id": "call_2", "content": "booked: BA117"},
        {"role": "assistant", "content": answer},
    ]}


@pytest.mark.parametrize(("value", "text", "words"), [
    ("2025-03-05", "on March 5th, 2025", "March 5th, 2025"),
    ("2025-03-05", "on 5 March", "5 March"),            # no year stated: any year
    ("2025-03-06", "on March 5th, 2025", None),
    ("2025-03-05T10:30", "on 2025-03-05 at 10:30", "2025-03-05"),
    ("2025-03-05T11:30", "on 2025-03-05 at 10:30", None),
    (2, "for 2 adults", "2"),
    ("AB-1234", "booking ab 1234", "AB-1234"),
    ("AB-1235", "booking ab 1234", None),
])
def test_values_are_matched_normalised(value: object, text: str, words: str | None) -> None:
    assert found_in(value, text) == words


def test_each_concrete_value_is_traced_to_the_message_that_states_it() -> None:
    item = Item.from_record(_trace("2025-03-05"))
    traced = {(a["call"], a["path"]): (a["grounded"], a["cited"], a["quote"]) for a in trace_arguments(item.messages, None)}
    assert traced == {("call_1", "date"): (True, "user turn 1", "March 5th, 2025"),
                      ("call_1", "adults"): (True, "user turn 1", "2"),
                      ("call_2", "flight"): (True, "tool search_flights, call_1", "BA117")}  # limit, nonstop, "JFK": chosen


def test_a_date_found_in_no_earlier_turn_is_an_ungrounded_argument_claim() -> None:
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Flight BA117 is booked", kind="action", quote="Your flight BA117")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source",
                                       evidence="[tool book, call_2] booked: BA117")]),
    ])
    r = Judge(backend=llm.backend(), check_dropped=False).judge(_trace("2025-03-07"))
    assert r.criterion == "trace_grounding" and r.label == 1
    (arg,) = [c for c in r.claims if c.verdict == "ungrounded_argument"]
    assert arg.error is True and "2025-03-07" in arg.text and "2025-03-07" in arg.evidence and arg.id == "a1"
    assert "ungrounded_argument" not in str(llm.requests[1])  # never offered to the model
    assert r.claims[0].verdict == "supported"
    assert {a["path"]: a["grounded"] for a in r.arguments} == {"adults": True, "date": False, "flight": True}
    good = Judge("baseline/lexical").judge(_trace("2025-03-05", answer="Flight BA117 is booked."))
    assert not [c for c in good.claims if c.verdict == "ungrounded_argument"] and good.arguments


def test_an_action_no_call_made_and_a_result_never_returned_are_decided_in_code() -> None:
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="I sent the confirmation e-mail", kind="action", quote="BA117"),
                       Claim(id="c2", text="It departs at 10:15", kind="time", quote="March 5")]),
        ClaimChecks(checks=[
            ClaimCheck(claim_id="c1", verdict="supported", basis="source", evidence="[user turn 1] Find me a flight"),
            ClaimCheck(claim_id="c2", verdict="supported", basis="source",
                       evidence="[tool search_flights, call_1] dep 10:15")]),
    ])
    r = Judge(backend=llm.backend(), check_dropped=False).judge(_trace("2025-03-05"))
    c1, c2 = r.claims[:2]
    assert (c1.verdict, c1.error) == ("not_found", True) and "no tool call in the trace made" in c1.reason
    assert (c2.verdict, c2.error) == ("not_found", True) and "never returned" in c2.reason


def test_a_claim_quoting_a_json_tool_result_carries_a_field_path_verified_in_code() -> None:
    def judged(evidence: str):
        llm = FakeLLM("openai", [
            Claims(claims=[Claim(id="c1", text="BA117 departs at 09:40", kind="time", quote="BA117")]),
            ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source", evidence=evidence)]),
        ])
        return Judge(backend=llm.backend(), check_dropped=False).judge(_trace("2025-03-05")).claims[0]

    by_path = judged("[tool search_flights, call_1] flights.0.dep = 09:40")
    assert (by_path.evidence_path, by_path.evidence_found, by_path.verdict) == ("flights.0.dep", True, "supported")
    fragment = judged('[tool search_flights, call_1] "dep": "09:40"')
    assert (fragment.evidence_path, fragment.evidence_found) == ("flights.0.dep", True)
    wrong = judged("[tool search_flights, call_1] flights.0.dep = 10:15")  # the field holds another value
    assert (wrong.evidence_path, wrong.evidence_found, wrong.verdict) == ("flights.0.dep", False, "not_found")
    assert "evidence_path" in wrong.model_dump() and by_path.model_dump()["evidence_path"] == "flights.0.dep"


def test_a_quote_into_code_gets_its_line_span() -> None:
    from judgeflow.evidence_paths import code_lines, json_evidence, looks_like_code

    code = "def area(r):\n    pi = 3.14159\n    return pi * r * r\n"
    assert looks_like_code(code) and code_lines("return pi * r * r", code) == [3, 3]
    assert code_lines("pi = 3.14159 return pi", code) == [2, 3] and code_lines("pi = 3", "x") is None
    assert json_evidence("$.a[1].b: 2", {"a": [{}, {"b": 2}]}) == ("a.1.b", True)
    assert json_evidence("nothing here", {"a": 1}) is None
