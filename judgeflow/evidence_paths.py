"""Evidence that is not prose: a quote into a JSON tool result by field path, into code by line span.

A tool result is often JSON. A judge may quote a field by its dotted path
(`flights.0.dep = 09:40`, `$.flights[0].dep: "09:40"`), a `"key": value` fragment, or the bare
value; `json_evidence` parses the result (bounded in size and depth: it is untrusted) and finds
the field, checking in code that it holds the quoted value. A result that is code gets the line
span (`[first, last]`, from 1) its quote covers (`code_lines`). Both are checked against the one
message the evidence came from (`traces.attribute`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .quotes import QUOTES, norm
from .spans import locate

#: the largest tool result parsed as JSON, and the deepest nesting walked
MAX_JSON_CHARS, MAX_DEPTH = 500_000, 64
_PATH_QUOTE = re.compile(
    r"^\$?\.?(?P<path>[^\s=:\"'\[\]{}.]+(?:\.[^\s=:\"'\[\]{}.]+|\[\d{1,6}\])*)\s*(?:=|:)\s*(?P<value>.+)$", re.DOTALL)
_KEY_VALUE = re.compile(r"^\s*\"(?P<key>[^\"]{1,200})\"\s*:\s*(?P<value>.+?)\s*,?\s*$", re.DOTALL)
_CODE_LINE = re.compile(r"^\s{2,}\S|[;{}]\s*$|^\s*(?:def|class|import|from|function|const|let|var|return|if|for|"
                        r"while|#include|public|private|SELECT|select)\b")


def parse_json(text: str) -> Any:
    """A tool result's JSON value, or None (not JSON, too large, too deep)."""
    body = text.strip()
    if not body or body[0] not in "{[" or len(body) > MAX_JSON_CHARS:
        return None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def resolve(data: Any, path: str) -> tuple[bool, Any]:
    """(True, the value) at a dotted path (`a.0.b`, `a[0].b`), or (False, None)."""
    node = data
    for part in [p for p in re.split(r"\.|\[(\d+)\]", path) if p]:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def _leaves(value: Any, path: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    stack = [(value, path, depth)]
    while stack:
        node, at, d = stack.pop()
        if d > MAX_DEPTH:
            continue
        if isinstance(node, dict):
            stack.extend((v, f"{at}.{k}" if at else str(k), d + 1) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, f"{at}.{i}" if at else str(i), d + 1) for i, v in reversed(list(enumerate(node))))
        else:
            out.append((at, node))
    return out


def same(value: Any, quoted: str) -> bool:
    """Whether a JSON scalar is the quoted value (quotes, case and spacing ignored; numbers by value)."""
    q = norm(quoted).strip(QUOTES + " ,")
    if isinstance(value, bool) or value is None:
        return q == json.dumps(value)
    if isinstance(value, (int, float)):
        try:
            return float(q.replace(",", "")) == float(value)
        except ValueError:
            return False
    return norm(str(value)) == q


def _path(path: str) -> str:
    return re.sub(r"\[(\d+)\]", r".\1", path).lstrip("$.")


def json_evidence(quote: str, data: Any) -> tuple[str, bool] | None:
    """(dotted path, whether it holds the quoted value) for a quote into parsed JSON, or None when the
    quote names no field: a path form, a `"key": value` fragment, or a value some field holds."""
    quote = quote.strip()
    m = _PATH_QUOTE.match(quote)
    if m and not quote.startswith('"'):
        ok, value = resolve(data, _path(m.group("path")))
        if ok:
            return _path(m.group("path")), not isinstance(value, (dict, list)) and same(value, m.group("value"))
    leaves = _leaves(data)
    kv = _KEY_VALUE.match(quote)
    if kv:
        key = kv.group("key")
        hits = [p for p, v in leaves if p.rsplit(".", 1)[-1] == key and same(v, kv.group("value"))]
        named = [p for p, _ in leaves if p.rsplit(".", 1)[-1] == key]
        if hits or named:
            return (hits[0], True) if hits else (named[0], False)
    hits = [p for p, v in leaves if same(v, quote)]
    if not hits and len(norm(quote)) >= 4:
        hits = [p for p, v in leaves if isinstance(v, str) and norm(quote).strip(QUOTES) in norm(v)]
    return (hits[0], True) if hits else None


