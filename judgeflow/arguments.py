"""Tool-call arguments as claims: each concrete value an agent passed traced, in code, to where it came from.

A wrong date or an invented id passed to a tool is the agent-era hallucination. For a trace judged
by a criterion with an `ungrounded` role (`trace_grounding`), every concrete argument value of
every tool call (a date, a number, a string holding a digit or an @: ids, codes, flight numbers,
e-mail addresses) is looked up in the messages before the call: the user turns, the tool results,
the system prompt and the spec. The match is normalised (case, spacing and punctuation for ids;
the same number however written; the same calendar date however written, a date without a year
matching any year). A value found is recorded with the message and the words that state it
(`Judgment.arguments`); a value found nowhere is a claim with the `ungrounded` verdict, an error,
naming the value. Values an agent chooses rather than takes from the conversation (booleans,
free-text queries, words without digits, `limit`/`page`/`top_k`-like numbers) are not traced.

The trace's claims about actions are also held to the trace in code (`check_actions`): a claim of
kind "action" that a judge calls supported needs its evidence in a tool message (else no call
made it), and a supported claim citing a tool result needs its quote in that result (else the
tool never returned it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from .results import ClaimResult
from .spans import locate
from .text import numbers

#: numbers an agent picks for itself, not facts of the conversation
CONTROL_KEYS = frozenset({"limit", "top_k", "k", "n", "page", "offset", "max_results", "count", "timeout",
                          "temperature", "per_page", "page_size", "size", "max_tokens", "num_results", "top_n"})
#: bounds on one call's arguments (untrusted text): nesting, values traced, characters of a value
MAX_DEPTH, MAX_VALUES, MAX_CHARS = 20, 200, 300
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MON = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_ISO = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_MDY = re.compile(_MON + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?", re.IGNORECASE)
_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MON + r"(?:,?\s+(\d{4}))?", re.IGNORECASE)
_TIME = re.compile(r"T?(\d{1,2}):(\d{2})")


def dates(text: str) -> list[tuple[int | None, int, int, str]]:
    """The calendar dates a text states, as (year or None, month, day, the words)."""
    out: list[tuple[int | None, int, int, str]] = []
    for m in _ISO.finditer(text):
        out.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(0)))
    for m in _MDY.finditer(text):
        out.append((int(m.group(3)) if m.group(3) else None, _MONTHS.index(m.group(1).lower()) + 1,
                    int(m.group(2)), m.group(0)))
    for m in _DMY.finditer(text):
        out.append((int(m.group(3)) if m.group(3) else None, _MONTHS.index(m.group(2).lower()) + 1,
                    int(m.group(1)), m.group(0)))
    return out


def leaves(value: Any, path: str = "", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every scalar in a parsed JSON value (lists by index), bounded in depth."""
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}" if path else str(k), depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}.{i}" if path else str(i), depth + 1)
    else:
        yield path, value


def concrete(path: str, value: Any) -> bool:
    """Whether a value is a fact the agent should have taken from the conversation (see the module doc)."""
    key = path.rsplit(".", 1)[-1].lower()
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return key not in CONTROL_KEYS
    if isinstance(value, str):
        s = value.strip()
        return 0 < len(s) <= MAX_CHARS and (any(ch.isdigit() for ch in s) or "@" in s)
    return False


