"""Span-level agreement: the judge's error spans against human-annotated spans, by character overlap.

Human spans come from a `spans` field in the labels (or items) file, or, for FaithBench rows, from
`meta.spans`. Each span is `[start, end]` or `{"start", "end"}` (half-open character offsets into
the answer); a span whose `labels` are all "Benign" (FaithBench's harmless extras) is not a
hallucination and is dropped. An item counts only when its human spans are known (an empty list
is a known "no hallucinated characters") and the judge scored it.

Precision = overlapping characters / characters the judge marked; recall = overlapping characters
/ characters people marked; F1 their harmonic mean (micro-averaged over all characters of all
items). Intervals: percentile bootstrap over items, seeded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from ..files import read_rows
from ..results import Judgment

Span = tuple[int, int]


class SpanMetrics(BaseModel):
    """Character-overlap precision, recall and F1 of the judge's error spans against people's."""

    items: int
    """Scored items whose human spans are known."""
    precision: float | None
    recall: float | None
    f1: float | None
    precision_ci: tuple[float, float] | None = None
    recall_ci: tuple[float, float] | None = None
    f1_ci: tuple[float, float] | None = None
    judge_chars: int = 0
    human_chars: int = 0
    overlap_chars: int = 0


def _one(span: Any) -> tuple[Span | None, bool]:
    """(span, counts): a [start, end] / {"start", "end"} span and whether it marks a hallucination."""
    if isinstance(span, Mapping):
        labels = span.get("labels")
        benign = bool(labels) and all(str(x).casefold() == "benign" for x in labels)
        start, end = span.get("start"), span.get("end")
    elif isinstance(span, (list, tuple)) and len(span) == 2:
        (start, end), benign = span, False
    else:
        return None, False
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end:
        return (start, end), not benign
    return None, False


def human_spans(row: Mapping[str, Any]) -> list[Span] | None:
    """A labels/items row's hallucinated spans (`spans`, else `meta.spans`), or None if it has none."""
    raw = row.get("spans")
    if raw is None and isinstance(row.get("meta"), Mapping):
        raw = row["meta"].get("spans")
    if not isinstance(raw, list):
        return None
    return [s for s, counts in map(_one, raw) if s is not None and counts]


def read_human_spans(path: str | Path) -> dict[str, list[Span]]:
    """Human spans by item id from a labels or items file (rows without spans left out)."""
    out: dict[str, list[Span]] = {}
    for _, row in read_rows(path):
        if isinstance(row, dict) and row.get("id") is not None:
            spans = human_spans(row)
            if spans is not None:
                out[str(row["id"])] = spans
    return out


def spans_of_results(rows: Iterable[Judgment]) -> dict[str, list[Span]]:
    """Human spans the result rows carried through from their input (`input_spans`, `meta.spans`)."""
    out = {}
    for j in rows:
        spans = human_spans(j.extra)
        if spans is not None:
            out[j.id] = spans
    return out


def _chars(spans: Sequence[Span]) -> set[int]:
    return {i for s, e in spans for i in range(s, e)}


def span_counts(judge: Sequence[Span], human: Sequence[Span]) -> tuple[int, int, int]:
    """(characters the judge marked, characters people marked, characters both marked) of one item."""
    p, h = _chars(judge), _chars(human)
    return len(p), len(h), len(p & h)


_counts = span_counts


def _prf(pred: float, gold: float, both: float) -> tuple[float | None, float | None, float | None]:
    precision = both / pred if pred else None
    recall = both / gold if gold else None
    f1 = 2 * both / (pred + gold) if pred + gold else None
    return precision, recall, f1


def span_metrics(pairs: Sequence[tuple[Sequence[Span], Sequence[Span]]], *, seed: int = 0,
                 n_boot: int = 1000) -> SpanMetrics:
    """Micro precision/recall/F1 over (judge spans, human spans) pairs, one pair per item, with intervals."""
    counts = np.array([_counts(j, h) for j, h in pairs], dtype=float).reshape(-1, 3)
    total = counts.sum(axis=0)
    p, r, f = _prf(*total)
    out = SpanMetrics(items=len(pairs), precision=p, recall=r, f1=f, judge_chars=int(total[0]),
                      human_chars=int(total[1]), overlap_chars=int(total[2]))
    if len(pairs) < 2 or n_boot <= 0:
        return out
    # the same resampling as agreement.bootstrap_indices (not imported: agreement imports this module)
    sums = counts[np.random.default_rng(seed).integers(0, len(pairs), size=(n_boot, len(pairs)))].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        boot = {"precision_ci": sums[:, 2] / sums[:, 0], "recall_ci": sums[:, 2] / sums[:, 1],
                "f1_ci": 2 * sums[:, 2] / (sums[:, 0] + sums[:, 1])}
    return out.model_copy(update={k: _interval(v) for k, v in boot.items()})


def _interval(values: np.ndarray) -> tuple[float, float] | None:
    """2.5th and 97.5th percentiles of the defined resamples (0/0 is undefined); None if most are not."""
    ok = values[~np.isnan(values)]
    if len(ok) < max(20, len(values) // 2):
        return None
    lo, hi = np.percentile(ok, [2.5, 97.5])
    return float(lo), float(hi)


def spans_beside(rows: Sequence[Judgment], human: Mapping[str, list[Span]], *, seed: int = 0,
                 n_boot: int = 1000) -> SpanMetrics | None:
    """Span metrics of scored rows with known human spans; None when no such row exists."""
    pairs = [(judge_spans(j), human[j.id]) for j in rows if j.label is not None and j.status == "judged" and j.id in human]
    return span_metrics(pairs, seed=seed, n_boot=n_boot) if pairs else None


def judge_spans(j: Judgment) -> list[Span]:
    """The judge's error spans of a row as (start, end) pairs."""
    return [(s["start"], s["end"]) for s in j.spans or []]


def span_text(m: SpanMetrics) -> str:
    """One line: span precision, recall and F1 with intervals."""
    def one(x: float | None, ci: tuple[float, float] | None) -> str:
        if x is None:
            return "undefined"
        return f"{x:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{x:.2f}"

    return (f"span precision {one(m.precision, m.precision_ci)}, recall {one(m.recall, m.recall_ci)}, "
            f"F1 {one(m.f1, m.f1_ci)} (character overlap, {m.items} items with human spans)")
