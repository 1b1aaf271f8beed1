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

from .backends import Backend, Evidence, Offline, make_backend
from .config.client import ClientConfig, affects_results
from .config.judging import JudgeSpec
from .coverage import Coverage, requirement_checker
from .criteria import Criterion, load_criterion
from .errors import InvalidItemError, JudgeflowError
from .items import ColumnMap, Item, check_column_map
from .judging import CACHE_VERSION, ItemLike, SyncFacade, as_item, invalid_judgment
from .languages import item_language
from .results import Judgment
from .routing import choose_criterion
from .spans import with_spans

if TYPE_CHECKING:
    from .workflow import JudgeContext, Strategy

COVERAGE_VERSION = 1
#: the item fields a judge's answer depends on (not its id, label or extra fields)
JUDGED_FIELDS = frozenset({"question", "answer", "reference", "source", "spec", "mode", "criterion"})


#: the JudgeSpec fields `Judge` takes as keywords (besides `model`, and the live `criterion`,
#: `evidence` and `config`)
JUDGE_OPTIONS = frozenset(JudgeSpec.model_fields) - {"kind", "model", "criterion", "evidence",
                                                     "client"}
#: the results-affecting fields the cache key has its own rule for; any other one is keyed when set
_KEYED_BY_RULE = frozenset({"model", "mode", "criterion", "strategy", "coverage", "check_dropped",
                            "knowledge", "evidence", "client"})
_KEYED = tuple(f for f in JudgeSpec.model_fields
               if affects_results(JudgeSpec, f) and f not in _KEYED_BY_RULE)


class Judge(SyncFacade):
    """A configured judge: its `JudgeSpec` (model, routing, strategy, options, client) made live."""

    def __init__(
        self,
        model: str | JudgeSpec | None = None,
        *,
        backend: Backend | None = None,
        criterion: str | Path | Criterion | None = None,
        column_map: ColumnMap | None = None,
        config: ClientConfig | None = None,
        evidence: Any = None,
        **options: Any,
    ) -> None:
        """
        Args:
            model: "provider/model" (openai/..., anthropic/..., ollama/..., baseline/lexical);
                defaults to $JUDGEFLOW_MODEL, else the offline baseline/lexical judge. Or a
                `JudgeSpec`: the judge it describes (`judgeflow.build.build(spec)` does this).
            backend: a ready backend instead of `model`.
            criterion: a shipped criterion name, a path to a .toml file, or a Criterion.
            column_map: item field -> the column of a dict item holding it, for your own names
                (`{"reference": "gold_text"}`); a misspelt field is refused with the nearest one.
            config: every client option as one object (`judgeflow.config.ClientConfig`).
            evidence: documents or a retriever for claims the reference does not settle
                (`evidence_ref`); only a path is recorded in the spec.
            **options: any `JudgeSpec` field (`judgeflow.config.JudgeSpec`: its doc is each one's):
                mode ("auto", "factual", "faithfulness", "spec"), strategy ("graph": decompose,
                then check all claims in one call; "single": one call), concurrency (items at
                once in `judge_many`), keep_trace (rendered prompts and raw replies on each
                Judgment), coverage (requirement coverage for spec criteria:
                `Judgment.requirements`), check_dropped (the answer's numbers, dates and names
                no claim carries are checked as added claims; off: named as not checked),
                knowledge ("commit-first" or "default"; None: the criterion's); and any field of
                `config` (base_url, api_key, temperature, ...).
        """
        base, name = (model, model.model) if isinstance(model, JudgeSpec) else (None, model)
        judging = {k: options.pop(k) for k in list(options) if k in JUDGE_OPTIONS}
        self.config = ClientConfig.of(config or (base.client if base else None), options)
        if base is not None and criterion is None:
            criterion = base.criterion
        if base is not None and evidence is None:
            evidence = base.evidence
        ref = criterion.path or criterion.name if isinstance(criterion, Criterion) else criterion
        fields = {**(dict(base) if base else {}), **judging, "model": name or "",
                  "criterion": None if ref is None else str(ref),
                  "evidence": evidence_ref(evidence), "client": self.config}
        if fields.get("mode") == "auto":
            fields["mode"] = None
        spec = JudgeSpec.model_validate(fields)  # every rule, before anything is built
        self.backend = backend or make_backend(name, self.config)
        self._spec = spec.model_copy(update={"model": self.backend.model})
        self.evidence = None if evidence is None else Evidence.of(evidence)
        self.criterion = (criterion if criterion is None or isinstance(criterion, Criterion)
                          else load_criterion(criterion))
        self.coverage = Coverage(requirement_checker(self.backend)) if self._spec.coverage else None
        self.column_map = check_column_map(column_map)
        self.concurrency = self._spec.concurrency
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
        """What this judge is, as data: `build(spec())` makes the same judge (a Judge over a ready
        `backend` is recorded by its model name and client options)."""
        return self._spec

    @property
    def mode(self) -> str | None:
        return self._spec.mode

    @property
    def strategy(self) -> Strategy:
        return self._spec.strategy

    @property
    def keep_trace(self) -> bool:
        return self._spec.keep_trace

    @property
    def check_dropped(self) -> bool:
        return self._spec.check_dropped

    @property
    def knowledge(self) -> Literal["default", "commit-first"] | None:
        return self._spec.knowledge

    def context(self) -> JudgeContext:
        """What the graph judges an item with: this judge's spec and what was made live from it."""
        from .workflow import JudgeContext

        return JudgeContext(spec=self._spec, backend=self.backend, criterion=self.criterion,
                            coverage=self.coverage, evidence=self.evidence)

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
        for name in _KEYED:  # an option that changes results, set away from its default
            if getattr(self._spec, name) != JudgeSpec.model_fields[name].default:
                data[name] = getattr(self._spec, name)
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

def evidence_ref(evidence: Any) -> str | None:
    """A Judge's evidence as its spec records it: a JSONL file ({"text", "id", "title"} a line) or a
    folder of .txt/.md files by its path; a list of texts, a LangChain retriever or a function of a
    query (`backends.Evidence`) is not recorded. Claims settled by it get basis "evidence" and a
    quote verified in code."""
    return str(evidence) if isinstance(evidence, (str, Path)) else None


def _language(item: Item) -> str | None:
    given = item.extra.get("language")
    return given if isinstance(given, str) and given else item_language(item)


def judge(item: ItemLike, *, model: str | None = None, **kwargs: Any) -> Judgment:
    """Judge one item with a one-off `Judge(model=..., **kwargs)`."""
    return Judge(model, **kwargs).judge(item)
