"""The judge as a langchain-core Runnable: invoke / ainvoke / batch / abatch / in a chain."""

from __future__ import annotations

import asyncio

from fakes import (
    MOSCOW_QUESTION,
    MOSCOW_RIGHT,
    MOSCOW_SOURCE,
    MOSCOW_WRONG,
    FakeLLM,
    moscow_checks,
    moscow_claims,
)
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableLambda

from judgeflow import Item, Judge, Judgment
from judgeflow.integrations.runnable import as_runnable, judge_graph

SOURCE = [Document(page_content=text) for text in MOSCOW_SOURCE]
WRONG = {"input": MOSCOW_QUESTION, "context": SOURCE, "answer": MOSCOW_WRONG}
RIGHT = {**WRONG, "answer": MOSCOW_RIGHT}


def test_invoke_and_batch_offline() -> None:
    judge = as_runnable(model="baseline/lexical")
    assert isinstance(judge, Runnable)
    result = judge.invoke(WRONG)
    assert isinstance(result, Judgment) and result.label == 1
    assert result.language == "en" and "language" not in result.extra  # one language field
    assert "input_language" not in result.to_row()
    assert [j.label for j in judge.batch([WRONG, RIGHT, {"answer": "no evidence"}])] == [1, 0, None]


def test_abatch_with_bad_input_gives_invalid_judgments() -> None:
    judge = as_runnable(model="baseline/lexical")
    results = asyncio.run(judge.abatch([RIGHT, 42, WRONG], config={"max_concurrency": 2}))
    assert [(j.label, j.status) for j in results] == [(0, "judged"), (None, "invalid"), (1, "judged")]
    assert "cannot judge a int" in (results[1].error or "")


def test_in_an_lcel_chain_after_a_rag_step() -> None:
    rag = RunnableLambda(lambda q: {"input": q, "context": SOURCE, "answer": "It was founded in 1247."})
    chain = rag | as_runnable(model="baseline/lexical")
    assert chain.invoke(MOSCOW_QUESTION).label == 1


def test_fake_llm_behind_the_runnable() -> None:
    replies = [moscow_claims(), moscow_checks(basis="source", evidence="founded in 1147", reason="1147, not 1247")]
    llm = FakeLLM("anthropic", replies * 2)
    judge = as_runnable(Judge(backend=llm.backend()))
    assert judge.invoke(WRONG).label == 1
    assert asyncio.run(judge.ainvoke(WRONG)).claims[0].evidence == "founded in 1147"
    assert len(llm.requests) == 4


def test_compiled_graph_bound_to_the_context() -> None:
    graph = judge_graph(Judge("baseline/lexical"))
    item = Item(id="m", answer=MOSCOW_WRONG, source=[MOSCOW_RIGHT])
    state = asyncio.run(graph.ainvoke({"item": item}))
    assert state["label"] == 1 and state["criterion"].name == "source_faithfulness"
    states = asyncio.run(graph.abatch([{"item": item}, {"item": item.model_copy(update={"answer": "Founded in 1147."})}]))
    assert [s["label"] for s in states] == [1, 0]
