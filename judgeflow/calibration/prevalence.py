"""Kappa's base rate, and the figures that do not move with it.

The same kappa means different things at 5% and at 50% prevalence: with few hallucinations, chance
agreement is high and a judge that agrees on nearly every item can still have a low kappa (the
"kappa paradox", Feinstein and Cicchetti 1990). Reported beside kappa:

- prevalence: the share of items people labelled 1 (the base rate), and the judge's own rate;
- PABAK (prevalence- and bias-adjusted kappa, Byrt, Bishop and Carlin 1993): 2 * accuracy - 1, kappa
  as if both classes were equally common and both raters flagged equally often;
- balanced accuracy: the mean of recall on 1s (sensitivity) and on 0s (specificity), which a
  constant judge cannot raise above 0.5 at any prevalence.
"""

from __future__ import annotations

from pydantic import BaseModel


class PrevalenceFigures(BaseModel):
    """The base rate and the prevalence-adjusted figures of one confusion matrix."""

    prevalence: float | None = None
    """Share of the items people labelled 1."""
    judge_rate: float | None = None
    """Share of the items the judge labelled 1."""
    pabak: float | None = None
    """Prevalence- and bias-adjusted kappa: 2 * observed agreement - 1."""
    balanced_accuracy: float | None = None
    """(sensitivity + specificity) / 2; None when people labelled one class only."""
    specificity: float | None = None
    """Of the items people labelled 0, the share the judge labelled 0."""


def prevalence_figures(tn: int, fp: int, fn: int, tp: int) -> PrevalenceFigures:
    """The figures for counts of (human, judge) pairs: tn (0, 0), fp (0, 1), fn (1, 0), tp (1, 1)."""
    n = tn + fp + fn + tp
    if n == 0:
        return PrevalenceFigures()
    sens = tp / (tp + fn) if tp + fn else None
    spec = tn / (tn + fp) if tn + fp else None
    return PrevalenceFigures(
        prevalence=(tp + fn) / n, judge_rate=(tp + fp) / n, pabak=2 * (tp + tn) / n - 1, specificity=spec,
        balanced_accuracy=(sens + spec) / 2 if sens is not None and spec is not None else None)


def prevalence_text(p: PrevalenceFigures) -> str:
    """One line: "base rate 42% (judge 38%); PABAK 0.67; balanced accuracy 0.83"."""
    if p.prevalence is None:
        return "no items"
    bal = "undefined (one class)" if p.balanced_accuracy is None else f"{p.balanced_accuracy:.2f}"
    return (f"base rate {p.prevalence:.0%} (judge {p.judge_rate:.0%}); PABAK {p.pabak:.2f}; "
            f"balanced accuracy {bal}")
