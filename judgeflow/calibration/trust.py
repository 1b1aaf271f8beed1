"""A verdict on the judge: TRUSTED, UNTRUSTED or INCONCLUSIVE, and how many more labels would decide.

    v = judge_verdict(report.n, report.kappa, report.kappa_ci, q=0.12, tp=14, fp=6, fn=3, tn=27)
    v.verdict, v.labels_needed, v.labels_needed_judge_1, v.labels_needed_judge_0, v.text

The rule (stated in every verdict): with at least MIN_LABELS labelled items and a kappa interval,

- TRUSTED: the lower end of kappa's 95% interval is at or above the threshold (default 0.6, the
  lower edge of Landis and Koch's "substantial"),
- UNTRUSTED: its upper end is below the threshold,
- INCONCLUSIVE: the interval straddles the threshold, or there are fewer than MIN_LABELS labels
  (the project's floor: under 30 items the interval is too wide to rank anything), or kappa is
  undefined (people labelled one class only).

`labels_needed` projects the interval's half-width, which shrinks as 1 / sqrt(n), until it clears
the threshold on the side the kappa estimate lies (capped at MAX_NEEDED: a kappa sitting on the
threshold needs more labels than anyone will give). The split between the judge's 1s and 0s is
Neyman's allocation for the corrected rate: more labels where the judge's verdicts are uncertain,
weighted by how many rows carry that verdict.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel


Verdict = Literal["TRUSTED", "UNTRUSTED", "INCONCLUSIVE"]
#: the default kappa a judge must be shown to reach (the lower end of its interval) to be trusted
DEFAULT_THRESHOLD = 0.6
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


def _projected(n: int, kappa: float, ci: tuple[float, float], threshold: float) -> int:
    """Labels (in all) at which the interval's half-width falls below |kappa - threshold|."""
    half = (ci[1] - ci[0]) / 2
    gap = abs(kappa - threshold)
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


def judge_verdict(n: int, kappa: float | None, kappa_ci: tuple[float, float] | None, *, q: float | None = None,
                  tp: int = 0, fp: int = 0, fn: int = 0, tn: int = 0, threshold: float = DEFAULT_THRESHOLD) -> JudgeVerdict:
    """The verdict from kappa's interval against `threshold`; `q` (the judge's raw rate) and the labelled
    confusion counts split the labels needed between the judge's 1s and 0s."""
    rule = (f"TRUSTED when kappa's 95% interval lies at or above {threshold:.2f}, UNTRUSTED when it lies below, "
            f"else INCONCLUSIVE; no decision under {MIN_LABELS} labels")
    out = JudgeVerdict(threshold=threshold, labels=n, rule=rule)
    ppv, fo = (tp + 0.5) / (tp + fp + 1), (fn + 0.5) / (fn + tn + 1)
    if kappa is None:
        need = max(MIN_LABELS - n, 10)
        why = "kappa is undefined (people labelled one class only): label items of the other class"
    elif kappa_ci is None:
        need = max(MIN_LABELS - n, 1)
        why = f"kappa {kappa:.2f} has no interval on {n} labels"
    else:
        lo, hi = kappa_ci
        if n >= MIN_LABELS and lo >= threshold:
            out.verdict = "TRUSTED"
        elif n >= MIN_LABELS and hi < threshold:
            out.verdict = "UNTRUSTED"
        if out.verdict != "INCONCLUSIVE":
            side = "above" if out.verdict == "TRUSTED" else "below"
            out.text = (f"{out.verdict}: kappa {kappa:.2f} [{lo:.2f}, {hi:.2f}] on {n} labels lies {side} the "
                        f"threshold {threshold:.2f}")
            return out
        need = max(MIN_LABELS, _projected(n, kappa, (lo, hi), threshold)) - n
        need = max(need, 1)
        why = (f"kappa {kappa:.2f} [{lo:.2f}, {hi:.2f}] on {n} labels" +
               (f" straddles the threshold {threshold:.2f}" if lo < threshold <= hi else f" (under {MIN_LABELS} labels)"))
    have_1, have_0 = tp + fp, fn + tn
    out.labels_needed = need
    out.labels_needed_judge_1, out.labels_needed_judge_0 = _split(need, have_1, have_0, q, ppv, fo)
    cap = "at least " if need + n >= MAX_NEEDED else "about "
    out.text = (f"INCONCLUSIVE: {why}; {cap}{need} more label(s) would decide ({out.labels_needed_judge_1} of items "
                f"the judge labelled 1, {out.labels_needed_judge_0} it labelled 0: "
                "`judgeflow sample ITEMS --results RESULTS --stratify-by judge_label`)")
    return out
