"""An overlap set for a second labeller: some of the items one person labelled, without their labels.

    overlap_file("alice.jsonl", 20, "for_bob.jsonl", seed=0)   # then: judgeflow label for_bob.jsonl --as bob
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from ..errors import InvalidItemError
from ..io.jsonl import write_results
from ..items import read_records
from .annotators import PERSONAL_FIELDS
from .labels import LABEL_FIELDS, first_field
from .sampling import stratified_sample


class OverlapSummary(BaseModel):
    output: str
    n: int
    pool: int
    """Labelled rows in the first labeller's file."""
    by_label: dict[str, int] = Field(default_factory=dict)


def overlap_file(labelled: str | Path, n: int, output: str | Path, *, seed: int = 0) -> OverlapSummary:
    """Draw `n` of the labelled rows of `labelled` (stratified by the first person's label, seeded) into a
    fresh file for a second labeller: the rows without anyone's label, stamp, skip mark, name or note.

    Raises:
        InvalidItemError: no labelled row in `labelled`.
        ConfigError: n < 1.
    """
    rows = []
    for line, rec in read_records(labelled):
        if isinstance(rec, InvalidItemError):
            raise rec
        _, raw = first_field(rec, LABEL_FIELDS)
        if raw not in (None, ""):
            rows.append({**rec, "_first_label": str(raw)})
    if not rows:
        raise InvalidItemError("no labelled row to draw an overlap from: label this file first "
                               "(`judgeflow label FILE --as NAME`)", path=str(labelled))
    chosen, strata = stratified_sample(rows, n, keys=["_first_label"], seed=seed)
    drop = {*PERSONAL_FIELDS, "_first_label"}
    write_results(Path(output), [{k: v for k, v in rows[i].items() if k not in drop} for i in chosen])
    return OverlapSummary(output=str(output), n=len(chosen), pool=len(rows),
                          by_label={s.key: s.sampled for s in strata})
