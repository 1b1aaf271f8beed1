"""`tune`: improve a criterion from 30-50 labels, accepting an edit only if held-out agreement says so.

    result = tune(items, "factual_correctness", "openai/gpt-4o-mini", folds=5, candidates=3)
    result.criterion      # the tuned Criterion, or None when no edit helped beyond noise
    result.report         # TuneReport: held-out kappa before/after, flipped items, calls, cost

The loop the study ran by hand, with a guard against fitting 30-50 labels:
1. judge the labelled items with the current criterion (through the run store's cache);
2. split them into k folds (stratified by label); for each fold, collect the disagreements on
   the OTHER folds, by direction, with their deciding claims, and ask an editor model for up to
   `candidates` typed edits to the criterion's data (`not_errors`, `fact_kinds`, a verdict's
   meaning), most useful first;
3. judge each fold's held-out items with each of its edits applied (one at a time);
4. for each edit rank, pool the held-out results over the folds (a fold without an edit at that
   rank keeps the current criterion's result) and compare them with the current criterion on
   the same items: kappa difference with a paired bootstrap interval, and McNemar's exact test.
   An edit rank is accepted only when the interval excludes 0 AND McNemar's p is below
   0.05 / (the ranks tested) (Bonferroni). The edit written is the one most folds proposed at
   the accepted rank.

Calls: labels x calls-per-item x (1 + candidates) + folds (the editor), at most; cached items and
proposals are free, so a tune killed half-way resumes where it stopped.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..criteria import Criterion, load_criterion
from ..errors import (
    OVER_BUDGET,
    BudgetExceeded,
    ConfigError,
    InvalidItemError,
    LLMError,
    ProviderUnavailable,
)
from ..items import Item
from ..results import Judgment, Usage
from ..runs.budget import Budget
from .agreement import Agreement, Disagreement, agreement, deciding_claim
from .comparison import ComparisonReport, compare
from .edits import CriterionEdit, EditError, apply_edit
from .tune_own import own_gain
from .tune_power import TunePower, of_report
from .tune_prompt import editor_messages
from .tune_seams import BudgetReached, Editor, StepBudget, StoreJudging

ALPHA = 0.05
MIN_LABELS = 10
NOTHING = "no edit improved held-out agreement beyond noise"


class Candidate(BaseModel):
    """One fold's edit at one rank."""

    fold: int
    rank: int
    edit: CriterionEdit
    error: str | None = None
    """Why the edit could not be applied (it is then not judged)."""


class FoldInfo(BaseModel):
    fold: int
    held_out: int
    train_false_alarms: int = 0
    train_misses: int = 0
    proposed: int = 0
    cached: bool = False
    """The editor's reply came from the proposal cache."""
    error: str | None = None
    """Why the editor gave no usable reply for this fold."""


class RankResult(BaseModel):
    """The procedure "take the editor's edit at this rank", scored on held-out items."""

    rank: int
    candidates: list[Candidate] = Field(default_factory=list)
    comparison: ComparisonReport | None = None
    """Current criterion (a) against held-out results with this rank's edits (b)."""
    accepted: bool = False
    why: str = ""


def held_out_gain(rank: RankResult) -> float:
    """A rank's kappa gain on its held-out folds (0 when it was not compared)."""
    return (rank.comparison.kappa_diff or 0.0) if rank.comparison else 0.0


class TuneReport(BaseModel):
    """What `tune` did, what it measured, and what it spent."""

    criterion: str
    model: str
    editor_model: str
    labelled: int
    folds: int
    candidates: int
    seed: int
    unlabelled: int = 0
    """Usable input rows without a human label (not used)."""
    invalid: list[str] = Field(default_factory=list)
    """The errors of unusable input rows (not used)."""
    status: Literal["done", "budget"] = "done"
    stopped: str | None = None
    """Why the tune stopped early (the budget), with what to do."""
    before: Agreement | None = None
    """The current criterion on every labelled item (each item is held out once)."""
    fold_info: list[FoldInfo] = Field(default_factory=list)
    ranks: list[RankResult] = Field(default_factory=list)
    accepted: CriterionEdit | None = None
    accepted_rank: int | None = None
    verdict: str = ""
    judge_usage: Usage = Field(default_factory=Usage)
    editor_usage: Usage = Field(default_factory=Usage)
    cached_items: int = 0
    """Item judgments served from the response cache (no calls)."""
    cost: float | None = 0.0
    """Estimated USD for the calls made (None: no price is known for a model in `unpriced`)."""
    unpriced: list[str] = Field(default_factory=list)
    power: TunePower | None = None
    """The smallest held-out gain these labels could have detected, and the labels `detect` needs."""

    @property
    def calls(self) -> int:
        return self.judge_usage.calls + self.editor_usage.calls


