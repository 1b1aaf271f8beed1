"""judgeflow as an evaluator in LangSmith's `evaluate` / `aevaluate`.

    from langsmith import evaluate
    from judgeflow.integrations.langsmith import langsmith_evaluator
    evaluate(rag_app, data="my-dataset", evaluators=[langsmith_evaluator(model="openai/gpt-4o-mini")])

The evaluator has LangSmith's modern signature `(inputs, outputs, reference_outputs)` and also
takes openevals-style keyword calls (`inputs=..., outputs=..., reference_outputs=..., context=...`,
each a dict or a plain string). The score direction is explicit in the key:

* `direction="hallucination"` (default): `{"key": "hallucination", "score": 1 | 0 | None}`,
  1 = hallucination found, 0 = none found (judgeflow's label).
* `direction="no_hallucination"`: `{"key": "no_hallucination", "score": 1 | 0 | None}`,
  1 = no hallucination found: openevals' direction (openevals reports it under the key
  `hallucination`; pass `key="hallucination"` too only if you want judgeflow's scores on the same
  chart as openevals', in its direction).

None = unscored (the judge could not decide; the comment says why), never 0 or 1. The judge's own
graph runs are never traced (not uploaded to LangSmith, whatever `LANGSMITH_TRACING` or
`upload_results` say; `integrations.untraced`) unless `trace_internal=True`. The metadata
says what 1 means (`score_means`). The item is built from the run's inputs (question:
`question|input|query`), outputs (answer: `answer|output|result`, retrieved documents:
`context|source_documents|documents`) and the example's reference outputs
(`reference|answer|expected|output`, and `spec`, `context`). langsmith itself is not imported
here: any caller of that signature works.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Literal

from .._judge import Judge
from ..errors import InvalidItemError
from ..items import Item, items_from_record, resolve_fields
from ..judging import Judging, run_sync
from ..languages import language_of
from ..results import Judgment
from ..trace_runs import run_trees
from ..traces import TraceError, Turns
from .runnable import to_item
from .untraced import judge_quietly

EvaluatorResult = dict[str, Any]
Direction = Literal["hallucination", "no_hallucination"]
SCORE_MEANS = {"hallucination": "1 = hallucination found, 0 = none found",
               "no_hallucination": "1 = no hallucination found, 0 = hallucination found"}


def to_record(
    inputs: Mapping[str, Any] | None, outputs: Mapping[str, Any] | Any, reference_outputs: Mapping[str, Any] | None
) -> dict[str, Any]:
    """One item record from a LangSmith run's inputs, outputs and the example's reference outputs
    (each may also be a plain string, as openevals allows: the question, the answer, the reference),
    read through the item alias table (`items.resolve_fields`): canonical fields plus whatever
    no field took."""
    rec = {k: v for k, v in (("inputs", inputs), ("outputs", outputs), ("reference_outputs", reference_outputs))
           if v is not None and v != {}}
    values, _, rest = resolve_fields(rec)
    return {**rest, **values}


def to_feedback(judgment: Judgment, *, key: str, direction: Direction = "hallucination") -> EvaluatorResult:
    """LangSmith feedback for a Judgment: key, score (the label, or 1 - label for "no_hallucination")
    and a comment listing failing claims; unscored stays None."""
    if judgment.label is None:
        comment = f"unscored ({judgment.status}): {judgment.error or judgment.reason}"
    else:
        bad = [c for c in judgment.claims if c.error]
        lines = [f"{'hallucination' if judgment.label else 'no hallucination found'} "
                 f"[{judgment.criterion}]: {judgment.reason}"]
        lines += [f"- {c.id} {c.verdict}: {c.text} ({c.reason})" for c in bad]
        comment = "\n".join(lines)
    lang = language_of(judgment)
    score = judgment.label
    if score is not None and direction == "no_hallucination":
        score = 1 - score
    return {
        "key": key,
        "score": score,
        "comment": comment,
        "metadata": {"score_means": SCORE_MEANS[direction], "criterion": judgment.criterion, "model": judgment.model,
                     "status": judgment.status,
                     "language": lang, "claims": [c.model_dump() for c in judgment.claims]},
    }


def _setup(direction: str, key: str | None) -> str:
    if direction not in SCORE_MEANS:
        raise ValueError(f"direction {direction!r} is not one of: {', '.join(SCORE_MEANS)}")
    return key or direction


def _item(inputs: Any, outputs: Any, reference_outputs: Any, context: Any, kwargs: dict[str, Any]) -> Any:
    """The item for one evaluator call; `context` (openevals' keyword) is the source unless the run gave one."""
    rec = to_record(inputs, outputs, reference_outputs)
    if context is not None and not any(k in rec for k in ("source", "context", "contexts", "documents")):
        rec["context"] = context
    for k, v in kwargs.items():  # other openevals keywords (e.g. a `spec`) fill what is missing
        rec.setdefault(k, v)
    return to_item(rec)


def langsmith_evaluator(
    judge: Judging | None = None, *, model: str | None = None, direction: Direction = "hallucination",
    key: str | None = None, trace_internal: bool = False, **judge_kwargs: Any,
) -> Callable[..., EvaluatorResult]:
    """A sync evaluator `(inputs, outputs, reference_outputs, context=None) -> {"key", "score", "comment"}`.

    Args:
        judge: a ready Judging (a Judge, Panel, Cascade); else `Judge(model, **judge_kwargs)` (default: $JUDGEFLOW_MODEL,
            else the offline baseline/lexical judge).
        direction: "hallucination" (1 = hallucination found, judgeflow's label) or
            "no_hallucination" (1 = none found, openevals' direction).
        key: the feedback key shown in LangSmith; defaults to the direction's name.
        trace_internal: trace the judge's own graph runs like any LangGraph run (debugging the judge); by
            default they are never traced, so judged texts and prompts go nowhere.
    """
    key = _setup(direction, key)
    j = judge if judge is not None else Judge(model, **judge_kwargs)

    def evaluator(inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, context: Any = None,
                  **kwargs: Any) -> EvaluatorResult:
        item = _item(inputs, outputs, reference_outputs, context, kwargs)
        if isinstance(item, InvalidItemError):
            return {"key": key, "score": None, "comment": f"unscored (invalid): {item}"}
        return to_feedback(run_sync(judge_quietly(j, item, trace_internal=trace_internal)), key=key, direction=direction)

    evaluator.__name__ = key
    return evaluator


def alangsmith_evaluator(
    judge: Judging | None = None, *, model: str | None = None, direction: Direction = "hallucination",
    key: str | None = None, trace_internal: bool = False, **judge_kwargs: Any,
) -> Callable[..., Awaitable[EvaluatorResult]]:
    """The async form of `langsmith_evaluator`, for `aevaluate` (same arguments)."""
    key = _setup(direction, key)
    j = judge if judge is not None else Judge(model, **judge_kwargs)

    async def evaluator(inputs: Any = None, outputs: Any = None, reference_outputs: Any = None,
                        context: Any = None, **kwargs: Any) -> EvaluatorResult:
        item = _item(inputs, outputs, reference_outputs, context, kwargs)
        if isinstance(item, InvalidItemError):
            return {"key": key, "score": None, "comment": f"unscored (invalid): {item}"}
        return to_feedback(await judge_quietly(j, item, trace_internal=trace_internal), key=key, direction=direction)

    evaluator.__name__ = key
    return evaluator


def from_langsmith_runs(runs: Iterable[Any], *, turns: Turns = "last", system: bool = False) -> list[Item]:
    """Items from LangSmith runs: root runs with `child_runs`, or a flat list linked by `parent_run_id`
    (`client.list_runs(trace_id=...)`, an export), as dicts or `langsmith` Run objects.

    Each root run is one conversation, judged at its last reply (or at every assistant turn with
    `turns="all"`) against the tool results and turns before it (see `judgeflow.traces`).

    Raises:
        InvalidItemError: a run tree that cannot be read (naming the run and field).
    """
    rows = [r.dict() if hasattr(r, "dict") and not isinstance(r, Mapping) else dict(r) for r in runs]
    try:
        roots = run_trees(rows)
    except TraceError as e:
        raise InvalidItemError(str(e), field=e.field) from None
    return [it for root in roots for it in items_from_record(root, turns=turns, system=system)]
