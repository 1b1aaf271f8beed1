"""OTLP JSON / OpenInference traces read as items (judgeflow/io/otlp.py, io/openinference.py)."""

from __future__ import annotations

import json

import pytest

from judgeflow.errors import InvalidItemError
from judgeflow.io.openinference import nest, trace_records
from judgeflow.io.otlp import read_otlp, spans_of
from judgeflow.items import Item, read_items
from tests.fakes.otel_traces import (
    agent_trace,
    rag_trace,
    request,
    span,
    span_id,
    trace_id,
    write_jsonl,
)


def _items(path):
    return list(read_items(path))


def test_a_rag_trace_is_a_faithfulness_item_linked_to_its_llm_span(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(1, wrong=True))])
    [item] = _items(path)
    assert isinstance(item, Item)
    assert item.id == trace_id(1)
    assert item.question == "What is the capital of Japan?"
    assert item.answer == "The capital of Japan is Atlantis (ticket 1)."
    assert item.source == ["Tokyo is the capital and largest city of Japan (ticket 1).",
                           "Japan is a country with a long history."]
    assert item.extra["trace_id"] == trace_id(1) and item.extra["span_id"] == span_id(1, 2)  # the LLM span
    assert item.extra["project"] == "default" and item.messages is None


def test_an_agent_trace_is_a_conversation_with_its_failed_tool_call(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [request(agent_trace(2))])
    [item] = _items(path)
    assert item.answer == "It is sunny and 24 degrees in Lisbon."
    assert item.extra["span_id"] == span_id(2, 3)  # the final LLM span
    labels = [m.label for m in item.messages]
    assert labels == ["user turn 1", "assistant tool calls", "tool get_weather, call_1"]
    assert any("Error: weather service unavailable" in d and "called get_weather with" in d for d in item.source)


def test_tool_spans_alone_make_the_conversation(tmp_path):
    """No LLM span lists its messages: the root's input, each TOOL span's call and result (its error
    status included), and the root's output."""
    spans = [span(5, 0, "agent", "AGENT", {"input.value": "Weather in Oslo?", "output.value": "Sunny in Oslo."}),
             span(5, 1, "lookup", "TOOL", {"tool.name": "get_weather", "tool.parameters": '{"city": "Oslo"}',
                                           "output.value": ""}, parent=0, error="timeout")]
    [item] = _items(write_jsonl(tmp_path / "t.jsonl", [request(spans)]))
    assert item.answer == "Sunny in Oslo." and item.extra["span_id"] == span_id(5, 0)
    assert [m.label for m in item.messages] == ["user turn 1", "assistant tool calls", f"tool get_weather, {span_id(5, 1)}"]
    assert item.messages[-1].text == "timeout" and item.messages[-1].tool == "get_weather"


def test_spans_of_one_trace_on_several_lines_make_one_item(tmp_path):
    """An exporter sends a trace's spans in several requests: the file is read whole."""
    a, b, c = rag_trace(3)
    path = write_jsonl(tmp_path / "t.jsonl", [request([a]), request([b, *rag_trace(4)]), request([c])])
    items = _items(path)
    assert [i.id for i in items] == [trace_id(3), trace_id(4)]
    assert items[0].source and items[0].extra["span_id"] == span_id(3, 2)


def test_a_single_document_json_file_reads_too(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(request(rag_trace(1) + rag_trace(2))))
    assert [i.id for i in _items(path)] == [trace_id(1), trace_id(2)]


def test_nested_attributes_read_like_flattened_ones():
    flat = {"llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "hi",
            "llm.input_messages.1.message.role": "assistant"}
    nested = {"llm": {"input_messages": [{"message": {"role": "user", "content": "hi"}}, {"message.role": "assistant"}]}}
    assert nest(flat) == nest(nested) == {"llm": {"input_messages": [{"message": {"role": "user", "content": "hi"}},
                                                                      {"message": {"role": "assistant"}}]}}


def test_attribute_values_of_every_kind():
    doc = request([span(1, 0, "x", "LLM", {"output.value": "ok"})])
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"] += [
        {"key": "n", "value": {"intValue": "7"}}, {"key": "d", "value": {"doubleValue": 0.5}},
        {"key": "b", "value": {"boolValue": True}}, {"key": "l", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}},
        {"key": "kv", "value": {"kvlistValue": {"values": [{"key": "k", "value": {"intValue": 1}}]}}}]
    [s] = spans_of(doc)
    assert (s.attributes["n"], s.attributes["d"], s.attributes["b"], s.attributes["l"], s.attributes["kv"]) == \
        (7, 0.5, True, ["a"], {"k": 1})
    assert s.resource["openinference.project.name"] == "default" and s.kind == "LLM"


def test_a_bad_trace_id_names_the_file_line_span_and_field(tmp_path):
    doc = request(rag_trace(1))
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["traceId"] = "AAECAwQFBgcICQoLDA0ODw=="  # base64
    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(0)), doc])
    rows = _items(path)
    assert [r.id for r in rows if isinstance(r, Item)] == [trace_id(0)]  # line 2 is unreadable, line 1 is judged
    [err] = [r for r in rows if isinstance(r, InvalidItemError)]
    assert f"t.jsonl:2: span {span_id(1, 1)}" in str(err)
    assert err.field == "resourceSpans[0].scopeSpans[0].spans[1].traceId"
    assert "hex" in str(err) and "base64" in str(err)


def test_a_trace_with_no_output_is_an_invalid_row_naming_it(tmp_path):
    spans = [span(6, 0, "rag", "CHAIN", {"input.value": "q"})]
    [err] = _items(write_jsonl(tmp_path / "t.jsonl", [request(spans)]))
    assert isinstance(err, InvalidItemError)
    assert f"trace {trace_id(6)}" in str(err) and "t.jsonl:1" in str(err) and err.field == "output.value"
    assert "export the whole trace" in str(err)


def test_a_line_that_is_not_json_names_its_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("{not json\n")
    with pytest.raises(InvalidItemError, match=r"t.jsonl:1: not JSON"):
        list(read_otlp(path))


def test_read_otlp_reads_on_from_an_offset(tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(1))])
    size = path.stat().st_size
    write_jsonl(path, [request(rag_trace(2))], mode="a")
    spans = list(read_otlp(path, start=size))
    assert {s.trace_id for s in spans} == {trace_id(2)} and spans[0].line == 2


def test_trace_records_keep_the_order_of_first_spans():
    spans = spans_of(request(agent_trace(9) + rag_trace(8)))
    assert [r["id"] for _, r in trace_records(spans)] == [trace_id(9), trace_id(8)]


def test_run_judges_an_otlp_file_offline(tmp_path):
    from judgeflow.cli import main

    path = write_jsonl(tmp_path / "traces.jsonl", [request(rag_trace(1)), request(agent_trace(2))])
    out = tmp_path / "out.jsonl"
    rc = main(["run", str(path), "-o", str(out), "--model", "baseline/lexical", "--no-progress",
               "--store", str(tmp_path / "s.sqlite")])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rc in (0, 1) and [r["id"] for r in rows] == [trace_id(1), trace_id(2)]
    assert rows[0]["trace_id"] == trace_id(1) and rows[0]["span_id"] == span_id(1, 2)
    assert rows[0]["criterion"] == "source_faithfulness"
