"""The judge as a LangGraph workflow: route -> decompose -> check [-> cover] -> aggregate
(or route -> single [-> cover] -> aggregate); `cover` (requirement coverage) runs for spec criteria
when the Judge has coverage on.

Nodes are plain async functions; the backend (an LLM or an offline judge) and run-level
settings arrive in `JudgeContext` at invoke time: plain data (a model name, criterion name,
strategy, mode), so a LangGraph server can take it as JSON, or a ready backend object from Python.
A judge failure (LLMError) is recorded in the state and ends as an unscored judgment; it never
becomes a 0 or a 1.
"""

from __future__ import annotations

import operator
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from .aggregate import aggregate as aggregate_claims
from .aggregate import cover_label, merge, verify_evidence
from .arguments import ground_arguments
from .backends import Backend, Evidence, cite, make_backend
from .citations import check_item as check_citations
from .config.judging import JudgeSpec
from .criteria import Criterion, load_criterion
from .details import uncarried, with_dropped
from .errors import BudgetExceeded, InvalidItemError, JudgeflowError, LLMError
from .items import DEFAULT_MAX_INPUT_CHARS, Item, checked_item
from .knowledge import candidates, mask, settle
from .quotes import quote_in
from .results import ClaimResult, JudgmentStatus, RequirementResult, TraceEntry, Usage
from .routing import choose_criterion
from .schemas import Claim, ClaimCheck
from .traces import attribute

Strategy = Literal["graph", "single"]

END = "__end__"  # LangGraph's END: the node after aggregate


class Run(Protocol):
    """What a node reads of its run: the invoke-time context (a LangGraph `Runtime` is one)."""

    @property
    def context(self) -> Any: ...


@dataclass(frozen=True)
class Step:
    """A routing node's update and the node it names next. The compiled graph hands LangGraph a
    `Command(update=..., goto=...)` made from it (`build_graph`), so judging an item in this
    process never imports LangGraph (about a second of CPU a process, `run_steps`)."""

    update: dict[str, Any]
    goto: str


@dataclass(frozen=True)
class _Given:
    """A `Run` for `run_steps`: the context, as LangGraph's Runtime carries it."""

    context: Any


@dataclass
class JudgeContext:
    """What an item is judged with, passed at invoke time (not part of the state): the judge's
    `JudgeSpec` (strategy, mode, check_dropped, knowledge, ...: read here as `ctx.spec.X`, never
    copied field by field) and what was made live from it (the backend, the loaded criterion,
    coverage, evidence).

    `spec` may be a dict (a JSON caller); None means the spec's defaults. The backend is the one
    given, else built from `model` (+ `base_url`, `max_source_chars`) once per process and reused.
    API keys are never part of the context. This is the Python caller's context, with full control
    (any endpoint, a criterion path, a ready `backend`); a served graph reads JSON as
    `served.ServedContext` instead (names the operator allows, no endpoint, no path).
    """

    spec: JudgeSpec | None = None
    """The judge's spec; None: a JudgeSpec's defaults (its model is `model`'s)."""
    backend: SkipJsonSchema[Any] = None
    """A ready backend object (Python callers); when None it is built from `model`."""
    criterion: str | SkipJsonSchema[Criterion] | None = None
    """A shipped criterion name, a path to a .toml file or a loaded Criterion, forced for every
    item; None: the spec's `criterion`, else routed by fields."""
    coverage: SkipJsonSchema[Any] = None
    """Requirement coverage for spec criteria, a `Coverage` (None: off; Python callers)."""
    evidence: SkipJsonSchema[Any] = None
    """Documents or a retriever for claims the reference does not settle (`backends.Evidence`;
    None: the spec's `evidence` path, if any)."""
    model: str | None = None
    """"provider/model" (e.g. "baseline/lexical", "openai/gpt-4o-mini"); None: $JUDGEFLOW_MODEL, else offline."""
    base_url: str | None = None
    max_source_chars: int | None = None
    max_input_chars: int | None = None
    """An item whose texts together are longer is an invalid row (None: DEFAULT_MAX_INPUT_CHARS; a served
    graph: the operator's JUDGEFLOW_MAX_INPUT_CHARS)."""
    item_criterion: SkipJsonSchema[Any] = None
    """How an item's own `criterion` field is loaded: None: `load_criterion` (a name or a path); a
    served graph sets `served.served_criterion` (names the operator allows, never a path)."""

    def __post_init__(self) -> None:
        if not isinstance(self.spec, JudgeSpec):
            self.spec = JudgeSpec.model_validate({"model": self.model or "", **(self.spec or {})})
        if self.evidence is None and self.spec.evidence is not None:
            self.evidence = Evidence.of(self.spec.evidence)

    @property
    def judge_spec(self) -> JudgeSpec:
        """The spec (always one after `__post_init__`)."""
        assert self.spec is not None
        return self.spec

    def resolved_backend(self) -> Backend:
        """The live backend: the one given, else the per-process one built from the plain fields."""
        if self.backend is not None and not isinstance(self.backend, str):
            return self.backend
        # a string in `backend` (a JSON caller's natural guess) is a model name
        model = self.model or (self.backend if isinstance(self.backend, str) else None)
        return _served_backend(model, self.base_url, self.max_source_chars)

    def resolved_criterion(self) -> Criterion | None:
        given = self.criterion if self.criterion is not None else self.judge_spec.criterion
        if given is None or isinstance(given, Criterion):
            return given
        return load_criterion(given)


