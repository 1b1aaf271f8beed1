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
from .bounded import loads

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


#: levels an AnyValue may nest (arrays and kvlists in arrays); deeper is an invalid span
MAX_VALUE_DEPTH = 16


def value_of(value: Any, where: str, bad: Any, depth: int = 0) -> Any:
    """An OTLP AnyValue as a plain value (lists and dicts for arrays and kvlists)."""
    if not isinstance(value, Mapping):
        raise bad(f"{where} must be an AnyValue object such as {{\"stringValue\": \"...\"}}", where)
    if depth > MAX_VALUE_DEPTH:
        raise bad(f"{where} nests arrays or kvlists more than {MAX_VALUE_DEPTH} deep", where)
    kind = next((k for k in _VALUE_KINDS if k in value), None)
    if kind is None:
        return None  # an empty AnyValue is allowed
    v = value[kind]
    if kind == "intValue":
        try:
            return int(v)
        except (TypeError, ValueError):
            raise bad(f"{where}.intValue {str(v)[:80]!r} is not an integer (OTLP JSON writes it as a decimal string)",
                      f"{where}.intValue") from None
    if kind == "doubleValue":
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            raise bad(f"{where}.doubleValue {str(v)[:80]!r} is not a number", f"{where}.doubleValue")
        try:
            return float(v)
        except ValueError:
            raise bad(f"{where}.doubleValue {v[:80]!r} is not a number (a JSON number, or \"NaN\", "
                      "\"Infinity\")", f"{where}.doubleValue") from None
    if kind == "arrayValue":
        items = (v or {}).get("values") or [] if isinstance(v, Mapping) else None
        if not isinstance(items, list):
            raise bad(f"{where}.arrayValue must be {{\"values\": [...]}}", f"{where}.arrayValue")
        return [value_of(x, f"{where}.arrayValue.values[{i}]", bad, depth + 1) for i, x in enumerate(items)]
    if kind == "kvlistValue":
        return attributes_of((v or {}).get("values") if isinstance(v, Mapping) else v, f"{where}.kvlistValue.values",
                             bad, depth + 1)
    if kind in ("stringValue", "bytesValue") and v is not None and not isinstance(v, str):
        raise bad(f"{where}.{kind} must be a string", f"{where}.{kind}")
    if kind == "boolValue" and v is not None and not isinstance(v, bool):
        raise bad(f"{where}.boolValue must be true or false", f"{where}.boolValue")
    return v


def attributes_of(attrs: Any, where: str, bad: Any, depth: int = 0) -> dict[str, Any]:
    """An OTLP attribute list (`[{"key", "value"}]`) as a dict."""
    if attrs is None:
        return {}
    if not isinstance(attrs, list):
        raise bad(f"{where} must be a list of {{\"key\", \"value\"}} objects", where)
    out: dict[str, Any] = {}
    for i, kv in enumerate(attrs):
        if not isinstance(kv, Mapping) or not isinstance(kv.get("key"), str):
            raise bad(f"{where}[{i}] must be an object with a string \"key\" and a \"value\"", f"{where}[{i}].key")
        out[kv["key"]] = value_of(kv.get("value"), f"{where}[{i}].value", bad, depth)
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
        res = rs.get("resource") or {}
        if not isinstance(res, Mapping):
            raise bad(f"{at}.resource must be an object with \"attributes\"", f"{at}.resource")
        resource = attributes_of(res.get("attributes"), f"{at}.resource.attributes", bad)
        scopes = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []
        if not isinstance(scopes, list):
            raise bad(f"{at}.scopeSpans must be a list of {{\"spans\": [...]}} objects", f"{at}.scopeSpans")
        for s, ss in enumerate(scopes):
            spans = ss.get("spans") if isinstance(ss, Mapping) else None
            if spans is not None and not isinstance(spans, list):
                raise bad(f"{at}.scopeSpans[{s}].spans must be a list of span objects", f"{at}.scopeSpans[{s}].spans")
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
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(-1 if end is None else end - start)
    first = 1 + (_lines_before(path, start) if start else 0)
    for got in otlp_text(data.decode("utf-8", errors="replace"), name=name or str(path), first=first):
        if isinstance(got, InvalidItemError):
            raise got
        yield got


def otlp_text(text: str, *, name: str, first: int = 1) -> Iterator[Span | InvalidItemError]:
    """The spans of OTLP JSON text (one document a line, or one for the whole text), a line that
    cannot be read given as its InvalidItemError (naming file and line) and the reading going on:
    bounded in depth (`io/bounded.py`), never an exception."""
    whole: Any = None
    if text.lstrip().startswith("{") and "\n{" not in text.strip():
        try:
            whole = loads(text)
        except ValueError:
            whole = None
    if whole is not None:
        yield from _spans_or_error(whole, name, first)
        return
    for n, raw in enumerate(text.splitlines(), start=first):
        if not raw.strip():
            continue
        try:
            doc = loads(raw)
        except ValueError as e:
            msg = f"{e.msg} at column {e.colno}" if isinstance(e, json.JSONDecodeError) else str(e)
            yield InvalidItemError(f"not JSON ({msg}); an OTLP JSON file holds one ExportTraceServiceRequest "
                                   "object a line", path=name, line=n, field="resourceSpans")
            continue
        yield from _spans_or_error(doc, name, n)


def _spans_or_error(doc: Any, name: str, line: int) -> Iterator[Span | InvalidItemError]:
    try:
        spans: list[Span | InvalidItemError] = list(spans_of(doc, path=name, line=line))
    except InvalidItemError as e:
        spans = [e]
    except (TypeError, ValueError, AttributeError, RecursionError) as e:  # a shape no check above foresaw
        spans = [InvalidItemError(f"not readable as OTLP JSON trace data ({type(e).__name__}: {str(e)[:200]})",
                                  path=name, line=line, field="resourceSpans")]
    yield from spans


def _lines_before(path: str | Path, offset: int) -> int:
    with open(path, "rb") as f:
        return f.read(offset).count(b"\n")


def is_otlp(record: Any) -> bool:
    """Whether a row read from a JSON/JSONL file is OTLP trace data."""
    return isinstance(record, Mapping) and isinstance(record.get("resourceSpans"), list)
