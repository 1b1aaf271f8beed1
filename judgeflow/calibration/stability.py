"""Judge stability (test-retest): the same judge on the same items, judged again.

    report = stability(["run1.jsonl", "run2.jsonl"])     # two or more runs of the same items
    report = stability("run.jsonl")                       # one run made with `judgeflow run --repeats K`
    report.flip_rate, report.kappa, report.kappa_ci, report.unstable

Providers are not deterministic, at temperature 0 too: the same answer can get 0 on one run and 1
on the next. An item is *unstable* when its scored verdicts differ between repeats. The flip rate
is the share of items (of those with two or more scored verdicts) that are unstable, with a Wilson
interval; `disagreement` is the chance that two verdicts on an item differ (pairs of repeats).
Kappa between repeats: Cohen's for two repeats (`agreement.agreement`, with its interval), Fleiss'
for more (`members.fleiss_kappa`, with a seeded bootstrap interval), on items every repeat scored.
Each unstable item keeps each repeat's deciding claim: the claims that flip.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from ..errors import RunsDiffer
from ..results import ClaimResult, JudgeVote, Judgment
from . import DEFAULT_BOOT
from .agreement import agreement, bootstrap_indices, deciding_claim, percentile_ci, strength
from .labels import Label, read_run
from .members import fleiss_kappa
from .pairing import by_id, differences
from .rates import pct, wilson_interval

#: a later run with more than this share of its rows served from the cache repeats the first run's verdicts
CACHED_SHARE = 0.5


class Verdict(BaseModel):
    """One repeat's verdict on an item."""

    label: Label | None
    claim: ClaimResult | None = None
    """The claim whose error verdict made the label 1; None for a 0 or an unscored verdict."""
    reason: str | None = None


class ItemStability(BaseModel):
    """One item's verdicts across the repeats."""

    id: str
    verdicts: list[Verdict]
    flipped: bool
    """The scored verdicts are not all the same."""
    disagreement: float | None = None
    """Share of pairs of scored verdicts that differ; None with fewer than two."""

    @property
    def labels(self) -> list[Label | None]:
        return [v.label for v in self.verdicts]


class StabilityReport(BaseModel):
    """How often the same judge changes its verdict on the same item."""

    sources: list[str]
    repeats: int
    """Verdicts per item (the most any item has)."""
    items: int
    """Items with a scorable input (invalid rows are left out: the same in every repeat)."""
    compared: int = 0
    """Items with two or more scored verdicts."""
    flipped: int = 0
    flip_rate: float | None = None
    flip_ci: tuple[float, float] | None = None
    """Wilson 95% interval of the flip rate."""
    disagreement: float | None = None
    """The chance that two verdicts on an item differ (mean over compared items)."""
    kappa: float | None = None
    kappa_ci: tuple[float, float] | None = None
    kappa_method: str = ""
    kappa_items: int = 0
    kappa_note: str | None = None
    unscored: int = 0
    """Verdicts the judge could not give (label null), over all repeats."""
    invalid: int = 0
    models: list[str] = Field(default_factory=list)
    unstable: list[ItemStability] = Field(default_factory=list)
    """The items whose verdict flips, with each repeat's deciding claim."""
    verdict: str = ""
    warnings: list[str] = Field(default_factory=list)

    @property
    def unstable_ids(self) -> set[str]:
        return {s.id for s in self.unstable}


def verdicts_of(j: Judgment) -> list[Verdict]:
    """A row's verdicts: each of its repeats, or the row itself when it has none."""
    if j.repeats:
        return [_verdict(v) for v in j.repeats]
    return [Verdict(label=j.label, claim=deciding_claim(j), reason=j.reason)]


def _verdict(v: JudgeVote) -> Verdict:
    claim = next((c for c in v.claims if c.error), None) if v.label == 1 else None
    return Verdict(label=v.label, claim=claim, reason=v.reason)


def item_stability(item_id: str, verdicts: list[Verdict]) -> ItemStability:
    scored = [v.label for v in verdicts if v.label is not None]
    pairs = list(combinations(scored, 2))
    return ItemStability(id=item_id, verdicts=verdicts, flipped=len(set(scored)) > 1,
                         disagreement=sum(x != y for x, y in pairs) / len(pairs) if pairs else None)