@lru_cache(maxsize=16)
def _served_backend(
    model: str | None, base_url: str | None, max_source_chars: int | None
) -> Backend:
    options: dict[str, Any] = {"max_source_chars": max_source_chars}
    if base_url:
        options["base_url"] = base_url
    return make_backend(model, **options)


def _context(runtime: Run) -> JudgeContext:
    """The invoke-time context; none given (a bare server run) means the defaults."""
    ctx = runtime.context
    if ctx is None:
        return JudgeContext()
    if isinstance(ctx, dict):  # a TypedDict-style caller
        return JudgeContext(**ctx)
    if isinstance(ctx, JudgeContext):
        return ctx
    return (
        ctx.judge_context()
    )  # a served graph's ServedContext (served.py): what the operator allows


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
    dropped: list[str] | None = None
    """Numbers, dates and names of the answer no claim of the decomposition carried (`details`)."""
    citations: dict[str, Any] | None = None
    """The answer's citation markers checked (`judgeflow.citations`); None when it cites nothing."""
    arguments: list[dict[str, Any]] | None = None
    """Traces: each tool call's concrete argument values traced to earlier messages (`judgeflow.arguments`)."""
    dropped_checked: bool = False
    """True when those details were added as claims for the check step (graph strategy)."""
    evidence_text: str | None = None
    """The passages of given evidence the knowledge step checked claims against (`know`)."""
    usage: Annotated[Usage, add_usage] = Field(default_factory=Usage)
    """Calls and tokens: each node returns what it spent, the reducer adds it up."""
    trace: Annotated[list[TraceEntry], operator.add] = Field(default_factory=list)
    """Rendered prompts and raw replies: each node returns its own entries, appended in order."""

    @field_validator("item", mode="before")
    @classmethod
    def _record(cls, v: Any) -> Any:
        """A plain dict (e.g. JSON sent to a LangGraph server) is read like an input row: aliases resolved."""
        if isinstance(v, dict) and not {"extra", "aliases"} <= v.keys():  # not a dumped Item
            return Item.from_record(v)
        return v


class JudgeInput(BaseModel):
    """What a caller sets (a served graph's input schema): the item; the rest of JudgeState is the graph's own."""

    item: Item

    _record = field_validator("item", mode="before")(JudgeState._record.__func__)  # type: ignore[attr-defined]


def _fresh() -> tuple[Usage, list[TraceEntry]]:
    """What one node spends: filled by the backend's step, returned as the node's update."""
    return Usage(), []


def _then(state: JudgeState, runtime: Run, update: dict[str, Any], decide: Any) -> Step:
    """The node's update and the next node, decided on the state as it will be after the update.

    Nodes route by naming their next node (a LangGraph `Command(goto=...)` in the compiled graph)
    rather than by conditional edges: the same graph (`_GOES` names the possible next nodes), at
    about a third of LangGraph's per-item overhead (a conditional edge is one more runnable call
    per step)."""
    return Step(update=update, goto=decide(state.model_copy(update=update), runtime))


