"""judgeflow as a LangSmith evaluator: the modern (inputs, outputs, reference_outputs) signature."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timezone

import pytest
from fakes import MOSCOW_QUESTION, MOSCOW_RIGHT, MOSCOW_WRONG, FakeLLM, moscow_checks, moscow_claims

from judgeflow import Judge
from judgeflow.integrations.langsmith import alangsmith_evaluator, langsmith_evaluator, to_record
from judgeflow.items import Item

langsmith_evaluator_mod = pytest.importorskip("langsmith.evaluation.evaluator")
schemas = pytest.importorskip("langsmith.schemas")

INPUTS = {"question": MOSCOW_QUESTION}
REFERENCE = {"answer": "Moscow was founded in 1147 by Yuri Dolgorukiy."}


def _run_and_example(outputs: dict) -> tuple:
    example = schemas.Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs=INPUTS, outputs=REFERENCE)
    run = schemas.Run(id=uuid.uuid4(), name="app", run_type="chain", start_time=datetime.now(timezone.utc),
                      inputs=INPUTS, outputs=outputs, trace_id=uuid.uuid4())
    return run, example


def test_langsmith_runs_it_as_a_dynamic_evaluator() -> None:
    evaluator = langsmith_evaluator_mod.DynamicRunEvaluator(langsmith_evaluator(model="baseline/lexical"))
    wrong = evaluator.evaluate_run(*_run_and_example({"answer": MOSCOW_WRONG}))
    assert (wrong.key, wrong.score) == ("hallucination", 1)
    assert "c1 contradicted: Moscow was founded in 1247." in (wrong.comment or "")
    assert wrong.metadata and wrong.metadata["criterion"] == "factual_correctness"
    right = evaluator.evaluate_run(*_run_and_example({"answer": MOSCOW_RIGHT}))
    assert right.score == 0


def test_unscored_and_invalid_are_none_with_a_reason() -> None:
    evaluator = langsmith_evaluator(model="baseline/lexical", key="halluc")
    bad = evaluator({"question": "q"}, {"answer": "x"}, {})
    assert bad["key"] == "halluc" and bad["score"] is None and "invalid" in bad["comment"]
    llm = FakeLLM("openai", [500])
    unscored = langsmith_evaluator(Judge(backend=llm.backend()))(INPUTS, {"answer": "In 1247."}, REFERENCE)
    assert unscored["score"] is None and unscored["comment"].startswith("unscored (unscored)")


def test_record_mapping_from_run_and_example() -> None:
    """Read through the one item alias table: canonical fields, each dict's own field first."""
    rec = to_record({"input": "q", "context": ["doc"]}, "bare answer", {"output": "gold", "spec": "S"})
    assert rec == {"question": "q", "source": ["doc"], "answer": "bare answer", "reference": "gold", "spec": "S"}
    rec = to_record({"question": "q", "answer": "leaked input answer"}, {"result": "a"}, None)
    assert (rec["question"], rec["answer"]) == ("q", "a")  # the run's output, not an answer left in its inputs
    assert rec["inputs"] == {"answer": "leaked input answer"}  # carried through, not judged
    assert Item.from_record({**rec, "id": "r1"}).answer == "a"


def test_async_evaluator_with_fake_llm_and_retrieved_context() -> None:
    llm = FakeLLM("openai", [moscow_claims(), moscow_checks(basis="source", reason="the source says 1147")])
    evaluator = alangsmith_evaluator(Judge(backend=llm.backend()))
    out = asyncio.run(evaluator(INPUTS, {"answer": MOSCOW_WRONG, "context": [MOSCOW_RIGHT]}, REFERENCE))
    assert out["score"] == 1 and out["metadata"]["criterion"] == "source_faithfulness"
    assert "the source says 1147" in out["comment"]


def test_score_direction_is_explicit_in_the_key() -> None:
    wrong = {"answer": MOSCOW_WRONG}
    default = langsmith_evaluator(model="baseline/lexical")(INPUTS, wrong, REFERENCE)
    assert (default["key"], default["score"]) == ("hallucination", 1)
    assert default["metadata"]["score_means"] == "1 = hallucination found, 0 = none found"
    flipped = langsmith_evaluator(model="baseline/lexical", direction="no_hallucination")
    assert flipped.__name__ == "no_hallucination"
    out = flipped(INPUTS, wrong, REFERENCE)
    assert (out["key"], out["score"]) == ("no_hallucination", 0)
    assert out["metadata"]["score_means"].startswith("1 = no hallucination found")
    assert flipped(INPUTS, {"answer": MOSCOW_RIGHT}, REFERENCE)["score"] == 1
    # openevals' key and direction together, on request only
    same_chart = langsmith_evaluator(model="baseline/lexical", direction="no_hallucination", key="hallucination")
    assert same_chart(INPUTS, wrong, REFERENCE) == {**out, "key": "hallucination"}
    # unscored stays None whichever the direction
    assert flipped({"question": "q"}, {"answer": "x"}, {})["score"] is None
    with pytest.raises(ValueError, match="direction"):
        langsmith_evaluator(model="baseline/lexical", direction="hallucinated")


def test_openevals_style_keyword_calls() -> None:
    docs = ["The 2023 annual report: revenue rose 12%, driven mainly by cloud sales."]
    evaluator = langsmith_evaluator(model="baseline/lexical")
    out = evaluator(inputs="What did the report say about revenue?", outputs="Revenue rose 21% in 2023.",
                    reference_outputs="", context=docs)
    assert (out["score"], out["metadata"]["criterion"]) == (1, "source_faithfulness")
    out = evaluator(inputs=INPUTS, outputs={"answer": MOSCOW_WRONG},
                    reference_outputs={"answer": "In 1147."})
    assert (out["score"], out["metadata"]["criterion"]) == (1, "factual_correctness")
    aout = asyncio.run(alangsmith_evaluator(model="baseline/lexical", direction="no_hallucination")(
        inputs="Revenue?", outputs="Revenue rose 12%, driven mainly by cloud sales.", context=docs))
    assert (aout["key"], aout["score"]) == ("no_hallucination", 1)
    # LangSmith still accepts the signature (context has a default)
    dyn = langsmith_evaluator_mod.DynamicRunEvaluator(evaluator)
    res = dyn.evaluate_run(*_run_and_example({"answer": MOSCOW_WRONG}))
    assert (res.key, res.score) == ("hallucination", 1)
