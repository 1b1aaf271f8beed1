"""judgeflow as a LangSmith evaluator: the modern (inputs, outputs, reference_outputs) signature."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timezone

import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Judge
from judgeflow.integrations.langsmith import alangsmith_evaluator, langsmith_evaluator, to_record

langsmith_evaluator_mod = pytest.importorskip("langsmith.evaluation.evaluator")
schemas = pytest.importorskip("langsmith.schemas")

INPUTS = {"question": "When was Moscow founded?"}
REFERENCE = {"answer": "Moscow was founded in 1147 by Yuri Dolgorukiy."}


def _run_and_example(outputs: dict) -> tuple:
    example = schemas.Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs=INPUTS, outputs=REFERENCE)
    run = schemas.Run(id=uuid.uuid4(), name="app", run_type="chain", start_time=datetime.now(timezone.utc),
                      inputs=INPUTS, outputs=outputs, trace_id=uuid.uuid4())
    return run, example


def test_langsmith_runs_it_as_a_dynamic_evaluator() -> None:
    evaluator = langsmith_evaluator_mod.DynamicRunEvaluator(langsmith_evaluator(model="baseline/lexical"))
    wrong = evaluator.evaluate_run(*_run_and_example({"answer": "Moscow was founded in 1247."}))
    assert (wrong.key, wrong.score) == ("hallucination", 1)
    assert "c1 contradicted: Moscow was founded in 1247." in (wrong.comment or "")
    assert wrong.metadata and wrong.metadata["criterion"] == "factual_correctness"
    right = evaluator.evaluate_run(*_run_and_example({"answer": "Moscow was founded in 1147."}))
    assert right.score == 0


def test_unscored_and_invalid_are_none_with_a_reason() -> None:
    evaluator = langsmith_evaluator(model="baseline/lexical", key="halluc")
    bad = evaluator({"question": "q"}, {"answer": "x"}, {})
    assert bad["key"] == "halluc" and bad["score"] is None and "invalid" in bad["comment"]
    llm = FakeLLM("openai", [500])
    unscored = langsmith_evaluator(Judge(backend=llm.backend()))(INPUTS, {"answer": "In 1247."}, REFERENCE)
    assert unscored["score"] is None and unscored["comment"].startswith("unscored (unscored)")


def test_record_mapping_from_run_and_example() -> None:
    rec = to_record({"input": "q", "context": ["doc"]}, "bare answer", {"output": "gold", "spec": "S"})
    assert rec == {"input": "q", "context": ["doc"], "answer": "bare answer", "reference": "gold", "spec": "S"}
    rec = to_record({"question": "q", "answer": "leaked input answer"}, {"result": "a"}, None)
    assert rec == {"question": "q", "result": "a"}


def test_async_evaluator_with_fake_llm_and_retrieved_context() -> None:
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Moscow was founded in 1247.", kind="date")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="contradicted", basis="source",
                                       evidence="1147", reason="the source says 1147")]),
    ])
    evaluator = alangsmith_evaluator(Judge(backend=llm.backend()))
    out = asyncio.run(evaluator(INPUTS, {"answer": "Moscow was founded in 1247.",
                                         "context": ["Moscow was founded in 1147."]}, REFERENCE))
    assert out["score"] == 1 and out["metadata"]["criterion"] == "source_faithfulness"
    assert "the source says 1147" in out["comment"]