async def route(state: JudgeState, runtime: Run) -> Step:
    """Pick the criterion: explicit settings first, else by which evidence the item has."""
    ctx = _context(runtime)
    checked = (
        state.item
        if state.item.checked and ctx.max_input_chars is None  # checked where it was read
        else checked_item(state.item, ctx.max_input_chars or DEFAULT_MAX_INPUT_CHARS)
    )
    if isinstance(
        checked, InvalidItemError
    ):  # the one item check, as for files, watch and the Python API
        return _then(state, runtime, {"status": "invalid", "error": str(checked)}, after_route)
    try:
        criterion, why = choose_criterion(
            state.item,
            criterion=ctx.resolved_criterion(),
            mode=None if ctx.judge_spec.mode == "auto" else ctx.judge_spec.mode,
            load=ctx.item_criterion or load_criterion,
        )
    except JudgeflowError as e:  # InvalidItemError or CriterionError: a bad input row
        return _then(state, runtime, {"status": "invalid", "error": str(e)}, after_route)
    return _then(state, runtime, {"criterion": criterion, "routed_by": why}, after_route)


def after_route(state: JudgeState, runtime: Run) -> Literal["decompose", "single", "aggregate"]:
    if state.status != "judged":
        return "aggregate"
    return "single" if _context(runtime).judge_spec.strategy == "single" else "decompose"


def _why(step: str, e: LLMError) -> str:
    """The unscored reason: the step and the error; a spend cap reached comes first ("budget: ...")."""
    return str(e) if isinstance(e, BudgetExceeded) else f"{step}: {e}"


async def decompose(state: JudgeState, runtime: Run) -> Step:
    """Split the answer into claims."""
    assert state.criterion is not None
    usage, trace = _fresh()
    try:
        claims = (
            await _context(runtime)
            .resolved_backend()
            .decompose(state.item, state.criterion, usage, trace)
        )
    except LLMError as e:
        return _then(
            state,
            runtime,
            {"status": "unscored", "error": _why("decompose", e), "usage": usage, "trace": trace},
            after_decompose,
        )
    checked = _context(runtime).judge_spec.check_dropped
    if checked and claims:
        claims, dropped = with_dropped(state.item.answer, claims)
    else:
        dropped = uncarried(state.item.answer, claims) if claims else []
    return _then(
        state,
        runtime,
        {
            "claims": claims,
            "dropped": dropped or None,
            "dropped_checked": checked,
            "usage": usage,
            "trace": trace,
        },
        after_decompose,
    )


def after_decompose(state: JudgeState, runtime: Run) -> Literal["check", "cover", "aggregate"]:
    return "check" if state.status == "judged" and state.claims else after_claims(state, runtime)


def after_claims(state: JudgeState, runtime: Run) -> Literal["cover", "aggregate"]:
    """Requirement coverage next, for a spec criterion when the judge has it on; else aggregate."""
    c = state.criterion
    wanted = (
        _context(runtime).coverage is not None
        and c is not None
        and c.covers_spec
        and bool(state.item.spec)
    )
    return "cover" if wanted and state.status != "invalid" else "aggregate"


async def check(state: JudgeState, runtime: Run) -> Step:
    """Check all claims of the item (one call per chunk of claims)."""
    assert state.criterion is not None
    usage, trace = _fresh()
    try:
        checks = (
            await _context(runtime)
            .resolved_backend()
            .check(state.item, state.criterion, state.claims, usage, trace)
        )
    except LLMError as e:
        return _then(
            state,
            runtime,
            {"status": "unscored", "error": _why("check", e), "usage": usage, "trace": trace},
            after_claims,
        )
    return _then(state, runtime, {"checks": checks, "usage": usage, "trace": trace}, after_checks)


