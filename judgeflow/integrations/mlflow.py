"""judgeflow as an MLflow 3 scorer, for `mlflow.genai.evaluate` on rows and on traces.

    import mlflow
    from judgeflow.integrations.mlflow import judgeflow_scorer
    scorer = judgeflow_scorer(model="openai/gpt-4o-mini")            # or judge=Judge(...), Panel(...)
    mlflow.genai.evaluate(data=rows, scorers=[scorer])                # rows: inputs / outputs / expectations
    mlflow.genai.evaluate(data=mlflow.search_traces(...), scorers=[scorer])   # or traces

Each row gives one `Feedback` named "judgeflow_hallucination" (`name=` to change it):

* judged: `value` 1 (a hallucination found) or 0 (none found), judgeflow's label; `rationale` the
  judge's reason and the criterion it judged by, and why (`... (criterion factual_correctness: item
  field criterion=...)`); `metadata` the criterion, why it was chosen (`routed_by`), model, status,
  claims count, the deciding claim and the claims with their verdicts (JSON), all strings as MLflow
  keeps them;
* unscored or invalid (the judge could not decide, a call refused at the spend cap, a row missing
  its answer): no value, an MLflow **error** (`AssessmentError`, code `JUDGEFLOW_UNSCORED` or
  `JUDGEFLOW_INVALID`, the reason as its message), so it is never averaged in as a 0.

The item comes from MLflow's arguments: `inputs` (question: `question|query|input|...`, retrieved
documents: `context|documents|...`, judgeflow's item alias table), `outputs` (the answer: a string,
or a dict's `answer|response|output|...`, or an OpenAI chat completion's message), `expectations`
(`expected_response`, else `expected_facts` joined, else any reference alias) and, on a trace, the
documents its RETRIEVER spans returned (as the source; `page_content`/`content` of each). A row with
an `expected_response` (or `expected_facts`) is judged for correctness against it
(`factual_correctness`), whatever else it carries: a retrieved context beside it is evidence too, but
does not turn the check into faithfulness to the context (a judge built with its own `criterion=` or
`mode=` still decides for every row). The judge
runs through judgeflow's sync facade; a `budget=` (`judgeflow.Budget`) caps its spend. mlflow is
imported only when the scorer is built (`pip install "judgeflow[mlflow]"`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .._judge import Judge
from ..judging import Judging, run_sync
from ..results import Judgment
from .untraced import judge_quietly

DEFAULT_NAME = "judgeflow_hallucination"
#: the criterion of a row that gives MLflow's expected answer (`expected_response` / `expected_facts`)
CORRECTNESS = "factual_correctness"
#: the keys of an MLflow output dict that hold the answer, in order
ANSWER_KEYS = ("answer", "response", "output", "content", "text", "result", "completion")


def judgeflow_scorer(judge: Judging | None = None, *, model: str | None = None, name: str = DEFAULT_NAME,
                     **judge_kwargs: Any) -> Any:
    """An `mlflow.genai.scorers.Scorer` judging each row or trace with `judge` (or `Judge(model,
    **judge_kwargs)`: mode, criterion, strategy, base_url, budget, ...)."""
    from mlflow.entities import Feedback
    from mlflow.genai.scorers import Scorer
    from pydantic import PrivateAttr

    judging = judge if judge is not None else Judge(model, **judge_kwargs)

    class JudgeflowScorer(Scorer):  # type: ignore[misc]
        """judgeflow's verdict as MLflow feedback: 1/0, or an error when unscored (never a 0)."""

        _judging: Any = PrivateAttr(default=None)

        def __call__(self, *, inputs: Any = None, outputs: Any = None, expectations: Any = None,
                     trace: Any = None) -> Any:
            record = to_record(inputs, outputs, expectations, trace)
            j = run_sync(judge_quietly(self._judging, record))
            return Feedback(**feedback_fields(j))

    made = JudgeflowScorer(name=name)
    made._judging = judging
    return made


