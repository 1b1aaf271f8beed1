"""Result rows with their inputs (`judgeflow run --with-inputs`): the question, answer, reference, source
and spec beside each verdict, as LangSmith's `to_pandas()`, RAGAS and Phoenix put them.

    texts = input_texts(run.rows())          # id -> {"question": ..., "answer": ..., ...}
    row = with_inputs(judgment.to_row(), texts.get(judgment.id))

Only the texts the item has are added, under their canonical names, after the result's own fields;
a result field or a carried input column of the same name is never overwritten. Read back
(`Judgment.from_row`), they land in `extra`, where `calibrate` (a disagreement's texts) and the answer
rate (reference coverage) find them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InvalidItemError
from ..items import Item

TEXT_FIELDS = ("question", "answer", "reference", "source", "spec")


def input_texts(rows: Iterable[Item | InvalidItemError]) -> dict[str, dict[str, Any]]:
    """id -> the item's texts (None-valued fields left out); invalid rows have none."""
    out: dict[str, dict[str, Any]] = {}
    for it in rows:
        if isinstance(it, Item):
            out[it.id] = {f: getattr(it, f) for f in TEXT_FIELDS if getattr(it, f) is not None}
    return out


def with_inputs(row: dict[str, Any], texts: Mapping[str, Any] | None) -> dict[str, Any]:
    """`row` with the texts it lacks added at the end."""
    for k, v in (texts or {}).items():
        row.setdefault(k, v)
    return row