async def single(state: JudgeState, runtime: Run) -> Step:
    """One call: claims and their verdicts together."""
    assert state.criterion is not None
    usage, trace = _fresh()
    try:
        claims, checks = (
            await _context(runtime)
            .resolved_backend()
            .single(state.item, state.criterion, usage, trace)
        )
    except LLMError as e:
        return _then(
            state,
            runtime,
            {"status": "unscored", "error": _why("single", e), "usage": usage, "trace": trace},
            after_claims,
        )
    dropped = (
        uncarried(state.item.answer, claims) if claims else []
    )  # one call: not checked, only named
    return _then(
        state,
        runtime,
        {
            "claims": claims,
            "checks": checks,
            "dropped": dropped or None,
            "usage": usage,
            "trace": trace,
        },
        after_checks,
    )


def after_checks(state: JudgeState, runtime: Run) -> Literal["know", "cover", "aggregate"]:
    """The knowledge step next when it has work (commit-first or given evidence, claims the
    reference did not settle); else as after any claims."""
    ctx, c = _context(runtime), state.criterion
    wanted = (
        c is not None
        and state.status == "judged"
        and "knowledge" in c.bases
        and bool(candidates(state.checks, own_texts(state)))
        and (
            ctx.evidence is not None
            or c.knowledge_strategy(ctx.judge_spec.knowledge) == "commit-first"
        )
    )
    return "know" if wanted else after_claims(state, runtime)


async def know(state: JudgeState, runtime: Run) -> Step:
    """Claims the reference did not settle: checked against given evidence (quotes verified in code),
    then, with commit-first, against what the judge commits to before it sees their values."""
    ctx, criterion = _context(runtime), state.criterion
    assert criterion is not None
    backend = ctx.resolved_backend()
    usage, trace = _fresh()
    checks, text = list(state.checks), None
    try:
        if ctx.evidence is not None:
            checks, text = await _with_evidence(
                state, Evidence.of(ctx.evidence), backend, checks, usage, trace
            )
        if criterion.knowledge_strategy(ctx.judge_spec.knowledge) == "commit-first":
            checks = await _commit_first(state, backend, checks, usage, trace)
    except LLMError as e:
        return _then(
            state,
            runtime,
            {"status": "unscored", "error": _why("knowledge", e), "usage": usage, "trace": trace},
            after_claims,
        )
    return _then(
        state,
        runtime,
        {"checks": checks, "evidence_text": text, "usage": usage, "trace": trace},
        after_claims,
    )


async def _with_evidence(
    state: JudgeState,
    evidence: Evidence,
    backend: Backend,
    checks: list[ClaimCheck],
    usage: Usage,
    trace: list[TraceEntry],
) -> tuple[list[ClaimCheck], str | None]:
    """One check of the open claims against the evidence's passages (as the reference); a verdict
    counts (basis `evidence`) only with a quote found in those passages, cited by passage."""
    assert state.criterion is not None
    open_ids = {c.claim_id for c in candidates(checks, own_texts(state))}
    claims = [c for c in state.claims if c.id in open_ids]
    passages = await evidence.passages([c.text for c in claims])
    if not passages:
        return checks, None
    text = "\n\n".join(p.text for p in passages)
    asked = state.item.model_copy(update={"reference": text, "source": None})
    found = await backend.check(asked, state.criterion, claims, usage, trace)
    unsettled = state.criterion.knowledge_settings.unsettled
    settled = {
        f.claim_id: f.model_copy(
            update={"basis": "evidence", "evidence": cite(f.evidence, passages)}
        )
        for f in found
        if f.basis == "reference" and f.verdict != unsettled and quote_in_text(f.evidence, text)
    }
    return [settled.get(c.claim_id, c) for c in checks], text


def own_texts(state: JudgeState) -> dict[str, str | None]:
    """The item's own evidence by basis name (what a reference/source/spec quote must occur in)."""
    item = state.item
    return {
        "reference": item.reference,
        "source": "\n\n".join(item.source or []) or None,
        "spec": item.spec,
    }


def quote_in_text(quote: str, text: str) -> bool:
    """A non-empty quote that occurs in the text (quotes.quote_in's rule)."""
    return bool(quote.strip(" .\"'")) and quote_in(quote, text)


