"""Two runs on the same items (two criteria, two models, two strategies), compared honestly.

    report = compare("ref_faith.jsonl", "factual.jsonl")
    report.a.agreement.kappa, report.b.agreement.kappa, report.kappa_diff, report.kappa_diff_ci
    report.mcnemar_p, report.disagreements

Both runs are scored on the same items: those both judged (0/1) and a person labelled. The
kappa difference (B - A) gets a paired bootstrap interval (the same resampled items for
both runs), and McNemar's exact test asks whether one run gets right more of the items the
other gets wrong. Runs of different item sets are refused; runs of different criteria are the
point of the command.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from ..errors import InvalidItemError
from ..results import ClaimResult, Judgment
from .agreement import (
    DEFAULT_BOOT,
    SMALL_SAMPLE,
    Agreement,
    agreement,
    bootstrap_indices,
    deciding_claim,
    kappa_of,
    percentile_ci,
    two_places,
)
from .labels import HumanLabels, Label, join_labels, read_labels, read_results
from .span_compare import SpanComparison, compare_spans
from .span_metrics import read_human_spans, spans_of_results

Side = Literal["a", "b"]


class RunSummary(BaseModel):
    """One of the two runs: what it is and how it agrees with people on the paired items."""

    name: str
    """A short name: the criterion, model or strategy that differs between the runs."""
    path: str | None = None
    criteria: dict[str, int] = Field(default_factory=dict)
    models: dict[str, int] = Field(default_factory=dict)
    strategies: dict[str, int] = Field(default_factory=dict)
    agreement: Agreement
    unscored: int = 0
    """Labelled items this run left unscored or invalid (so not paired)."""


class Decision(BaseModel):
    """One run's label on an item and what decided it."""

    label: Label
    claim: ClaimResult | None = None
    """The first claim with an error verdict (for a 1); None for a 0."""
    reason: str | None = None
    claims: list[ClaimResult] = Field(default_factory=list)


class ItemDiff(BaseModel):
    """An item the two runs label differently."""

    id: str
    human: Label
    right: Side
    """Which run agrees with the person."""
    a: Decision
    b: Decision


class ComparisonReport(BaseModel):
    """Run A against run B on the same labelled items."""

    a: RunSummary
    b: RunSummary
    n: int
    """Paired items: labelled, and scored by both runs."""
    total: int
    """Items in each run."""
    unlabelled: int = 0
    label_source: str = "results"
    kappa_diff: float | None = None
    """kappa(B) - kappa(A) on the paired items."""
    kappa_diff_ci: tuple[float, float] | None = None
    """Paired percentile-bootstrap 95% interval of the difference."""
    a_right_b_wrong: int = 0
    b_right_a_wrong: int = 0
    mcnemar_p: float = 1.0
    """McNemar's exact two-sided p (binomial on the discordant pairs)."""
    disagreements: list[ItemDiff] = Field(default_factory=list)
    verdict: str = ""
    warnings: list[str] = Field(default_factory=list)
    seed: int = 0
    n_boot: int = DEFAULT_BOOT
    spans: SpanComparison | None = None
    """Both runs' span-level precision/recall/F1 against human spans (labels' `spans` or `meta.spans`), when given."""


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p for discordant counts b and c: 2 * P(X <= min(b, c)), X ~ Bin(b + c, 1/2)
    (scipy's exact binomial test, which comes with scikit-learn)."""
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(min(b, c), b + c, 0.5).pvalue)


def _load(run: Iterable[Judgment] | str | Path) -> tuple[list[Judgment], str | None]:
    if isinstance(run, (str, Path)):
        return read_results(run), str(run)
    return list(run), None


def check_same_items(a: list[Judgment], b: list[Judgment], wa: str, wb: str) -> None:
    ids_a, ids_b = {j.id: j for j in a}, {j.id: j for j in b}
    for rows, where in ((a, wa), (b, wb)):
        dupes = [i for i, k in Counter(j.id for j in rows).items() if k > 1]
        if dupes:
            raise InvalidItemError(f"ids {dupes[:5]} appear more than once; each item must be judged once",
                                   path=where, field="id")
    only_a, only_b = [i for i in ids_a if i not in ids_b], [i for i in ids_b if i not in ids_a]
    if only_a or only_b:
        def some(ids: list[str]) -> str:
            return ", ".join(ids[:5]) + (" ..." if len(ids) > 5 else "") if ids else "none"

        raise InvalidItemError(
            f"the two runs are of different items: {len(only_a)} id(s) only in {wa} ({some(only_a)}), "
            f"{len(only_b)} only in {wb} ({some(only_b)}); judge the same input file in both runs",
            field="id",
        )
    for i, ja in ids_a.items():
        jb = ids_b[i]
        if ja.human_label != jb.human_label:
            raise InvalidItemError(f"item {i!r} has human_label {ja.human_label} in {wa} but {jb.human_label} in "
                                   f"{wb}: the runs were made from different inputs", field="human_label", item_id=i)
        for k in ja.extra.keys() & jb.extra.keys():
            if ja.extra[k] != jb.extra[k]:
                raise InvalidItemError(f"item {i!r} has a different {k!r} in {wa} and {wb}: the runs were made "
                                       "from different inputs", field=k, item_id=i)


