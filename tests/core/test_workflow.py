"""The LangGraph workflow: its nodes and edges, what each path calls, and failures that stay
failures (unscored or raised), never scores."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from judgeflow import (
    Claim,
    ClaimCheck,
    Judge,
    JudgeContext,
    JudgeState,
    Judgment,
    LexicalJudge,
    LLMError,
    build_graph,
    judge_stream,
    load_criterion,
)
from judgeflow.backends.base import Offline
from judgeflow.criteria import Criterion
from judgeflow.items import Item
from judgeflow.results import TraceEntry, Usage

ROOT = Path(__file__).resolve().parents[2]
ITEM = {"id": "w1", "question": "Capital of France?", "answer": "Paris. It is on the Seine.", "reference": "Paris"}


class ScriptedBackend(Offline):
    """An in-process backend recording which steps ran; each step returns or raises what it is given."""

    model = "test/scripted"
    fingerprint = "test"

    def __init__(self, claims: Any = (), checks: Any = (), single: Any = None) -> None:
        self.claims, self.checks, self._single = claims, checks, single
        self.calls: list[str] = []

    @staticmethod
    def _give(value: Any) -> Any:
        if isinstance(value, BaseException):
            raise value
        return value

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]:
        self.calls.append("decompose")
        usage.calls += 1
        trace.append(TraceEntry(step="decompose", reply="d"))
        return list(self._give(self.claims))

    async def check(self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage,
                    trace: list[TraceEntry]) -> list[ClaimCheck]:
        self.calls.append("check")
        usage.calls += 1
        return list(self._give(self.checks))

    async def single(self, item: Item, criterion: Criterion, usage: Usage,
                     trace: list[TraceEntry]) -> tuple[list[Claim], list[ClaimCheck]]:
        self.calls.append("single")
        usage.calls += 1
        return self._give(self._single)


CLAIMS = [Claim(id="c1", text="Paris.", kind="place"), Claim(id="c2", text="It is on the Seine.", kind="place")]
PASS = [ClaimCheck(claim_id="c1", verdict="supported", basis="reference"),
        ClaimCheck(claim_id="c2", verdict="supported", basis="knowledge")]
FAIL = [PASS[0], ClaimCheck(claim_id="c2", verdict="false_fact", basis="knowledge")]


def run(backend: Any, item: dict[str, Any] = ITEM, **judge_kwargs: Any) -> Judgment:
    return Judge(backend=backend, **judge_kwargs).judge(item)


def test_graph_nodes_and_edges() -> None:
    g = build_graph().get_graph()
    nodes = set(g.nodes)
    assert {"route", "decompose", "check", "single", "aggregate"} <= nodes
    edges = {(e.source, e.target) for e in g.edges}
    assert ("__start__", "route") in edges and ("aggregate", "__end__") in edges
    assert {("check", "aggregate"), ("single", "aggregate")} <= edges


def test_langgraph_json_points_at_a_compiled_graph() -> None:
    config = json.loads((ROOT / "langgraph.json").read_text())
    file, _, attr = config["graphs"]["judge"].partition(":")
    spec = importlib.util.spec_from_file_location("judge_graph", ROOT / file)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graph = getattr(module, attr)
    out = asyncio.run(graph.ainvoke({"item": ITEM}, context=JudgeContext(backend=LexicalJudge())))
    state = JudgeState.model_validate(out)
    assert state.criterion is not None and state.criterion.name == "factual_correctness"
    assert state.label in (0, 1) and state.results


def test_graph_path_decompose_check_aggregate() -> None:
    backend = ScriptedBackend(CLAIMS, FAIL)
    result = run(backend)
    assert backend.calls == ["decompose", "check"]
    assert result.label == 1 and result.usage.calls == 2
    assert [c.error for c in result.claims] == [False, True]
    assert [t.step for t in result.trace] == ["decompose"]


def test_single_path_skips_decompose_and_check() -> None:
    backend = ScriptedBackend(single=(CLAIMS, PASS))
    result = run(backend, strategy="single")
    assert backend.calls == ["single"] and result.label == 0 and result.strategy == "single"


def test_no_claims_for_a_refusal_skips_check_and_is_0() -> None:
    backend = ScriptedBackend([], [])
    result = run(backend, dict(ITEM, answer="I don't know."))
    assert backend.calls == ["decompose"]
    assert result.label == 0 and result.status == "judged" and "no checkable claims" in (result.reason or "")


def test_no_claims_for_an_answer_that_states_something_is_unscored_not_0() -> None:
    backend = ScriptedBackend([], [])
    result = run(backend)  # "Paris. It is on the Seine."
    assert backend.calls == ["decompose"]
    assert result.label is None and result.status == "unscored" and "returned no claims" in (result.error or "")


def test_invalid_item_calls_nothing() -> None:
    backend = ScriptedBackend(CLAIMS, PASS)
    result = run(backend, {"id": "w2", "answer": "a"})
    assert backend.calls == [] and result.status == "invalid" and result.label is None
    assert result.criterion is None and "item 'w2'" in (result.error or "")


@pytest.mark.parametrize("step", ["decompose", "check", "single"])
def test_llm_error_at_any_step_is_unscored(step: str) -> None:
    err = LLMError("unparseable judge output after 3 attempt(s): boom")
    backend = ScriptedBackend(err if step == "decompose" else CLAIMS, err if step == "check" else PASS,
                              single=err)
    result = run(backend, strategy="single" if step == "single" else "graph")
    assert result.label is None and result.status == "unscored"
    assert result.error == f"{step}: unparseable judge output after 3 attempt(s): boom"
    assert result.usage.calls == (2 if step == "check" else 1)  # spent calls are still counted


def test_backend_that_skips_a_claim_leaves_item_unscored() -> None:
    result = run(ScriptedBackend(CLAIMS, FAIL[1:]))  # no verdict for c1, an error verdict for c2
    assert result.label is None and result.status == "unscored"
    assert "['c1']" in (result.error or "") and "no verdict" in (result.error or "")


def test_unexpected_exceptions_are_not_turned_into_scores() -> None:
    with pytest.raises(RuntimeError, match="bug"):
        run(ScriptedBackend(RuntimeError("bug"), PASS))


def test_run_criterion_and_mode_reach_the_route_node() -> None:
    backend = ScriptedBackend(CLAIMS, [ClaimCheck(claim_id="c1", verdict="supported", basis="reference"),
                                       ClaimCheck(claim_id="c2", verdict="not_in_reference", basis="none")])
    strict = run(backend, criterion=load_criterion("reference_faithfulness"))
    assert strict.criterion == "reference_faithfulness" and strict.label == 1
    item = dict(ITEM, source="Paris is the capital of France, on the Seine.")
    assert run(ScriptedBackend(CLAIMS, PASS), item, mode="factual").criterion == "factual_correctness"
    assert run(ScriptedBackend([], []), item).criterion == "source_faithfulness"


def test_judgment_carries_human_label_and_extra_fields() -> None:
    result = run(ScriptedBackend(CLAIMS, PASS), dict(ITEM, label="no", dataset="halueval_qa", meta={"a": 1}))
    assert result.human_label == 0 and result.extra == {"dataset": "halueval_qa", "meta": {"a": 1}}
    row = result.to_row()
    assert row["dataset"] == "halueval_qa" and "extra" not in row and "trace" not in row
    assert Judgment.from_row(json.loads(json.dumps(row))).extra == {"dataset": "halueval_qa", "meta": {"a": 1}}


def test_judge_stream_judges_everything_including_bad_rows() -> None:
    judge = Judge("baseline/lexical", concurrency=3)
    rows: list[Any] = [dict(ITEM, id=f"i{n}") for n in range(7)] + [{"id": "bad", "answer": "a"}]

    async def go() -> list[Judgment]:
        return [j async for _, j in judge_stream(judge, rows, concurrency=3)]

    results = asyncio.run(go())
    assert sorted(j.id for j in results) == sorted(r["id"] for r in rows)
    assert {j.status for j in results if j.id != "bad"} == {"judged"}
    assert next(j for j in results if j.id == "bad").status == "invalid"
    assert [j.id for j in judge.judge_many(rows)] == [r["id"] for r in rows]


def test_sync_facade_works_inside_a_running_loop() -> None:
    judge = Judge("baseline/lexical")

    async def inside() -> Judgment:
        return judge.judge(ITEM)

    inner = asyncio.run(inside())
    assert inner.status == "judged" and inner.label == judge.judge(ITEM).label


def test_input_fields_named_like_result_fields_are_kept() -> None:
    record = dict(ITEM, model="gpt-4o (the answer's author)", error="none", status="draft", dataset="d")
    result = run(ScriptedBackend(CLAIMS, PASS), record)
    row = result.to_row()
    assert row["model"] == "test/scripted" and row["input_model"] == "gpt-4o (the answer's author)"
    assert row["error"] is None and row["input_error"] == "none"
    assert row["status"] == "judged" and row["input_status"] == "draft" and row["dataset"] == "d"
    back = Judgment.from_row(json.loads(json.dumps(row)))
    assert back.extra == result.extra == {"model": "gpt-4o (the answer's author)", "error": "none",
                                          "status": "draft", "dataset": "d"}
    assert back.model == "test/scripted" and back.status == "judged"


class _SlowOnFlag(ScriptedBackend):
    """Slow and wrong for answers containing 'slow', fast and right otherwise."""

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]:
        await asyncio.sleep(0.02 if "slow" in item.answer else 0)
        return CLAIMS

    async def check(self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage,
                    trace: list[TraceEntry]) -> list[ClaimCheck]:
        return FAIL if "slow" in item.answer else PASS


def test_judge_many_keeps_input_order_even_for_repeated_ids() -> None:
    rows = [dict(ITEM, id="same", answer="slow and wrong"), dict(ITEM, id="same", answer="fast and right")]
    results = Judge(backend=_SlowOnFlag(), concurrency=2).judge_many(rows)
    assert [j.label for j in results] == [1, 0]


def test_context_is_plain_data_and_the_backend_is_built_once_per_process() -> None:
    """What a LangGraph server sends: a JSON context naming the model; the backend is cached."""
    from judgeflow.workflow import JudgeContext as Ctx

    graph = build_graph()
    wrong = {"id": "w2", "question": "When was Moscow founded?", "response": "Moscow was founded in 1247.",
             "reference": "In 1147."}
    out = asyncio.run(graph.ainvoke({"item": wrong}, context={"model": "baseline/lexical"}))
    assert out["label"] == 1 and JudgeState.model_validate(out).item.aliases == {"answer": "response"}
    assert Ctx(model="baseline/lexical").resolved_backend() is Ctx(model="baseline/lexical").resolved_backend()
    # a model name where a JSON caller guessed "backend" is read as the model, not called
    out = asyncio.run(graph.ainvoke({"item": wrong}, context={"backend": "baseline/lexical",
                                                               "criterion": "reference_faithfulness"}))
    assert out["label"] == 1 and JudgeState.model_validate(out).criterion.name == "reference_faithfulness"
    assert "backend" not in graph.get_context_jsonschema()["properties"]


def test_nodes_return_only_what_they_add_and_the_reducers_sum_it() -> None:
    import asyncio

    from fakes import FakeLLM
    from langgraph.runtime import Runtime

    from judgeflow import Claim, Claims, Item, load_criterion
    from judgeflow.results import TraceEntry, Usage
    from judgeflow.workflow import JudgeContext, JudgeState, add_usage, decompose

    llm = FakeLLM("openai", [Claims(claims=[Claim(id="c1", text="Paris is in France.")])])
    before = [TraceEntry(step="earlier")]
    state = JudgeState(item=Item(id="q", answer="Paris is in France.", reference="Paris is in France."),
                       criterion=load_criterion("reference_faithfulness"), usage=Usage(calls=5), trace=before)
    command = asyncio.run(decompose(state, Runtime(context=JudgeContext(backend=llm.backend()))))
    update = command.update
    assert command.goto == "check"  # the node names its next step (a LangGraph Command)
    assert update["usage"].calls == 1 and [t.step for t in update["trace"]] == ["decompose"]
    assert state.usage.calls == 5 and state.trace == before  # the state is not written to
    assert add_usage(Usage(calls=5, input_tokens=3), Usage(calls=1, input_tokens=2)) == Usage(calls=6, input_tokens=5)
