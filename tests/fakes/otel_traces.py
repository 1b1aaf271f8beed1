"""OpenInference traces as OTLP JSON, made here (tests of ingest, export, watch and Phoenix).

    doc = request(rag_trace(3) + agent_trace(4), project="shop")   # one ExportTraceServiceRequest
    write_jsonl(path, [doc])                                         # what an OTLP file exporter writes

A RAG trace: a CHAIN root (the question in, the answer out), a RETRIEVER span with two documents, and
an LLM span (system + user messages in, the answer out). An agent trace: an AGENT root, an LLM span
that calls `get_weather`, the TOOL span, and the LLM span of the final reply, its input messages
holding the whole conversation. Ids are derived from the trace number, so a trace's ids are stable.

    python tests/fakes/otel_traces.py examples/otel_traces.json   # rewrite the shipped example
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Kenya", "Nairobi"), ("Peru", "Lima"), ("Norway", "Oslo"),
            ("Chile", "Santiago"), ("Egypt", "Cairo"), ("Canada", "Ottawa")]


def trace_id(n: int) -> str:
    return hashlib.sha256(f"trace-{n}".encode()).hexdigest()[:32]


def span_id(n: int, k: int) -> str:
    return hashlib.sha256(f"span-{n}-{k}".encode()).hexdigest()[:16]


def value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"stringValue": str(v)}


def attrs(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": value(v)} for k, v in d.items()]


def span(n: int, k: int, name: str, kind: str, a: dict[str, Any], *, parent: int | None = None,
         error: str | None = None) -> dict[str, Any]:
    start = 1_700_000_000_000_000_000 + n * 1_000_000_000 + k * 1_000_000
    out: dict[str, Any] = {"traceId": trace_id(n), "spanId": span_id(n, k), "name": name, "kind": 1,
                           "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 500_000),
                           "attributes": attrs({"openinference.span.kind": kind, **a}), "status": {}}
    if parent is not None:
        out["parentSpanId"] = span_id(n, parent)
    if error is not None:
        out["status"] = {"code": 2, "message": error}
    return out


def rag_trace(n: int, *, wrong: bool = False) -> list[dict[str, Any]]:
    """Trace n: "What is the capital of X?" answered from two retrieved documents (wrongly with `wrong`)."""
    country, capital = CAPITALS[n % len(CAPITALS)]
    question = f"What is the capital of {country}?"
    answer = f"The capital of {country} is {'Atlantis' if wrong else capital} (ticket {n})."  # each trace's own text
    docs = {"retrieval.documents.0.document.content": f"{capital} is the capital and largest city of {country} (ticket {n}).",
            "retrieval.documents.0.document.id": f"doc-{n}-0",
            "retrieval.documents.1.document.content": f"{country} is a country with a long history.",
            "retrieval.documents.1.document.id": f"doc-{n}-1"}
    return [
        span(n, 0, "rag", "CHAIN", {"input.value": question, "output.value": answer}),
        span(n, 1, "retrieve", "RETRIEVER", {"input.value": question, **docs}, parent=0),
        span(n, 2, "ChatCompletion", "LLM", {
            "llm.model_name": "gpt-4o-mini",
            "llm.input_messages.0.message.role": "system", "llm.input_messages.0.message.content": "Answer from the context.",
            "llm.input_messages.1.message.role": "user", "llm.input_messages.1.message.content": question,
            "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": answer,
            "output.value": answer}, parent=0),
    ]


def agent_trace(n: int) -> list[dict[str, Any]]:
    """Trace n: an agent calls get_weather, which fails, and says it is sunny."""
    question = "What is the weather in Lisbon?"
    call = {"llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city": "Lisbon"}'}
    final = "It is sunny and 24 degrees in Lisbon."
    return [
        span(n, 0, "agent", "AGENT", {"input.value": question, "output.value": final}),
        span(n, 1, "ChatCompletion", "LLM", {"llm.input_messages.0.message.role": "user",
                                             "llm.input_messages.0.message.content": question, **call}, parent=0),
        span(n, 2, "get_weather", "TOOL", {"tool.name": "get_weather", "input.value": '{"city": "Lisbon"}',
                                           "output.value": "Error: weather service unavailable"},
             parent=0, error="weather service unavailable"),
        span(n, 3, "ChatCompletion", "LLM", {
            "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": question,
            **{k.replace("output_messages", "input_messages").replace(".0.", ".1.", 1): v for k, v in call.items()},
            "llm.input_messages.2.message.role": "tool", "llm.input_messages.2.message.tool_call_id": "call_1",
            "llm.input_messages.2.message.content": "Error: weather service unavailable",
            "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": final},
            parent=0),
    ]


def request(spans: list[dict[str, Any]], *, project: str = "default", service: str = "rag-app") -> dict[str, Any]:
    """One ExportTraceServiceRequest holding `spans`."""
    resource = {"service.name": service, "openinference.project.name": project}
    return {"resourceSpans": [{"resource": {"attributes": attrs(resource)},
                               "scopeSpans": [{"scope": {"name": "fake-openinference"}, "spans": spans}]}]}


def write_jsonl(path: Path, docs: list[dict[str, Any]], *, mode: str = "w") -> Path:
    with open(path, mode, encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
    return path


def example() -> dict[str, Any]:
    """The shipped example: three RAG traces (one answered wrongly) and one agent trace, in one request."""
    return request(rag_trace(0) + rag_trace(1, wrong=True) + rag_trace(2) + agent_trace(3))


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(example(), indent=1) + "\n", encoding="utf-8")
