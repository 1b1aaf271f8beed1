"""Agreement of a judge with human labels, and the direction of its errors.

    report = calibrate("results.jsonl")                      # human labels from each row's human_label
    report = calibrate(results, labels="my_labels.csv", by="dataset")
    report.kappa, report.kappa_ci, report.false_alarms, report.misses, report.diagnosis

Only items with both a judge label (0/1) and a human label enter the statistics. Unscored and
invalid items are counted apart, never coerced to 0. A false alarm is judge 1 / human 0 (the
criterion is stricter than the person); a miss is judge 0 / human 1. Cohen's kappa comes from
scikit-learn; its 95% interval from the seeded posterior of the 2x2 table (`kappa_posterior`: a
percentile bootstrap over items held the true kappa too rarely under 100 labels), except where
no interval can be honest: under MIN_CI_N items there is none (`kappa_ci_note` says why), and
when judge and people agree on every item the lower bound comes from the Wilson score interval
of the agreement rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field

from ..citations import run_citations
from ..ensembles.cascade import wilson
from ..errors import InvalidItemError
from ..items import Item, read_records
from ..knowledge import decided_by, item_decided, shares
from ..results import ClaimResult, JudgeVote, Judgment
from . import DEFAULT_BOOT
from .annotators import Annotations, HumanCeiling, human_ceiling, labels_for_calibration
from .answer_rate import AnswerRate, answer_rate
from .corrected import CorrectedRate, TypeRate, by_criterion, by_type, corrected_of
from .labels import HumanLabels, Label, join_labels, read_results
from .prevalence import PrevalenceFigures, prevalence_figures
from .span_metrics import SpanMetrics, read_human_spans, spans_beside, spans_of_results
from .trust import DEFAULT_THRESHOLD, JudgeVerdict, Verdict, judge_verdict


class Retested(Protocol):
    """What `calibrate(retest=...)` reads of a test-retest report (`stability.StabilityReport`; a
    protocol, so agreement.py needs no import of stability.py, which imports it)."""

    repeats: int
    compared: int
    flip_rate: float | None
    disagreement: float | None
    kappa: float | None
    kappa_ci: tuple[float, float] | None
    kappa_method: str

    @property
    def unstable_ids(self) -> set[str]: ...

Direction = Literal["false_alarm", "miss"]
#: below this many items the bootstrap interval is too wide to rank judges or criteria
SMALL_SAMPLE = 30
#: below this many items no interval is given: a resampled interval collapses onto the few items there are
MIN_CI_N = 10
#: share of the disagreements in one direction that makes it "the" direction
DOMINANT = 0.7
#: what to try when a criterion's disagreements are mostly false alarms
STRICTER_THAN = {
    "reference_faithfulness": "compare with factual_correctness (`judgeflow compare`)",
    "source_faithfulness": "check whether benign, true additions count as errors for you",
    "spec_compliance": "check whether the spec really demands what the judge flags",
}


class Confusion(BaseModel):
    """Counts of (human, judge) label pairs. Rows = human 0/1, columns = judge 0/1."""

    tn: int = 0
    """human 0, judge 0."""
    fp: int = 0
    """human 0, judge 1: a false alarm."""
    fn: int = 0
    """human 1, judge 0: a miss."""
    tp: int = 0
    """human 1, judge 1."""

    @property
    def matrix(self) -> list[list[int]]:
        """[[tn, fp], [fn, tp]], as sklearn.metrics.confusion_matrix(human, judge, labels=[0, 1])."""
        return [[self.tn, self.fp], [self.fn, self.tp]]


class Agreement(PrevalenceFigures):
    """Agreement statistics on one set of items that have a judge label and a human label (with the
    base rate and the prevalence-adjusted figures beside kappa: `prevalence.py`)."""

    n: int
    """Items in the statistics (scored by the judge and labelled by a person)."""
    kappa: float | None = None
    """Cohen's kappa (scikit-learn); None when undefined (see kappa_note)."""
    kappa_ci: tuple[float, float] | None = None
    """Seeded 95% interval for kappa (the posterior of the 2x2 table: `kappa_posterior`)."""
    kappa_note: str | None = None
    """Why kappa is missing or cannot be read the usual way."""
    kappa_ci_note: str | None = None
    """Why there is no interval (too few items, a constant judge), or how it was made when not bootstrapped."""
    accuracy: float | None = None
    precision: float | None = None
    """Of the items the judge flagged (1), the share people flagged too. None if it flagged none."""
    recall: float | None = None
    """Of the items people flagged, the share the judge flagged. None if people flagged none."""
    f1: float | None = None
    confusion: Confusion = Field(default_factory=Confusion)
    false_alarms: int = 0
    """judge 1, human 0."""
    misses: int = 0
    """judge 0, human 1."""
    false_alarm_share: float | None = None
    """false_alarms / all disagreements; None without disagreements."""
    miss_share: float | None = None
    diagnosis: str = ""
    """The result in plain words: the agreement and the direction of the errors."""
    warnings: list[str] = Field(default_factory=list)

    @property
    def n_disagreements(self) -> int:
        return self.false_alarms + self.misses


