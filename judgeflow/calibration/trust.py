"""A verdict on the judge: TRUSTED, UNTRUSTED or INCONCLUSIVE, and how many more labels would decide.

    v = judge_verdict(report.n, 0.78, (0.61, 0.9), q=0.12, tp=14, fp=6, fn=3, tn=27)
    v.verdict, v.labels_needed, v.labels_needed_judge_1, v.labels_needed_judge_0, v.text

The measure is Youden's J = sensitivity + specificity - 1 (= 2 x balanced accuracy - 1) on the
judged rows, with its 95% interval from the corrected rate's posterior (`corrected.py`: right for
random and judge-label-stratified labels). Unlike kappa it does not move with the base rate (a
judge with sensitivity and specificity 0.9 has kappa 0.59 at 10% prevalence and 0.77 at 30%), and
it is what the correction divides by: the corrected rate's error grows as 1 / J. The rule (stated in
every verdict): with at least MIN_LABELS labels,

- TRUSTED: the lower end of J's 95% interval is at or above the threshold (default 0.5: balanced
  accuracy 0.75; sensitivity and specificity 0.75 each, or 0.95 and 0.55),
- UNTRUSTED: its upper end is below the threshold,
- INCONCLUSIVE: the interval straddles the threshold, or there are fewer than MIN_LABELS labels
  (the project's floor: under 30 items an interval is too wide to rank anything), or J has no
  interval (no labels on one of the judge's labels, nothing judged).

`labels_needed` projects the interval's half-width, which shrinks as 1 / sqrt(n), until it clears
the threshold on the side the estimate lies (capped at MAX_NEEDED: a judge sitting on the threshold
needs more labels than anyone will give). The split between the judge's 1s and 0s is Neyman's
allocation for the corrected rate: more labels where the judge's verdicts are uncertain, weighted by
how many rows carry that verdict.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel

Verdict = Literal["TRUSTED", "UNTRUSTED", "INCONCLUSIVE"]
#: the default Youden's J a judge must be shown to reach (the lower end of its interval) to be trusted
DEFAULT_THRESHOLD = 0.5
MEASURE = "Youden's J (sensitivity + specificity - 1)"
#: no decision on fewer labels than this (agreement.SMALL_SAMPLE)
MIN_LABELS = 30
#: the most labels a projection names
MAX_NEEDED = 5000


class JudgeVerdict(BaseModel):
    """The verdict, the rule that gave it and the labels that would decide."""

    verdict: Verdict = "INCONCLUSIVE"
    threshold: float = DEFAULT_THRESHOLD
    labels: int = 0
    labels_needed: int = 0
    """More labels that would decide (0 once decided); a projection, not a promise."""
    labels_needed_judge_1: int = 0
    """Of them, items the judge labelled 1 (its flags)."""
    labels_needed_judge_0: int = 0
    """Of them, items the judge labelled 0."""
    rule: str = ""
    text: str = ""


def _projected(n: int, value: float, ci: tuple[float, float], threshold: float) -> int:
    """Labels (in all) at which the interval's half-width falls below |value - threshold|."""
    half = (ci[1] - ci[0]) / 2
    gap = abs(value - threshold)
    if gap < 1e-9:
        return MAX_NEEDED
    return min(MAX_NEEDED, math.ceil(n * (half / gap) ** 2) + 1)


def _split(needed: int, have_1: int, have_0: int, q: float | None, ppv: float, fo: float) -> tuple[int, int]:
    """Neyman's allocation of the labels in all (have + needed) between the judge's 1s and 0s."""
    if q is None:
        return math.ceil(needed / 2), needed // 2
    w1 = q * math.sqrt(ppv * (1 - ppv))
    w0 = (1 - q) * math.sqrt(fo * (1 - fo))
    total = have_1 + have_0 + needed
    want_1 = round(total * w1 / (w1 + w0)) if w1 + w0 > 0 else round(total * q)
    n1 = min(needed, max(0, want_1 - have_1))
    return n1, needed - n1


def judge_verdict(n: int, value: float | None, ci: tuple[float, float] | None, *, q: float | None = None,
                  tp: int = 0, fp: int = 0, fn: int = 0, tn: int = 0, threshold: float = DEFAULT_THRESHOLD,
                  measure: str = MEASURE) -> JudgeVerdict:
    """The verdict from the interval `ci` of the measure (`value` its estimate) against `threshold`; `q` (the
    judge's raw rate) and the labelled confusion counts split the labels needed between the judge's 1s and 0s."""
    rule = (f"TRUSTED when the 95% interval of {measure} lies at or above {threshold:.2f}, UNTRUSTED when it lies "
            f"below, else INCONCLUSIVE; no decision under {MIN_LABELS} labels")
    out = JudgeVerdict(threshold=threshold, labels=n, rule=rule)
    ppv, fo = (tp + 0.5) / (tp + fp + 1), (fn + 0.5) / (fn + tn + 1)
    name = measure.split(" (")[0]
    if ci is None:
        need = max(MIN_LABELS - n, 10)
        why = (f"{name} has no interval on {n} labels (label items the judge labelled 1 and items it labelled 0, "
               "of both classes)")
    else:
        lo, hi = ci
        point = value if value is not None else (lo + hi) / 2
        if n >= MIN_LABELS and lo >= threshold:
            out.verdict = "TRUSTED"
        elif n >= MIN_LABELS and hi < threshold:
            out.verdict = "UNTRUSTED"
        if out.verdict != "INCONCLUSIVE":
            side = "above" if out.verdict == "TRUSTED" else "below"
            out.text = (f"{out.verdict}: {name} {point:.2f} [{lo:.2f}, {hi:.2f}] on {n} labels lies {side} the "
                        f"threshold {threshold:.2f}")
            return out
        need = max(1, max(MIN_LABELS, _projected(n, point, (lo, hi), threshold)) - n)
        why = (f"{name} {point:.2f} [{lo:.2f}, {hi:.2f}] on {n} labels" +
               (f" straddles the threshold {threshold:.2f}" if lo < threshold <= hi else f" (under {MIN_LABELS} labels)"))
    have_1, have_0 = tp + fp, fn + tn
    out.labels_needed = need
    out.labels_needed_judge_1, out.labels_needed_judge_0 = _split(need, have_1, have_0, q, ppv, fo)
    cap = "at least " if need + n >= MAX_NEEDED else "about "
    out.text = (f"INCONCLUSIVE: {why}; {cap}{need} more label(s) would decide ({out.labels_needed_judge_1} of items "
                f"the judge labelled 1, {out.labels_needed_judge_0} it labelled 0: "
                "`judgeflow sample ITEMS --results RESULTS --stratify-by judge_label`)")
    return out
