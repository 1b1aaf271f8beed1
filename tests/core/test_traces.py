"""Conversations as items: the trace reader (OpenAI, Anthropic, LangChain), turns, malformed traces,
routing to trace_grounding, per-message evidence, long traces, and the offline floor on the trace set."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from fakes.traces import ANTHROPIC, ARGS, LC_OBJECTS, OPENAI, SYSTEM, TRACES
from langchain_core.messages import AIMessage, ToolMessage, messages_to_dict

from judgeflow import InvalidItemError, Item, Judge, read_items
from judgeflow.items import items_from_record
from judgeflow.results import ClaimResult
from judgeflow.routing import choose_criterion
from judgeflow.traces import attribute


def _same(item: Item) -> dict:
    return item.model_dump(exclude={"extra", "aliases"})


def test_one_trace_in_every_format_gives_the_same_item() -> None:
    forms = {
        "openai": {"id": "t", "messages": OPENAI},
        "anthropic": {"id": "t", "system": SYSTEM, "messages": ANTHROPIC},
        "langchain dicts": {"id": "t", "messages": messages_to_dict(LC_OBJECTS)},
        "langchain objects": {"id": "t", "messages": LC_OBJECTS},
    }
    items = {k: Item.from_record(v) for k, v in forms.items()}
    for name, item in items.items():
        assert _same(item) == _same(items["openai"]), name
    it = items["openai"]
    assert it.answer == "Yes, flight TP1351 at 09:40 is booked." and it.question == "So is it booked?"
    assert it.source == [
        "[user turn 1]\nBook the 09:40 flight to Lisbon.",
        "[assistant turn 2]\nBooking it now.",
        ('[tool book_flight, call_1]\ncalled book_flight with {"date": "2025-06-03", "flight": "TP1351"}\n'
        "returned:\nError: payment declined."),
        "[user turn 3]\nSo is it booked?",
    ]  # the system prompt is not evidence unless asked
    assert "status" not in it.source[2]
    assert [m.label for m in it.messages or []] == ["system prompt", "user turn 1", "assistant turn 2",
                                                   "tool book_flight, call_1", "user turn 3"]


def test_a_failed_tool_call_reads_as_failed_in_anthropic_and_langchain() -> None:
    anthropic = json.loads(json.dumps(ANTHROPIC))
    anthropic[2]["content"][0]["is_error"] = True
    objects = [*LC_OBJECTS[:3], ToolMessage("Error: payment declined.", tool_call_id="call_1", status="error"),
               *LC_OBJECTS[4:]]
    for messages in (anthropic, objects, messages_to_dict(objects)):
        item = Item.from_record({"id": "t", "messages": messages})
        assert item.source[2].splitlines()[2] == "status: error"
        assert item.messages is not None and [m.failed for m in item.messages].count(True) == 1 and item.messages[-2].failed


def test_anthropic_blocks_inside_a_langchain_message_and_legacy_function_calls() -> None:
    both = AIMessage(content=[{"type": "text", "text": "Booking it now."},
                              {"type": "tool_use", "id": "call_1", "name": "book_flight", "input": ARGS}],
                     tool_calls=[{"name": "book_flight", "args": ARGS, "id": "call_1"}])
    item = Item.from_record({"id": "t", "messages": [LC_OBJECTS[1], both, *LC_OBJECTS[3:]]})
    assert _same(item) == _same(Item.from_record({"id": "t", "messages": OPENAI[1:]}))  # the call once, not twice
    legacy = [{"role": "user", "content": "Weather?"},
              {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": "{}"}},
              {"role": "function", "name": "get_weather", "content": "18 C"},
              {"role": "assistant", "content": "It is 18 C."}]
    assert Item.from_record({"id": "f", "messages": legacy}).source[1] == \
        "[tool get_weather, get_weather]\ncalled get_weather with {}\nreturned:\n18 C"


def test_turns_all_judges_each_assistant_turn_against_what_came_before() -> None:
    items = items_from_record({"id": "t", "messages": OPENAI, "label": 1}, turns="all")
    assert [(i.id, i.label) for i in items] == [("t#t2", None), ("t#t4", 1)]  # the label is the last reply's
    assert items[0].answer == "Booking it now." and items[0].source == ["[user turn 1]\nBook the 09:40 flight to Lisbon."]
    assert items[1].source == Item.from_record({"id": "t", "messages": OPENAI}).source
    with_system = items_from_record({"id": "t", "messages": OPENAI}, system=True)[0]
    assert with_system.source[0] == f"[system prompt]\n{SYSTEM}"


def test_an_answer_given_apart_is_judged_against_the_whole_conversation() -> None:
    item = Item.from_record({"id": "t", "messages": OPENAI, "answer": "Your flight is booked."})
    assert item.answer == "Your flight is booked."
    assert item.source[-1] == "[assistant turn 4]\nYes, flight TP1351 at 09:40 is booked."


@pytest.mark.parametrize(("messages", "field", "fix"), [
    ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "18 C"}, {"role": "assistant", "content": "ok"}],
     "messages[1].tool_call_id", "give the id of the call it answers"),
    ([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "c9", "content": "x"},
      {"role": "assistant", "content": "ok"}], "messages[1].tool_call_id", "which no earlier assistant message made"),
    ([{"role": "robot", "content": "hi"}], "messages[0].role", "use one of"),
    ([{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]}],
     "messages[0].tool_calls[0].name", "no tool name"),
    ([{"role": "user", "content": "hi"}], "messages", "no assistant message with text"),
    ([{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}], "messages[0].content[0].tool_use_id",
     "tool_use_id"),
])


def test_a_malformed_trace_names_file_line_field_and_fix(tmp_path: Path, messages: list, field: str, fix: str) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps({"id": "ok", "messages": OPENAI}) + "\n" + json.dumps({"id": "bad", "messages": messages}) + "\n")
    good, bad = list(read_items(path))
    assert isinstance(good, Item) and isinstance(bad, InvalidItemError)
    assert bad.field == field and bad.line == 2 and bad.item_id == "bad"
    assert str(bad).startswith(f"{path}:2: item 'bad' ") and fix in str(bad)


def test_trace_items_route_to_trace_grounding_with_or_without_a_spec() -> None:
    item = Item.from_record({"id": "t", "messages": OPENAI})
    criterion, why = choose_criterion(item)
    assert criterion.name == "trace_grounding" and why == "conversation (messages) present"
    with_spec = Item.from_record({"id": "t", "messages": OPENAI, "spec": "Never book without payment."})
    criterion, _ = choose_criterion(with_spec)
    assert criterion.name == "trace_grounding" and criterion.covers_spec and "{spec}" in criterion.prompts.check
    plain = Item.from_record({"id": "p", "answer": "a", "source": "b"})
    assert choose_criterion(plain)[0].name == "source_faithfulness"


def test_a_trace_with_a_spec_gets_requirement_coverage_too() -> None:
    rec = {"id": "t", "messages": OPENAI, "spec": "The reply must give the booking reference."}
    judge = Judge("baseline/lexical", coverage=True)
    with_spec = judge.judge(Item.from_record(rec))
    assert with_spec.criterion == "trace_grounding" and with_spec.requirements is not None
    assert [r.text for r in with_spec.requirements] == ["The reply must give the booking reference."]
    assert judge.judge(Item.from_record({"id": "t", "messages": OPENAI})).requirements is None


def test_evidence_is_checked_against_the_message_it_names() -> None:
    source = Item.from_record({"id": "t", "messages": OPENAI}).source
    claims = [
        ClaimResult(id="c1", text="booked", verdict="contradicted", basis="source",
                    evidence="[tool book_flight, call_1] payment declined", reason="The booking failed."),
        ClaimResult(id="c2", text="booked", verdict="supported", basis="source",  # the quote is not in that message
                    evidence="[user turn 1] payment declined", reason="x"),
        ClaimResult(id="c3", text="asked", verdict="supported", basis="source", evidence="So is it booked?",
                    reason="The user asked."),  # no label: found by the quote
        ClaimResult(id="c4", text="x", verdict="supported", basis="source",
                    evidence="[document 3, passage 1] Error: payment declined.", reason="y"),  # a passage citation
    ]
    out = attribute(claims, source)
    assert [(c.cited, c.evidence_found) for c in out] == [
        ("tool book_flight, call_1", True), ("user turn 1", False), ("user turn 3", True), ("tool book_flight, call_1", True)]
    assert out[0].reason == "The booking failed. (evidence: tool book_flight, call_1)"


def test_a_long_trace_goes_through_passage_selection_with_a_warning() -> None:
    cities = ", ".join(f"city{i}" for i in range(30))  # each call's argument comes from the user (#53)
    msgs = [{"role": "user", "content": f"Compare the weather in {cities}."}]
    for i in range(30):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "function": {"name": "get_weather", "arguments": json.dumps({"city": f"city{i}"})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}",
                     "content": f"City{i}: {10 + i} C, cloudy. " + "Humidity normal and winds calm. " * 6})
    msgs.append({"role": "assistant", "content": "City7 is 17 C and cloudy."})
    item = Item.from_record({"id": "long", "messages": msgs})
    judge = Judge("baseline/lexical", max_source_chars=1200)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = judge.judge(item)
    cut = [str(w.message) for w in seen if "passages were cut" in str(w.message)]
    assert cut and "item 'long'" in cut[0] and "tool get_weather, c" in cut[0]
    assert result.label == 0 and result.claims[0].cited == "tool get_weather, c7"


def test_the_offline_judge_gives_a_floor_on_the_hand_written_set() -> None:
    rows = list(read_items(TRACES))
    assert all(isinstance(r, Item) for r in rows) and 12 <= len(rows) <= 20
    assert {r.label for r in rows} == {0, 1} and {r.extra["format"] for r in rows} == {"openai", "anthropic", "langchain"}
    results = Judge("baseline/lexical").judge_many(rows)
    assert all(r.criterion == "trace_grounding" and r.label is not None for r in results)
    agree = sum(r.label == i.label for r, i in zip(results, rows, strict=True))
    assert agree >= 0.75 * len(rows)  # a floor, not a target: the LLM judge is what gets calibrated


def test_turns_all_shares_the_conversations_evidence_instead_of_copying_it() -> None:
    """Issue 35, item 8: `--turns all` made a copy of every earlier message per turn: a 100 KB,
    2,000-message conversation became 1.26 GB before any call. Each document is now made once."""
    import tracemalloc

    from judgeflow.items import items_from_record

    msgs = [m for k in range(300) for m in ({"role": "user", "content": f"question {k} " + "u" * 38},
                                             {"role": "assistant", "content": f"answer {k} " + "a" * 40})]
    tracemalloc.start()
    try:
        items = items_from_record({"id": "c1", "messages": msgs}, turns="all")
        grown = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(items) == 300
    first, last = items[1], items[-1]
    assert all(a is b for a, b in zip(first.source, last.source))  # the same document objects, not copies
    assert all(a is b for a, b in zip(first.messages, last.messages))
    assert last.source[0] == "[user turn 1]\nquestion 0 " + "u" * 38 or last.source[0].endswith("question 0 " + "u" * 38)
    # the evidence alone, copied per item, is 300*299/2 documents of ~60 characters (~2.7 M characters)
    assert grown < 8 * 2**20, grown
