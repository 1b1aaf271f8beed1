"""Span-level agreement of two runs on the same items, beside their kappas (`judgeflow compare`).

Each run's character-overlap precision, recall and F1 against the human spans (`span_metrics`) on the
items both runs scored that have human spans, and the F1 difference (B - A) with a paired bootstrap
interval: the same resampled items for both runs, as for the kappa difference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel

from ..results import Judgment
from .agreement import bootstrap_indices, percentile_ci
from .span_metrics import Span, SpanMetrics, judge_spans, span_counts, span_metrics


class SpanComparison(BaseModel):
    """Both runs' span metrics on the same items, and the paired F1 difference."""

    items: int
    a: SpanMetrics
    b: SpanMetrics
    f1_diff: float | None = None
    """F1(B) - F1(A)."""
    f1_diff_ci: tuple[float, float] | None = None


def _f1(counts: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2 * counts[..., 2] / (counts[..., 0] + counts[..., 1])


def compare_spans(pairs: Sequence[tuple[Judgment, Judgment]], human: Mapping[str, list[Span]], *, seed: int = 0,
                  n_boot: int = 1000) -> SpanComparison | None:
    """Span metrics of two runs' rows paired by item; None when no paired item has human spans."""
    both = [(a, b, human[a.id]) for a, b in pairs if a.id in human and a.status == b.status == "judged"]
    if not both:
        return None
    sides = [[(judge_spans(row), h) for row, h in ((t[i], t[2]) for t in both)] for i in (0, 1)]
    a, b = (span_metrics(s, seed=seed, n_boot=n_boot) for s in sides)
    out = SpanComparison(items=len(both), a=a, b=b)
    if a.f1 is not None and b.f1 is not None:
        out.f1_diff = b.f1 - a.f1
        if len(both) >= 2 and n_boot > 0:
            ca, cb = (np.array([span_counts(j, h) for j, h in s], dtype=float) for s in sides)
            idx = bootstrap_indices(len(both), seed=seed, n_boot=n_boot)
            out.f1_diff_ci = percentile_ci(_f1(cb[idx].sum(axis=1)) - _f1(ca[idx].sum(axis=1)))
    return out


def span_comparison_text(c: SpanComparison, names: tuple[str, str]) -> list[str]:
    from .span_metrics import span_text

    diff = "undefined" if c.f1_diff is None else f"{c.f1_diff:+.2f}" + (
        f" [{c.f1_diff_ci[0]:+.2f}, {c.f1_diff_ci[1]:+.2f}]" if c.f1_diff_ci else "")
    return [f"spans, A {names[0]}: {span_text(c.a)}", f"spans, B {names[1]}: {span_text(c.b)}",
            f"span F1(B) - F1(A): {diff} (paired bootstrap 95% CI, {c.items} items)"]