def load_runs(runs: Sequence[Iterable[Judgment] | str | Path], store: str | Path | None = None
              ) -> tuple[list[list[Judgment]], list[str]]:
    """Each run's rows and name; RunsDiffer unless all judged the same items with the same judge."""
    _given_once(runs)
    loaded = [read_run(r, store=store) for r in runs]
    rows, names = [rows for rows, _ in loaded], [name for _, name in loaded]
    names = [n if names.count(n) == 1 else f"{n} #{k + 1}" for k, n in enumerate(names)]
    first = by_id(rows[0], names[0])
    for other, name in zip(rows[1:], names[1:]):
        diff = differences(first, by_id(other, name), names[0], name)
        if diff:
            raise RunsDiffer(f"{names[0]} and {name} are not repeats of one judge on the same items", diff)
    return rows, names


def _given_once(runs: Sequence[Iterable[Judgment] | str | Path]) -> None:
    """Refuse one file (or run id) given twice: it agrees with itself by construction (kappa 1.00)."""
    from ..errors import ConfigError
    from ..files import same_file

    named = [r for r in runs if isinstance(r, (str, Path))]
    for k, a in enumerate(named):
        for b in named[:k]:
            if str(a) == str(b) or same_file(a, b):
                raise ConfigError(f"{a} is given twice" + ("" if str(a) == str(b) else f" (also as {b})")
                                  + ": a run agrees with itself by construction, so the "
                                  "stability would read 1.00 and measure nothing; give runs judged apart (judge the "
                                  "items again with --no-cache), or one run made with --repeats K")


def stability(
    runs: Iterable[Judgment] | str | Path | Sequence[Iterable[Judgment] | str | Path],
    *, store: str | Path | None = None, seed: int = 0, n_boot: int = DEFAULT_BOOT,
) -> StabilityReport:
    """Test-retest stability of a judge from several runs of the same items, or one run with repeats.

    Args:
        runs: results files, run ids (in `store`) or lists of Judgments; one run must carry
            repeats (`judgeflow run --repeats K`).
        store: the run store that run ids are looked up in.
        seed, n_boot: the bootstrap of Fleiss' kappa (three or more repeats).

    Raises:
        RunsDiffer: the runs judged other items or with another judge or criterion.
        ConfigError: a single run without repeats.
    """
    sources = [runs] if isinstance(runs, (str, Path)) or _is_rows(runs) else list(runs)
    rows, names = load_runs(sources, store)  # type: ignore[arg-type]
    per_item: dict[str, list[Verdict]] = {}
    invalid: set[str] = set()
    for run in rows:
        for j in run:
            if j.status == "invalid":
                invalid.add(j.id)
            else:
                per_item.setdefault(j.id, []).extend(verdicts_of(j))
    for i in invalid:
        per_item.pop(i, None)
    k = max((len(v) for v in per_item.values()), default=0)
    if k < 2:
        from ..errors import ConfigError

        raise ConfigError(f"{names[0]}: one verdict per item; stability needs repeats: give two or more results files "
                          "of the same items (judged with --no-cache), or one run made with `judgeflow run --repeats K`")
    items = [item_stability(i, v) for i, v in per_item.items()]
    report = StabilityReport(sources=names, repeats=k, items=len(items), invalid=len(invalid),
                             unscored=sum(v.label is None for s in items for v in s.verdicts),
                             models=sorted({j.model or "(none)" for run in rows for j in run if j.status != "invalid"}))
    _rates(report, items)
    _kappa(report, items, k, seed=seed, n_boot=n_boot)
    report.unstable = [s for s in items if s.flipped]
    report.warnings = _warnings(rows, names, report)
    report.verdict = verdict(report)
    return report


def _is_rows(x: object) -> bool:
    return isinstance(x, list) and bool(x) and isinstance(x[0], Judgment)