async def _commit_first(
    state: JudgeState,
    backend: Backend,
    checks: list[ClaimCheck],
    usage: Usage,
    trace: list[TraceEntry],
) -> list[ClaimCheck]:
    """The judge fills the open claims' masked values (one call), code compares (`knowledge.settle`)."""
    criterion = state.criterion
    assert criterion is not None
    unsettled = criterion.knowledge_settings.unsettled
    # a claim the check already left unsettled stays so: no commitment could make it settled alone
    open_ids = {c.claim_id for c in candidates(checks, own_texts(state)) if c.verdict != unsettled}
    slots = {
        c.id: mask(c.id, c.text, state.item.question) for c in state.claims if c.id in open_ids
    }
    asked = [s for s in slots.values() if s is not None]
    said = await backend.commit(state.item, criterion, asked, usage, trace) if asked else {}
    return [
        settle(
            _unquoted(c),
            slots[c.claim_id],
            said.get(c.claim_id),
            errors=criterion.error_verdicts,
            unsettled=unsettled,
        )
        if c.claim_id in open_ids
        else c
        for c in checks
    ]


def _unquoted(check: ClaimCheck) -> ClaimCheck:
    """A check that named the reference with a quote the reference lacks: read as knowledge."""
    if check.basis not in ("reference", "source", "spec"):
        return check
    return check.model_copy(
        update={
            "basis": "knowledge",
            "evidence": "",
            "reason": (
                f"{check.reason} (its quote {check.evidence[:80]!r} is not in the {check.basis})"
            ).strip(),
        }
    )


async def cover(state: JudgeState, runtime: Run) -> dict[str, Any]:
    """Requirement coverage: split the spec (once per spec), mark every requirement against the output."""
    coverage = _context(runtime).coverage
    assert state.criterion is not None and coverage is not None
    usage, trace = _fresh()
    try:
        requirements = await coverage.cover(state.item, state.criterion, usage, trace)
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
        evidence = {
            "reference": item.reference,
            "source": "\n\n".join(item.source or []) or None,
            "spec": item.spec,
            "evidence": state.evidence_text,
        }
        results = verify_evidence(merge(state.claims, state.checks, state.criterion), evidence)
        if item.messages is not None and item.source:  # a trace: each quote against its own message
            results = attribute(results, item.source)
        results, citations = check_citations(
            results, item.answer, item.source if item.messages is None else None, state.criterion
        )
        results, arguments = ground_arguments(results, item, state.criterion)
        update_more = {
            k: v for k, v in (("citations", citations), ("arguments", arguments)) if v is not None
        }
        label, reason = aggregate_claims(results, state.criterion, answer=item.answer)
        update = {"label": label, "reason": reason, "results": results, **update_more}
        if label is None:
            update |= {"status": "unscored", "error": reason}
    if state.coverage_error is not None:
        if update["label"] != 1:  # a found violation stands; otherwise the judge could not decide
            why = state.coverage_error
            update |= {
                "label": None,
                "status": "unscored",
                "error": why if why.startswith("budget") else f"requirements: {why}",
            }
    elif state.requirements is not None:
        update["label"], update["reason"] = cover_label(
            update["label"], update.get("reason", state.reason), state.requirements
        )
    if state.dropped:
        update["reason"] = (
            f"{update.get('reason') or state.reason or ''}; {dropped_note(state)}".lstrip("; ")
        )
    if state.usage.over_bound:  # the backend cut a reply's list to its schema's bound (maxItems)
        update["reason"] = (
            f"{update.get('reason') or state.reason or ''}; {state.usage.over_bound} more listed "
            "beyond the reply's bound were cut, not checked"
        ).lstrip("; ")
    return update


def dropped_note(state: JudgeState) -> str:
    """What the row says of details no claim carried: checked as added claims, or (single) not checked."""
    named = ", ".join(state.dropped or [])
    if state.dropped_checked:
        return f"details no claim carried, checked as added claims: {named}"
    return f"not checked (no claim carried them): {named}"


#: the nodes, by name; those returning a plain update go on by the graph's fixed edges (`_NEXT`)
_NODES: dict[str, Any] = {
    "route": route,
    "decompose": decompose,
    "check": check,
    "single": single,
    "know": know,
    "cover": cover,
}
_NEXT = {"cover": "aggregate", "aggregate": END}
#: where each routing node may go (the compiled graph's edges; its drawing)
_GOES: dict[str, tuple[str, ...]] = {
    "route": ("decompose", "single", "aggregate"),
    "decompose": ("check", "cover", "aggregate"),
    "check": ("know", "cover", "aggregate"),
    "single": ("know", "cover", "aggregate"),
    "know": ("cover", "aggregate"),
}


