"""An ensemble row whose member verdicts did not all fit the spend cap (`--budget`) is unscored.

A panel, cascade or repeated judge whose members' calls were refused at the cap would otherwise
decide on fewer votes, or keep fewer repeats, than it was asked for; its row is unscored with a
reason starting "budget", so the run says it did not finish and `--resume` continues it (the
members already judged are served from the response cache: nothing is paid twice).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import OVER_BUDGET
from ..results import Judgment


def budget_cut(row: Judgment, parts: Sequence[Judgment]) -> Judgment:
    """`row`, unscored "budget: ..." when any of `parts` (the member verdicts) was refused at the cap."""
    cut = [j for j in parts if j.status == "unscored" and (j.error or "").startswith(OVER_BUDGET)]
    if not cut or (row.status == "unscored" and (row.error or "").startswith(OVER_BUDGET)):
        return row
    why = (f"budget: {len(cut)} of {len(parts)} member verdicts were not sent at the spend cap ({cut[0].error}); "
           "--resume judges them")
    return row.model_copy(update={"label": None, "status": "unscored", "error": why, "reason": why,
                                  "agreement": None, "confidence": None})