def _rates(report: StabilityReport, items: list[ItemStability]) -> None:
    compared = [s for s in items if s.disagreement is not None]
    report.compared = len(compared)
    report.flipped = sum(s.flipped for s in compared)
    if compared:
        report.flip_rate = report.flipped / len(compared)
        report.flip_ci = wilson_interval(report.flipped, len(compared))
        report.disagreement = sum(s.disagreement or 0.0 for s in compared) / len(compared)


def _kappa(report: StabilityReport, items: list[ItemStability], k: int, *, seed: int, n_boot: int) -> None:
    full = [s.labels for s in items if len(s.labels) == k and None not in s.labels]
    report.kappa_items = len(full)
    if k == 2:
        report.kappa_method = "Cohen's kappa between the two repeats"
        a = agreement([r[0] for r in full], [r[1] for r in full], seed=seed, n_boot=n_boot)  # type: ignore[misc]
        report.kappa, report.kappa_ci, report.kappa_note = a.kappa, a.kappa_ci, a.kappa_note or a.kappa_ci_note
        return
    report.kappa_method = f"Fleiss' kappa between the {k} repeats"
    r = np.asarray(full, dtype=float)
    report.kappa = fleiss_kappa(r) if len(full) >= 2 else None
    if report.kappa is None:
        report.kappa_note = "undefined: fewer than two items every repeat scored, or every verdict the same class"
        return
    boot = [fleiss_kappa(r[idx]) for idx in bootstrap_indices(len(full), seed=seed, n_boot=n_boot)]
    report.kappa_ci = percentile_ci(np.array([np.nan if x is None else x for x in boot]))


def _warnings(rows: list[list[Judgment]], names: list[str], report: StabilityReport) -> list[str]:
    out = []
    for run, name in zip(rows[1:], names[1:]):
        cached = sum(bool(j.cached) for j in run)
        if run and cached / len(run) > CACHED_SHARE:
            out.append(f"{name}: {cached} of {len(run)} rows were served from the response cache, so they repeat an "
                       "earlier verdict instead of judging again; judge the repeats with --no-cache")
    if report.unscored:
        out.append(f"{report.unscored} verdict(s) unscored: left out of the flip rate and kappa")
    if report.compared and report.compared < 30:
        out.append(f"only {report.compared} items compared: the intervals are wide")
    return out


def verdict(r: StabilityReport) -> str:
    """The stability in plain words."""
    if not r.compared:
        return "No item has two scored verdicts: stability cannot be measured."
    if r.flipped == 0:
        head = f"The judge gave the same verdict on all {r.compared} items across {r.repeats} repeats."
    else:
        ci = f" [{pct(r.flip_ci[0])}, {pct(r.flip_ci[1])}]" if r.flip_ci else ""
        head = (f"The judge changed its verdict on {r.flipped} of {r.compared} items ({pct(r.flip_rate)}{ci}) "
                f"across {r.repeats} repeats: those verdicts are noise, not a property of the answer.")
    if r.kappa is None:
        return f"{head} Kappa between repeats: {r.kappa_note or 'undefined'}."
    ci = f", 95% CI {r.kappa_ci[0]:.2f} to {r.kappa_ci[1]:.2f}" if r.kappa_ci else ""
    return f"{head} {r.kappa_method}: {r.kappa:.2f} ({strength(r.kappa)}{ci}) on {r.kappa_items} items."


def merged(runs: Sequence[Iterable[Judgment] | str | Path], *, store: str | Path | None = None) -> list[Judgment]:
    """The first run's rows, each carrying every run's verdicts as `repeats` (a file `gate`, `calibrate`
    and `sample --focus unstable` read as a run made with --repeats)."""
    rows, _ = load_runs(runs, store)
    others = [by_id(run, "") for run in rows[1:]]
    out = []
    for j in rows[0]:
        if j.status == "invalid":
            out.append(j)
            continue
        votes = [v for row in [j, *(o[j.id] for o in others)] for v in _votes(row)]
        out.append(j.model_copy(update={"repeats": votes}))
    return out


def _votes(j: Judgment) -> list[JudgeVote]:
    if j.repeats:
        return list(j.repeats)
    return [JudgeVote(model=j.model, role="repeat", label=j.label, status=j.status, reason=j.reason,
                      claims=j.claims, error=j.error, usage=j.usage, cached=j.cached)]