class GroupReport(Agreement):
    """Agreement within one group (a value of the `by` field)."""

    group: str
    unscored: int = 0
    """Labelled items in this group the judge left unscored or invalid (not in n)."""


class Disagreement(BaseModel):
    """One item where the judge and the person disagree, with the claim that decided the label."""

    id: str
    human: Label
    judge: Label
    direction: Direction
    criterion: str | None = None
    group: str | None = None
    reason: str | None = None
    """The judge's own reason for its label."""
    deciding_claim: ClaimResult | None = None
    """The first claim with an error verdict (for a 1); None for a 0 (every claim passed)."""
    claims: list[ClaimResult] = Field(default_factory=list)
    votes: list[JudgeVote] | None = None
    """Panels and cascades: each member's vote on this item."""
    question: str | None = None
    answer: str | None = None
    """The judged text, so a reader can tell who was right (from the results row, else the items file)."""
    reference: str | None = None
    source: list[str] | None = None
    spec: str | None = None


class Retest(BaseModel):
    """The judge against itself (test-retest) beside the judge against people."""

    repeats: int
    items: int
    """Items with two or more scored verdicts (all items of the runs, labelled or not)."""
    flip_rate: float | None = None
    disagreement: float | None = None
    """The chance that two of the judge's verdicts on one item differ."""
    kappa: float | None = None
    kappa_ci: tuple[float, float] | None = None
    kappa_method: str = ""
    human_disagreement: float | None = None
    """The share of scored, labelled items where the judge and the person disagree."""
    noise_share: float | None = None
    """disagreement / human_disagreement, at most 1: how much of the disagreement with people the
    judge's own noise alone would produce."""
    on_unstable: int = 0
    """Disagreements with people on items whose verdict flips between repeats."""
    text: str = ""


class CalibrationReport(Agreement):
    """The judge against human labels: overall, per group, and the items they disagree on."""

    total: int = 0
    """Result rows read."""
    label_source: str = "results"
    """"results" (each row's human_label) or the labels file."""
    unscored: int = 0
    """Labelled items the judge could not decide (label null): excluded, counted here."""
    invalid: int = 0
    """Labelled items whose input row was unusable: excluded, counted here."""
    unlabelled: int = 0
    """Result rows without a human label: not used."""
    only_in_labels: list[str] = Field(default_factory=list)
    """Labelled ids that have no result row."""
    criteria: dict[str, int] = Field(default_factory=dict)
    """Criterion -> items in the statistics."""
    models: dict[str, int] = Field(default_factory=dict)
    by: str | None = None
    groups: list[GroupReport] = Field(default_factory=list)
    disagreements: list[Disagreement] = Field(default_factory=list)
    seed: int = 0
    n_boot: int = DEFAULT_BOOT
    fleiss_kappa: float | None = None
    """`by="judge"` on a panel: Fleiss' kappa between the members (on items all of them scored)."""
    fleiss_items: int = 0
    fleiss_members: int = 0
    spans: SpanMetrics | None = None
    """Span-level precision/recall/F1 against human spans (labels' `spans` or `meta.spans`), when given."""
    retest: Retest | None = None
    """The judge's test-retest stability beside its agreement with people (rows with repeats, or
    `calibrate --retest RUN`)."""
    labellers: list[str] = Field(default_factory=list)
    """Several labellers: their names, the first being the one the judge is calibrated against."""
    answers: AnswerRate | None = None
    """The judge's rows' answer rate (answers with something checkable) and reference coverage."""
    citations: dict[str, Any] | None = None
    """The answers' own citations over the judge's rows: precision, recall and their counts
    (`judgeflow.citations.run_citations`); None when no answer cites its sources."""
    decided_by: dict[str, float] | None = None
    """The judged rows' claims by what settled them (reference, knowledge, evidence, unverifiable:
    `knowledge.shares`); None without claims."""
    humans: list[HumanCeiling] = Field(default_factory=list)
    """Each pair of labellers: kappa on the items both labelled (the human ceiling), beside the judge's."""
    corrected_rate: CorrectedRate | None = None
    """The bot's hallucination rate on all scored rows, corrected for the judge's measured false alarms and
    misses (`corrected.py`): estimate, low, high as shares."""
    corrected_by_criterion: dict[str, CorrectedRate] = Field(default_factory=dict)
    """Per criterion, when the rows were judged under more than one."""
    corrected_by_type: list[TypeRate] = Field(default_factory=list)
    """Per error type of the judge's deciding claim: the confirmed rate (human labels carry no type)."""
    judge_verdict: Verdict = "INCONCLUSIVE"
    """TRUSTED / UNTRUSTED / INCONCLUSIVE: the interval of Youden's J (sensitivity + specificity - 1) against
    `verdict.threshold` (`trust.py`)."""
    labels_needed: int = 0
    """More labels that would decide an INCONCLUSIVE verdict (0 once decided); the split is in `verdict`."""
    verdict: JudgeVerdict = Field(default_factory=JudgeVerdict)