def _alnum(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def found_in(value: Any, text: str) -> str | None:
    """The words of `text` that state `value` (normalised match), or None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        shown = format(value, "g") if isinstance(value, float) else str(value)
        if shown in numbers(text) or str(value) in numbers(text):
            span = locate(shown, text)
            return text[span[0]:span[1]] if span else shown
        return None
    s = str(value).strip()
    span = locate(s, text)
    if span:
        return text[span[0]:span[1]]
    wanted = dates(s)
    if wanted and (wanted[0][3] == s or _ISO.match(s)):  # the value is a date (maybe with a time)
        return _same_date(wanted[0], s, text)
    if len(_alnum(s)) >= 3 and _alnum(s) in _alnum(text):
        return s
    return None


def _same_date(want: tuple[int | None, int, int, str], value: str, text: str) -> str | None:
    """The words of `text` stating the date `want` (a date without a year matches any year); a time in
    the value (`T10:30`) must be in the text too."""
    year, month, day, words = want
    time = _TIME.search(value[len(words):])
    if time and time.group(0).lstrip("T") != "00:00" and f"{int(time.group(1))}:{time.group(2)}" not in text:
        return None
    for y, mo, d, said in dates(text):
        if mo == month and d == day and (y is None or year is None or y == year):
            return said
    return None


def trace_arguments(messages: Sequence[Any], spec: str | None) -> list[dict[str, Any]]:
    """Every concrete argument value of every call in `messages`, each traced to an earlier message."""
    earlier: list[tuple[str, str]] = [("spec", spec)] if spec else []
    out: list[dict[str, Any]] = []
    for m in messages:
        for call in m.calls if m.role == "assistant" else []:
            try:
                args = json.loads(call.arguments) if call.arguments.strip() else {}
            except json.JSONDecodeError:
                args = {"arguments": call.arguments}
            for path, value in list(leaves(args))[:MAX_VALUES]:
                if not concrete(path, value):
                    continue
                hit = next(((label, q) for label, text in earlier if (q := found_in(value, text)) is not None), None)
                out.append({"call": call.id, "tool": call.name, "path": path, "value": value,
                            "grounded": hit is not None, "cited": hit[0] if hit else None,
                            "quote": hit[1] if hit else None, "message": m.label})
        if m.role in ("user", "tool", "system") and m.text.strip():
            earlier.append((m.label, m.text))
    return out


def ground_arguments(claims: Sequence[ClaimResult], item: Any, criterion: Any,
                     ) -> tuple[list[ClaimResult], list[dict[str, Any]] | None]:
    """A trace's claims with its action claims held to the trace (`check_actions`) and one claim per
    ungrounded argument value (ids a1, a2, ...), and every traced value; (claims, None) when the
    criterion has no `ungrounded` role or the item is not a trace."""
    verdict = criterion.evidence_roles().get("ungrounded")
    if verdict is None or item.messages is None:
        return list(claims), None
    claims = check_actions(claims, criterion)
    traced = trace_arguments(item.messages, item.spec)
    added = []
    for n, a in enumerate((a for a in traced if not a["grounded"]), 1):
        shown = json.dumps(a["value"], ensure_ascii=False)
        added.append(ClaimResult(
            id=f"a{n}", kind="date" if isinstance(a["value"], str) and dates(a["value"]) else
            "number" if isinstance(a["value"], (int, float)) else "other",
            text=f"{a['tool']} ({a['call']}) was called with {a['path']} = {shown}",
            verdict=verdict, error=True, basis="none", cited=a["message"],
            evidence=f"[{a['message']}] {a['tool']}({a['path']}={shown})",
            reason=f"the argument {a['path']} = {shown} is stated by no earlier user turn, tool result or the spec; "
                   "decided in code"))
    return [*claims, *added], traced or None


def check_actions(claims: Sequence[ClaimResult], criterion: Any) -> list[ClaimResult]:
    """Supported claims held to the trace in code: an action needs a tool message as its evidence
    (else: a call the answer claims but never made), and a quote from a tool result must be in it
    (else: a result the tool never returned). Either gets the criterion's `missing` verdict."""
    roles = criterion.verdict_roles()
    out = []
    for c in claims:
        why = None
        if c.verdict == roles["pass"] and c.kind == "action" and not (c.cited or "").startswith(("tool ", "call ")):
            why = f"claims an action no tool call in the trace made (its evidence: {c.cited or 'none'})"
        elif c.verdict == roles["pass"] and (c.cited or "").startswith("tool ") and c.evidence_found is False:
            why = f"cites a result {c.cited} never returned (the quote is not in it)"
        out.append(c if why is None else c.model_copy(update={
            "verdict": roles["missing"], "error": roles["missing"] in criterion.error_verdicts,
            "reason": f"{why}; decided in code. {c.reason}".strip()}))
    return out
