"""The bot's hallucination rate corrected for the judge's own false alarms and misses.

    c = corrected_rate(judged_ones=240, judged=2000, tp=14, fp=6, fn=3, tn=27)
    c.estimate, c.low, c.high        # shares 0..1: the 95% interval holds the true rate
    c.raw, c.sensitivity, c.specificity, c.informative, c.note

The judge labelled `judged` rows, `judged_ones` of them 1 (the raw rate q). People labelled a
sample of those rows; among the labelled rows the judge's 1s split into tp (people say 1) and fp
(false alarms), its 0s into fn (misses) and tn. The corrected rate is

    p = q * PPV + (1 - q) * FOR        PPV = P(human 1 | judge 1), FOR = P(human 1 | judge 0)

the double-sampling form of Rogan and Gladen (1978): with sensitivity and specificity weighted to
the judged rows (`weighted_sens_spec`), (q + spec - 1) / (sens + spec - 1) is the same number.
This form needs the labelled rows to be a random sample *within each judge label* only, so it is
right both for a simple random sample and for `judgeflow sample --results` (stratified by the
judge's label, proportional or `--equal`), where the plain sens/spec of the sample are biased. It
divides by nothing, so it stays defined for a judge no better than chance: then it rests on the
labels alone, and `informative` / `note` say so.

The interval carries both uncertainties: the judged sample's (q from `judged` rows) and the
labelled sample's (PPV and FOR from the labels), as a Bayesian posterior with Jeffreys priors
(Beta(k + 1/2, n - k + 1/2) for each share), drawn `draws` times, seeded, and read at its 2.5th
and 97.5th percentiles. It stays in [0, 1] by construction. Its coverage is measured by
`benchmarks/interval_coverage.py` (true rates 0.05-0.5, sensitivity and specificity 0.6-0.95,
30-200 labels, 200-5000 judged rows).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ..results import Judgment
from .rates import pct, wilson_interval

if TYPE_CHECKING:
    import numpy as np

    from ..runs.summary import Tally

#: posterior draws for the interval (seeded: the same counts give the same interval)
DRAWS = 8000
METHOD = ("stratified Rogan-Gladen (q * PPV + (1 - q) * FOR), Bayesian interval with Jeffreys priors on q, "
          "PPV and FOR")


class CorrectedRate(BaseModel):
    """The judge's raw rate, the rate corrected for its measured errors, and what the correction rests on."""

    estimate: float | None = None
    """The corrected rate (a share); None when there is nothing to correct (no judged or no labelled rows)."""
    low: float | None = None
    high: float | None = None
    level: float = 0.95
    raw: float | None = None
    """The judge's own rate on the judged rows (q)."""
    raw_low: float | None = None
    """Wilson interval of the raw rate."""
    raw_high: float | None = None
    raw_outside: bool | None = None
    """The raw rate lies outside the corrected interval: the judge's bias is larger than the noise."""
    judged: int = 0
    """Scored rows the rate is about (unscored and invalid rows are not in it)."""
    judged_ones: int = 0
    labelled: int = 0
    """Judged rows with a human label (tp + fp + fn + tn)."""
    tp: int = 0
    fp: int = 0
    """Labelled false alarms: judge 1, human 0."""
    fn: int = 0
    """Labelled misses: judge 0, human 1."""
    tn: int = 0
    ppv: float | None = None
    """Of the judge's 1s, the share people confirm (precision)."""
    false_omission: float | None = None
    """Of the judge's 0s, the share people labelled 1 (FOR)."""
    sensitivity: float | None = None
    """The judge's recall on the judged rows (weighted from PPV, FOR and q: right for stratified labels)."""
    specificity: float | None = None
    youden: tuple[float, float] | None = None
    """Interval of sensitivity + specificity - 1: 0 is a judge no better than chance."""
    informative: bool | None = None
    """True: the judge is better than chance (the Youden interval is above 0); False: no better than
    chance (sens + spec <= 1: Rogan-Gladen's correction is undefined); None: cannot tell yet."""
    defined: bool = False
    """Whether the correction is defined: an estimate exists and the judge is measurably better than chance."""
    method: str = METHOD
    note: str = ""