def _names(a: list[Judgment], b: list[Judgment], wa: str, wb: str) -> tuple[str, str]:
    for attr in ("criterion", "model", "strategy"):
        va = sorted({str(getattr(j, attr)) for j in a})
        vb = sorted({str(getattr(j, attr)) for j in b})
        if va != vb:
            return "+".join(va), "+".join(vb)
    na, nb = Path(wa).stem, Path(wb).stem
    return (na, nb) if na != nb else (f"{na} (A)", f"{nb} (B)")


def _decision(j: Judgment) -> Decision:
    return Decision(label=j.label or 0, claim=deciding_claim(j), reason=j.reason, claims=j.claims)


def compare(
    a: Iterable[Judgment] | str | Path,
    b: Iterable[Judgment] | str | Path,
    labels: HumanLabels | Mapping[str, Label] | str | Path | None = None,
    *,
    names: tuple[str, str] | None = None,
    seed: int = 0,
    n_boot: int = DEFAULT_BOOT,
) -> ComparisonReport:
    """Compare two runs on the same items against human labels.

    Args:
        a, b: Judgments, or paths of results files from `judgeflow run`.
        labels: human labels by id (path, `read_labels()` output or dict); default: human_label.
        names: display names; default: the criterion, model or strategy that differs.
        seed, n_boot: the paired bootstrap.

    Raises:
        InvalidItemError: the runs cover different ids or inputs, or no item is labelled and
            scored by both.
    """
    rows_a, path_a = _load(a)
    rows_b, path_b = _load(b)
    wa, wb = path_a or "run A", path_b or "run B"
    check_same_items(rows_a, rows_b, wa, wb)
    human_spans = spans_of_results(rows_a)
    if isinstance(labels, (str, Path)):
        human_spans.update(read_human_spans(labels))
        labels = read_labels(labels)
    joined = join_labels(rows_a, labels)
    by_b = {j.id: j for j in rows_b}
    pairs = [(ja, by_b[ja.id], h) for ja, h in joined.pairs]
    paired = [(ja, jb, h) for ja, jb, h in pairs if ja.label is not None and jb.label is not None]
    if not paired:
        raise InvalidItemError("nothing to compare: no item is labelled by a person and scored by both runs "
                               "(pass --labels FILE, or judge inputs that carry a 'label')", path=wa)
    human = np.array([h for _, _, h in paired])
    la = np.array([ja.label for ja, _, _ in paired])
    lb = np.array([jb.label for _, jb, _ in paired])
    name_a, name_b = names or _names(rows_a, rows_b, wa, wb)

    sides = [_run_summary(name, path, [t[side] for t in paired], labels_, human, seed, n_boot,
                          unscored=sum(1 for t in pairs if t[side].label is None))
             for side, (name, path, labels_) in enumerate(((name_a, path_a, la), (name_b, path_b, lb)))]
    report = ComparisonReport(
        a=sides[0], b=sides[1],
        n=len(paired), total=len(rows_a), unlabelled=len(joined.unlabelled), label_source=joined.label_source,
        a_right_b_wrong=int(((la == human) & (lb != human)).sum()),
        b_right_a_wrong=int(((lb == human) & (la != human)).sum()),
        seed=seed, n_boot=n_boot,
    )
    _paired_tests(report, paired, human, la, lb)
    if human_spans:
        report.spans = compare_spans([(ja, jb) for ja, jb, _ in paired], human_spans, seed=seed, n_boot=n_boot)
    report.warnings = _warnings(report, rows_a, rows_b, joined.only_in_labels)
    report.verdict = verdict(report)
    return report


def _run_summary(name: str, path: str | None, used: list[Judgment], labels: np.ndarray, human: np.ndarray,
                 seed: int, n_boot: int, *, unscored: int) -> RunSummary:
    """One side of a comparison: what judged it, and its agreement with the people on the paired items."""
    crits = Counter(j.criterion or "(none)" for j in used)
    return RunSummary(
        name=name, path=path, criteria=dict(crits), models=dict(Counter(j.model or "(none)" for j in used)),
        strategies=dict(Counter(j.strategy or "(none)" for j in used)),
        agreement=agreement(human.tolist(), labels.tolist(), seed=seed, n_boot=n_boot,
                            criterion=next(iter(crits)) if len(crits) == 1 else None),
        unscored=unscored,
    )


