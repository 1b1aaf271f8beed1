"""OTLP JSON trace data read as spans: an exporter's file, a collector's file exporter, a receiver's body.

    for span in read_otlp("traces.jsonl"): ...      # one ExportTraceServiceRequest a line, or one document
    spans = spans_of(request_body, path="POST /v1/traces")

The OTLP JSON encoding: `{"resourceSpans": [{"resource": {"attributes": [...]}, "scopeSpans": [{"spans":
[{"traceId", "spanId", "parentSpanId", "name", "startTimeUnixNano", "endTimeUnixNano", "attributes",
"status"}]}]}]}`, ids as hex, attributes as `{"key", "value": {"stringValue" | "intValue" | "doubleValue" |
"boolValue" | "arrayValue" | "kvlistValue" | "bytesValue"}}`. Each span comes out as a `Span` with plain
attribute values (the flattened keys kept: `llm.input_messages.0.message.role`), its resource's
attributes, and where it was read (file and line). Bad data raises InvalidItemError naming the file,
line, span id and field, and the fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidItemError

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_VALUE_KINDS = ("stringValue", "intValue", "doubleValue", "boolValue", "arrayValue", "kvlistValue", "bytesValue")


@dataclass
class Span:
    """One span of a trace, its attribute values plain."""

    trace_id: str
    span_id: str
    name: str
    parent_id: str | None = None
    start: int = 0
    """Start, in Unix nanoseconds."""
    end: int = 0
    attributes: dict[str, Any] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    """The span's status message when its status is ERROR ("" when it gives none); None otherwise."""
    path: str | None = None
    line: int | None = None

    @property
    def kind(self) -> str:
        """The OpenInference span kind (LLM, RETRIEVER, TOOL, AGENT, CHAIN, ...), upper case; "" if none."""
        return str(self.attributes.get("openinference.span.kind") or "").upper()


def value_of(value: Any, where: str, bad: Any) -> Any:
    """An OTLP AnyValue as a plain value (lists and dicts for arrays and kvlists)."""
    if not isinstance(value, Mapping):
        raise bad(f"{where} must be an AnyValue object such as {{\"stringValue\": \"...\"}}", where)
    kind = next((k for k in _VALUE_KINDS if k in value), None)
    if kind is None:
        return None  # an empty AnyValue is allowed
    v = value[kind]
    if kind == "intValue":
        try:
            return int(v)
        except (TypeError, ValueError):
            raise bad(f"{where}.intValue {v!r} is not an integer (OTLP JSON writes it as a decimal string)",
                      f"{where}.intValue") from None
    if kind == "doubleValue":
        return float(v)
    if kind == "arrayValue":
        items = (v or {}).get("values") or [] if isinstance(v, Mapping) else None
        if not isinstance(items, list):
            raise bad(f"{where}.arrayValue must be {{\"values\": [...]}}", f"{where}.arrayValue")
        return [value_of(x, f"{where}.arrayValue.values[{i}]", bad) for i, x in enumerate(items)]
    if kind == "kvlistValue":
        return attributes_of((v or {}).get("values") if isinstance(v, Mapping) else v, f"{where}.kvlistValue.values", bad)
    return v


def attributes_of(attrs: Any, where: str, bad: Any) -> dict[str, Any]:
    """An OTLP attribute list (`[{"key", "value"}]`) as a dict."""
    if attrs is None:
        return {}
    if not isinstance(attrs, list):
        raise bad(f"{where} must be a list of {{\"key\", \"value\"}} objects", where)
    out: dict[str, Any] = {}
    for i, kv in enumerate(attrs):
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise bad(f"{where}[{i}] must be an object with a string \"key\" and a \"value\"", f"{where}[{i}].key")
        out[kv["key"]] = value_of(kv.get("value"), f"{where}[{i}].value", bad)
    return out


def _id(raw: Any, size: int, what: str, where: str, bad: Any) -> str:
    if not isinstance(raw, str) or len(raw) != size or not _HEX.match(raw):
        raise bad(f"{where} {raw!r} is not a {what} of {size} hex digits; OTLP JSON writes ids as hex strings "
                  "(not base64): export with the OTLP JSON encoding", where)
    return raw.lower()


