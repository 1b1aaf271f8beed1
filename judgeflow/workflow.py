"""The judge as a LangGraph workflow: route -> decompose -> check [-> cover] -> aggregate
(or route -> single [-> cover] -> aggregate); `cover` (requirement coverage) runs for spec criteria
when the Judge has coverage on.

Nodes are plain async functions; the backend (an LLM or an offline judge) and run-level
settings arrive in `JudgeContext` at invoke time. A judge failure (LLMError) is recorded in
the state and ends as an unscored judgment; it never becomes a 0 or a 1.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from .aggregate import aggregate as aggregate_claims
from .aggregate import cover_label, merge, verify_evidence
from .coverage import Coverage
from .registry import Backend
from .schemas import Claim, ClaimCheck
from .criteria import Criterion
from .errors import JudgeflowError, LLMError
from .items import Item
from .results import ClaimResult, JudgmentStatus, RequirementResult, TraceEntry, Usage
from .routing import choose_criterion

Strategy = Literal["graph", "single"]


@dataclass
class JudgeContext:
    """Run-level settings passed at invoke time (not part of the state)."""

    backend: Backend
    strategy: Strategy = "graph"
    criterion: Criterion | None = None
    mode: str | None = None
    coverage: Coverage | None = None
    """Requirement coverage for spec criteria (None: off)."""


def add_usage(spent: Usage, more: Usage) -> Usage:
    """Reducer: the usage so far plus what a node adds (a new object; neither input changes)."""
    total = spent.model_copy()
    total.add(more)
    return total


class JudgeState(BaseModel):
    """Everything known about one item as it moves through the graph."""

    item: Item
    criterion: Criterion | None = None
    routed_by: str | None = None
    claims: list[Claim] = Field(default_factory=list)
    checks: list[ClaimCheck] = Field(default_factory=list)
    results: list[ClaimResult] = Field(default_factory=list)
    label: Literal[0, 1] | None = None
    reason: str | None = None
    status: JudgmentStatus = "judged"
    error: str | None = None
    requirements: list[RequirementResult] | None = None
    coverage_error: str | None = None
    usage: Annotated[Usage, add_usage] = Field(default_factory=Usage)
    """Calls and tokens: each node returns what it spent, the reducer adds it up."""
    trace: Annotated[list[TraceEntry], operator.add] = Field(default_factory=list)
    """Rendered prompts and raw replies: each node returns its own entries, appended in order."""


def _fresh() -> tuple[Usage, list[TraceEntry]]:
    """What one node spends: filled by the backend's step, returned as the node's update."""
    return Usage(), []


async def route(state: JudgeState, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    """Pick the criterion: explicit settings first, else by which evidence the item has."""
    ctx = runtime.context
    try:
        criterion, why = choose_criterion(state.item, criterion=ctx.criterion, mode=ctx.mode)
    except JudgeflowError as e:  # InvalidItemError or CriterionError: a bad input row
        return {"status": "invalid", "error": str(e)}
    return {"criterion": criterion, "routed_by": why}


def after_route(state: JudgeState, runtime: Runtime[JudgeContext]) -> Literal["decompose", "single", "aggregate"]:
    if state.status != "judged":
        return "aggregate"
    return "single" if runtime.context.strategy == "single" else "decompose"


async def decompose(state: JudgeState, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    """Split the answer into claims."""
    assert state.criterion is not None
    usage, trace = _fresh()
    try:
        claims = await runtime.context.backend.decompose(state.item, state.criterion, usage, trace)
    except LLMError as e:
        return {"status": "unscored", "error": f"decompose: {e}", "usage": usage, "trace": trace}
    return {"claims": claims, "usage": usage, "trace": trace}


def after_decompose(state: JudgeState, runtime: Runtime[JudgeContext]) -> Literal["check", "cover", "aggregate"]:
    return "check" if state.status == "judged" and state.claims else after_claims(state, runtime)


def after_claims(state: JudgeState, runtime: Runtime[JudgeContext]) -> Literal["cover", "aggregate"]:
    """Requirement coverage next, for a spec criterion when the judge has it on; else aggregate."""
    c = state.criterion
    wanted = runtime.context.coverage is not None and c is not None and c.mode == "spec" and bool(state.item.spec)
    return "cover" if wanted and state.status != "invalid" else "aggregate"


async def check(state: JudgeState, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    """Check all claims of the item (one call per chunk of claims)."""
    assert state.criterion is not None
    usage, trace = _fresh()
    try:
        checks = await runtime.context.backend.check(state.item, state.criterion, state.claims, usage, trace)
    except LLMError as e:
        return {"status": "unscored", "error": f"check: {e}", "usage": usage, "trace": trace}
    return {"checks": checks, "usage": usage, "trace": trace}


async def single(state: JudgeState, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    """One call: claims and their verdicts together."""
    assert state.criterion is not None
    usage, trace = _fresh()
    try:
        claims, checks = await runtime.context.backend.single(state.item, state.criterion, usage, trace)
    except LLMError as e:
        return {"status": "unscored", "error": f"single: {e}", "usage": usage, "trace": trace}
    return {"claims": claims, "checks": checks, "usage": usage, "trace": trace}


async def cover(state: JudgeState, runtime: Runtime[JudgeContext]) -> dict[str, Any]:
    """Requirement coverage: split the spec (once per spec), mark every requirement against the output."""
    assert state.criterion is not None and runtime.context.coverage is not None
    usage, trace = _fresh()
    try:
        requirements = await runtime.context.coverage.cover(state.item, state.criterion, usage, trace)
    except LLMError as e:
        return {"coverage_error": str(e), "usage": usage, "trace": trace}
    return {"requirements": requirements, "usage": usage, "trace": trace}


async def aggregate(state: JudgeState) -> dict[str, Any]:
    """Whole-answer rule in code: 1 iff any claim has an error verdict or a requirement is unmet; None if unscored."""
    if state.status != "judged" or state.criterion is None:
        results = merge(state.claims, state.checks, state.criterion) if state.criterion else []
        update: dict[str, Any] = {"label": None, "results": results}
    else:
        item = state.item
        evidence = {"reference": item.reference, "source": "\n\n".join(item.source or []) or None, "spec": item.spec}
        results = verify_evidence(merge(state.claims, state.checks, state.criterion), evidence)
        label, reason = aggregate_claims(results, state.criterion)
        update = {"label": label, "reason": reason, "results": results}
        if label is None:
            update |= {"status": "unscored", "error": reason}
    if state.coverage_error is not None:
        if update["label"] != 1:  # a found violation stands; otherwise the judge could not decide
            update |= {"label": None, "status": "unscored", "error": f"requirements: {state.coverage_error}"}
    elif state.requirements is not None:
        update["label"], update["reason"] = cover_label(update["label"], update.get("reason", state.reason),
                                                        state.requirements)
    return update


def build_graph() -> Any:
    """Compile the judge graph. Invoke with `context=JudgeContext(backend=...)`."""
    g = StateGraph(JudgeState, context_schema=JudgeContext)
    for node in (route, decompose, check, single, cover, aggregate):
        g.add_node(node)
    g.add_edge(START, "route")
    g.add_conditional_edges("route", after_route)
    g.add_conditional_edges("decompose", after_decompose)
    g.add_conditional_edges("check", after_claims)
    g.add_conditional_edges("single", after_claims)
    g.add_edge("cover", "aggregate")
    g.add_edge("aggregate", END)
    return g.compile(name="judgeflow")


