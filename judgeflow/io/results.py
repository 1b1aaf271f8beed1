"""Reading results back, whatever format wrote them: rows typed as JSONL's, checked, as Judgments.

    rows = read_results("results.csv")          # .jsonl, .csv, .parquet (or Parquet by its magic), "-"

Every row must agree with itself: `judged` carries a label 0 or 1; `unscored` and `invalid` carry
none (null). A row that says "unscored" with label 0 (what `df.fillna(0)` or `jq '.label //= 0'`
make) is refused, naming the file, line and field, never read as a score.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InvalidItemError
from ..results import Judgment
from ..files import read_rows as text_rows
from .csv import typed as csv_typed
from .parquet import is_parquet, typed as parquet_typed
from .parquet import read_rows as parquet_rows


def format_of(path: str | Path) -> str:
    """The format a file is read as: "parquet" (suffix or magic bytes), "csv", "json" or "jsonl"."""
    if is_parquet(path):
        return "parquet"
    return {".csv": "csv", ".json": "json"}.get(Path(str(path)).suffix.lower(), "jsonl")


def read_rows(path: str | Path, *, data: bytes | None = None, name: str | None = None,
              delimiter: str | None = None) -> Iterator[tuple[int, Any]]:
    """(line, row or InvalidItemError) per row of any format judgeflow reads (Parquet included);
    `delimiter`: a CSV file's (else sniffed: `files.csv_delimiter`)."""
    if data is None and name is None and is_parquet(path):
        return parquet_rows(path)
    return text_rows(path, data=data, name=name, delimiter=delimiter)


def typed_rows(path: str | Path) -> Iterator[tuple[int, Any]]:
    """`read_rows`, each results row typed as JSONL's (CSV's text and Parquet's JSON cells read back)."""
    fmt = format_of(path)
    typer = {"csv": csv_typed, "parquet": parquet_typed}.get(fmt)
    for line, rec in read_rows(path):
        yield line, typer(rec) if typer is not None and isinstance(rec, dict) else rec


def check_status(rec: Mapping[str, Any], path: str, line: int) -> None:
    """Refuse a row whose status and label disagree (an unscored row with a label, a judged one without)."""
    status, label = rec.get("status"), rec.get("label")
    if status in ("unscored", "invalid") and label is not None:
        raise InvalidItemError(
            f"status {status!r} but label {label!r}: an {status} row has no label (null), and reading it as "
            f"{label!r} would count a row nothing judged; set its label back to null (was the file filled in, "
            "e.g. df.fillna(0) or jq '.label //= 0'?) or re-judge it", path=path, line=line, field="label",
            item_id=str(rec.get("id")))
    if status == "judged" and label is None:
        raise InvalidItemError("status 'judged' but no label (null): a judged row has label 0 or 1; give the file "
                               "`judgeflow run -o` wrote, unedited", path=path, line=line, field="label",
                               item_id=str(rec.get("id")))


def read_results(path: str | Path) -> list[Judgment]:
    """Read a results file written by `judgeflow run` in any of its formats (one `Judgment.to_row()` per row).

    Raises:
        InvalidItemError: a row that is not a result row, has a field of the wrong type, or whose
            status and label disagree, naming file, line and field.
    """
    p = str(path)
    out = []
    for line, rec in typed_rows(path):
        if isinstance(rec, InvalidItemError):
            raise rec
        if not isinstance(rec, Mapping) or "status" not in rec or "label" not in rec:
            raise InvalidItemError("not a judgeflow result row (needs 'id', 'label' and 'status'); "
                                   "give the file written by `judgeflow run -o`", path=p, line=line)
        check_status(rec, p, line)
        try:
            out.append(Judgment.from_row(dict(rec)))
        except ValidationError as e:
            err = e.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise InvalidItemError(f"field '{field}': {err['msg']} (input {err.get('input')!r})",
                                   path=p, line=line, field=field) from None
    if not out:
        raise InvalidItemError("the results file has no rows", path=p)
    return out
