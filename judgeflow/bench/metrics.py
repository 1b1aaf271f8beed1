"""The benchmarks' own metrics on paired labels (1 = hallucination), with seeded bootstrap intervals.

balanced accuracy = (recall on 1s + recall on 0s) / 2; F1-macro = the mean of the F1 of class 1 and
the F1 of class 0; response-level F1 = the F1 of class 1 (RAGTruth's "case" F1); Cohen's kappa.
Intervals: the 2.5th and 97.5th percentiles of the metric over resamples of the items
(`calibration.agreement.bootstrap_indices`, the same seed gives the same interval); resamples where
the metric is undefined are left out, and no interval is given when most are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..calibration.agreement import bootstrap_indices, kappa_of, percentile_ci
from ..calibration.span_metrics import Span, spans_beside
from ..results import Judgment
from .base import Figure

DEFAULT_BOOT = 1000
Vectorised = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _counts(h: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, ...]:
    """tp, fp, fn, tn along the last axis."""
    return ((h == 1) & (j == 1)).sum(-1), ((h == 0) & (j == 1)).sum(-1), ((h == 1) & (j == 0)).sum(-1), \
        ((h == 0) & (j == 0)).sum(-1)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1), np.nan)


def balanced_accuracy(h: np.ndarray, j: np.ndarray) -> np.ndarray:
    tp, fp, fn, tn = _counts(h, j)
    return (_div(tp, tp + fn) + _div(tn, tn + fp)) / 2


def f1_positive(h: np.ndarray, j: np.ndarray) -> np.ndarray:
    """F1 of class 1 (hallucination): 2tp / (2tp + fp + fn)."""
    tp, fp, fn, _ = _counts(h, j)
    return _div(2 * tp, 2 * tp + fp + fn)


def f1_macro(h: np.ndarray, j: np.ndarray) -> np.ndarray:
    tp, fp, fn, tn = _counts(h, j)
    return (_div(2 * tp, 2 * tp + fp + fn) + _div(2 * tn, 2 * tn + fn + fp)) / 2


def kappa(h: np.ndarray, j: np.ndarray) -> np.ndarray:
    return kappa_of(h, j)


def figure(name: str, fn: Vectorised, human: Sequence[int], judge: Sequence[int], *, seed: int = 0,
           n_boot: int = DEFAULT_BOOT) -> Figure:
    """`fn` on the paired labels, with its bootstrap interval."""
    h, j = np.asarray(human, dtype=int), np.asarray(judge, dtype=int)
    if len(h) == 0:
        return Figure(name, None, note="no scored item")
    value = float(fn(h, j))
    if np.isnan(value):
        return Figure(name, None, n=len(h), note="undefined on these items (one class only)")
    ci = None
    if len(h) >= 2 and n_boot > 0:
        idx = bootstrap_indices(len(h), seed=seed, n_boot=n_boot)
        ci = percentile_ci(np.asarray(fn(h[idx], j[idx]), dtype=float))
    return Figure(name, value, ci, n=len(h))


def scored_pairs(rows: Sequence[Judgment]) -> tuple[list[int], list[int]]:
    """(human, judge) labels of the rows the judge scored and people labelled."""
    pairs = [(j.human_label, j.label) for j in rows if j.label is not None and j.human_label is not None]
    return [int(h) for h, _ in pairs], [int(x) for _, x in pairs]


def label_figures(rows: Sequence[Judgment], names: Sequence[tuple[str, Vectorised]], seed: int) -> list[Figure]:
    human, judge = scored_pairs(rows)
    return [figure(name, fn, human, judge, seed=seed) for name, fn in names]


def kappa_figures(rows: Sequence[Judgment], seed: int) -> list[Figure]:
    """The QA benchmarks' metric (HaluEval QA, TruthfulQA): kappa and balanced accuracy, with intervals."""
    return label_figures(rows, [("kappa", kappa), ("balanced accuracy", balanced_accuracy)], seed)


def span_figure(rows: Sequence[Judgment], human: dict[str, list[Span]], seed: int) -> Figure:
    """Span-level F1 by character overlap (`calibration.span_metrics`) on the scored rows with human spans."""
    m = spans_beside(rows, human, seed=seed)
    if m is None or m.f1 is None:
        return Figure("span-level F1", None, note="no scored item with human spans" if m is None else
                      "no character marked by either side")
    p = "-" if m.precision is None else f"{m.precision:.3f}"
    r = "-" if m.recall is None else f"{m.recall:.3f}"
    return Figure("span-level F1", m.f1, m.f1_ci, n=m.items, note=f"character overlap; precision {p}, recall {r}")
