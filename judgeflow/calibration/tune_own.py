"""An edit is accepted on its own held-out result (#41): a rank's pooled gain may come from folds
that proposed other edits (a decoy written while another fold's real fix made the gain), so the edit
to write is re-scored on the held-out folds of the folds that proposed exactly it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..items import Item
from ..results import Judgment
from .comparison import compare


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.2f}"


def _ci(ci: tuple[float, float] | None) -> str:
    return "n/a" if ci is None else f"{ci[0]:+.2f} to {ci[1]:+.2f}"


def own_gain(report: Any, baseline: list[Judgment], folds: Sequence[Sequence[int]],
             held: dict[tuple[int, int], dict[int, Judgment]], items: Sequence[Item], *, alpha: float,
             nothing: str) -> None:
    """Keep `report.accepted` (a TuneReport's) only if that edit's own folds show the gain at
    `alpha` (Bonferroni over the ranks tested); else accept none, saying why (`nothing` leads)."""
    if report.accepted is None or report.accepted_rank is None:
        return
    best = next(r for r in report.ranks if r.rank == report.accepted_rank)
    tested = [r for r in report.ranks if r.comparison is not None]
    level = alpha / max(len(tested), 1)
    labels = {it.id: it.label for it in items if it.label is not None}
    usable = [c for c in best.candidates if c.error is None]
    results = []
    for key in dict.fromkeys(c.edit.key() for c in usable):
        own = [c for c in usable if c.edit.key() == key]
        pooled = list(baseline)
        for c in own:
            for i in folds[c.fold]:
                pooled[i] = held[(c.rank, c.fold)][i]
        cmp = compare(baseline, pooled, labels, names=("current", "this edit alone"))
        ci, diff = cmp.kappa_diff_ci, cmp.kappa_diff
        ok = diff is not None and diff > 0 and ci is not None and ci[0] > 0 and cmp.mcnemar_p < level
        results.append((ok, diff or 0.0, own, cmp))
    passing = [r for r in results if r[0]]
    if passing:
        _, _, own, cmp = max(passing, key=lambda r: r[1])
        report.accepted = own[0].edit
        report.verdict = (f"accepted edit {best.rank + 1} ({own[0].edit.describe()}; proposed by {len(own)} of "
                          f"{report.folds} folds): on its own folds' held-out items kappa {_signed(cmp.kappa_diff)}, "
                          f"95% CI {_ci(cmp.kappa_diff_ci)}, McNemar p = {cmp.mcnemar_p:.3g}.")
        return
    _, _, own, cmp = max(results, key=lambda r: r[1])
    best.accepted = False
    report.accepted = report.accepted_rank = None
    report.verdict = (f"{nothing}: edit rank {best.rank + 1}'s pooled held-out gain came from folds that proposed "
                      f"different edits; no one edit shows it on its own folds (best: {own[0].edit.describe()}, "
                      f"kappa {_signed(cmp.kappa_diff)}, 95% CI {_ci(cmp.kappa_diff_ci)}, McNemar p = "
                      f"{cmp.mcnemar_p:.3g}; needs a CI above 0 and p < {level:.3g}).")
