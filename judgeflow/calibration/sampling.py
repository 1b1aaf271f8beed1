"""Pick a sample to label by hand: stratified, seeded, reproducible.

    summary = sample_file("items.jsonl", 40, "to_label.jsonl", results="results.jsonl")

Strata are the values of one or more fields (`dataset`, `meta.category`), or `judge_label`
(the judge's 0 / 1 / unscored, from a results file joined by id). Each stratum gets its
proportional share (largest remainder, at least one item when n allows), or an equal share
with `equal=True`; the sample is then shuffled so strata do not come in runs. The same input
and seed always give the same sample. Rows are written as they were read (a valid items file),
with the judge's verdict under `judge` when results are given, and without the input's own
label unless `keep_labels=True`, so the person labelling is not shown it.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..errors import ConfigError, InvalidItemError
from ..io.jsonl import write_results
from ..items import Item, read_records
from ..results import Judgment
from .labels import LABEL_FIELDS, read_results

JUDGE_LABEL = "judge_label"
"""The stratify-by name for the judge's own label (needs results)."""
FOCUS = ("disagreement", "unstable")
FOCUS_FIELD = "sample_focus"
"""Written into each row of a focused sample, so the labeller can say what such a sample is for."""
FOCUS_NOTE = ("this sample holds only items where the judges disagree (or one judge disagrees with itself): it is "
              "for finding criterion problems fast (debugging), not for measuring agreement; estimate kappa on a "
              "stratified sample (`judgeflow sample ITEMS --results R` without --focus)")


def judges_disagree(j: Judgment) -> bool:
    """A panel's members (or a judge's samples) gave different labels, or a cascade's cheap and strong judges did."""
    votes = {v.label for v in j.judges or [] if v.label is not None}
    votes |= {x for v in j.judges or [] for x in (v.samples or []) if x is not None}
    if j.cascade and j.cascade.get("strong_label") is not None and j.cascade.get("cheap_label") is not None:
        votes |= {j.cascade["strong_label"], j.cascade["cheap_label"]}
    return len(votes) > 1


def repeats_flip(j: Judgment) -> bool:
    """The judge's own repeats on this item (`run --repeats K`, `stability -o`) gave different labels."""
    return len({v.label for v in j.repeats or [] if v.label is not None}) > 1


#: --focus name -> which result rows it keeps
FOCUS_TEST = {"disagreement": judges_disagree, "unstable": repeats_flip}


class Stratum(BaseModel):
    """One stratum: its key, how many rows it has, how many were sampled."""

    key: str
    size: int
    sampled: int


class SampleSummary(BaseModel):
    """What `sample_file` did."""

    output: str
    n: int
    """Rows written."""
    pool: int
    """Rows sampled from."""
    stratify_by: list[str] = Field(default_factory=list)
    strata: list[Stratum] = Field(default_factory=list)
    seed: int = 0
    without_results: int = 0
    """Input rows with no result row (left out of the pool when results are given)."""
    labels_dropped: bool = False
    focus: str | None = None
    """"disagreement" when only items the judges disagree on were sampled (for debugging, not for kappa)."""


def field_of(record: Mapping[str, Any], field: str) -> str:
    """The record's value for `field` (dotted paths go into nested objects); "(none)" if absent."""
    value: Any = record
    for key in field.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    if value is None:
        return "(none)"
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)


def allocate(sizes: Mapping[str, int], n: int, *, equal: bool = False) -> dict[str, int]:
    """How many to draw from each stratum so the total is min(n, all rows).

    Proportional (or equal) quotas, rounded by largest remainder, capped at each stratum's
    size, with at least one per non-empty stratum when n is at least the number of strata.
    """
    keys = sorted(k for k, v in sizes.items() if v > 0)
    n = min(n, sum(sizes[k] for k in keys))
    quota: dict[str, float] = {}
    if equal:  # water-filling: small strata are taken whole, the rest share equally
        left, rest = float(n), list(keys)
        while rest:
            share = left / len(rest)
            small = [k for k in rest if sizes[k] <= share]
            if not small:
                quota.update({k: share for k in rest})
                break
            for k in small:
                quota[k] = sizes[k]
                left -= sizes[k]
                rest.remove(k)
    else:
        total = sum(sizes[k] for k in keys)
        quota = {k: n * sizes[k] / total for k in keys}
    alloc = {k: min(sizes[k], math.floor(quota[k])) for k in keys}
    by_remainder = sorted(keys, key=lambda k: (-(quota[k] - math.floor(quota[k])), k))
    while sum(alloc.values()) < n:
        for k in by_remainder:
            if sum(alloc.values()) < n and alloc[k] < sizes[k]:
                alloc[k] += 1
    if n >= len(keys):
        for k in keys:
            if alloc[k] == 0:
                donor = max(keys, key=lambda d: (alloc[d], d))
                alloc[donor] -= 1
                alloc[k] = 1
    return alloc


def stratified_sample(
    rows: Sequence[Mapping[str, Any]], n: int, *, keys: Sequence[str], seed: int = 0, equal: bool = False,
) -> tuple[list[int], list[Stratum]]:
    """Indices of the sampled rows (shuffled) and the strata, for strata `keys` (empty: simple random)."""
    if n < 1:
        raise ConfigError(f"-n must be at least 1, got {n}")
    groups: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        key = " | ".join(field_of(row, k) for k in keys) if keys else "(all)"
        groups.setdefault(key, []).append(i)
    alloc = allocate({k: len(v) for k, v in groups.items()}, n, equal=equal)
    rng = random.Random(seed)
    chosen: list[int] = []
    for key in sorted(groups):
        chosen.extend(rng.sample(groups[key], alloc.get(key, 0)))
    rng.shuffle(chosen)
    strata = [Stratum(key=k, size=len(groups[k]), sampled=alloc.get(k, 0)) for k in sorted(groups)]
    return chosen, strata