def looks_like_code(text: str) -> bool:
    """A code fence, or several lines of which at least a third look like code."""
    if "```" in text:
        return True
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) >= 2 and sum(bool(_CODE_LINE.search(line)) for line in lines) * 3 >= len(lines)


def code_lines(quote: str, text: str) -> list[int] | None:
    """[first, last] line (from 1) of `text` the quote covers, or None when it is not there."""
    span = locate(quote, text)
    if span is None:
        return None
    return [text.count("\n", 0, span[0]) + 1, text.count("\n", 0, max(span[1] - 1, span[0])) + 1]


def tool_result(body: str) -> str | None:
    """The result part of a tool message's evidence document (after "returned:"), else None."""
    head, sep, result = body.partition("returned:\n")
    return result if sep and head.startswith("called ") else None


def structured(quote: str, body: str) -> dict[str, Any]:
    """What a quote into a tool message's result adds to its claim: `evidence_path` (and whether the
    field holds the value: `evidence_found`) for JSON, `evidence_lines` for code; {} otherwise."""
    result = tool_result(body)
    if result is None or not quote.strip():
        return {}
    data = parse_json(result)
    if data is not None:
        found = json_evidence(quote, data)
        return {"evidence_path": found[0], "evidence_found": found[1]} if found else {}
    if looks_like_code(result):
        lines = code_lines(quote, result)
        return {"evidence_lines": lines} if lines else {}
    return {}


def json_members(text: str, limit: int | None = None) -> list[str] | None:
    """The top-level members of a JSON object or array as they are written in `text` (`"key": value`,
    or an element), each whole; a member longer than `limit` holding an object or array is opened in
    turn (its opening, then its members), so every object that fits stays whole. None when `text`
    is not one JSON object or array (or too large)."""
    s = text.strip()
    if parse_json(s) is None:
        return None
    return _members(s, 0, limit, 0)


def _members(s: str, at: int, limit: int | None, depth: int) -> list[str]:
    """The members of the JSON container opening at `s[at]`, as written (see `json_members`)."""
    decoder = json.JSONDecoder()
    out, i, is_object = [], at + 1, s[at] == "{"

    def skip(k: int) -> int:
        while k < len(s) and (s[k].isspace() or s[k] == ","):
            k += 1
        return k

    while (i := skip(i)) < len(s) and s[i] not in "]}":
        start = i
        if is_object:
            _, i = decoder.raw_decode(s, i)
            while s[i].isspace() or s[i] == ":":
                i += 1
        value_at = i
        _, i = decoder.raw_decode(s, i)
        if limit and i - start > limit and s[value_at] in "[{" and depth < MAX_DEPTH:
            out.append(s[start:value_at + 1])
            out.extend(_members(s, value_at, limit, depth + 1))
        else:
            out.append(s[start:i])
    return out


_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)


def blocks(text: str, limit: int | None = None) -> list[tuple[str, bool]]:
    """`text` as (block, keep whole) in reading order, for cutting into passages: prose paragraphs
    (False: split at sentences), each fenced code block, each paragraph of a code tool result and
    each member of a JSON one (True: never split; a member longer than `limit` opened, `json_members`)."""
    head, result = text, ""
    cut = text.find("returned:\n")
    if cut >= 0 and tool_result(text[text.find("\n") + 1:] if text.startswith("[") else text) is not None:
        head, result = text[:cut + len("returned:\n")], text[cut + len("returned:\n"):]
    members = json_members(result or head, limit) if (result or head).strip()[:1] in ("{", "[") else None
    if members is not None:
        return ([(p, False) for p in re.split(r"\n\s*\n", head) if p.strip()] if result else []) + \
            [(m, True) for m in members]
    if result and looks_like_code(result) and "```" not in result:
        return [(p, False) for p in re.split(r"\n\s*\n", head) if p.strip()] + \
            [(p, True) for p in re.split(r"\n\s*\n", result) if p.strip()]
    out: list[tuple[str, bool]] = []
    at = 0
    for m in _FENCE.finditer(text):
        out += [(p, False) for p in re.split(r"\n\s*\n", text[at:m.start()])]
        out.append((m.group(0), True))
        at = m.end()
    return out + [(p, False) for p in re.split(r"\n\s*\n", text[at:])]
