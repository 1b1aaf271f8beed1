"""From a benchmark's files to the items file a run judges: convert, sample (`--limit`), write.

The items file is written byte for byte the same from the same files, limit and seed, so a run
of it resumes (`--resume` checks the input's hash).
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..calibration.sampling import allocate
from ..io.jsonl import write_results
from .base import Benchmark
from .fetch import BenchDataError


def records_of(bench: Benchmark, data: Path) -> list[dict[str, Any]]:
    """Every item record of the benchmark, in its fixed order."""
    try:
        records = list(bench.convert(data))
    except (ValueError, KeyError, TypeError) as e:
        raise BenchDataError(f"{bench.title}: {e}") from None
    if not records:
        raise BenchDataError(f"{bench.title}: no items in {data}")
    return records


def stratified(records: Sequence[dict[str, Any]], n: int, *, seed: int = 0) -> list[dict[str, Any]]:
    """`n` records, stratified by label (proportional quotas, at least one of each label), drawn with
    `seed`, kept in the benchmark's order."""
    by_label: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        by_label[str(r.get("label"))].append(i)
    quota = allocate({k: len(v) for k, v in by_label.items()}, n)
    rng = random.Random(seed)
    chosen = sorted(i for k in sorted(by_label) for i in rng.sample(by_label[k], quota.get(k, 0)))
    return [records[i] for i in chosen]


def label_counts(records: Sequence[dict[str, Any]]) -> str:
    c = Counter(r.get("label") for r in records)
    return f"{len(records)} items ({c.get(1, 0)} labelled 1, {c.get(0, 0)} labelled 0)"


def write_items(records: Sequence[dict[str, Any]], path: Path) -> Path:
    """Write the items (JSONL, atomically; the same records give the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_results(path, records)
    return path