def _paired_tests(report: ComparisonReport, paired: list[tuple[Judgment, Judgment, Label]], human: np.ndarray,
                  la: np.ndarray, lb: np.ndarray) -> None:
    """McNemar, the kappa difference with its paired bootstrap interval, and the items the runs disagree on."""
    report.mcnemar_p = mcnemar_exact(report.a_right_b_wrong, report.b_right_a_wrong)
    ka, kb = report.a.agreement.kappa, report.b.agreement.kappa
    if ka is not None and kb is not None:
        report.kappa_diff = kb - ka
        idx = bootstrap_indices(len(paired), seed=report.seed, n_boot=report.n_boot)
        report.kappa_diff_ci = percentile_ci(kappa_of(human[idx], lb[idx]) - kappa_of(human[idx], la[idx]))
    for ja, jb, h in paired:
        if ja.label != jb.label:
            report.disagreements.append(ItemDiff(id=ja.id, human=h, right="a" if ja.label == h else "b",
                                                 a=_decision(ja), b=_decision(jb)))

def _warnings(r: ComparisonReport, rows_a: list[Judgment], rows_b: list[Judgment], only_in_labels: list[str]) -> list[str]:
    out = []
    same = all(sorted({str(getattr(j, f)) for j in rows_a}) == sorted({str(getattr(j, f)) for j in rows_b})
               for f in ("criterion", "model", "strategy"))
    if same:
        out.append("both runs have the same criterion, model and strategy: a difference is run-to-run noise")
    if r.a.unscored or r.b.unscored:
        out.append(f"labelled items left out because a run did not score them: {r.a.name} {r.a.unscored}, "
                   f"{r.b.name} {r.b.unscored}")
    if only_in_labels:
        out.append(f"{len(only_in_labels)} labelled id(s) are in neither run ({', '.join(only_in_labels[:5])})")
    if r.n < 30:
        out.append(f"only {r.n} paired items: only a large difference can show; label 30-50 or more")
    for s in (r.a, r.b):
        if s.agreement.kappa is None:
            out.append(f"{s.name}: kappa undefined ({s.agreement.kappa_note})")
    return out


def _decided(r: ComparisonReport, better: RunSummary) -> str:
    """Which test decided: a clear difference needs McNemar p < 0.05, a bootstrap interval that excludes 0,
    and SMALL_SAMPLE paired items (under that a bootstrap interval is too narrow to trust)."""
    ci, p = r.kappa_diff_ci, r.mcnemar_p
    excludes = ci is not None and (ci[0] > 0 or ci[1] < 0)
    if p < 0.05 and excludes and r.n >= SMALL_SAMPLE:
        return (f"{better.name} agrees with the people clearly better: McNemar p = {p:.3g} < 0.05 and the bootstrap "
                "interval excludes 0.")
    why = [f"McNemar p = {p:.3g} {'<' if p < 0.05 else '>='} 0.05"]
    if ci is None:
        why.append("no bootstrap interval (kappa undefined in too many resamples)")
    elif not excludes:
        why.append("the bootstrap interval includes 0")
    elif r.n < SMALL_SAMPLE:
        why.append(f"the bootstrap interval excludes 0 but n = {r.n} (under {SMALL_SAMPLE} it is too narrow to trust)")
    else:
        why.append("the bootstrap interval excludes 0")
    return f"Not a clear difference: {'; '.join(why)}."


def verdict(r: ComparisonReport) -> str:
    """The comparison in plain words."""
    a, b = r.a, r.b
    parts = []
    if r.kappa_diff is not None:
        ka, kb = a.agreement.kappa or 0.0, b.agreement.kappa or 0.0
        ci = r.kappa_diff_ci
        ci_text = f", 95% CI {ci[0]:+.2f} to {ci[1]:+.2f}" if ci else ""
        parts.append(f"On {r.n} items, kappa {a.name} {two_places(ka)} vs {b.name} {two_places(kb)} "
                     f"(difference {r.kappa_diff:+.2f}{ci_text}).")
        parts.append(_decided(r, b if r.kappa_diff > 0 else a))
    wins_b, wins_a = r.b_right_a_wrong, r.a_right_b_wrong
    parts.append(f"{b.name} gets {wins_b} item(s) right that {a.name} gets wrong, {a.name} {wins_a} the other way "
                 f"(McNemar exact p = {r.mcnemar_p:.3g}).")
    for s in (a, b):
        ag = s.agreement
        if ag.n_disagreements:
            parts.append(f"{s.name}: {ag.false_alarms} false alarm(s), {ag.misses} miss(es).")
    return " ".join(parts)
