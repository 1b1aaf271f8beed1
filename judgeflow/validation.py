"""The validation context for judge replies, kept out of Instructor's `context=`.

Instructor 1.17 renders every message as a Jinja template when `context=` is given, which
would evaluate `{{ ... }}` inside untrusted answers (and crash on a stray `{% ... %}`). So
`LLMClient.ask` never passes `context=`; it sets this context variable instead, and the
reply models' validators read it (a `model_validate(..., context=...)` context still wins).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import ValidationInfo

_CONTEXT: ContextVar[dict[str, Any] | None] = ContextVar("judgeflow_validation_context", default=None)


def validation_context(info: ValidationInfo) -> dict[str, Any]:
    """The context for a validator: pydantic's own if given, else the one set by `ask`."""
    return info.context or _CONTEXT.get() or {}


@contextmanager
def using_validation_context(context: dict[str, Any] | None) -> Iterator[None]:
    """Make `context` visible to reply validators in this task for the duration of the block."""
    token = _CONTEXT.set(context)
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def repeated(ids: list[str]) -> list[str]:
    """The ids that occur more than once, sorted."""
    return sorted({i for i in ids if ids.count(i) > 1})


def exactly_once(expected: list[str], got: list[str], noun: str, answer: str) -> list[str]:
    """Problems with answering each of `expected` ids exactly once (empty list: none).

    The messages go back to the model on a re-ask, so they say what to do.
    """
    problems = []
    missing = [i for i in expected if i not in got]
    dupes = repeated(got)
    extra = sorted({i for i in got if i not in expected})
    if missing:
        problems.append(f"no {answer} for {noun} ids {missing}; answer every {noun} exactly once")
    if dupes:
        problems.append(f"{noun} ids {dupes} were answered more than once; answer each exactly once")
    if extra:
        problems.append(f"{noun} ids {extra} do not exist; use only {list(expected)}")
    return problems