def spans_of(doc: Any, *, path: str | None = None, line: int | None = None) -> list[Span]:
    """The spans of one OTLP JSON document (an ExportTraceServiceRequest, or a TracesData)."""
    def bad(message: str, fld: str, span: str | None = None) -> InvalidItemError:
        return InvalidItemError(message, path=path, line=line, field=fld, item_id=span)

    if not isinstance(doc, Mapping) or not isinstance(doc.get("resourceSpans"), list):
        raise bad("not OTLP JSON trace data: expected an object with a \"resourceSpans\" list (write the traces "
                  "with an OTLP JSON exporter, one request a line)", "resourceSpans")
    out: list[Span] = []
    for r, rs in enumerate(doc["resourceSpans"]):
        at = f"resourceSpans[{r}]"
        if not isinstance(rs, Mapping):
            raise bad(f"{at} must be an object", at)
        resource = attributes_of((rs.get("resource") or {}).get("attributes"), f"{at}.resource.attributes", bad)
        for s, ss in enumerate(rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []):
            spans = ss.get("spans") if isinstance(ss, Mapping) else None
            for k, raw in enumerate(spans or []):
                out.append(_span(raw, f"{at}.scopeSpans[{s}].spans[{k}]", resource, bad, path, line))
    return out


def _span(raw: Any, at: str, resource: dict[str, Any], bad: Any, path: str | None, line: int | None) -> Span:
    if not isinstance(raw, Mapping):
        raise bad(f"{at} must be a span object", at)
    span_id = _id(raw.get("spanId"), 16, "span id", f"{at}.spanId", bad)

    def bad_here(message: str, fld: str) -> InvalidItemError:
        return bad(f"span {span_id}: {message}", fld, span_id)

    trace_id = _id(raw.get("traceId"), 32, "trace id", f"{at}.traceId", bad_here)
    parent = raw.get("parentSpanId") or None
    if parent is not None:
        parent = _id(parent, 16, "parent span id", f"{at}.parentSpanId", bad_here)
    status = raw.get("status") if isinstance(raw.get("status"), Mapping) else {}
    failed = status.get("code") in (2, "STATUS_CODE_ERROR", "ERROR")
    return Span(trace_id=trace_id, span_id=span_id, parent_id=parent, name=str(raw.get("name") or ""),
                start=_nanos(raw.get("startTimeUnixNano"), f"{at}.startTimeUnixNano", bad_here),
                end=_nanos(raw.get("endTimeUnixNano"), f"{at}.endTimeUnixNano", bad_here),
                attributes=attributes_of(raw.get("attributes"), f"{at}.attributes", bad_here), resource=resource,
                error=str(status.get("message") or "") if failed else None, path=path, line=line)


def _nanos(raw: Any, where: str, bad: Any) -> int:
    if raw is None:
        return 0
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise bad(f"{where} {raw!r} is not a time in Unix nanoseconds", where) from None


def read_otlp(path: str | Path, *, name: str | None = None, start: int = 0, end: int | None = None) -> Iterator[Span]:
    """The spans of an OTLP JSON file: one document a line (what OTLP file exporters write), or one
    document for the whole file. `start`, `end`: read only those bytes (a growing file read on).

    Raises:
        InvalidItemError: naming the file, line, span id and field, and the fix.
    """
    shown = name or str(path)
    with open(path, "rb") as f:
        f.seek(start)
        text = f.read(-1 if end is None else end - start).decode("utf-8", errors="replace")
    first = 1 + (_lines_before(path, start) if start else 0)
    try:
        whole = json.loads(text) if text.lstrip().startswith("{") and "\n{" not in text.strip() else None
    except json.JSONDecodeError:
        whole = None
    if whole is not None:
        yield from spans_of(whole, path=shown, line=first)
        return
    for n, raw in enumerate(text.splitlines(), start=first):
        if not raw.strip():
            continue
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError as e:
            raise InvalidItemError(f"not JSON ({e.msg} at column {e.colno}); an OTLP JSON file holds one "
                                   "ExportTraceServiceRequest object a line", path=shown, line=n,
                                   field="resourceSpans") from None
        yield from spans_of(doc, path=shown, line=n)


def _lines_before(path: str | Path, offset: int) -> int:
    with open(path, "rb") as f:
        return f.read(offset).count(b"\n")


def is_otlp(record: Any) -> bool:
    """Whether a row read from a JSON/JSONL file is OTLP trace data."""
    return isinstance(record, Mapping) and isinstance(record.get("resourceSpans"), list)
