"""OpenInference traces (OTel spans as Phoenix and the OpenInference instrumentations write them) as items.

    records = trace_records(spans)     # one input record per trace, for items_from_record

A trace's spans (`judgeflow.io.otlp.Span`, from an OTLP JSON file, a receiver or a Phoenix server)
give one record, id the trace id, with `trace_id` and `span_id` naming the judged span (so the
verdict's span is its child: `integrations/otel.py`):

- the judged span is the LLM span that ended last with an output (`llm.output_messages`, else
  `output.value`); a trace without one is judged at its root span's `output.value`;
- an agent's trace (TOOL spans, or tool calls in the messages) is a conversation: the judged LLM
  span's `llm.input_messages` and its reply (tool calls and results included), or, without them, the
  root's `input.value`, each TOOL/RETRIEVER span as a call with its result, and the final output;
- otherwise, the documents of the RETRIEVER spans before it (`retrieval.documents.N.document.content`)
  are its source: a faithfulness item (question: the last user message, else the root's
  `input.value`). With neither it is a plain question and answer.

Attribute keys may come flattened (`llm.input_messages.0.message.role`, as OTLP carries them) or
nested (as Phoenix's REST API gives them); `nest` reads both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..errors import InvalidItemError
from .otlp import Span, is_otlp, spans_of

TOOL_KINDS = ("TOOL", "RETRIEVER")
#: parts of a dotted attribute key that nest (OpenInference's deepest is about 8); the rest stays one key
MAX_KEY_PARTS = 32


def nest(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Dotted keys as nested dicts, and dicts keyed 0, 1, ... as lists (recursively)."""
    root: dict[str, Any] = {}
    for key, value in attrs.items():
        node = root
        *parents, last = str(key).split(".", MAX_KEY_PARTS)
        for part in parents:
            nxt = node.get(part)
            if not isinstance(nxt, dict):
                nxt = node[part] = {} if nxt is None else {"": nxt}
            node = nxt
        value = nest(value) if isinstance(value, Mapping) else [nest(v) if isinstance(v, Mapping) else v
                                                                   for v in value] if isinstance(value, list) else value
        if isinstance(node.get(last), dict) and isinstance(value, dict):
            node[last].update(value)
        else:
            node[last] = value
    return _lists(root)


def _lists(node: Any) -> Any:
    if isinstance(node, dict):
        node = {k: _lists(v) for k, v in node.items()}
        if node and all(k.isdigit() for k in node):
            return [node[k] for k in sorted(node, key=int)]
        return node
    if isinstance(node, list):
        return [_lists(v) for v in node]
    return node


