"""Agent traces and conversations: one reader from a message list to the item under judgement.

A row with `messages` (or a LangSmith run tree) is a conversation. Its formats are:

- OpenAI chat: `{"role": "assistant", "tool_calls": [{"id", "function": {"name", "arguments"}}]}`,
  `{"role": "tool", "tool_call_id": ..., "content": ...}`;
- Anthropic: `{"role": "assistant", "content": [{"type": "tool_use", "id", "name", "input"}]}`,
  `{"role": "user", "content": [{"type": "tool_result", "tool_use_id", "content", "is_error"}]}`;
- LangChain: dicts as `messages_to_dict` writes them (`{"type": "ai", "data": {...}}`) or the
  message objects themselves (`AIMessage`, `ToolMessage`, ...);
- a LangSmith run tree (`run_type`, `inputs`, `outputs`, `child_runs`): see `langsmith_messages`.

Every format becomes the same labelled messages (`TraceMessage`: "user turn 1",
"tool get_weather, call_1", ...). The text under judgement is an assistant turn (the last one by
default; `turns="all"` gives one item per assistant turn, judged against what came before it), and
the evidence is every message before it, one labelled document each (tool results with the call's
arguments and status, earlier user and assistant turns; the system prompt only if asked).
`attribute` then names, for each checked claim, the message its evidence quote came from, and
checks the quote against that message alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from .evidence_paths import structured
from .grounding import TOOL as GROUNDING_TOOL
from .grounding import evidence as grounding_evidence
from .quotes import quote_in
from .results import ClaimResult

Role = Literal["system", "user", "assistant", "tool"]
Turns = Literal["last", "all"]
TRACE_KEYS = ("messages", "child_runs", "run_type")
_ROLES = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "AIMessageChunk": "assistant",
    "tool": "tool",
    "function": "tool",
}
_HEADER = re.compile(r"^\[([^\]\n]{1,120})\]\n")
_CITED = re.compile(r"^\[([^\]\n]{1,120})\]\s*")
_PASSAGE = re.compile(r"^document (\d+), passage \d+$", re.IGNORECASE)


class TraceError(ValueError):
    """A malformed trace: `field` names the offending place (e.g. `messages[3].tool_call_id`)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class ToolCall(BaseModel):
    """A tool call an assistant message made."""

    id: str
    name: str
    arguments: str = ""
    """The arguments as JSON (keys sorted), whatever form the trace gave them in."""


class TraceMessage(BaseModel):
    """One message of a conversation, in judgeflow's own form (the same for every input format)."""

    label: str
    """How prompts and reasons name it: "user turn 1", "assistant turn 2", "tool get_weather, call_1"."""
    role: Role
    text: str = ""
    turn: int | None = None
    """Conversation turn (user and assistant messages with text, counted from 1); None for tools."""
    calls: list[ToolCall] = []
    """Tool calls made by an assistant message."""
    tool: str | None = None
    call_id: str | None = None
    failed: bool = False
    """A tool result the trace marks as an error (Anthropic `is_error`, LangChain `status="error"`)."""

    def document(self, arguments: str = "") -> str:
        """The message as one evidence document, headed by its label."""
        if self.role != "tool":
            return f"[{self.label}]\n{self.text}"
        called = f"called {self.tool} with {arguments or '{}'}\n"
        status = "status: error\n" if self.failed else ""
        return f"[{self.label}]\n{called}{status}returned:\n{self.text}"


def is_trace(record: Mapping[str, Any]) -> bool:
    """Whether a row is a conversation: a `messages` list, or a LangSmith run (tree)."""
    msgs = record.get("messages")
    return (isinstance(msgs, Sequence) and not isinstance(msgs, str) and len(msgs) > 0) or (
        "run_type" in record and ("inputs" in record or "child_runs" in record)
    )


# ----- formats -> raw messages (role, text, calls, call_id, tool, failed) ----------------------------


