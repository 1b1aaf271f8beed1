"""Two runs of the same judge on the same items, paired by id, and what keeps them apart.

    pairs = paired(baseline_rows, candidate_rows, "base.jsonl", "cand.jsonl")   # RunsDiffer if not comparable

Used by the gate (a bot's answers before and after a change, the judge held fixed) and by the
stability report (the same answers judged again). The answers may differ between the runs; what
may not: the set of ids, the criterion each item was judged under, the judge model and strategy,
and the question, reference, source or spec a row carries. Each difference is named, with ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..errors import InvalidItemError, RunsDiffer
from ..results import Judgment

#: the texts of an item that must be the same in both runs when rows carry them (the answer may differ)
HELD_TEXTS = ("question", "reference", "source", "spec")


def by_id(rows: Sequence[Judgment], where: str) -> dict[str, Judgment]:
    """The rows keyed by id.

    Raises:
        InvalidItemError: an id appears twice (two runs concatenated into one file?).
    """
    dupes = [i for i, k in Counter(j.id for j in rows).items() if k > 1]
    if dupes:
        raise InvalidItemError(f"ids {dupes[:5]} appear more than once; each item must be judged once in a run "
                               "(were two results files concatenated?)", path=where, field="id")
    return {j.id: j for j in rows}


def _some(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def _judge_of(rows: dict[str, Judgment], attr: str) -> list[str]:
    return sorted({str(getattr(j, attr)) for j in rows.values() if j.status != "invalid"})


def differences(a: dict[str, Judgment], b: dict[str, Judgment], wa: str, wb: str) -> list[str]:
    """Why the runs `a` (from `wa`) and `b` (from `wb`) cannot be compared item by item; [] if they can."""
    out = []
    only_a, only_b = [i for i in a if i not in b], [i for i in b if i not in a]
    if only_a or only_b:
        out.append(f"different items: {len(only_a)} id(s) only in {wa}" + (f" ({_some(only_a)})" if only_a else "")
                   + f", {len(only_b)} only in {wb}" + (f" ({_some(only_b)})" if only_b else "")
                   + "; judge answers to the same questions (the same ids) in both runs")
    for attr, what in (("model", "judge model"), ("strategy", "judging strategy")):
        va, vb = _judge_of(a, attr), _judge_of(b, attr)
        if va and vb and va != vb:
            out.append(f"{what}: {', '.join(va)} in {wa} but {', '.join(vb)} in {wb}; the judge must be held "
                       "fixed (judge both runs with the same --model and --strategy)")
    shared = [i for i in a if i in b]
    crit = [i for i in shared if "invalid" not in (a[i].status, b[i].status) and a[i].criterion != b[i].criterion]
    if crit:
        first = crit[0]
        out.append(f"criterion: {len(crit)} item(s) judged under another criterion ({_some(crit)}; e.g. {first!r}: "
                   f"{a[first].criterion or '(no criterion)'} in {wa}, {b[first].criterion or '(no criterion)'} in {wb}); "
                   "pass the same --criterion to both runs (a judged row always names its criterion)")
    for field in HELD_TEXTS:
        diff = [i for i in shared if field in a[i].extra and field in b[i].extra and a[i].extra[field] != b[i].extra[field]]
        if diff:
            out.append(f"{field}: {len(diff)} item(s) have a different {field} in the two runs ({_some(diff)}); "
                       "the same id must ask the same question")
    return out


def paired(a: Sequence[Judgment], b: Sequence[Judgment], wa: str, wb: str) -> list[tuple[Judgment, Judgment]]:
    """(a-row, b-row) for every id, in `a`'s order.

    Raises:
        RunsDiffer: the runs judged other items, or under another criterion or judge (each difference named).
        InvalidItemError: an id appears twice in one run.
    """
    ia, ib = by_id(a, wa), by_id(b, wb)
    diff = differences(ia, ib, wa, wb)
    if diff:
        raise RunsDiffer(f"{wa} and {wb} cannot be compared", diff)
    return [(ja, ib[i]) for i, ja in ia.items()]