def _get(tree: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(tree, Mapping):
            return None
        tree = tree.get(part)
    return tree


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _message(raw: Any) -> dict[str, Any]:
    """An OpenInference message (`{"message": {"role", "content", "tool_calls", ...}}`) as an OpenAI one."""
    m = _get(raw, "message") if isinstance(_get(raw, "message"), Mapping) else raw
    m = m if isinstance(m, Mapping) else {}
    content = m.get("content")
    if content is None and isinstance(m.get("contents"), list):
        content = "\n".join(str(_get(c, "message_content", "text") or "") for c in m["contents"]).strip()
    calls = []
    for c in m.get("tool_calls") or []:
        call = _get(c, "tool_call") if isinstance(_get(c, "tool_call"), Mapping) else c
        fn = _get(call, "function") or {}
        calls.append({"id": _get(call, "id"), "function": {"name": fn.get("name"), "arguments": fn.get("arguments")}})
    out: dict[str, Any] = {"role": m.get("role"), "content": content}
    if calls:
        out["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if m.get(key):
            out[key] = m[key]
    return out


def _with_call_ids(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool calls without ids get `call_N`; a tool message without `tool_call_id` answers the
    earliest call not answered yet (instrumentations often leave ids out)."""
    open_calls: list[str] = []
    n = 0
    for m in messages:
        for c in m.get("tool_calls") or []:
            n += 1
            c["id"] = c.get("id") or f"call_{n}"
            open_calls.append(str(c["id"]))
        if m.get("role") == "tool":
            if not m.get("tool_call_id") and open_calls:
                m["tool_call_id"] = open_calls[0]
            if m.get("tool_call_id") in open_calls:
                open_calls.remove(m["tool_call_id"])
    return messages


def _documents(span: Span) -> list[str]:
    docs = _get(nest(span.attributes), "retrieval", "documents")
    out = []
    for d in docs if isinstance(docs, list) else []:
        text = _get(d, "document", "content")
        if isinstance(text, str) and text.strip():
            out.append(text)
    return out


def _reply(span: Span) -> tuple[dict[str, Any] | None, str | None]:
    """An LLM span's reply message (if it lists output messages) and its text."""
    tree = nest(span.attributes)
    outs = _get(tree, "llm", "output_messages")
    if isinstance(outs, list) and outs:
        msg = _message(outs[-1])
        msg["role"] = msg.get("role") or "assistant"
        return msg, _text(msg.get("content")) or ""
    return None, _text(_get(tree, "output", "value"))


def trace_records(spans: Iterable[Span]) -> list[tuple[int | None, dict[str, Any] | InvalidItemError]]:
    """(line of the judged span, input record) per trace, traces in the order their first span came;
    the record is the InvalidItemError saying why when a trace gives no item."""
    traces: dict[str, list[Span]] = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    out: list[tuple[int | None, dict[str, Any] | InvalidItemError]] = []
    for group in traces.values():
        try:
            record = trace_record(group)
            out.append((next((s.line for s in group if s.span_id == record["span_id"]), None), record))
        except InvalidItemError as e:
            out.append((e.line, e))
        except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as e:  # hostile attribute shapes
            first = group[0]
            out.append((first.line, InvalidItemError(
                f"trace {first.trace_id}: its spans cannot be read as an OpenInference trace "
                f"({type(e).__name__}: {str(e)[:200]})", path=first.path, line=first.line, field="attributes",
                item_id=first.trace_id)))
    return out


def cyclic(spans: list[Span]) -> bool:
    """Whether every span's parent is in the trace (so its parents form a cycle and no root can come)."""
    ids = {s.span_id for s in spans}
    return bool(spans) and all(s.parent_id is not None and s.parent_id in ids for s in spans)


def otlp_rows(rows: Iterator[tuple[int, Any]], *, path: str | None = None) -> Iterator[tuple[int, Any]]:
    """The rows of a file; OTLP JSON trace data (one request a line) as one record per trace (read
    whole: a trace's spans may come on several lines)."""
    first = next(rows, None)
    if first is None:
        return
    if not is_otlp(first[1]):
        yield first
        yield from rows
        return
    spans: list[Span] = []
    for line, doc in [first, *rows]:
        try:
            if isinstance(doc, InvalidItemError):
                raise doc
            spans.extend(spans_of(doc, path=path, line=line))
        except InvalidItemError as e:
            yield line, e
    for line, rec in trace_records(spans):
        yield line or 0, rec


def trace_record(spans: list[Span]) -> dict[str, Any]:
    """The record of one trace's spans (see the module docstring)."""
    spans = sorted(spans, key=lambda s: (s.start, s.end))
    ids = {s.span_id for s in spans}
    if cyclic(spans):
        first = spans[0]
        raise InvalidItemError(f"trace {first.trace_id}: its spans' parents form a cycle (every span's parentSpanId "
                               "is a span of the trace), so it has no root; fix the exporter's parent ids",
                               path=first.path, line=first.line, field="parentSpanId", item_id=first.trace_id)
    root = next((s for s in spans if s.parent_id is None or s.parent_id not in ids), spans[0])
    llms = [s for s in spans if s.kind == "LLM" and _reply(s)[1] is not None]
    judged = max(llms, key=lambda s: s.end) if llms else root
    reply, answer = _reply(judged)
    if answer is None or not answer.strip():
        raise InvalidItemError(
            f"trace {root.trace_id}: no answer to judge: no LLM span has output (llm.output_messages or output.value) "
            f"and the root span {root.span_id} ({root.name!r}) has no output.value; export the whole trace, with "
            "its LLM spans' outputs", path=root.path, line=root.line, field="output.value", item_id=root.trace_id)
    record: dict[str, Any] = {"id": judged.trace_id, "trace_id": judged.trace_id, "span_id": judged.span_id,
                              "span_name": judged.name}
    project = judged.resource.get("openinference.project.name")
    if project:
        record["project"] = project
    tools = [s for s in spans if s.kind in TOOL_KINDS and (judged is root or s.start <= judged.end) and s is not judged]
    inputs = _get(nest(judged.attributes), "llm", "input_messages")
    messages = [_message(m) for m in inputs] if isinstance(inputs, list) and judged.kind == "LLM" else []
    if any(m.get("tool_calls") or m.get("role") == "tool" for m in messages + ([reply] if reply else [])):
        record["messages"] = _with_call_ids([*messages, reply or {"role": "assistant", "content": answer}])
        return record
    if any(s.kind == "TOOL" for s in tools):
        record["messages"] = _from_spans(root, tools, answer)
        return record
    question = next((m.get("content") for m in reversed(messages) if m.get("role") == "user" and m.get("content")),
                    None) or _text(_get(nest(root.attributes), "input", "value"))
    docs = [d for s in tools if s.kind == "RETRIEVER" for d in _documents(s)]
    record.update({"answer": answer, **({"question": question} if question else {}), **({"source": docs} if docs else {})})
    return record


def _from_spans(root: Span, tools: list[Span], answer: str) -> list[dict[str, Any]]:
    """A conversation built from the spans themselves: the question, each tool span's call and result."""
    question = _text(_get(nest(root.attributes), "input", "value")) or ""
    out: list[dict[str, Any]] = [{"role": "user", "content": question}] if question else []
    for s in tools:
        tree = nest(s.attributes)
        name = _get(tree, "tool", "name") or s.name or s.kind.lower()
        args = _get(tree, "tool", "parameters") or _get(tree, "input", "value")
        result = "\n\n".join(_documents(s)) if s.kind == "RETRIEVER" else _text(_get(tree, "output", "value")) or ""
        if s.error is not None:
            result = f"{result}\n{s.error}".strip()
        out.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": s.span_id, "function": {"name": str(name), "arguments": args}}]})
        out.append({"role": "tool", "tool_call_id": s.span_id, "name": str(name), "content": result})
    out.append({"role": "assistant", "content": answer})
    return out
