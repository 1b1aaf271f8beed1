"""What `judgeflow bench` prints: the benchmark's own figures beside the published ones, and the A/B."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..calibration.comparison import ComparisonReport, compare
from ..io import read_results
from .base import Benchmark, Figure, Published


def figures_of(bench: Benchmark, results: Path, seed: int) -> tuple[list[Figure], int, int]:
    """(figures, rows, rows scored) of a results file."""
    rows = read_results(results)
    scored = sum(1 for j in rows if j.label is not None)
    return bench.metric(rows, seed), len(rows), scored


def published_of(bench: Benchmark, records: Sequence[dict[str, Any]], seed: int) -> list[Published]:
    on_items = bench.published_on_items(records, seed) if bench.published_on_items else []
    return [*on_items, *bench.published]


def lines(bench: Benchmark, figures: Sequence[Figure], published: Sequence[Published], *, model: str,
          rows: int, scored: int) -> list[str]:
    out = [f"{bench.title}: {model} on {rows} items ({scored} scored; 95% bootstrap intervals)"]
    out += [f"  {f.name:<20} {f.text()}" for f in figures]
    if published:
        out.append("published, beside:")
    for p in published:
        value = " ".join(x for x in (f"{p.value:.3f}" if p.value is not None else "", p.note) if x)
        out.append(f"  {p.who}: {' '.join(x for x in (p.metric, value) if x)} ({p.cite})")
    return out


def ab_lines(a: Path, b: Path, names: tuple[str, str], seed: int) -> tuple[ComparisonReport, list[str]]:
    """The source study's A/B on the same items: kappa each, the direction of the errors, exact McNemar."""
    c = compare(a, b, names=names, seed=seed)
    out = [f"A/B on {c.n} items (both scored):"]
    for s in (c.a, c.b):
        ag = s.agreement
        k = "undefined" if ag.kappa is None else f"{ag.kappa:.3f}" + (
            f" [{ag.kappa_ci[0]:.3f}, {ag.kappa_ci[1]:.3f}]" if ag.kappa_ci else "")
        out.append(f"  {s.name:<24} kappa {k}; {ag.false_alarms} false alarms, {ag.misses} misses")
    out.append(f"  {c.b.name} right where {c.a.name} is wrong: {c.b_right_a_wrong}; the other way: "
               f"{c.a_right_b_wrong}; McNemar exact p = {c.mcnemar_p:.3g}")
    out.append("  " + c.verdict)
    return c, out
