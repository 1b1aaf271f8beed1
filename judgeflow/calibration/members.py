"""Calibration of panels and cascades: each member against the human labels, and the members
against each other.

`calibrate(results, by="judge")` (agreement.judge_groups) puts the combined label and every member
side by side (each a GroupReport with Cohen's kappa and its bootstrap interval), so a panel's gain
over its best member is measured on your own labelled sample, not assumed. `fleiss_kappa` here is
the agreement between the members themselves (Fleiss, 1971), on the items every member scored.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..results import Judgment


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
    full = [scored for r in rows if len(scored := [x for x in r if x is not None]) == width]
    return fleiss_kappa(full) if width >= 2 else None, len(full), width
