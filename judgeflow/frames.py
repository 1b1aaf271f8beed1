"""Results as a pandas DataFrame, joined with the items they judged.

    df = results_to_dataframe("results.jsonl", items="items.jsonl")   # label as Int64, the texts beside

A module of its own (not `results.py`): joining items needs `items.py`, which imports `results.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import InvalidItemError
from .items import Item, read_items
from .results import Judgment

#: label columns, as pandas' nullable integers (Int64): 1, 0 and <NA> (unscored), never a float 0.0/NaN
LABEL_COLUMNS = ("label", "human_label")
#: the item texts `results_to_dataframe(..., items=...)` joins by id
ITEM_TEXTS = ("question", "answer", "reference", "source", "spec")


def results_to_dataframe(results: Iterable[Judgment] | str | Path, *, items: Iterable[Any] | str | Path | None = None
                         ) -> Any:
    """Results as a pandas DataFrame: one row per result, the output file's columns (claims, usage
    and requirements stay Python objects); labels as nullable integers (Int64: 1, 0, <NA>).
    `results`: Judgments, or a results file (any format `run` writes) or `--ray` shard directory. A
    `judgeflow run` file has the inputs already (its rows carry them: `--with-inputs`, the default);
    `items`: the items judged (Items, or the items file), joined by id, for results without them
    (Judgments from Python, `--no-with-inputs`): each row gets its question, answer, reference,
    source and spec (columns a row already has are kept).

    Raises:
        ImportError: pandas is not installed (`pip install pandas`).
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("results_to_dataframe needs pandas: pip install pandas") from None
    if isinstance(results, (str, Path)):  # any results format, or a directory of `--ray` shards
        from .io.results import result_files, typed_rows

        rows = [r if isinstance(r, dict) else {"error": str(r)} for f in result_files(results) for _, r in typed_rows(f)]
    else:
        rows = [j.to_row() for j in results]
    if items is not None:
        texts = _item_texts(items)
        rows = [{**r, **{k: v for k, v in texts.get(str(r.get("id")), {}).items() if k not in r}} for r in rows]
    df = pd.DataFrame(rows)
    for col in LABEL_COLUMNS:
        if col in df.columns:
            df[col] = df[col].astype("Int64")
    return df


def _item_texts(items: Iterable[Any] | str | Path) -> dict[str, dict[str, Any]]:
    """id -> the texts of each valid item (Items, records, or an items file); unusable rows are left out."""
    rows = read_items(items) if isinstance(items, (str, Path)) else items
    out = {}
    for it in rows:
        if isinstance(it, dict):
            try:
                it = Item.from_record(it)
            except InvalidItemError:
                continue
        if isinstance(it, Item):
            out[it.id] = {f: getattr(it, f) for f in ITEM_TEXTS if getattr(it, f) is not None}
    return out
