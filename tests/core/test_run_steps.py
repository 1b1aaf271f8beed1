"""`workflow.run_steps`: an item's run through the graph's nodes without LangGraph's step loop (#50,
client CPU) gives the state the compiled graph gives, and a run anything listens to (a LangChain
callback, LangSmith tracing) still goes through the compiled graph."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.runnables.config import var_child_runnable_config

from judgeflow import (
    Claim,
    ClaimCheck,
    Judge,
    JudgeContext,
    JudgeState,
    LexicalJudge,
    LLMError,
    build_graph,
    workflow,
)
from judgeflow.coverage import Coverage, requirement_checker
from judgeflow.results import TraceEntry

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "factual_qa_sample.jsonl"
ITEMS = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
MORE = [
    {"id": "f1", "answer": "The report says sales rose 4% in 2021 to $3.2 million.",
     "source": ["Sales rose 4% in 2021."]},
    {"id": "s1", "answer": "def add(a, b): return a - b",
     "spec": "Return the sum of a and b. Never raise."},
    {"id": "bad", "answer": "no evidence at all"},
    {"id": "e", "question": "Who?", "answer": "I do not know.", "reference": "x"},
]


class Steps(LexicalJudge):
    """The offline judge, each step counted and traced as a model's (the reducers' work), and made
    to fail where asked (an unscored path)."""

    def __init__(self, fail: str | None = None) -> None:
        super().__init__()
        self.fail = fail

    async def decompose(self, item: Any, criterion: Any, usage: Any, trace: Any) -> list[Claim]:
        usage.calls += 1
        trace.append(TraceEntry(step="decompose", reply=item.answer))
        if self.fail == "decompose":
            raise LLMError("boom in decompose")
        return await super().decompose(item, criterion, usage, trace)

    async def single(self, item: Any, criterion: Any, usage: Any, trace: Any) -> Any:
        trace.append(TraceEntry(step="single", reply=item.answer))
        return await super().single(item, criterion, usage, trace)

    async def check(self, item: Any, criterion: Any, claims: Any, usage: Any,
                    trace: Any) -> list[ClaimCheck]:
        usage.calls += 1
        trace.append(TraceEntry(step="check", reply=str(len(claims))))
        if self.fail == "check":
            raise LLMError("boom in check")
        return await super().check(item, criterion, claims, usage, trace)


def both(item: dict[str, Any], context: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The state from the compiled graph and from `run_steps`, each with its own `context()` (a
    coverage splits each spec once: a shared one would give the second run no split to pay for)."""
    async def go() -> tuple[JudgeState, JudgeState]:
        out = await build_graph().ainvoke(JudgeState(item=item), context=context())
        graph = JudgeState.model_validate(out)
        return graph, await workflow.run_steps(JudgeState(item=item), context())

    graph, steps = asyncio.run(go())
    return graph.model_dump(mode="json"), steps.model_dump(mode="json")


@pytest.mark.parametrize("strategy", ["graph", "single"])
@pytest.mark.parametrize("fail", [None, "decompose", "check"])
def test_run_steps_gives_the_compiled_graphs_state(strategy: str, fail: str | None) -> None:
    backend = Steps(fail)
    for item in ITEMS[:12] + MORE:
        def context() -> JudgeContext:
            return JudgeContext(spec={"strategy": strategy},  # type: ignore[arg-type]
                                backend=backend, coverage=Coverage(requirement_checker(backend)))

        graph, steps = both(item, context)
        assert steps == graph, item["id"]
        assert ("single" in [t["step"] for t in steps["trace"]]) == (strategy == "single" and bool(
            steps["criterion"]))
    plain = [both(it, lambda: JudgeContext(backend=backend))[1] for it in MORE]
    statuses = {s["status"] for s in plain}
    assert "invalid" in statuses and ("unscored" in statuses) == (fail is not None)


def test_a_judge_runs_its_items_through_the_steps_when_nothing_listens(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING_V2",
                 "LANGCHAIN_TRACING"):
        monkeypatch.delenv(name, raising=False)
    assert not workflow.graph_runs_listened()
    judge = Judge(backend=LexicalJudge())
    quiet = judge.judge_many(ITEMS[:6])
    assert judge._compiled is None  # the graph was never needed
    monkeypatch.setattr(workflow, "graph_runs_listened", lambda: True)
    traced = judge.judge_many(ITEMS[:6])
    assert judge._compiled is not None
    assert [j.model_dump() for j in quiet] == [j.model_dump() for j in traced]


class Seen(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.names: list[str] = []

    async def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.names.append(kwargs.get("name") or "")


def test_a_callback_or_langsmith_tracing_still_sees_the_graphs_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2"):
        monkeypatch.delenv(name, raising=False)
    seen = Seen()
    judge = Judge(backend=LexicalJudge())

    async def under_a_chain() -> Any:
        token = var_child_runnable_config.set({"callbacks": [seen]})
        try:
            assert workflow.graph_runs_listened()
            return await judge.ajudge(ITEMS[0])
        finally:
            var_child_runnable_config.reset(token)

    row = asyncio.run(under_a_chain())
    assert row.status == "judged" and "judgeflow" in seen.names and "route" in seen.names
    from langsmith.run_helpers import tracing_context

    with tracing_context(enabled=True):  # as LANGSMITH_TRACING=true (langsmith reads it once)
        assert workflow.graph_runs_listened()


def test_the_compiled_graph_keeps_its_nodes_and_every_route_a_node_names() -> None:
    """The nodes name their next node as a `Step` (no LangGraph import to judge an item); the compiled
    graph turns it into LangGraph's Command and draws the same edges the return annotations drew."""
    from judgeflow.workflow import build_graph

    drawn = build_graph().get_graph()
    edges = {(e.source, e.target) for e in drawn.edges}
    assert set(drawn.nodes) == {"__start__", "route", "decompose", "check", "single", "know", "cover",
                                "aggregate", "__end__"}
    assert edges == {("__start__", "route"), ("route", "decompose"), ("route", "single"), ("route", "aggregate"),
                     ("decompose", "check"), ("decompose", "cover"), ("decompose", "aggregate"),
                     ("check", "know"), ("check", "cover"), ("check", "aggregate"), ("single", "know"),
                     ("single", "cover"), ("single", "aggregate"), ("know", "cover"), ("know", "aggregate"),
                     ("cover", "aggregate"), ("aggregate", "__end__")}