# -- statistics ---------------------------------------------------------------------------


def kappa_of(human: np.ndarray, judge: np.ndarray) -> np.ndarray:
    """Cohen's kappa for binary labels along the last axis (vectorised, for the bootstrap).

    NaN where kappa is undefined (both raters constant and equal).
    """
    po = (human == judge).mean(axis=-1)
    ph, pj = human.mean(axis=-1), judge.mean(axis=-1)
    pe = ph * pj + (1 - ph) * (1 - pj)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def bootstrap_indices(n: int, *, seed: int, n_boot: int) -> np.ndarray:
    """`n_boot` resamples (with replacement) of range(n): shape (n_boot, n)."""
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def percentile_ci(values: np.ndarray) -> tuple[float, float] | None:
    """The 2.5th and 97.5th percentiles of the defined values; None if too few are defined."""
    ok = values[~np.isnan(values)]
    if len(ok) < max(20, len(values) // 2):
        return None
    lo, hi = np.percentile(ok, [2.5, 97.5])
    return float(lo), float(hi)


def wilson_low(k: int, n: int, z: float = 1.96) -> float:
    """The lower end of the Wilson score interval for k successes in n trials (`ensembles.cascade.wilson`)."""
    bounds = wilson(k, n, z)
    if bounds is None:
        raise ValueError("wilson_low of no trials (n = 0)")
    return bounds[0]


def kappa_interval(h: np.ndarray, j: np.ndarray, *, seed: int, n_boot: int) -> tuple[tuple[float, float] | None, str | None]:
    """(95% interval for kappa, note): the table's posterior (`kappa_posterior`) where it can be honest, else why not.

    Under MIN_CI_N items: none. A constant judge: none (every resample has kappa 0 by
    construction). Agreement on every item: [Wilson's lower bound of the agreement rate mapped
    to kappa at the observed chance agreement, 1] (the bootstrap would say [1.00, 1.00]).
    """
    n = len(h)
    if n < MIN_CI_N:
        return None, (f"CI not meaningful under N={MIN_CI_N}: resamples of {n} items repeat the same few "
                      "items, so a bootstrap interval collapses onto them; label more items")
    if len(set(j.tolist())) == 1:
        return None, ("no interval: the judge gave every item the same label, so every resample has kappa 0 "
                      "by construction")
    if (h == j).all():
        ph, pj = h.mean(), j.mean()
        pe = ph * pj + (1 - ph) * (1 - pj)
        low = (wilson_low(n, n) - pe) / (1 - pe)
        return (max(-1.0, float(low)), 1.0), (f"all {n} items agree, so every bootstrap resample gives 1.00; the "
                                              "lower bound is Wilson's for the agreement rate, mapped to kappa")
    return kappa_posterior(h, j, seed=seed, draws=n_boot), None


def kappa_posterior(h: np.ndarray, j: np.ndarray, *, seed: int, draws: int) -> tuple[float, float] | None:
    """Kappa's 95% interval from the posterior of the 2x2 table's shares (Dirichlet, Jeffreys prior 1/2 a
    cell), seeded. The percentile bootstrap it replaced held the full-data kappa in 87% of simulated draws at
    30 labels (66% in the worst cell, 5% prevalence); this in 95% (`benchmarks/interval_coverage.py`)."""
    cells = np.array([((h == a) & (j == b)).sum() for a in (0, 1) for b in (0, 1)], dtype=float)  # tn fp fn tp
    tn, fp, fn, tp = np.random.default_rng(seed).dirichlet(cells + 0.5, draws).T
    ph, pj = fn + tp, fp + tp
    pe = ph * pj + (1 - ph) * (1 - pj)
    return percentile_ci((tn + tp - pe) / (1 - pe))


def kappa_text(a: Agreement) -> str:
    """Kappa and its interval as every report prints it: "0.62 [0.31, 0.88]", "1.00 (CI not meaningful ...)"."""
    if a.kappa is None:
        return "undefined"
    if a.kappa_ci:
        return f"{two_places(a.kappa)} [{two_places(a.kappa_ci[0])}, {two_places(a.kappa_ci[1])}]"
    return f"{two_places(a.kappa)} ({a.kappa_ci_note})" if a.kappa_ci_note else two_places(a.kappa)


def strength(kappa: float) -> str:
    """Landis & Koch's words for a kappa value."""
    if round(kappa, 2) < 0:  # as printed: "0.00" is never "worse than chance"
        return "worse than chance"
    for bound, word in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if kappa <= bound:
            return word
    return "almost perfect"


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def agreement(
    human: Sequence[int], judge: Sequence[int], *, seed: int = 0, n_boot: int = DEFAULT_BOOT,
    criterion: str | None = None,
) -> Agreement:
    """All statistics for paired labels (1 = error, 0 = none); both sequences the same length."""
    if len(human) != len(judge):
        raise ValueError(f"{len(human)} human labels but {len(judge)} judge labels")
    n = len(human)
    h, j = np.asarray(human, dtype=int), np.asarray(judge, dtype=int)
    conf = Confusion(
        tn=int(((h == 0) & (j == 0)).sum()), fp=int(((h == 0) & (j == 1)).sum()),
        fn=int(((h == 1) & (j == 0)).sum()), tp=int(((h == 1) & (j == 1)).sum()),
    )
    dis = conf.fp + conf.fn
    out = Agreement(
        n=n, confusion=conf, false_alarms=conf.fp, misses=conf.fn,
        accuracy=_ratio(conf.tp + conf.tn, n),
        precision=_ratio(conf.tp, conf.tp + conf.fp), recall=_ratio(conf.tp, conf.tp + conf.fn),
        false_alarm_share=_ratio(conf.fp, dis), miss_share=_ratio(conf.fn, dis),
        **prevalence_figures(conf.tn, conf.fp, conf.fn, conf.tp).model_dump(),
    )
    if out.precision is not None and out.recall is not None:
        out.f1 = _ratio(2 * conf.tp, 2 * conf.tp + conf.fp + conf.fn)
    if n == 0:
        out.kappa_note = "no items to compare"
        out.diagnosis = "No item has both a judge label and a human label."
        return out
    human_classes, judge_classes = set(h.tolist()), set(j.tolist())
    if len(human_classes) == 1:
        only = human_classes.pop()
        if judge_classes == {only}:
            out.kappa_note = (f"judge and people agree on all {n} items, but all are {only}: kappa is "
                              "undefined without both classes")
        else:
            out.kappa_note = (f"people labelled all {n} items {only}: kappa cannot measure agreement on "
                              "one class (it is 0 by construction); label items of both classes")
        out.warnings.append(f"the human labels have one class only ({only}); sample items of both classes")
    else:
        from sklearn.metrics import cohen_kappa_score  # imported here: slow, and only needed here

        out.kappa = float(cohen_kappa_score(h, j, labels=[0, 1]))
        if len(judge_classes) == 1:
            out.kappa_note = f"the judge gave every item {judge_classes.pop()}: it does no better than a constant"
        out.kappa_ci, out.kappa_ci_note = kappa_interval(h, j, seed=seed, n_boot=n_boot)
    if n < SMALL_SAMPLE:
        out.warnings.append(f"only {n} items: the kappa interval is wide; label at least {SMALL_SAMPLE}-50 "
                            "items before trusting or ranking this")
    elif out.kappa_ci and out.kappa_ci[1] - out.kappa_ci[0] > 0.4:
        out.warnings.append(f"the 95% interval for kappa spans {out.kappa_ci[1] - out.kappa_ci[0]:.2f}: "
                            "label more items to narrow it")
    out.diagnosis = diagnose(out, criterion=criterion)
    return out


def two_places(x: float) -> str:
    """Two decimals, without a "-0.00" for a bound that rounds to zero."""
    s = f"{x:.2f}"
    return "0.00" if s == "-0.00" else s


def diagnose(a: Agreement, *, criterion: str | None = None) -> str:
    """Plain words: how well the judge agrees, and which way it errs."""
    parts = []
    if a.kappa is not None:
        ci = (f", 95% CI {two_places(a.kappa_ci[0])} to {two_places(a.kappa_ci[1])}" if a.kappa_ci
              else f"; {a.kappa_ci_note}" if a.kappa_ci_note else "")
        parts.append(f"Kappa {two_places(a.kappa)} ({strength(a.kappa)} agreement{ci}) on {a.n} items.")
    elif a.kappa_note:
        parts.append(f"Kappa not available: {a.kappa_note}.")
    dis = a.n_disagreements
    if dis == 0:
        parts.append("The judge agrees with every human label.")
    elif dis < 3:
        parts.append(f"Only {dis} disagreement(s) ({a.false_alarms} false alarm(s), {a.misses} miss(es)): "
                     "too few to tell a direction.")
    elif (a.false_alarm_share or 0) >= DOMINANT:
        hint = STRICTER_THAN.get(criterion or "", "try a more lenient criterion and compare the two (`judgeflow compare`)")
        parts.append(f"{a.false_alarms} of {dis} disagreements are false alarms (judge 1, human 0): the "
                     f"criterion is probably too strict; {hint}.")
    elif (a.miss_share or 0) >= DOMINANT:
        parts.append(f"{a.misses} of {dis} disagreements are misses (judge 0, human 1): the judge overlooks "
                     "errors people found; the criterion may be too lenient or the judge may lack the "
                     "knowledge (look at the deciding claims; try a stronger model).")
    else:
        parts.append(f"Disagreements go both ways ({a.false_alarms} false alarms, {a.misses} misses): no "
                     "single direction to fix; read the disagreeing items.")
    return " ".join(parts)


# -- joining results and labels -----------------------------------------------------------


def field_value(j: Judgment, field: str) -> str:
    """A result's value for `field` (a Judgment field, an input field, or a dotted path into one);
    `decided_by`: what decided the item (`knowledge.item_decided`: reference, knowledge, evidence, unverifiable)."""
    if field == "decided_by" and "decided_by" not in j.extra:
        return item_decided(j.claims, j.label)
    head, _, rest = field.partition(".")
    value: Any = getattr(j, head) if head in Judgment.model_fields else j.extra.get(head)
    for key in rest.split(".") if rest else []:
        value = value.get(key) if isinstance(value, Mapping) else None
    return "(none)" if value is None else str(value)


def deciding_claim(j: Judgment) -> ClaimResult | None:
    """The claim whose error verdict made the label 1 (the first one, as in aggregate)."""
    return next((c for c in j.claims if c.error), None) if j.label == 1 else None


def _warn(report: CalibrationReport, only_in_labels: list[str], criteria: Counter[str]) -> None:
    """What the numbers cannot say by themselves: labels without results, several criteria at once."""
    if only_in_labels:
        some = ", ".join(only_in_labels[:5]) + (" ..." if len(only_in_labels) > 5 else "")
        report.warnings.append(f"{len(only_in_labels)} labelled id(s) have no result row ({some}): "
                               "were these results made from the labelled file?")
    if len(criteria) > 1:
        report.warnings.append(f"items were judged under {len(criteria)} criteria ({', '.join(criteria)}): "
                               "use --by criterion to see each")


def _group(report: CalibrationReport, pairs: list[tuple[Judgment, Label]], rows: list[Judgment], by: str | None,
           *, seed: int, n_boot: int) -> None:
    """The agreement per group (`by`); for a panel or cascade by judge, each member side by side."""
    if by == "judge" and any(j.judges for j, _ in pairs):
        from .members import member_agreement

        report.groups = judge_groups(pairs, seed=seed, n_boot=n_boot)
        report.fleiss_kappa, report.fleiss_items, report.fleiss_members = member_agreement([j for j, _ in pairs])
    elif by:
        report.groups = _groups(pairs, "model" if by == "judge" else by, seed=seed, n_boot=n_boot)
        if [g.group for g in report.groups] == ["(none)"]:
            report.warnings.append(f"no result has a field {by!r}: every item fell in one group; the fields "
                                   f"here include {', '.join(sorted(set(Judgment.model_fields) | set(rows[0].extra)))}")

def _some(ids: Sequence[str], k: int = 3) -> str:
    return ", ".join(repr(i) for i in ids[:k]) + (", ..." if len(ids) > k else "")


def _scored(joined: Any, rows: list[Judgment], where: str) -> list[tuple[Judgment, Label]]:
    """The (result, human label) pairs the judge scored; InvalidItemError says why there are none."""
    scored = [(j, h) for j, h in joined.pairs if j.label is not None]
    if not scored and not joined.pairs and joined.only_in_labels:
        raise InvalidItemError(f"nothing to calibrate: none of the {len(joined.only_in_labels)} labelled id(s) is a "
                               f"result id (labels: {_some(joined.only_in_labels)}; results: "
                               f"{_some([j.id for j in rows])}): were these results made from the labelled items?",
                               path=where)
    if not scored:
        why = (f"{len(joined.pairs)} labelled item(s), all unscored or invalid" if joined.pairs
               else "no result has a human label; pass --labels FILE or judge items that carry a 'label'")
        raise InvalidItemError(f"nothing to calibrate: {why}", path=where)
    return scored


def calibrate(
    results: Iterable[Judgment] | str | Path,
    labels: HumanLabels | Mapping[str, Label] | str | Path | Sequence[str | Path] | None = None,
    by: str | None = None,
    *,
    seed: int = 0,
    n_boot: int = DEFAULT_BOOT,
    items: str | Path | None = None,
    retest: Retested | None = None, threshold: float = DEFAULT_THRESHOLD,
) -> CalibrationReport:
    """Compare a judge's labels with human labels.

    Args:
        results: Judgments, or the path of a results file from `judgeflow run`.
        labels: human labels by id (a labels file path, `read_labels()` output, or a dict);
            default: each result's `human_label` (the input's `label`). Several labels files (or
            one with several `labelled_by` values): the judge against the first labeller, and
            each pair of labellers' kappa on their overlap as the human ceiling (`humans`).
        by: a field to group by (`dataset`, `criterion`, `meta.category`, ...).
        seed: bootstrap seed (the same seed gives the same interval).
        n_boot: bootstrap resamples.
        items: the items file the results were judged from, for the disagreements' texts when the
            result rows lack them; default: the labels file, when it is a path.
        retest: the judge's stability on these items (`stability.stability(...)`), put beside
            the agreement with people.

    Raises:
        InvalidItemError: unreadable files or labels, duplicated ids, or no item that has both
            a judge label and a human label.
    """
    where = str(results) if isinstance(results, (str, Path)) else "results"
    rows = read_results(results) if isinstance(results, (str, Path)) else list(results)
    labels, ann, first = _read_label_sets(labels)
    span_file = first if isinstance(first, (str, Path)) else None
    joined = join_labels(rows, labels)
    scored = _scored(joined, rows, where)
    criteria = Counter(j.criterion or "(none)" for j, _ in scored)
    main_criterion = criteria.most_common(1)[0][0] if len(criteria) == 1 else None
    base = agreement([h for _, h in scored], [int(j.label or 0) for j, _ in scored],
                     seed=seed, n_boot=n_boot, criterion=main_criterion)
    report = CalibrationReport(
        **base.model_dump(), total=len(rows), label_source=joined.label_source,
        unscored=sum(1 for j, _ in joined.pairs if j.label is None and j.status != "invalid"),
        invalid=sum(1 for j, _ in joined.pairs if j.status == "invalid"),
        unlabelled=len(joined.unlabelled), only_in_labels=joined.only_in_labels,
        criteria=dict(criteria), models=dict(Counter(j.model or "(none)" for j, _ in scored)),
        by=by, seed=seed, n_boot=n_boot, answers=answer_rate(rows), decided_by=_decided(rows),
        citations=run_citations(j.citations for j in rows if j.status == "judged"),
    )
    _warn(report, joined.only_in_labels, criteria)
    _group(report, joined.pairs, rows, by, seed=seed, n_boot=n_boot)
    _disagreements(report, scored, by, span_file if items is None else items)
    human = {**spans_of_results(rows), **(read_human_spans(span_file) if span_file else {})}
    report.spans = spans_beside(rows, human, seed=seed, n_boot=n_boot) if human else None
    report.retest = retest_beside(report, retest) if retest is not None else None
    if ann is not None:
        report.labellers = ann.labellers
        report.humans = human_ceiling(ann, rows, agreement=agreement, kappa_text=kappa_text, seed=seed, n_boot=n_boot)
    _publishable(report, rows, scored, seed=seed, threshold=threshold, labels=span_file)
    return report


def _publishable(report: CalibrationReport, rows: list[Judgment], scored: list[tuple[Judgment, Label]], *,
                 seed: int, threshold: float, labels: str | Path | None = None) -> None:
    """The corrected rate (overall, per criterion, per error type) and the verdict on the judge: TRUSTED once
    the interval of Youden's J lies at or above `threshold` (`calibrate(threshold=...)`, `trust.py`)."""
    c = report.corrected_rate = corrected_of(rows, scored, seed=seed)
    report.corrected_by_criterion = by_criterion(rows, scored, seed=seed)
    report.corrected_by_type = by_type(rows, scored, seed=seed)
    j = c.sensitivity + c.specificity - 1 if c.sensitivity is not None and c.specificity is not None else None
    report.verdict = judge_verdict(report.n, j, c.youden, q=c.raw, tp=c.tp, fp=c.fp, fn=c.fn, tn=c.tn,
                                   threshold=threshold)
    report.judge_verdict, report.labels_needed = report.verdict.verdict, report.verdict.labels_needed
    if labels is not None and focused(labels):
        c.defined = False
        c.note += ("; NOT VALID HERE: the labels come from a `sample --focus` sample (only items the judges disagree "
                   "on), and the correction needs labels drawn at random within each judge label")
        report.warnings.append("the labels file is a `sample --focus` sample: the corrected rate and the verdict "
                               "need a sample drawn at random within each judge label (`judgeflow sample --results`)")


def focused(path: str | Path) -> bool:
    """Whether a labels file was written by `sample --focus` (its rows carry sampling.FOCUS_FIELD)."""
    try:
        return any(isinstance(rec, Mapping) and "sample_focus" in rec for _, rec in read_records(path))
    except (InvalidItemError, OSError):
        return False


def _decided(rows: Sequence[Judgment]) -> dict[str, float] | None:
    """What settled the judged rows' claims, as shares (None without claims)."""
    counts = decided_by(c for j in rows if j.status == "judged" for c in j.claims)
    return shares(counts) if counts else None


def _read_label_sets(labels: Any) -> tuple[Any, Annotations | None, Any]:
    """Labels given as a file, several files (several labellers) or rows: (labels, the labellers' annotations
    or None, the first file or row set: the default items file and the human spans' file)."""
    if isinstance(labels, (str, Path)) or (isinstance(labels, Sequence) and not isinstance(labels, Mapping)):
        first = labels if isinstance(labels, (str, Path)) else labels[0]
        read, ann = labels_for_calibration(labels)
        return read, ann, first
    return labels, None, None


def _disagreements(report: CalibrationReport, scored: list[tuple[Judgment, Label]], by: str | None,
                   items: str | Path | None) -> None:
    """Each item the judge and the person label differently, with its deciding claim (and texts)."""
    for j, h in scored:
        if j.label != h:
            report.disagreements.append(Disagreement(
                id=j.id, human=h, judge=j.label or 0, direction="false_alarm" if j.label == 1 else "miss",
                criterion=j.criterion, group=field_value(j, by) if by else None, reason=j.reason,
                deciding_claim=deciding_claim(j), claims=j.claims, votes=j.judges, **texts_of(j.extra),
            ))
    if items is not None and any(d.answer is None for d in report.disagreements):
        add_texts(report.disagreements, items)


def retest_beside(report: CalibrationReport, s: Retested) -> Retest:
    """The judge's disagreement with itself beside its disagreement with people, in numbers and words."""
    unstable = s.unstable_ids
    out = Retest(repeats=s.repeats, items=s.compared, flip_rate=s.flip_rate, disagreement=s.disagreement,
                 kappa=s.kappa, kappa_ci=s.kappa_ci, kappa_method=s.kappa_method,
                 human_disagreement=None if report.accuracy is None else 1 - report.accuracy,
                 on_unstable=sum(d.id in unstable for d in report.disagreements))
    if out.disagreement is not None and out.human_disagreement:
        out.noise_share = min(1.0, out.disagreement / out.human_disagreement)
    self_k = "undefined" if s.kappa is None else f"{s.kappa:.2f}" + (
        f" [{two_places(s.kappa_ci[0])}, {two_places(s.kappa_ci[1])}]" if s.kappa_ci else "")
    human_k = "undefined" if report.kappa is None else f"{report.kappa:.2f}"
    if out.disagreement is None or out.human_disagreement is None:
        out.text = f"Test-retest kappa {self_k} beside kappa with people {human_k}."
        return out
    out.text = (f"The judge disagrees with itself on {out.disagreement:.1%} of verdict pairs (test-retest kappa {self_k}, "
                f"{s.repeats} repeats) and with people on {out.human_disagreement:.1%} of items (kappa {human_k}).")
    if out.noise_share is not None:
        out.text += (f" Of the disagreement with people, about {out.noise_share:.0%} is the size of the judge's own "
                     f"noise; {out.on_unstable} of the {report.n_disagreements} disagreements are on items whose "
                     "verdict flips between repeats.")
    return out


TEXT_FIELDS = ("question", "answer", "reference", "source", "spec")


def texts_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """The texts a result row carries under their own names (a row written with them), for showing a
    disagreement; {} when it has no answer. Aliases are not read here: in a result row's carried
    fields an alias is a field the input had besides the canonical one."""
    if "answer" not in record:
        return {}
    try:
        item = Item.from_record({"id": "x", **{k: record[k] for k in TEXT_FIELDS if k in record}})
    except InvalidItemError:
        return {}
    return {f: getattr(item, f) for f in TEXT_FIELDS}


def add_texts(disagreements: list[Disagreement], path: str | Path) -> None:
    """Fill the disagreements' texts from the items (or labelled) file they were judged from.
    A file that cannot be read leaves them empty: the report is still written."""
    wanted = {d.id: d for d in disagreements if d.answer is None}
    try:
        for _, rec in read_records(path):
            if not isinstance(rec, Mapping):
                continue
            try:
                item = Item.from_record(rec)
            except InvalidItemError:
                continue
            d = wanted.pop(item.id, None)
            if d is not None:
                for f in TEXT_FIELDS:
                    setattr(d, f, getattr(item, f))
            if not wanted:
                return
    except (InvalidItemError, OSError):
        return


def _groups(pairs: list[tuple[Judgment, Label]], by: str, *, seed: int, n_boot: int) -> list[GroupReport]:
    buckets: dict[str, list[tuple[Judgment, Label]]] = {}
    for j, h in pairs:
        buckets.setdefault(field_value(j, by), []).append((j, h))
    out = []
    for name in sorted(buckets):
        members = buckets[name]
        scored = [(j, h) for j, h in members if j.label is not None]
        crits = {j.criterion for j, _ in scored}
        a = agreement([h for _, h in scored], [int(j.label or 0) for j, _ in scored], seed=seed,
                      n_boot=n_boot, criterion=crits.pop() if len(crits) == 1 else None)
        out.append(GroupReport(**a.model_dump(), group=name, unscored=len(members) - len(scored)))
    return out


COMBINED = "combined"


def member_name(role: str | None, model: str | None) -> str:
    return f"{role} {model}" if role and role != "member" else str(model)


def judge_groups(pairs: Sequence[tuple[Judgment, Label]], *, seed: int, n_boot: int) -> list[GroupReport]:
    """The combined label first, then each member's own label, against the same human labels."""
    names: list[str] = []
    labels: dict[str, list[tuple[Label | None, Label]]] = {COMBINED: []}
    for j, h in pairs:
        labels[COMBINED].append((j.label, h))
        seen: dict[str, int] = {}
        for v in j.judges or []:
            name = member_name(v.role, v.model)
            seen[name] = seen.get(name, 0) + 1
            name += f" #{seen[name]}" if seen[name] > 1 else ""  # the same model twice in one panel
            if name not in labels:
                names.append(name)
                labels[name] = []
            labels[name].append((v.label, h))
    out = []
    for name in [COMBINED, *names]:
        got = labels[name]
        scored = [(x, h) for x, h in got if x is not None]
        a = agreement([h for _, h in scored], [int(x or 0) for x, _ in scored], seed=seed, n_boot=n_boot)
        out.append(GroupReport(**a.model_dump(), group=name, unscored=len(got) - len(scored)))
    return out