def _jeffreys(k: int, n: int, size: int, rng: np.random.Generator) -> np.ndarray:
    return rng.beta(k + 0.5, n - k + 0.5, size)


def weighted_sens_spec(q: float, ppv: float, fo: float) -> tuple[float | None, float | None]:
    """Sensitivity and specificity on the judged rows, from the raw rate and the predictive values."""
    p = q * ppv + (1 - q) * fo
    sens = q * ppv / p if p > 0 else None
    spec = (1 - q) * (1 - fo) / (1 - p) if p < 1 else None
    return sens, spec


def rogan_gladen(q: float, sens: float, spec: float) -> float | None:
    """(q + spec - 1) / (sens + spec - 1), clipped to [0, 1]; None when sens + spec <= 1 (undefined)."""
    j = sens + spec - 1
    if j <= 0:
        return None
    return min(1.0, max(0.0, (q + spec - 1) / j))


def posterior(judged_ones: int, judged: int, tp: int, fp: int, fn: int, tn: int, *, seed: int = 0,
              draws: int = DRAWS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draws of (q, PPV, FOR) under Jeffreys priors."""
    # numpy here: every run's summary imports this module, and needs numpy only with labels
    import numpy as np

    rng = np.random.default_rng(seed)
    return (_jeffreys(judged_ones, judged, draws, rng), _jeffreys(tp, tp + fp, draws, rng),
            _jeffreys(fn, fn + tn, draws, rng))


def corrected_rate(judged_ones: int, judged: int, tp: int, fp: int, fn: int, tn: int, *, level: float = 0.95,
                   seed: int = 0, draws: int = DRAWS) -> CorrectedRate:
    """The corrected rate and its interval from the judged rows' counts and the labelled rows' confusion counts."""
    out = CorrectedRate(level=level, judged=judged, judged_ones=judged_ones, labelled=tp + fp + fn + tn,
                        tp=tp, fp=fp, fn=fn, tn=tn)
    if judged == 0:
        out.note = "no scored rows: there is no rate to correct"
        return out
    q = judged_ones / judged
    out.raw = q
    out.raw_low, out.raw_high = wilson_interval(judged_ones, judged, level) or (None, None)
    if out.labelled == 0:
        out.note = "no labelled rows among the judged ones: label a sample (`judgeflow sample ... --results`)"
        return out
    if out.labelled >= judged:  # every judged row labelled: the people's rate is the rate, nothing to correct
        return _all_labelled(out, level)
    import numpy as np

    qs, ppv, fo = posterior(judged_ones, judged, tp, fp, fn, tn, seed=seed, draws=draws)
    rates = qs * ppv + (1 - qs) * fo
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(rates, [tail, 100 - tail])
    out.low, out.high = float(lo), float(hi)
    # the point estimate: the plug-in where each stratum has labels, else the posterior median
    out.ppv = tp / (tp + fp) if tp + fp else None
    out.false_omission = fn / (fn + tn) if fn + tn else None
    if (out.ppv is not None or judged_ones == 0) and (out.false_omission is not None or judged_ones == judged):
        point = q * (out.ppv or 0.0) + (1 - q) * (out.false_omission or 0.0)
    else:
        point = float(np.median(rates))
    out.estimate = min(max(point, 0.0), 1.0)
    # a plug-in at a boundary (no confirmed 1s, say) can sit outside the posterior's central interval: widen to it
    out.low, out.high = min(out.low, out.estimate), max(out.high, out.estimate)
    out.raw_outside = not out.low <= q <= out.high
    if out.ppv is not None and out.false_omission is not None:
        out.sensitivity, out.specificity = weighted_sens_spec(q, out.ppv, out.false_omission)
    with np.errstate(divide="ignore", invalid="ignore"):
        youden = qs * (1 - qs) * (ppv - fo) / (rates * (1 - rates))
    ylo, yhi = np.percentile(youden[np.isfinite(youden)], [tail, 100 - tail])
    out.youden = (float(ylo), float(yhi))
    point_j = (out.sensitivity + out.specificity - 1) if out.sensitivity is not None and out.specificity is not None else None
    out.informative = True if ylo > 0 else False if point_j is not None and point_j <= 0 else None
    out.defined = bool(out.informative)
    out.note = _note(out, point_j)
    return out


def _all_labelled(out: CorrectedRate, level: float) -> CorrectedRate:
    ones = out.tp + out.fn
    out.estimate = ones / out.labelled
    out.low, out.high = wilson_interval(ones, out.labelled, level) or (None, None)
    out.ppv = out.tp / (out.tp + out.fp) if out.tp + out.fp else None
    out.false_omission = out.fn / (out.fn + out.tn) if out.fn + out.tn else None
    out.sensitivity = out.tp / ones if ones else None
    out.specificity = out.tn / (out.fp + out.tn) if out.fp + out.tn else None
    out.raw_outside = not (out.low or 0) <= (out.raw or 0) <= (out.high or 1)
    import numpy as np

    rng = np.random.default_rng(0)
    youden = _jeffreys(out.tp, ones, DRAWS, rng) + _jeffreys(out.tn, out.fp + out.tn, DRAWS, rng) - 1
    tail = 100 * (1 - level) / 2
    if ones and out.fp + out.tn:
        ylo, yhi = np.percentile(youden, [tail, 100 - tail])
        out.youden = (float(ylo), float(yhi))
    if out.sensitivity is not None and out.specificity is not None:
        out.informative = True if out.youden and out.youden[0] > 0 else (
            False if out.sensitivity + out.specificity <= 1 else None)
        out.defined = bool(out.informative)
    out.method = "every judged row labelled: the people's own rate, Wilson interval"
    out.note = _note(out, None if out.sensitivity is None or out.specificity is None
                     else out.sensitivity + out.specificity - 1)
    return out


def _note(c: CorrectedRate, point_j: float | None) -> str:
    base = (f"corrected {pct(c.estimate)} [{pct(c.low)}, {pct(c.high)}] against the judge's raw {pct(c.raw)} "
            f"({c.judged_ones} of {c.judged} judged rows; {c.labelled} labelled: {c.fp} false alarm(s), {c.fn} miss(es))")
    if c.informative is False:
        return (base + f": the judge is no better than chance (sensitivity + specificity = {1 + (point_j or 0):.2f} <= 1), "
                "so Rogan-Gladen's correction is undefined; the figure rests on the labels alone and the judge's own "
                "rate says nothing about the bot")
    if c.informative is None:
        return (base + ": the judge's sensitivity + specificity interval reaches 1 (chance), so it is not yet shown to "
                "be better than chance; the interval rests mostly on the labels; label more to tell")
    if c.raw_outside:
        return base + ": the raw rate lies outside the corrected interval, so the judge's bias is larger than the noise"
    return base


def corrected_text(c: CorrectedRate) -> str:
    """One line for the terminal and the run summary."""
    return c.note if c.estimate is not None else f"corrected rate: {c.note}"


class TypeRate(BaseModel):
    """The rate of one error type among the judge's 1s, confirmed by people: human labels say whether an
    answer has an error, not which, so a type's misses cannot be counted; this is q_t * PPV_t."""

    type: str
    """The kind of the judge's deciding claim (date, number, name, ...)."""
    judged_ones: int = 0
    labelled: int = 0
    confirmed: int = 0
    rate: float | None = None
    low: float | None = None
    high: float | None = None


def confusion_counts(pairs: Iterable[tuple[Judgment, int]]) -> tuple[int, int, int, int]:
    """(tp, fp, fn, tn) of scored (result, human label) pairs."""
    tp = fp = fn = tn = 0
    for j, h in pairs:
        if j.label is None:
            continue
        tp += j.label == 1 and h == 1
        fp += j.label == 1 and h == 0
        fn += j.label == 0 and h == 1
        tn += j.label == 0 and h == 0
    return tp, fp, fn, tn


def corrected_of(rows: Sequence[Judgment], pairs: Sequence[tuple[Judgment, int]], *, level: float = 0.95,
                 seed: int = 0) -> CorrectedRate:
    """The corrected rate of the scored `rows`, with the judge's errors measured on the labelled `pairs`."""
    scored = [j for j in rows if j.label is not None]
    return corrected_rate(sum(j.label == 1 for j in scored), len(scored), *confusion_counts(pairs), level=level,
                          seed=seed)


def by_criterion(rows: Sequence[Judgment], pairs: Sequence[tuple[Judgment, int]], *, level: float = 0.95,
                 seed: int = 0) -> dict[str, CorrectedRate]:
    """The corrected rate per criterion (only when the rows were judged under more than one)."""
    names = sorted({j.criterion or "(none)" for j in rows if j.label is not None})
    if len(names) < 2:
        return {}
    return {c: corrected_of([j for j in rows if (j.criterion or "(none)") == c],
                            [(j, h) for j, h in pairs if (j.criterion or "(none)") == c], level=level, seed=seed)
            for c in names}


def error_type(j: Judgment) -> str | None:
    """The kind of the claim that made the label 1 (None for a 0 or an unscored row)."""
    if j.label != 1:
        return None
    claim = next((c for c in j.claims if c.error), None)
    return claim.kind if claim is not None else "(no claim)"


def by_type(rows: Sequence[Judgment], pairs: Sequence[tuple[Judgment, int]], *, level: float = 0.95,
            seed: int = 0) -> list[TypeRate]:
    """Per error type of the judge's 1s: the share of judged rows with a confirmed error of that type."""
    scored = [j for j in rows if j.label is not None]
    if not scored:
        return []
    kinds = Counter(k for k in map(error_type, scored) if k is not None)
    labelled = Counter(error_type(j) for j, _ in pairs if j.label == 1)
    confirmed = Counter(error_type(j) for j, h in pairs if j.label == 1 and h == 1)
    import numpy as np

    rng = np.random.default_rng(seed)
    tail = 100 * (1 - level) / 2
    out = []
    for kind, ones in sorted(kinds.items(), key=lambda kv: -kv[1]):
        t = TypeRate(type=kind, judged_ones=ones, labelled=labelled[kind], confirmed=confirmed[kind])
        if t.labelled:
            draws = _jeffreys(ones, len(scored), DRAWS, rng) * _jeffreys(t.confirmed, t.labelled, DRAWS, rng)
            t.rate = ones / len(scored) * t.confirmed / t.labelled
            lo, hi = np.percentile(draws, [tail, 100 - tail])
            t.low, t.high = float(lo), float(hi)
        out.append(t)
    return out


def rate_line(t: Tally) -> list[str]:
    """With labelled rows: the hallucination rate corrected for the judge's errors measured on them
    (`corrected_rate`); with injected rows, where their recall is reported."""
    if t.injected:
        return [f"{t.injected} row(s) made by `judgeflow inject`: their recall per error type is "
                "`judgeflow inject --report RESULTS` (they are no real bot's rate)"]
    if not t.labelled or not t.judged:
        return []
    c = t.labelled
    rate = corrected_rate(t.label_1, t.label_1 + t.label_0, tp=c[(1, 1)], fp=c[(0, 1)], fn=c[(1, 0)], tn=c[(0, 0)])
    return [f"hallucination rate: {rate.note} (the rows' own labels; `judgeflow calibrate` has the judge's verdict)"]