class TuneResult(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    criterion: Criterion | None
    """The tuned criterion; None when nothing was accepted."""
    original: Criterion
    report: TuneReport


def make_folds(items: Sequence[Item], k: int, seed: int) -> list[list[int]]:
    """k folds of item positions, stratified by label, in a seeded order that does not depend on input order."""
    def order(i: int) -> str:
        return hashlib.sha256(f"{seed}:{items[i].id}".encode()).hexdigest()

    folds: list[list[int]] = [[] for _ in range(k)]
    n = 0
    for label in (0, 1):
        for i in sorted((i for i, it in enumerate(items) if it.label == label), key=order):
            folds[n % k].append(i)
            n += 1
    return [sorted(f) for f in folds]


def disagreements(items: Sequence[Item], results: Sequence[Judgment], positions: Iterable[int]) -> list[Disagreement]:
    """The disagreements among `positions`, with the judged texts and the deciding claim."""
    out = []
    for i in positions:
        it, j = items[i], results[i]
        if j.label is None or it.label is None or j.label == it.label:
            continue
        out.append(Disagreement(
            id=it.id, human=it.label, judge=j.label, direction="false_alarm" if j.label == 1 else "miss",
            criterion=j.criterion, reason=j.reason, deciding_claim=deciding_claim(j), claims=j.claims,
            question=it.question, answer=it.answer, reference=it.reference, source=it.source or None))
    return out


class _Tuner:
    """One tune's state: the items, the folds, the seams, the spending."""

    def __init__(self, items: list[Item], criterion: Criterion, judging: StoreJudging, editor: Editor, *,
                 folds: int, candidates: int, seed: int, budget: StepBudget, prices: Any,
                 carried: tuple[bool, bool] = (False, False)) -> None:
        self.items, self.criterion, self.judging, self.editor = items, criterion, judging, editor
        self.k, self.c, self.seed, self.budget, self.prices = folds, candidates, seed, budget, prices
        self.carried = carried
        """Whether the judge's and the editor's clients carry the cap (tune built them with it)."""
        self.report = TuneReport(criterion=criterion.name, model=judging.model, editor_model=editor.model,
                                 labelled=len(items), folds=folds, candidates=candidates, seed=seed)

    def _spent(self, usage: Usage, model: str, *, editor: bool = False) -> None:
        """Count `usage` against the budget and into the cost (None once a model's price is unknown)."""
        from ..runs.pricing import estimate_cost

        if not usage.calls:
            return
        cost = estimate_cost(model, usage, prices=self.prices)
        self.budget.add(usage, model, carried=self.carried[editor])
        if cost is None:
            self.report.unpriced = sorted({*self.report.unpriced, model})
        self.report.cost = None if self.report.unpriced else (self.report.cost or 0.0) + (cost or 0.0)

    async def _judge(self, criterion: Criterion, positions: list[int], doing: str) -> dict[int, Judgment]:
        subset = [self.items[i] for i in positions]
        self.budget.check(self.judging.planned_calls(criterion, subset), doing)
        results = await self.judging.judge(criterion, subset)
        usage = Usage()
        for j in results:
            usage.add(j.usage)
            self.report.cached_items += int(j.cached)
        self.report.judge_usage.add(usage)
        self._spent(usage, self.judging.model)
        cut = next((j.error for j in results if j.status == "unscored" and (j.error or "").startswith(OVER_BUDGET)), None)
        if cut:  # the cap refused calls inside the step: its scores would be partial
            raise BudgetReached(f"{doing}: {cut}")
        return dict(zip(positions, results))

    async def _propose(self, fold: int, train: list[int], baseline: list[Judgment]) -> list[Candidate]:
        dis = disagreements(self.items, baseline, train)
        info = FoldInfo(fold=fold, held_out=0, train_false_alarms=sum(d.direction == "false_alarm" for d in dis),
                        train_misses=sum(d.direction == "miss" for d in dis))
        self.report.fold_info.append(info)
        if not dis:
            return []
        self.budget.check(1, f"fold {fold + 1}'s proposal")
        usage = Usage()
        try:
            edits, info.cached = await self.editor.propose(
                self.criterion, editor_messages(self.criterion, dis, self.c), self.c, usage)
        except ProviderUnavailable:
            raise
        except BudgetExceeded as e:  # the cap refused the proposal call: the tune stops here
            raise BudgetReached(f"fold {fold + 1}'s proposal: {e}") from None
        except LLMError as e:  # this fold gets no edits; the others still may
            edits, info.error = [], str(e)
        finally:
            self.report.editor_usage.add(usage)
            self._spent(usage, self.editor.model, editor=True)
        info.proposed = len(edits)
        out = []
        for rank, edit in enumerate(edits):
            try:
                apply_edit(self.criterion, edit)
                out.append(Candidate(fold=fold, rank=rank, edit=edit))
            except EditError as e:
                out.append(Candidate(fold=fold, rank=rank, edit=edit, error=str(e)))
        return out

    async def run(self) -> TuneReport:
        n = len(self.items)
        folds = make_folds(self.items, self.k, self.seed)
        first = await self._judge(self.criterion, list(range(n)), "judging the labelled items")
        baseline = [first[i] for i in range(n)]
        unscored = [j for j in baseline if j.label is None]
        if n - len(unscored) < MIN_LABELS:
            raise LLMError(f"the judge scored only {n - len(unscored)} of {n} labelled items with the current criterion "
                           f"(first failure: {unscored[0].error or unscored[0].status}); fix that, then tune again")
        self.report.before = _agreement(self.items, baseline)
        proposals: list[list[Candidate]] = []
        for f, held in enumerate(folds):
            held_set = set(held)
            train = [i for i in range(n) if i not in held_set]
            proposals.append(await self._propose(f, train, baseline))
            self.report.fold_info[-1].held_out = len(held)
        held_results: dict[tuple[int, int], dict[int, Judgment]] = {}
        for rank in range(self.c):
            cands = [c for p in proposals for c in p if c.rank == rank]
            if not cands:
                continue
            pooled = list(baseline)
            for c in cands:
                if c.error is None:
                    held = folds[c.fold]
                    got = await self._judge(apply_edit(self.criterion, c.edit), held,
                                            f"judging fold {c.fold + 1}'s held-out items with edit {rank + 1}")
                    held_results[(rank, c.fold)] = got
                    for i in held:
                        pooled[i] = got[i]
            self.report.ranks.append(_score(rank, cands, baseline, pooled, self.items))
        _decide(self.report)
        # the written edit must show the gain on its own folds' held-out items
        own_gain(self.report, baseline, folds, held_results, self.items, alpha=ALPHA, nothing=NOTHING)
        return self.report


def _agreement(items: Sequence[Item], results: Sequence[Judgment]) -> Agreement:
    pairs = [(it.label, j.label) for it, j in zip(items, results) if j.label is not None and it.label is not None]
    return agreement([h for h, _ in pairs], [int(x) for _, x in pairs])


def _score(rank: int, cands: list[Candidate], baseline: list[Judgment], pooled: list[Judgment],
           items: Sequence[Item]) -> RankResult:
    out = RankResult(rank=rank, candidates=cands)
    if all(c.error is not None for c in cands):
        out.why = "no edit at this rank could be applied"
        return out
    labels = {it.id: it.label for it in items if it.label is not None}
    try:
        out.comparison = compare(baseline, pooled, labels, names=("current", f"edit {rank + 1}"))
    except InvalidItemError as e:
        out.why = f"not comparable: {e}"
    return out


def _decide(report: TuneReport) -> None:
    """Accept the best edit rank whose held-out gain is clear after a Bonferroni correction."""
    tested = [r for r in report.ranks if r.comparison is not None]
    level = ALPHA / max(len(tested), 1)
    for r in tested:
        cmp = r.comparison
        assert cmp is not None
        ci, diff = cmp.kappa_diff_ci, cmp.kappa_diff
        clear_ci = ci is not None and ci[0] > 0
        r.accepted = bool(diff is not None and diff > 0 and clear_ci and cmp.mcnemar_p < level)
        r.why = (f"held-out kappa {_signed(diff)}, 95% CI {_ci(ci)}, McNemar p = {cmp.mcnemar_p:.3g} "
                 f"(needs a CI above 0 and p < {level:.3g})")
    won = [r for r in tested if r.accepted]
    if not won:
        report.verdict = f"{NOTHING} ({len(tested)} edit rank(s) tested on held-out folds)."
        return
    best = max(won, key=held_out_gain)
    usable = [c for c in best.candidates if c.error is None]
    key, _ = Counter(c.edit.key() for c in usable).most_common(1)[0]
    chosen = next(c for c in usable if c.edit.key() == key)
    report.accepted, report.accepted_rank = chosen.edit, best.rank
    same = sum(1 for c in usable if c.edit.key() == key)
    report.verdict = (f"accepted edit {best.rank + 1} ({chosen.edit.describe()}; proposed by {same} of "
                      f"{report.folds} folds): {best.why}.")


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.2f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "n/a" if ci is None else f"{ci[0]:+.2f} to {ci[1]:+.2f}"


def labelled_items(items: Iterable[Item | Mapping[str, Any] | InvalidItemError],
                   labels: Mapping[str, int] | None = None) -> tuple[list[Item], int, list[str]]:
    """The items with a human label (from `labels` when given, else each item's own), the number
    of usable rows without one, and the errors of unusable rows (they are not tuned on)."""
    out, unlabelled, invalid = [], 0, []
    for obj in items:
        if not isinstance(obj, (Item, InvalidItemError)):
            try:
                obj = Item.from_record(obj)
            except InvalidItemError as e:
                obj = e
        if isinstance(obj, InvalidItemError):
            invalid.append(str(obj))
            continue
        label = labels.get(obj.id) if labels is not None else obj.label
        if label is None:
            unlabelled += 1
            continue
        out.append(obj if obj.label == label else obj.model_copy(update={"label": label}))
    return out, unlabelled, invalid


async def atune(
    items: Iterable[Item | Mapping[str, Any] | InvalidItemError],
    criterion: str | Path | Criterion,
    model: str | None = None,
    *,
    backend: Any = None,
    editor: Any = None,
    editor_model: str | None = None,
    labels: Mapping[str, int] | None = None,
    folds: int = 5,
    candidates: int = 3,
    strategy: str = "graph",
    store: Any = None,
    proposals_dir: str | Path | None = None,
    budget: Budget | StepBudget | str | None = None,
    prices: Any = None,
    seed: int = 0,
    concurrency: int = 16,
    detect: float | None = None,
    editor_options: Mapping[str, Any] | None = None,
    **client_kwargs: Any,
) -> TuneResult:
    """Tune `criterion` on labelled `items` (see the module docstring); the async core of `tune`.

    `report.power` says the smallest held-out gain these labels could have detected (80% power at
    the acceptance level); `detect` (a share, 0.10 = 10 points) adds the labels that gain needs.
    `editor_options`: the `editor_model` client's own `base_url`, `api_key` over `client_kwargs`."""
    original = criterion if isinstance(criterion, Criterion) else load_criterion(criterion)
    chosen, unlabelled, invalid = labelled_items(items, labels)
    if len(chosen) < MIN_LABELS:
        raise ConfigError(f"tune needs at least {MIN_LABELS} labelled items (30-50 recommended), got {len(chosen)}")
    dupes = sorted(i for i, k in Counter(it.id for it in chosen).items() if k > 1)
    if dupes:
        raise InvalidItemError(f"ids {dupes[:5]} appear more than once; each labelled item needs its own id", field="id")
    if len({it.label for it in chosen}) < 2:
        raise ConfigError("the labels have one class only; label items of both classes (0 and 1)")
    if not 2 <= folds <= len(chosen) or candidates < 1:
        raise ConfigError(f"--folds must be 2..{len(chosen)} and --candidates at least 1 (got {folds}, {candidates})")
    spend = budget if isinstance(budget, StepBudget) else StepBudget.parse(budget, prices=prices)
    if spend.cap is not None:  # the clients tune builds carry the cap: each call reserves before it is sent
        client_kwargs = {**client_kwargs, "budget": spend.cap}
    carried = (backend is None, editor is None and (bool(editor_model) or backend is None))
    judging, ed = _seams(model, backend, editor, editor_model, store, strategy, concurrency, proposals_dir,
                         client_kwargs, dict(editor_options or {}))
    tuner = _Tuner(chosen, original, judging, ed, folds=folds, candidates=candidates, seed=seed,
                   budget=spend, prices=prices, carried=carried)
    _check_priced(spend, [judging.model, ed.model], prices)
    try:
        tuner.report.unlabelled, tuner.report.invalid = unlabelled, invalid
        report = await tuner.run()
    except BudgetReached as e:
        report = tuner.report
        report.status, report.stopped = "budget", str(e)
        report.verdict = (f"stopped at the budget before every edit was scored: {e}. Nothing is accepted; run "
                          "again with a larger --budget (what is done is served from the caches).")
    finally:
        await _close(judging, ed)
    report.power = of_report(report, detect=detect, alpha=ALPHA)
    tuned = apply_edit(original, report.accepted) if report.accepted else None
    return TuneResult(criterion=tuned, original=original, report=report)


def _seams(model: str | None, backend: Any, editor: Any, editor_model: str | None, store: Any, strategy: str,
           concurrency: int, proposals_dir: str | Path | None, client_kwargs: dict[str, Any],
           editor_options: dict[str, Any] | None = None) -> tuple[StoreJudging, Editor]:
    from ..backends import make_backend
    from ..backends.llm_judge import LLMJudge
    from ..backends.passages import PassageJudge
    from ..runs.store import RunStore

    if store is not None and not isinstance(store, RunStore):
        store = RunStore(store)
    backend = backend or make_backend(model, **client_kwargs)
    owned = editor is None and bool(editor_model)
    if owned:
        from ..backends.llm import make_client

        editor = make_client(str(editor_model), **{**client_kwargs, **(editor_options or {})})
    elif editor is None:
        model_judge = backend.inner if isinstance(backend, PassageJudge) else backend  # long sources cut to passages
        editor = model_judge.client if isinstance(model_judge, LLMJudge) else None
    if editor is None:
        raise ConfigError(f"tune needs a model to propose edits; {backend.model!r} has none: pass "
                          "--editor-model provider/model (or editor=make_client(...))")
    if proposals_dir is None and isinstance(store, RunStore):
        proposals_dir = store.path.parent / "tune-proposals"
    return (StoreJudging(backend, store=store, strategy=strategy, concurrency=concurrency),
            Editor(editor, cache_dir=Path(proposals_dir) if proposals_dir else None, owned=owned))


#: (input, output) tokens a judge or editor call is taken to cost before one has been made: a
#: decompose or check call of a short item (the cap is checked again on real costs once known)
FIRST_CALL_TOKENS = (800, 120)


def _check_priced(budget: StepBudget, models: list[str], prices: Any) -> None:
    from ..runs.pricing import price_for

    unknown = [m for m in dict.fromkeys(models) if price_for(m, prices) is None]
    if budget.cost is not None and unknown:
        raise ConfigError(f"--budget {budget.cost} caps the cost, but no price is known for {', '.join(unknown)}; "
                          "pass --prices FILE, or cap the calls instead (--budget 500)")
    if budget.cost is not None:  # checked from the first step on: a call's cost before any is known
        from ..runs.pricing import estimate_cost

        one = Usage(calls=1, input_tokens=FIRST_CALL_TOKENS[0], output_tokens=FIRST_CALL_TOKENS[1])
        budget.first_call = max(estimate_cost(m, one, prices=prices) or 0.0 for m in models)


async def _close(judging: StoreJudging, editor: Editor) -> None:
    from .._judge import Judge

    await Judge(backend=judging.backend).aclose()
    if editor.owned:  # built here for --editor-model; the judge's own client was closed above
        await editor.client.aclose()


def tune(items: Iterable[Item | Mapping[str, Any] | InvalidItemError], criterion: str | Path | Criterion,
         model: str | None = None, **kwargs: Any) -> TuneResult:
    """Sync facade of `atune`: returns the tuned criterion (or None) and the report."""
    from ..judging import run_sync

    return run_sync(atune(items, criterion, model, **kwargs))
