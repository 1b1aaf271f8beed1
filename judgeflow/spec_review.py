"""Reviewing an agent's final output against a spec: `review()` / `areview()`, a Judge with coverage on.

    result = review(agent_output, spec, model="openai/gpt-4o-mini")   # text, or a dict (JSON)
    result.label, result.reason                 # 1, "requirement r3 not met: ..."
    [r.status for r in result.requirements]     # ["met", "met", "not_met"]
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from ._judge import Judge
from .errors import InvalidItemError
from .items import Item
from .judging import run_sync
from .results import Judgment


def as_output_text(output: Any) -> str:
    """An agent's final output as text: strings as they are, anything else as pretty JSON."""
    if isinstance(output, str):
        return output
    if isinstance(output, BaseModel):
        output = output.model_dump(mode="json")
    return json.dumps(output, ensure_ascii=False, indent=2, default=str)


async def areview(
    output: Any, spec: str, *, question: str | None = None, id: str = "output",
    judge: Judge | None = None, model: str | None = None, **judge_kwargs: Any,
) -> Judgment:
    """Review an agent's final output (text, dict/list or pydantic model) against `spec`.

    `judge` (optional) is a `Judge(..., coverage=True)` to share between calls (each spec is
    split into requirements once per judge); by default one is made with `mode="spec"`.

    Raises:
        InvalidItemError: an empty output or spec.
    """
    if not spec or not spec.strip():
        raise InvalidItemError("review() needs a non-empty spec", field="spec")
    j = judge or Judge(model, mode="spec", coverage=True, **judge_kwargs)
    item = Item.from_record({"id": id, "answer": as_output_text(output), "spec": spec, "question": question})
    return await j.ajudge(item)


def review(
    output: Any, spec: str, *, question: str | None = None, id: str = "output",
    judge: Judge | None = None, model: str | None = None, **judge_kwargs: Any,
) -> Judgment:
    """Sync facade over `areview`."""
    result: Judgment = run_sync(areview(output, spec, question=question, id=id, judge=judge, model=model, **judge_kwargs))
    return result


__all__ = ["areview", "as_output_text", "review"]