def content_text(content: Any, where: str) -> str:
    """Text of a content field: a string, or a list of parts/blocks (text parts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, Sequence):
        raise TraceError(
            f"{where} must be a string or a list of content blocks, got {type(content).__name__}",
            where,
        )
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif (
            isinstance(block, Mapping) and block.get("type") == "document"
        ):  # Anthropic document block
            parts.append(content_text((block.get("source") or {}).get("data"), where))
    return "\n".join(p for p in parts if p)


def tool_arguments(args: Any) -> str:
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return args
    return json.dumps(args if args is not None else {}, ensure_ascii=False, sort_keys=True)


def _call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, Mapping):
        raise TraceError(f"{where} must be an object with an id and a name", where)
    fn = (
        raw.get("function") if isinstance(raw.get("function"), Mapping) else raw
    )  # OpenAI nests the call
    name = fn.get("name")
    call_id = raw.get("id")
    if not isinstance(name, str) or not name:
        raise TraceError(
            f'{where} has no tool name; give "name" (or "function": {{"name": ...}})',
            f"{where}.name",
        )
    if not call_id:
        raise TraceError(
            f'{where} ({name}) has no "id"; a tool result refers to its call by this id',
            f"{where}.id",
        )
    args = fn.get("arguments", fn.get("args", fn.get("input")))
    return ToolCall(id=str(call_id), name=name, arguments=tool_arguments(args))


def _blocks(role: str, content: Any, where: str) -> list[dict[str, Any]]:
    """Anthropic-style content: tool_use blocks become calls, tool_result blocks tool messages."""
    blocks = content if isinstance(content, list) else []
    uses = [
        (i, b)
        for i, b in enumerate(blocks)
        if isinstance(b, Mapping) and b.get("type") == "tool_use"
    ]
    results = [
        (i, b)
        for i, b in enumerate(blocks)
        if isinstance(b, Mapping) and b.get("type") == "tool_result"
    ]
    plain = [
        b
        for b in blocks
        if not (isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result"))
    ]
    out: list[dict[str, Any]] = []
    for i, b in results:
        here = f"{where}.content[{i}]"
        if not b.get("tool_use_id"):
            raise TraceError(
                f'{here} (tool_result) has no "tool_use_id"; give the id of the tool_use it answers',
                f"{here}.tool_use_id",
            )
        out.append(
            {
                "role": "tool",
                "text": content_text(b.get("content"), f"{here}.content"),
                "call_id": str(b["tool_use_id"]),
                "failed": bool(b.get("is_error")),
                "where": f"{here}.tool_use_id",
            }
        )
    text = content_text(plain if isinstance(content, list) else content, f"{where}.content")
    calls = [_call(b, f"{where}.content[{i}]") for i, b in uses]
    if text or calls or not out:
        out.append({"role": role, "text": text, "calls": calls})
    return out


def _langchain(msg: Any) -> dict[str, Any]:
    """A LangChain message (object or `messages_to_dict` dict) as an OpenAI-like dict."""
    if isinstance(msg, Mapping):
        kind, data = msg.get("type"), dict(msg.get("data") or {})
    else:
        kind = getattr(msg, "type", None)
        data = {
            k: getattr(msg, k, None)
            for k in (
                "content",
                "tool_calls",
                "tool_call_id",
                "name",
                "status",
                "response_metadata",
            )
        }
    calls = [
        {"id": c.get("id"), "name": c.get("name"), "args": c.get("args")}
        for c in (data.get("tool_calls") or [])
        if isinstance(c, Mapping)
    ]
    meta = (
        data.get("response_metadata") if isinstance(data.get("response_metadata"), Mapping) else {}
    )
    return {
        "role": kind,
        "content": data.get("content"),
        "tool_calls": calls,
        "tool_call_id": data.get("tool_call_id"),
        "name": data.get("name"),
        "failed": data.get("status") == "error",
        "grounding_metadata": meta.get("grounding_metadata"),
    }  # langchain-google-genai keeps it there


def raw_messages(msg: Any, where: str) -> list[dict[str, Any]]:
    """One input message (any format) as raw messages (an Anthropic user message may hold several)."""
    if not isinstance(msg, Mapping) or ("data" in msg and "type" in msg and "role" not in msg):
        if not isinstance(msg, Mapping) and not hasattr(msg, "content"):
            raise TraceError(
                f"{where} must be a message object (role and content), got {type(msg).__name__}",
                where,
            )
        msg = _langchain(msg)
    role = _ROLES.get(str(msg.get("role")))
    if role is None:
        raise TraceError(
            f"{where} has role {msg.get('role')!r}; use one of: system, user, assistant, tool "
            "(or LangChain types human, ai, tool)",
            f"{where}.role",
        )
    if role == "tool":
        call_id = msg.get("tool_call_id") or (
            msg.get("name") if msg.get("role") == "function" else None
        )
        if not call_id:
            raise TraceError(
                f'{where} is a tool message without "tool_call_id"; give the id of the call it answers',
                f"{where}.tool_call_id",
            )
        return [
            {
                "role": "tool",
                "text": content_text(msg.get("content"), f"{where}.content"),
                "call_id": str(call_id),
                "tool": msg.get("name"),
                "failed": bool(msg.get("failed")),
                "where": f"{where}.tool_call_id",
            }
        ]
    out = _blocks(role, msg.get("content", msg.get("parts")), where)  # Gemini: "parts"
    grounded = grounding_evidence(msg, out[-1]["text"]) if role == "assistant" else None
    if grounded:  # the provider's search results, as the tool message the reply rests on
        out.insert(
            len(out) - 1,
            {"role": "tool", "text": grounded, "call_id": "grounding", "tool": GROUNDING_TOOL},
        )
    calls = msg.get("tool_calls") or []
    if not isinstance(calls, list):
        raise TraceError(f"{where}.tool_calls must be a list", f"{where}.tool_calls")
    made = [_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)]
    legacy = msg.get(
        "function_call"
    )  # OpenAI's older single function call, answered by role "function"
    if isinstance(legacy, Mapping):
        made.append(_call({"id": legacy.get("name"), "function": legacy}, f"{where}.function_call"))
    known = {
        c.id for c in out[-1].get("calls", [])
    }  # LangChain keeps tool_use blocks AND tool_calls
    out[-1]["calls"] = [*out[-1].get("calls", []), *(c for c in made if c.id not in known)]
    return out


def read_messages(
    messages: Any, *, field: str = "messages", system: str | None = None
) -> list[TraceMessage]:
    """Any supported message list -> labelled `TraceMessage`s (`system`: a system prompt given apart,
    as Anthropic's API takes it).

    Raises:
        TraceError: naming the message and field, and the fix.
    """
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise TraceError(
            f"{field} must be a list of messages, got {type(messages).__name__}", field
        )
    raw = [{"role": "system", "text": system, "calls": []}] if system else []
    raw += [r for i, m in enumerate(messages) for r in raw_messages(m, f"{field}[{i}]")]
    return label_messages(raw, field)


def label_messages(raw: list[dict[str, Any]], field: str) -> list[TraceMessage]:
    names: dict[str, str] = {}
    out: list[TraceMessage] = []
    turn = 0
    for r in raw:
        if r["role"] == "tool":
            tool = r.get("tool") or names.get(r["call_id"])
            if tool is None:
                where = r.get("where", field)
                raise TraceError(
                    f"{where.rpartition('.')[0] or where} answers call id {r['call_id']!r}, which no "
                    "earlier assistant message made; give the assistant's tool call (or the tool's "
                    '"name")',
                    where,
                )
            out.append(
                TraceMessage(
                    label=f"tool {tool}, {r['call_id']}",
                    role="tool",
                    text=r["text"],
                    tool=tool,
                    call_id=r["call_id"],
                    failed=r.get("failed", False),
                )
            )
            continue
        names.update({c.id: c.name for c in r.get("calls", [])})
        has_text = bool(r["text"].strip())
        if has_text and r["role"] != "system":
            turn += 1
        label = (
            "system prompt"
            if r["role"] == "system"
            else f"{r['role']} turn {turn}"
            if has_text
            else f"{r['role']} tool calls"
        )
        out.append(
            TraceMessage(
                label=label,
                role=r["role"],
                text=r["text"],
                calls=r.get("calls", []),
                turn=turn if has_text and r["role"] != "system" else None,
            )
        )
    return out


# ----- messages -> the items to judge -------------------------------------------------------------


def evidence(
    messages: Sequence[TraceMessage], *, system: bool = False, shared: dict[Any, str] | None = None
) -> list[str]:
    """The evidence documents from these messages: each labelled; tool results with their call's
    arguments; a call no result answers, as such; the system prompt only when asked.

    `shared`: documents already made for this conversation (one dict per conversation, filled
    here), so the items of its turns share each document instead of copying it (`turns="all"`)."""
    memo: dict[Any, str] = {} if shared is None else shared
    args = {c.id: c.arguments for m in messages for c in m.calls}
    answered = {m.call_id for m in messages if m.role == "tool"}
    docs = []
    for i, m in enumerate(messages):
        if m.role == "system" and not system:
            continue
        if m.text.strip() or m.role == "tool":
            arg = args.get(m.call_id or "", "")
            doc = memo.get((i, arg))
            docs.append(doc if doc is not None else memo.setdefault((i, arg), m.document(arg)))
        for c in m.calls:
            if c.id not in answered:
                doc = memo.get(("call", c.id, c.name, c.arguments))
                docs.append(
                    doc
                    if doc is not None
                    else memo.setdefault(
                        ("call", c.id, c.name, c.arguments),
                        f"[call {c.name}, {c.id}]\ncalled {c.name} with {c.arguments}\nno result in the trace",
                    )
                )
    return docs


def judged_turns(messages: Sequence[TraceMessage], turns: Turns = "last") -> list[int]:
    """Indexes of the assistant messages to judge: the last with text, or every one with text."""
    found = [i for i, m in enumerate(messages) if m.role == "assistant" and m.text.strip()]
    return found if turns == "all" else found[-1:]


#: with `--turns all`, each turn's evidence is its most recent documents up to this many characters
#: (whole documents; at least the newest one), so a conversation's evidence text grows linearly in
#: its turns, not quadratically; the last turn alone (`--turns last`) keeps all of it
TURN_EVIDENCE_CHARS = 50_000


def recent(docs: list[str], limit: int) -> list[str]:
    """The newest of `docs` whose sizes together stay within `limit` (the newest always kept)."""
    kept: list[str] = []
    size = 0
    for d in reversed(docs):
        if kept and size + len(d) > limit:
            break
        kept.append(d)
        size += len(d)
    return kept[::-1]


def trace_fields(
    messages: Sequence[TraceMessage],
    at: int | None,
    *,
    system: bool = False,
    shared: dict[Any, str] | None = None,
    window: int | None = None,
) -> dict[str, Any]:
    """The item fields for judging message `at` (None: an answer given apart, judged against all).
    The messages (and, with `shared`, the evidence documents) are the conversation's own objects,
    shared by the items of its turns, never copied per item. `window`: keep only the most recent
    documents up to that many characters (`recent`; `--turns all` gives TURN_EVIDENCE_CHARS)."""
    before = list(messages if at is None else messages[:at])
    users = [m for m in before if m.role == "user" and m.text.strip()]
    docs = evidence(before, system=system, shared=shared)
    fields: dict[str, Any] = {
        "source": docs if window is None else recent(docs, window),
        "messages": before,
    }
    if at is not None:
        fields["answer"] = messages[at].text
    if users:
        fields["question"] = users[-1].text
    return fields


# ----- which message a claim's evidence came from -------------------------------------------------


def split_document(doc: str) -> tuple[str | None, str]:
    """(label, body) of an evidence document written by `evidence`; (None, doc) for an unlabelled one."""
    m = _HEADER.match(doc)
    return (m.group(1), doc[m.end() :]) if m else (None, doc)


def attribute(claims: Sequence[ClaimResult], source: Sequence[str]) -> list[ClaimResult]:
    """Name the message each claim's evidence came from (`cited`), and check the quote against it.

    The message is the one the evidence cites (`[tool get_weather, call_1] ...`, or a passage
    citation `[document 3, passage 1] ...`), else the one whose text holds the quote. The quote is
    then checked against that message alone (`evidence_found`), and the reason names it.
    """
    docs = [split_document(d) for d in source]
    out = []
    for c in claims:
        m = _CITED.match(c.evidence or "")
        quote = c.evidence[m.end() :] if m else (c.evidence or "")
        at = _cited_doc(m.group(1), docs) if m else None
        if at is None and quote.strip():
            at = next((i for i, (_, body) in enumerate(docs) if quote_in(quote, body)), None)
        if at is None or docs[at][0] is None:
            out.append(c)
            continue
        label, body = docs[at]
        reason = (
            c.reason if label in c.reason else f"{c.reason.rstrip()} (evidence: {label})".lstrip()
        )
        found = quote_in(quote, body) if quote.strip() else None
        update = {"cited": label, "reason": reason, "evidence_found": found}
        if label.startswith(
            "tool "
        ):  # a JSON field by its path, code by its lines: checked in code
            more = structured(quote, body)
            update |= {} if found and more.get("evidence_found") is False else more
        out.append(c.model_copy(update=update))
    return out


def _cited_doc(cited: str, docs: Sequence[tuple[str | None, str]]) -> int | None:
    passage = _PASSAGE.match(cited)
    if passage:
        n = int(passage.group(1)) - 1
        return n if 0 <= n < len(docs) else None
    return next((i for i, (label, _) in enumerate(docs) if label == cited), None)
