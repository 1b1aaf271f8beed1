"""LangSmith run trees as conversations: a root run and its child runs -> labelled messages.

A run is a dict as LangSmith exports it (`Run.dict()`, `client.list_runs`, the UI's JSON export):
`id`, `name`, `run_type` ("chain", "llm", "chat_model", "tool", "retriever", ...), `inputs`,
`outputs`, `error`, `child_runs` (nested) or `parent_run_id` (flat; see `run_trees`). The root's
inputs give the conversation's start (`messages`, or a question); each model run adds the reply it
generated (with its tool calls); each tool or retriever run adds its call and its result (an error
run is a failed result); the root's output is the final reply, if no model run gave it already.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .traces import (
    ToolCall,
    TraceError,
    TraceMessage,
    content_text,
    label_messages,
    raw_messages,
    tool_arguments,
)

_QUESTION = ("question", "input", "query", "prompt", "user_input")
_ANSWER = ("answer", "output", "result", "response", "text")


def run_trees(runs: Sequence[Mapping[str, Any]], *, cycles: list[list[str]] | None = None) -> list[dict[str, Any]]:
    """Root runs with their `child_runs` filled in, from a flat list linked by `parent_run_id`
    (runs already nested are kept as they are), children in `start_time` order.

    Runs that lead to no root (their `parent_run_id`s form a cycle, with anything under it) are
    no tree: each such group's ids, its cycle's first, go to `cycles`; without `cycles`, a
    TraceError names them."""
    by_id = {str(r.get("id")): {**r, "child_runs": list(r.get("child_runs") or [])} for r in runs}
    roots = []
    for r in by_id.values():
        parent = by_id.get(str(r.get("parent_run_id")))
        if parent is not None and r.get("parent_run_id") is not None:
            parent["child_runs"].append(r)
        else:
            roots.append(r)
    for r in by_id.values():
        r["child_runs"].sort(key=lambda c: str(c.get("start_time") or ""))
    found = _unrooted(by_id, roots)
    if found and cycles is None:
        raise TraceError(cycle_message(found[0]), "parent_run_id")
    if cycles is not None:
        cycles.extend(found)
    return roots


def cycle_message(group: list[str]) -> str:
    """Why the runs of `group` (its cycle's ids first) make no conversation, and the fix."""
    shown = ", ".join(repr(g) for g in group[:4]) + (", ..." if len(group) > 4 else "")
    return (f"runs {shown} form a parent_run_id cycle: {len(group)} run(s) lead to no root run, so they make "
            "no conversation; export the whole trace, or set the root run's parent_run_id to null")


def _unrooted(by_id: dict[str, dict[str, Any]], roots: list[dict[str, Any]]) -> list[list[str]]:
    """The runs no root reaches, grouped by the cycle above them (iteratively: a chain may be deep)."""
    reached: set[int] = set()
    stack = list(roots)
    while stack:
        r = stack.pop()
        if id(r) not in reached:
            reached.add(id(r))
            stack.extend(r["child_runs"])
    left = {k: r for k, r in by_id.items() if id(r) not in reached}
    group_of: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    for k in left:
        path, cur = [], k
        while cur in left and cur not in group_of and cur not in path:
            path.append(cur)
            cur = str(left[cur].get("parent_run_id"))
        if cur in group_of:
            key = group_of[cur]
        else:  # `cur` is on a new cycle: its members, in order
            ring = path[path.index(cur):]
            key = min(ring)
            groups[key] = sorted(ring)
            group_of.update(dict.fromkeys(ring, key))
        for p in path:
            if p not in group_of:
                group_of[p] = key
                groups[key].append(p)
    return list(groups.values())


def langsmith_messages(run: Mapping[str, Any]) -> list[TraceMessage]:
    """The labelled messages of one LangSmith run tree.

    Raises:
        TraceError: naming the run and field, and the fix.
    """
    outputs = run.get("outputs")
    said = outputs.get("messages") if isinstance(outputs, Mapping) else None
    if isinstance(said, list) and said:  # a LangGraph agent returns the whole conversation
        said_raw = [r for i, m in enumerate(said) for r in raw_messages(_constructor(m), f"outputs.messages[{i}]")]
        return label_messages(said_raw, "run")
    raw: list[dict[str, Any]] = _start(run)
    for child in run.get("child_runs") or []:
        _walk(child, raw, "child_runs")
    final = _answer(run.get("outputs"))
    said = [r["text"] for r in raw if r["role"] == "assistant" and r["text"].strip()]
    if final and (not said or said[-1].strip() != final.strip()):
        raw.append({"role": "assistant", "text": final, "calls": []})
    return label_messages(raw, "run")


def _start(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    inputs = run.get("inputs") or {}
    if not isinstance(inputs, Mapping):
        raise TraceError(f"run {run.get('name')!r} has inputs of type {type(inputs).__name__}; a LangSmith run's "
                         "inputs is an object", "inputs")
    msgs = inputs.get("messages")
    if isinstance(msgs, list) and msgs and isinstance(msgs[0], list):  # chat model runs nest a batch
        msgs = msgs[0]
    if isinstance(msgs, list):
        return [r for i, m in enumerate(msgs) for r in raw_messages(_constructor(m), f"inputs.messages[{i}]")]
    question = next((inputs[k] for k in _QUESTION if isinstance(inputs.get(k), str)), None)
    if question is None:
        raise TraceError(f"run {run.get('name')!r} has no conversation: its inputs hold neither \"messages\" nor a "
                         f"question ({', '.join(_QUESTION)}); export the agent's root run", "inputs")
    return [{"role": "user", "text": question, "calls": []}]


def _walk(top: Any, raw: list[dict[str, Any]], where: str) -> None:
    """The messages of a run and everything under it, in order (a stack, not recursion: a chain
    may be thousands of runs deep)."""
    stack: list[tuple[Any, str]] = [(top, where)]
    while stack:
        run, where = stack.pop()
        if not isinstance(run, Mapping):
            raise TraceError(f"{where} must hold run objects, got {type(run).__name__}", where)
        kind = run.get("run_type")
        if kind in ("tool", "retriever"):
            call, result = _tool(run)
            if call["calls"][0].id not in {c.id for r in raw for c in r.get("calls", [])}:
                raw.append(call)  # no model run in the tree made this call: the tool run stands for it
            raw.append(result)
        elif kind in ("llm", "chat_model"):
            reply = _generated(run.get("outputs"))
            if reply is not None:
                raw.extend(raw_messages(reply, f"run {run.get('name')!r} outputs"))
        else:
            inner = f"{where}[{run.get('name')}].child_runs" if len(where) < 200 else where
            stack.extend((child, inner) for child in reversed(run.get("child_runs") or []))


def _tool(run: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool (or retriever) run: its call, then its result."""
    inputs = dict(run.get("inputs") or {})
    call_id = str(inputs.pop("tool_call_id", None) or run.get("id") or run.get("name"))
    name = str(run.get("name") or run.get("run_type"))
    args = inputs.get("input", inputs) if set(inputs) <= {"input"} else inputs
    outputs = run.get("outputs") or {}
    if run.get("run_type") == "retriever":
        docs = outputs.get("documents") or [] if isinstance(outputs, Mapping) else []
        text = "\n\n".join(str(d.get("page_content", d) if isinstance(d, Mapping) else d) for d in docs)
    else:
        text = (_answer(outputs) or "") if outputs else ""
    if run.get("error"):
        text = f"{text}\n{run['error']}".strip()
    call = ToolCall(id=call_id, name=name, arguments=tool_arguments(args))
    return ({"role": "assistant", "text": "", "calls": [call]},
            {"role": "tool", "text": text, "call_id": call_id, "tool": name, "failed": bool(run.get("error"))})


def _constructor(m: Any) -> Any:
    """A LangChain message serialised as `{"lc": 1, "type": "constructor", "id": [..., "AIMessage"], "kwargs"}`
    -> the `messages_to_dict` form; anything else unchanged."""
    if isinstance(m, Mapping) and m.get("type") == "constructor" and isinstance(m.get("kwargs"), Mapping):
        kind = str((m.get("id") or ["?"])[-1]).removesuffix("MessageChunk").removesuffix("Message").lower()
        return {"type": {"human": "human", "ai": "ai", "tool": "tool", "system": "system"}.get(kind, kind),
                "data": dict(m["kwargs"])}
    return m


def _generated(outputs: Any) -> Any:
    """The message a model run generated (LangChain `generations`, or a plain message/output)."""
    if not isinstance(outputs, Mapping):
        return None
    gens = outputs.get("generations")
    if isinstance(gens, list) and gens:
        first = gens[0][0] if isinstance(gens[0], list) and gens[0] else gens[0]
        if isinstance(first, Mapping):
            msg = first.get("message")
            return _constructor(msg) if msg is not None else {"role": "assistant", "content": first.get("text", "")}
    for key in ("message", "output"):
        if isinstance(outputs.get(key), Mapping):
            return _constructor(outputs[key])
    return None


def _answer(outputs: Any) -> str | None:
    """The text of a run's outputs: a string, an answer-like key, the last message, or JSON."""
    if outputs is None:
        return None
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, Mapping):
        out = _constructor(outputs)
        if out is not outputs:
            return content_text(out["data"].get("content"), "outputs")
        for key in _ANSWER:
            if key in outputs:
                return _answer(outputs[key])
        msgs = outputs.get("messages")
        if isinstance(msgs, list) and msgs:
            last = _constructor(msgs[-1])
            data = last.get("data", last) if isinstance(last, Mapping) else {}
            return content_text(data.get("content") if isinstance(data, Mapping) else getattr(last, "content", ""), "outputs")
        if "content" in outputs:
            return content_text(outputs["content"], "outputs")
    return json.dumps(outputs, ensure_ascii=False, default=str)