def judge_summary(j: Judgment) -> dict[str, Any]:
    """What the labeller reveals after the person has labelled an item."""
    from .agreement import deciding_claim  # numpy: not when the CLI only builds its parser

    claim = deciding_claim(j)
    return {"label": j.label, "status": j.status, "criterion": j.criterion, "model": j.model, "reason": j.reason,
            "claim": {"id": claim.id, "text": claim.text, "verdict": claim.verdict} if claim else None}


def read_pool(path: str | Path, results: str | Path | None = None, *, focus: str | None = None
              ) -> tuple[list[dict[str, Any]], int]:
    """Raw input rows (each checked as an Item), with `judge` attached from `results` by id.

    Returns the rows and how many input rows had no result (left out). With `focus="disagreement"`
    only rows whose judges disagree are kept.
    """
    by_id = {j.id: j for j in read_results(results)} if results is not None else None
    rows, missing = [], 0
    for line, rec in read_records(path):
        if isinstance(rec, InvalidItemError):
            raise rec
        if isinstance(rec, Mapping) and "status" in rec and "claims" in rec and "answer" not in rec:
            raise InvalidItemError("this is a results file (its rows have no answer to show); sample the items "
                                   "file and pass this one as --results", path=str(path), line=line)
        item = Item.from_record(rec, path=str(path), line=line)
        row = dict(rec)
        if by_id is not None:
            j = by_id.get(item.id)
            if j is None:
                missing += 1
                continue
            if focus and not FOCUS_TEST[focus](j):
                continue
            row["judge"] = judge_summary(j)
            row[JUDGE_LABEL] = ("invalid" if j.status == "invalid" else "unscored") if j.label is None else str(j.label)
            if focus:
                row[FOCUS_FIELD] = focus
        rows.append(row)
    return rows, missing


def sample_file(
    path: str | Path, n: int, output: str | Path, *, stratify_by: Sequence[str] | None = None,
    results: str | Path | None = None, seed: int = 0, equal: bool = False, keep_labels: bool = False,
    focus: str | None = None,
) -> SampleSummary:
    """Write a stratified sample of `path` to `output` (JSONL) for labelling by hand.

    Args:
        path: items (.jsonl or .csv).
        n: sample size (all rows if fewer).
        output: where to write the sample.
        stratify_by: fields to stratify by; `judge_label` needs `results`. Default: `judge_label`
            with results, else none (a simple random sample).
        results: a results file of these items; adds each row's judge verdict (hidden while labelling).
        seed: the random seed.
        equal: equal shares per stratum instead of proportional ones.
        keep_labels: keep the input's own `label` (default: drop it, so it cannot anchor the person).
        focus: "disagreement": only items where a panel's members, a judge's samples or a cascade's
            judges disagree; "unstable": only items whose verdict flips between the judge's own
            repeats (results made with `run --repeats K` or `stability -o`). Both need results;
            for debugging a criterion, never for estimating kappa.

    Raises:
        InvalidItemError: an unreadable row, or a results file given as the input.
        ConfigError: `judge_label` without results, or n < 1.
    """
    keys = list(stratify_by) if stratify_by else ([JUDGE_LABEL] if results is not None else [])
    if JUDGE_LABEL in keys and results is None:
        raise ConfigError("--stratify-by judge_label needs the judge's results: pass --results RESULTS.jsonl")
    if focus is not None and focus not in FOCUS:
        raise ConfigError(f"--focus {focus!r} is not one of: {', '.join(FOCUS)}")
    if focus and results is None:
        raise ConfigError(f"--focus {focus} needs the judge's results: pass --results RESULTS.jsonl")
    rows, missing = read_pool(path, results, focus=focus)
    if not rows and focus == "unstable":
        raise InvalidItemError("no item whose verdict flips between the judge's repeats (the results need repeats: "
                               "`judgeflow run --repeats K`, or `judgeflow stability RUN1 RUN2 -o MERGED`)",
                               path=str(results))
    if not rows and focus:
        raise InvalidItemError("no item where the judges disagree (the results need a panel, --samples or a cascade "
                               "with an audit)", path=str(results))
    if not rows and results is not None and missing:  # every row lacks a result: another input's results
        raise InvalidItemError(f"none of its {missing} rows has a result in {results} (no id in common: were the "
                               "results judged from another file?); pass the results of a run over this file",
                               path=str(path))
    if not rows:
        raise InvalidItemError("no rows to sample" + (" that have a result" if results is not None else ""),
                               path=str(path))
    chosen, strata = stratified_sample(rows, n, keys=keys, seed=seed, equal=equal)
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_results(out, ({k: v for k, v in rows[i].items() if k != JUDGE_LABEL and (keep_labels or k not in LABEL_FIELDS)}
                             for i in chosen))
    return SampleSummary(output=str(out), n=len(chosen), pool=len(rows), stratify_by=keys, strata=strata, seed=seed,
                         without_results=missing, labels_dropped=not keep_labels, focus=focus)
