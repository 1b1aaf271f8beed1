"""Calibration of panels and cascades: each member against the human labels, and the members
against each other.

`calibrate(results, by="judge")` puts the combined label and every member side by side (each a
GroupReport with Cohen's kappa and its bootstrap interval), so a panel's gain over its best member
is measured on your own labelled sample, not assumed. `fleiss_kappa` is the agreement between the
members themselves (Fleiss, 1971), on the items every member scored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..results import Judgment
from .agreement import GroupReport, agreement
from .labels import Label

COMBINED = "combined"


def member_name(role: str | None, model: str | None) -> str:
    return f"{role} {model}" if role and role != "member" else str(model)


def judge_groups(pairs: Sequence[tuple[Judgment, Label]], *, seed: int, n_boot: int) -> list[GroupReport]:
    """The combined label first, then each member's own label, against the same human labels."""
    names: list[str] = []
    labels: dict[str, list[tuple[Label | None, Label]]] = {COMBINED: []}
    for j, h in pairs:
        labels[COMBINED].append((j.label, h))
        seen: dict[str, int] = {}
        for v in j.judges or []:
            name = member_name(v.role, v.model)
            seen[name] = seen.get(name, 0) + 1
            name += f" #{seen[name]}" if seen[name] > 1 else ""  # the same model twice in one panel
            if name not in labels:
                names.append(name)
                labels[name] = []
            labels[name].append((v.label, h))
    out = []
    for name in [COMBINED, *names]:
        got = labels[name]
        scored = [(x, h) for x, h in got if x is not None]
        a = agreement([h for _, h in scored], [int(x or 0) for x, _ in scored], seed=seed, n_boot=n_boot)
        out.append(GroupReport(**a.model_dump(), group=name, unscored=len(got) - len(scored)))
    return out


def fleiss_kappa(ratings: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa for binary ratings: one row per item, one 0/1 column per rater (all rows the same length).

    None when it is undefined (fewer than 2 raters or items, or every rating the same class).
    """
    r = np.asarray(ratings, dtype=float)
    if r.ndim != 2 or r.shape[0] < 2 or r.shape[1] < 2:
        return None
    n_items, m = r.shape
    ones = r.sum(axis=1)
    counts = np.stack([m - ones, ones], axis=1)
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1))
    p_bar = p_i.mean()
    p_j = counts.sum(axis=0) / (n_items * m)
    p_e = float((p_j**2).sum())
    if p_e >= 1:
        return None
    return float((p_bar - p_e) / (1 - p_e))


def member_agreement(results: Sequence[Judgment]) -> tuple[float | None, int, int]:
    """Fleiss' kappa between panel members on the items all of them scored; (kappa, items, members).

    Cascade rows are left out (their strong judge runs on a selected subset only).
    """
    rows = [[v.label for v in j.judges or []] for j in results if j.judges and j.cascade is None]
    width = max((len(r) for r in rows), default=0)
    full = [r for r in rows if len(r) == width and all(x is not None for x in r)]
    return fleiss_kappa(full) if width >= 2 else None, len(full), width  # type: ignore[arg-type]