def to_record(inputs: Any, outputs: Any, expectations: Any, trace: Any = None) -> dict[str, Any]:
    """One item record from MLflow's scorer arguments (and a trace's retrieved documents)."""
    record: dict[str, Any] = {}
    if isinstance(inputs, Mapping):
        record["inputs"] = dict(inputs)
    elif inputs is not None:
        record["question"] = str(inputs)
    answer = answer_of(outputs)
    if answer is not None:
        record["answer"] = answer
    reference = reference_of(expectations)
    if reference is not None:
        record["reference"] = reference
        if _expected(expectations):
            record["criterion"] = CORRECTNESS  # MLflow's expected answer: a correctness check
    documents = retrieved(trace)
    if documents and not _has_source(inputs):
        record["source"] = documents
    record["id"] = _id_of(trace, record)
    return record


def answer_of(outputs: Any) -> str | None:
    """The answer text of an MLflow `outputs` value (a string, a dict, a chat completion)."""
    if outputs is None:
        return None
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, Mapping):
        choices = outputs.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
            message = choices[0].get("message") or {}
            return str(message.get("content") or "") if isinstance(message, Mapping) else str(message)
        for key in ANSWER_KEYS:
            if outputs.get(key) not in (None, ""):
                return str(outputs[key])
        return json.dumps(outputs, default=str)
    return str(outputs)


def reference_of(expectations: Any) -> str | None:
    """The reference of MLflow `expectations`: `expected_response`, else `expected_facts` joined."""
    if expectations is None:
        return None
    if not isinstance(expectations, Mapping):
        return str(expectations)
    if expectations.get("expected_response") not in (None, ""):
        return str(expectations["expected_response"])
    facts = expectations.get("expected_facts")
    if isinstance(facts, list) and facts:
        return "\n".join(str(f) for f in facts)
    for key in ("reference", "ground_truth", "expected", "expected_output", "answer"):
        if expectations.get(key) not in (None, ""):
            return str(expectations[key])
    return None


def retrieved(trace: Any) -> list[str]:
    """The documents a trace's RETRIEVER spans returned (their page_content/content), in order."""
    if trace is None:
        return []
    from mlflow.entities import SpanType

    docs: list[str] = []
    for span in trace.search_spans(span_type=SpanType.RETRIEVER):
        out = span.outputs
        for d in out if isinstance(out, list) else [out] if out is not None else []:
            text = (d.get("page_content") or d.get("content") or d.get("text")) if isinstance(d, Mapping) else d
            if text not in (None, ""):
                docs.append(str(text))
    return docs


def feedback_fields(j: Judgment) -> dict[str, Any]:
    """The Feedback of a judgment: the label and reason, or an error when it is not a verdict."""
    metadata = {"criterion": j.criterion or "", "routed_by": j.routed_by or "", "model": j.model or "", "status": j.status,
                "claims": str(len(j.claims)), "score_means": "1 = hallucination found, 0 = none found",
                "claim_verdicts": json.dumps([{"claim": c.text, "verdict": c.verdict} for c in j.claims])}
    decider = next((c for c in j.claims if c.error), None) if j.label == 1 else None
    if decider is not None:
        metadata["deciding_claim"] = decider.text
    if j.label is None:
        from mlflow.entities import AssessmentError

        code = "JUDGEFLOW_INVALID" if j.status == "invalid" else "JUDGEFLOW_UNSCORED"
        return {"error": AssessmentError(error_code=code, error_message=j.error or "the judge could not decide"),
                "metadata": metadata}
    why = f"criterion {j.criterion}" + (f": {j.routed_by}" if j.routed_by else "")
    return {"value": int(j.label), "rationale": f"{j.reason or ''} ({why})", "metadata": metadata}


def _expected(expectations: Any) -> bool:
    return isinstance(expectations, Mapping) and any(expectations.get(k) not in (None, "", [])
                                                     for k in ("expected_response", "expected_facts"))


def _has_source(inputs: Any) -> bool:
    from ..items import ALIASES

    return isinstance(inputs, Mapping) and any(inputs.get(k) for k in ("source", *ALIASES["source"]))


def _id_of(trace: Any, record: Mapping[str, Any]) -> str:
    info = getattr(trace, "info", None)
    trace_id = getattr(info, "trace_id", None) or getattr(info, "request_id", None)
    if trace_id:
        return str(trace_id)
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()[:16]
