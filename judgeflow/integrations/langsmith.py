"""judgeflow as an evaluator in LangSmith's `evaluate` / `aevaluate`.

    from langsmith import evaluate
    from judgeflow.integrations.langsmith import langsmith_evaluator
    evaluate(rag_app, data="my-dataset", evaluators=[langsmith_evaluator(model="openai/gpt-4o-mini")])

The evaluator has LangSmith's modern signature `(inputs, outputs, reference_outputs)` and returns
`{"key": "hallucination", "score": 1 | 0 | None, "comment": ...}`: score 1 = hallucination,
0 = none found, None = unscored (the judge could not decide; the comment says why). The item is
built from the run's inputs (question: `question|input|query`), outputs (answer:
`answer|output|result`, retrieved documents: `context|source_documents|documents`) and the
example's reference outputs (`reference|answer|expected|output`, and `spec`, `context`).
langsmith itself is not imported here: any caller of that signature works.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..errors import InvalidItemError
from ..judge import Judge
from ..languages import language_of
from ..results import Judgment
from .runnable import to_item

REFERENCE_KEYS = ("reference", "answer", "expected", "expected_output", "output", "ground_truth")
EvaluatorResult = dict[str, Any]


def to_record(
    inputs: Mapping[str, Any] | None, outputs: Mapping[str, Any] | Any, reference_outputs: Mapping[str, Any] | None
) -> dict[str, Any]:
    """One item record from a LangSmith run's inputs, outputs and the example's reference outputs."""
    rec: dict[str, Any] = {k: v for k, v in dict(inputs or {}).items() if k not in ("answer", "output", "result")}
    if isinstance(outputs, Mapping):
        rec.update(outputs)
    else:
        rec["answer"] = outputs  # a target that returns a bare string
    ref = dict(reference_outputs or {})
    for k in REFERENCE_KEYS:
        if ref.get(k) not in (None, ""):
            rec.setdefault("reference", ref[k])
            break
    for k in ("spec", "context", "source"):
        if ref.get(k) not in (None, "") and k not in rec:
            rec[k] = ref[k]
    return rec


def to_feedback(judgment: Judgment, *, key: str) -> EvaluatorResult:
    """LangSmith feedback for a Judgment: key, score (label) and a comment listing failing claims."""
    if judgment.label is None:
        comment = f"unscored ({judgment.status}): {judgment.error or judgment.reason}"
    else:
        bad = [c for c in judgment.claims if c.error]
        lines = [f"{'hallucination' if judgment.label else 'no hallucination found'} "
                 f"[{judgment.criterion}]: {judgment.reason}"]
        lines += [f"- {c.id} {c.verdict}: {c.text} ({c.reason})" for c in bad]
        comment = "\n".join(lines)
    lang = language_of(judgment)
    return {
        "key": key,
        "score": judgment.label,
        "comment": comment,
        "metadata": {"criterion": judgment.criterion, "model": judgment.model, "status": judgment.status,
                     "language": lang, "claims": [c.model_dump() for c in judgment.claims]},
    }


def langsmith_evaluator(
    judge: Judge | None = None, *, model: str | None = None, key: str = "hallucination", **judge_kwargs: Any
) -> Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], EvaluatorResult]:
    """A sync evaluator `(inputs, outputs, reference_outputs) -> {"key", "score", "comment"}`.

    Args:
        judge: a ready Judge; else `Judge(model, **judge_kwargs)` (default: $JUDGEFLOW_MODEL,
            else the offline baseline/lexical judge).
        key: the feedback key shown in LangSmith.
    """
    j = judge if judge is not None else Judge(model, **judge_kwargs)

    def hallucination(inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> EvaluatorResult:
        item = to_item(to_record(inputs, outputs, reference_outputs))
        if isinstance(item, InvalidItemError):
            return {"key": key, "score": None, "comment": f"unscored (invalid): {item}"}
        return to_feedback(j.judge(item), key=key)

    hallucination.__name__ = key
    return hallucination


def alangsmith_evaluator(
    judge: Judge | None = None, *, model: str | None = None, key: str = "hallucination", **judge_kwargs: Any
) -> Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], Awaitable[EvaluatorResult]]:
    """The async twin of `langsmith_evaluator`, for `aevaluate`."""
    j = judge if judge is not None else Judge(model, **judge_kwargs)

    async def hallucination(inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> EvaluatorResult:
        item = to_item(to_record(inputs, outputs, reference_outputs))
        if isinstance(item, InvalidItemError):
            return {"key": key, "score": None, "comment": f"unscored (invalid): {item}"}
        return to_feedback(await j.ajudge(item), key=key)

    hallucination.__name__ = key
    return hallucination
