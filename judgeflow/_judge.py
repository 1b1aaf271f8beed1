"""The Python API: `Judge(model=...)`, one `Judging` (see judging.py) with a thin sync facade.

    judge = Judge(model="openai/gpt-4o-mini")          # or "baseline/lexical" offline
    result = judge.judge({"id": "q1", "question": q, "answer": a, "reference": r})
    async for seq, result in judge_stream(judge, items, concurrency=16): ...
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from .backends import Backend, Evidence, Offline, make_backend
from .config.client import ClientConfig, Spec, option
from .coverage import Coverage, requirement_checker
from .criteria import Criterion, load_criterion
from .errors import ConfigError, InvalidItemError, JudgeflowError
from .knowledge import STRATEGIES
from .items import FAMILIES, ColumnMap, Item, check_column_map
from .judging import CACHE_VERSION, DEFAULT_CONCURRENCY, ItemLike, SyncFacade, as_item, invalid_judgment
from .languages import item_language
from .results import Judgment
from .routing import choose_criterion
from .spans import with_spans

if TYPE_CHECKING:
    from .workflow import JudgeContext, Strategy

COVERAGE_VERSION = 1
#: the item fields a judge's answer depends on (not its id, label or extra fields)
JUDGED_FIELDS = frozenset({"question", "answer", "reference", "source", "spec", "mode", "criterion"})


class JudgeSpec(Spec):
    """One judge: a model, how items are routed to a criterion, the strategy, and its client."""

    kind: Literal["judge"] = "judge"
    model: str = option(..., "provider/model (openai/..., anthropic/..., ollama/..., baseline/lexical).",
                        flag="--model", results=True)
    mode: str | None = option(None, "Routing: auto (by fields), factual, faithfulness or spec.", flag="--mode",
                              results=True)
    criterion: str | None = option(None, "A fixed criterion: a shipped name or a .toml path.", flag="--criterion",
                                   results=True)
    strategy: Literal["graph", "single"] = option("graph", "graph (decompose, then check) or single (one call).",
                                                  flag="--strategy", results=True)
    coverage: bool = option(False, "Requirement coverage for items judged by a spec criterion.",
                            flag="--coverage", results=True)
    keep_trace: bool = option(True, "Keep rendered prompts and raw replies on each Judgment.", flag="--trace",
                              results=False)
    concurrency: int = option(16, "Items judged at once by the sync facade.", flag="--concurrency", results=False)
    check_dropped: bool = option(True, "Check the answer's numbers, dates and names no claim carries, as added "
                                 "claims (off: named in the row as not checked).", flag="--check-dropped",
                                 results=True)
    knowledge: Literal["default", "commit-first"] | None = option(
        None, "Claims the reference does not settle: default (the check decides) or commit-first (the judge "
        "fills their masked values first; disagreement -> unverifiable). None: the criterion's setting.",
        flag="--knowledge", results=True)
    evidence: str | None = option(None, "Documents for claims the reference does not settle: a JSONL file "
                                  "({\"text\"} a line) or a folder of .txt/.md files.", flag="--evidence",
                                  results=True)
    client: ClientConfig = Field(default_factory=ClientConfig, description="How the client talks to the model.")

    def build(self, **client: Any) -> Judge:
        """The Judge; `client` replaces client options (batch replay: `http_client`, no retries)."""
        return Judge(self.model, mode=self.mode, criterion=self.criterion, strategy=self.strategy,
                     coverage=self.coverage, keep_trace=self.keep_trace, concurrency=self.concurrency,
                     check_dropped=self.check_dropped, knowledge=self.knowledge, evidence=self.evidence,
                     config=ClientConfig.of(self.client, client))

    def judges(self) -> list[JudgeSpec]:
        return [self]


class Judge(SyncFacade):
    """A configured judge: a backend (model), a routing mode or fixed criterion, and a strategy."""

    def __init__(
        self,
        model: str | None = None,
        *,
        backend: Backend | None = None,
        mode: str | None = None,
        criterion: str | Path | Criterion | None = None,
        strategy: Strategy = "graph",
        concurrency: int = DEFAULT_CONCURRENCY,
        keep_trace: bool = True,
        coverage: bool = False,
        column_map: ColumnMap | None = None,
        config: ClientConfig | None = None,
        check_dropped: bool = True,
        knowledge: Literal["default", "commit-first"] | None = None, evidence: Any = None,
        **client_kwargs: Any,
    ) -> None:
        """
        Args:
            model: "provider/model" (openai/..., anthropic/..., ollama/..., baseline/lexical);
                defaults to $JUDGEFLOW_MODEL, else the offline baseline/lexical judge.
            backend: a ready backend instead of `model`.
            mode: "auto" (route by fields), "factual", "faithfulness" or "spec".
            criterion: a shipped criterion name, a path to a .toml file, or a Criterion.
            strategy: "graph" (decompose, then check all claims in one call) or "single" (one call).
            concurrency: items judged at once by `judge_many` (the sync facade).
            keep_trace: keep rendered prompts and raw replies on each Judgment.
            coverage: requirement coverage for items judged by a spec criterion: the spec is
                split into requirements (once per spec) and each is marked against the output;
                an unmet requirement makes the label 1 (`Judgment.requirements`).
            column_map: item field -> the column of a dict item holding it, for your own names
                (`{"reference": "gold_text"}`); a misspelt field is refused with the nearest one.
            config: every client option as one object (`judgeflow.config.ClientConfig`).
            **client_kwargs: fields of `config` as keywords (base_url, api_key, temperature, ...).
            check_dropped: check the numbers, dates and names of an answer that no claim of the
                decomposition carries, as added claims (graph strategy; on by default: the answer
                is judged whole); off, they are named in the row as not checked (`Judgment.dropped`).
            knowledge, evidence: claims the reference does not settle: "commit-first" or "default"
                (None: the criterion's), and documents or a retriever for them (`knowledge_args`).
        """
        if mode not in (None, "auto", *FAMILIES):
            raise ConfigError(f"mode {mode!r} is not one of: auto, {', '.join(FAMILIES)}")
        if strategy not in ("graph", "single"):
            raise ConfigError(f"strategy {strategy!r} is not one of: graph, single")
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.config = ClientConfig.of(config, client_kwargs)
        self.backend = backend or make_backend(model, self.config)
        self.criterion = criterion if criterion is None or isinstance(criterion, Criterion) else load_criterion(criterion)
        self._criterion_ref = (None if criterion is None else
                               str(criterion.path or criterion.name) if isinstance(criterion, Criterion) else str(criterion))
        self.mode = None if mode == "auto" else mode
        self.strategy: Strategy = strategy
        self.concurrency = concurrency
        self.keep_trace = keep_trace
        self.coverage = Coverage(requirement_checker(self.backend)) if coverage else None
        self.column_map = check_column_map(column_map)
        self.check_dropped = check_dropped
        self.knowledge, self.evidence, self._evidence_ref = knowledge_args(knowledge, evidence)
        self._compiled: Any = None

    @property
    def _graph(self) -> Any:
        """The compiled workflow, built on the first item judged: LangGraph takes about a second to
        import, and a run served entirely from the response cache never needs it."""
        if self._compiled is None:
            from .workflow import build_graph

            self._compiled = build_graph()
        return self._compiled

    @property
    def model(self) -> str:
        return self.backend.model

    def spec(self) -> JudgeSpec:
        """What this judge is, as data: `spec().build()` makes the same judge (a Judge over a ready
        `backend` is recorded by its model name and client options)."""
        return JudgeSpec(model=self.model, mode=self.mode, criterion=self._criterion_ref, strategy=self.strategy,
                         coverage=self.coverage is not None, keep_trace=self.keep_trace,
                         concurrency=self.concurrency, check_dropped=self.check_dropped, knowledge=self.knowledge,
                         evidence=self._evidence_ref, client=self.config)

    def context(self) -> JudgeContext:
        from .workflow import JudgeContext

        return JudgeContext(backend=self.backend, strategy=self.strategy, criterion=self.criterion, mode=self.mode,
                            coverage=self.coverage, check_dropped=self.check_dropped, knowledge=self.knowledge,
                            evidence=self.evidence)

    async def aclose(self) -> None:
        """Close the provider's HTTP connections before the event loop that judged ends (they
        belong to it); the Judge stays usable and reconnects on its next call. `async with
        Judge(...) as judge:` does this on exit. The offline judges hold nothing to close."""
        await self.backend.aclose()

    def fingerprint(self, item: Item) -> str | None:
        """The response-cache key of this judge answering `item`; None if the item cannot be routed.

        It covers the backend fingerprint (model, temperature, ...), the criterion the item is judged
        by (its content), the strategy, the requirement checker when coverage applies, and the item's
        judged content (not its id, label or extra fields). How the criterion was chosen (routed, a
        --mode, a --criterion) is not in it: `run`, `run --criterion X`, `tune` and every other command
        that judges an item by X with one model share one cached answer."""
        try:
            criterion, _ = choose_criterion(item, criterion=self.criterion, mode=self.mode)
        except JudgeflowError:
            return None
        data = {
            "v": CACHE_VERSION,
            "backend": self.backend.fingerprint,
            "criterion": criterion.fingerprint,
            "strategy": self.strategy,
            "item": item.model_dump(include=set(JUDGED_FIELDS)),
        }
        if isinstance(self.backend, Offline):  # the offline judges name their verdicts by the criterion's roles
            data["roles"] = criterion.verdict_roles()
        if self.check_dropped:
            data["check_dropped"] = True
        if criterion.knowledge_strategy(self.knowledge) != "default":  # absent otherwise: older keys stay
            data["knowledge"] = criterion.knowledge_settings.model_dump()
            data["knowledge"]["strategy"] = criterion.knowledge_strategy(self.knowledge)
        if self.evidence is not None and "knowledge" in criterion.bases:
            data["evidence"] = self.evidence.fingerprint
        # surrogatepass: a lone surrogate in an Item built in code must not crash the key
        text = json.dumps(data, sort_keys=True, ensure_ascii=False)
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        if self.coverage is None or not item.spec or not criterion.covers_spec:
            return key
        coverage = f"{key}|coverage-v{COVERAGE_VERSION}|{self.coverage.fingerprint}|{criterion.coverage_fingerprint}"
        return hashlib.sha256(coverage.encode()).hexdigest()

    def routed_by(self, item: Item) -> str | None:
        """Why this judge judges `item` by its criterion (a result's `routed_by`); None if it cannot be routed."""
        try:
            return choose_criterion(item, criterion=self.criterion, mode=self.mode)[1]
        except JudgeflowError:
            return None

    async def ajudge(self, item: ItemLike) -> Judgment:
        """Judge one item. Bad input gives an `invalid` judgment; judge failures an `unscored` one."""
        it = as_item(item, self.column_map)
        if isinstance(it, InvalidItemError):
            return invalid_judgment(it, model=self.model)
        from .workflow import JudgeState, graph_runs_listened, run_steps

        if graph_runs_listened():  # a tracer or callback sees the graph's run, as any LangGraph run
            out = await self._graph.ainvoke(JudgeState(item=it), context=self.context())
            state = JudgeState.model_validate(out)
        else:
            state = await run_steps(JudgeState(item=it), self.context())
        extra = it.extra
        if state.status == "invalid" and it.where:  # a routing error: name the row, as read errors do
            state.error = f"{it.where}: {state.error}"
            if it.line is not None:
                extra = {**extra, "line": it.line}
        return with_spans(Judgment(
            id=it.id,
            label=state.label,
            status=state.status,
            criterion=state.criterion.name if state.criterion else None,
            routed_by=state.routed_by,
            reason=state.reason,
            claims=state.results,
            requirements=state.requirements,
            dropped=state.dropped,
            citations=state.citations,
            arguments=state.arguments,
            error=state.error,
            usage=state.usage,
            model=self.model,
            structured=self.backend.structured,
            strategy=self.strategy,
            language=_language(it),
            human_label=it.label,
            extra=extra,
            trace=state.trace if self.keep_trace else [],
        ), it.answer)

def knowledge_args(knowledge: Any, evidence: Any) -> tuple[Any, Evidence | None, str | None]:
    """(knowledge, evidence, evidence as recorded) of a Judge.

    knowledge: "default" (the check call decides from the judge's knowledge), "commit-first" (the
    judge first fills the claim's masked values; a verdict from knowledge stands only where both
    reads agree, else `unverifiable`: knowledge.py) or None (the criterion's `[knowledge]` setting).
    evidence: a JSONL file ({"text", "id", "title"} a line), a folder of .txt/.md files, a list of
    texts, a LangChain retriever or a function of a query (`backends.Evidence`); claims settled by
    it get basis "evidence" and a quote verified in code. Only a path is recorded in the spec."""
    if knowledge not in (None, *STRATEGIES):
        raise ConfigError(f"knowledge {knowledge!r} is not one of: {', '.join(STRATEGIES)}")
    ref = str(evidence) if isinstance(evidence, (str, Path)) else None
    return knowledge, None if evidence is None else Evidence.of(evidence), ref


def _language(item: Item) -> str | None:
    given = item.extra.get("language")
    return given if isinstance(given, str) and given else item_language(item)


def judge(item: ItemLike, *, model: str | None = None, **kwargs: Any) -> Judgment:
    """Judge one item with a one-off `Judge(model=..., **kwargs)`."""
    return Judge(model, **kwargs).judge(item)