async def run_steps(state: JudgeState, context: JudgeContext) -> JudgeState:
    """The graph's run in this process without LangGraph's step loop: the same nodes in the same
    order, each update applied as the graph applies it (`usage` and `trace` by their reducers, the
    rest replaced). `Judge.ajudge` runs an item this way when nothing listens to graph runs
    (`graph_runs_listened`): LangGraph's per-step channels, checkpoints and task bookkeeping cost
    more client CPU than the nodes themselves; the compiled graph (`build_graph`) stays what a
    served or traced run executes."""
    runtime: Run = _Given(context)
    node = "route"
    while node != END:
        out = await (aggregate(state) if node == "aggregate" else _NODES[node](state, runtime))
        update, node = (out.update, out.goto) if isinstance(out, Step) else (out, _NEXT[node])
        changed = dict(update)
        if "usage" in changed:
            changed["usage"] = add_usage(state.usage, changed["usage"])
        if "trace" in changed:
            changed["trace"] = state.trace + changed["trace"]
        state = state.model_copy(update=changed)
    return state


def graph_runs_listened() -> bool:
    """True when a LangChain tracer or callback would see a graph run (LangSmith tracing on by its
    environment or context, a parent run's callbacks, a registered tracing hook): then an item runs
    through the compiled graph, so what is traced stays as it was. Until LangChain or LangSmith is
    imported no callback, tracing context or hook can exist, so only the tracing environment
    variables are read (LangChain's import is about a second of CPU a process)."""
    if "langchain_core" not in sys.modules and "langsmith" not in sys.modules:
        if not any(_env_on(k) for k in os.environ if "TRACING" in k and k.startswith(_TRACING_ENV)):
            return False
    from langchain_core.runnables.config import var_child_runnable_config
    from langchain_core.tracers import context as tracers

    parent = var_child_runnable_config.get()
    if parent and parent.get("callbacks"):
        return True
    if tracers._tracing_v2_is_enabled():
        return True
    hooks = tracers._configure_hooks
    return any(var.get() is not None or (env and _env_on(env)) for var, _, _, env in hooks)


#: LangSmith's tracing switches are `LANGSMITH_TRACING(_V2)` and `LANGCHAIN_TRACING(_V2)`
_TRACING_ENV = ("LANGSMITH_", "LANGCHAIN_")


def _env_on(name: str) -> bool:
    return os.environ.get(name, "").lower() not in ("", "0", "false", "no")


def build_graph(context_schema: type[Any] = JudgeContext) -> Any:
    """Compile the judge graph. Invoke with `context=JudgeContext(model=...)` (or `backend=...`).

    context_schema: what a JSON context is read as; `served.build_served_graph` passes its
    `ServedContext` (names the operator allows, nothing more). LangGraph is imported here, when a
    graph is built, not when an item is judged in this process."""
    from langgraph.graph import END as _END
    from langgraph.graph import START, StateGraph

    assert _END == END
    g = StateGraph(JudgeState, context_schema=context_schema, input_schema=JudgeInput)
    for name, node in _NODES.items():
        if name in _GOES:  # its Step becomes LangGraph's Command
            g.add_node(name, _commanding(node), destinations=_GOES[name])
        else:
            g.add_node(name, node)
    g.add_node("aggregate", aggregate)
    g.add_edge(START, "route")  # route, decompose, check, single and know name their next node
    g.add_edge("cover", "aggregate")
    g.add_edge("aggregate", END)
    return g.compile(name="judgeflow")


def _commanding(node: Any) -> Any:
    """`node` for LangGraph: its `Step` as a `Command`; LangGraph injects `runtime` by its name."""
    from langgraph.types import Command

    async def step(state: JudgeState, runtime: Run) -> Any:
        out = await node(state, runtime)
        return Command(update=out.update, goto=out.goto)

    step.__name__ = step.__qualname__ = node.__name__
    step.__doc__ = node.__doc__
    return step
