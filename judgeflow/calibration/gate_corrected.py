"""The gate's two rates corrected for the judge's measured errors, and whether a regression could be the judge's.

    c = corrected_gate(rows_b, rows_c, labels, worse=12, better=3)     # labels of the baseline's answers
    c.baseline.estimate, c.candidate.estimate, c.difference, c.low, c.high, c.judge_could_explain, c.text

The labels are people's labels of the baseline's answers (a calibration sample drawn from that
run, `judgeflow sample --results BASELINE`): they measure the judge's precision (PPV, the share
of its 1s people confirm) and false-omission rate (FOR, the share of its 0s that hide an error).
Both runs' rates are corrected with the same PPV and FOR (`corrected.py`), which assumes the judge
errs on the candidate's answers as it did on the baseline's; then the corrected difference is the
paired raw difference ((0 -> 1) - (1 -> 0) over the paired items) times PPV - FOR, and its interval
carries the paired flips' uncertainty (a Jeffreys-Dirichlet posterior over worse / better / same)
and the labels' (PPV and FOR).

A regression "could be the judge's" when the candidate looks worse and either the corrected
difference's interval reaches 0, or the false alarms the judge's measured precision allows among
the items that went 0 -> 1 (at the lower end of PPV's interval) are as many as the net regression.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from ..results import Judgment
from .corrected import DRAWS, CorrectedRate, confusion_counts, corrected_rate, posterior
from .labels import HumanLabels, join_labels
from .rates import pct


class GateCorrection(BaseModel):
    """Both runs' corrected rates and their difference (candidate - baseline)."""

    baseline: CorrectedRate
    candidate: CorrectedRate
    difference: float | None = None
    low: float | None = None
    high: float | None = None
    level: float = 0.95
    labelled: int = 0
    """The baseline's labelled, scored rows the judge's errors are measured on."""
    false_alarms_allowed: float | None = None
    """Of the items that went 0 -> 1, how many may be false alarms at the lower end of PPV's interval."""
    judge_could_explain: bool = False
    judge_note: str = ""
    """Why the regression could be the judge's ("" when it could not)."""
    text: str = ""


def _ones(rows: Sequence[Judgment]) -> tuple[int, int]:
    scored = [j for j in rows if j.label is not None]
    return sum(j.label == 1 for j in scored), len(scored)


def corrected_gate(rows_b: Sequence[Judgment], rows_c: Sequence[Judgment], labels: HumanLabels, *, worse: int,
                   better: int, paired: int, level: float = 0.95, seed: int = 0) -> GateCorrection:
    """Correct both runs with the judge's errors measured on the labelled baseline rows."""
    pairs = [(j, h) for j, h in join_labels(rows_b, labels).pairs if j.label is not None]
    tp, fp, fn, tn = confusion_counts(pairs)
    (ones_b, n_b), (ones_c, n_c) = _ones(rows_b), _ones(rows_c)
    out = GateCorrection(baseline=corrected_rate(ones_b, n_b, tp, fp, fn, tn, level=level, seed=seed),
                         candidate=corrected_rate(ones_c, n_c, tp, fp, fn, tn, level=level, seed=seed),
                         level=level, labelled=len(pairs))
    if not pairs or not n_b or not n_c:
        out.text = "no labelled, scored baseline rows: the rates cannot be corrected (label a sample of the baseline)"
        return out
    _, ppv, fo = posterior(ones_b, n_b, tp, fp, fn, tn, seed=seed)
    shares = np.random.default_rng(seed + 1).dirichlet(
        [worse + 0.5, better + 0.5, max(paired - worse - better, 0) + 0.5], DRAWS)
    diff = (shares[:, 0] - shares[:, 1]) * (ppv - fo)  # the paired change in the raw rate, times PPV - FOR
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(diff, [tail, 100 - tail])
    out.low, out.high = float(lo), float(hi)
    ppv_hat = out.baseline.ppv if out.baseline.ppv is not None else float(np.median(ppv))
    for_hat = out.baseline.false_omission if out.baseline.false_omission is not None else float(np.median(fo))
    out.difference = (worse - better) / paired * (ppv_hat - for_hat) if paired else None
    ppv_low = float(np.percentile(ppv, tail))
    out.false_alarms_allowed = worse * (1 - ppv_low)
    looks_worse = ones_c / n_c > ones_b / n_b or worse > better
    reaches_zero = out.low <= 0
    allowed = worse > better and out.false_alarms_allowed >= worse - better
    out.judge_could_explain = looks_worse and (reaches_zero or allowed)
    out.judge_note = _judge_note(out, worse, better, ppv_low, reaches_zero, allowed) if out.judge_could_explain else ""
    out.text = " ".join(x for x in (_head(out), out.judge_note) if x)
    return out


def _head(c: GateCorrection) -> str:
    return (f"corrected for the judge's errors (measured on {c.labelled} labelled baseline rows): baseline "
            f"{pct(c.baseline.estimate)} [{pct(c.baseline.low)}, {pct(c.baseline.high)}], candidate "
            f"{pct(c.candidate.estimate)} [{pct(c.candidate.low)}, {pct(c.candidate.high)}]; difference "
            f"{pct(c.difference)} [{pct(c.low)}, {pct(c.high)}].")


def _judge_note(c: GateCorrection, worse: int, better: int, ppv_low: float, reaches_zero: bool, allowed: bool) -> str:
    why = []
    if reaches_zero:
        why.append("the corrected difference's interval reaches 0")
    if allowed:
        why.append(f"up to {c.false_alarms_allowed:.1f} of the {worse} item(s) that went 0 -> 1 may be false alarms "
                   f"(the judge's precision may be as low as {pct(ppv_low)}), as many as the net regression of "
                   f"{worse - better}")
    return "The regression could be the judge's: " + "; ".join(why) + ". Label the items that went 0 -> 1 to tell."
