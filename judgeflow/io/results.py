"""Reading results back, whatever format wrote them: rows typed as JSONL's, checked, as Judgments.

    rows = read_results("results.csv")          # .jsonl, .csv, .parquet (or Parquet by its magic), "-"
    rows = read_results("judged/")              # a directory of shards (`run --ray -o judged/`)

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
from ..files import read_rows as text_rows
from ..results import Judgment
from .csv import typed as csv_typed
from .parquet import is_arrow, is_parquet, read_arrow_rows
from .parquet import read_rows as parquet_rows
from .parquet import typed as parquet_typed


def format_of(path: str | Path) -> str:
    """The format a file is read as: "parquet" (suffix or magic bytes), "arrow", "csv", "json" or "jsonl"."""
    if is_parquet(path):
        return "parquet"
    if is_arrow(path):
        return "arrow"
    return {".csv": "csv", ".json": "json"}.get(Path(str(path)).suffix.lower(), "jsonl")


def read_rows(path: str | Path, *, data: bytes | None = None, name: str | None = None,
              delimiter: str | None = None) -> Iterator[tuple[int, Any]]:
    """(line, row or InvalidItemError) per row of any format judgeflow reads (Parquet and Arrow included);
    `delimiter`: a CSV file's (else sniffed: `files.csv_delimiter`)."""
    if data is None and is_parquet(path):
        return parquet_rows(path)
    if data is None and is_arrow(path):
        return read_arrow_rows(path)
    return text_rows(path, data=data, name=name, delimiter=delimiter)


#: the shard files of a results directory (`run --ray`: Parquet, or JSON lines with a .json/.jsonl suffix)
SHARD_SUFFIXES = (".parquet", ".jsonl", ".json")


def result_files(path: str | Path) -> list[Path]:
    """The files a results source holds: the file itself, or a directory's shards in name order (files
    starting with `.` or `_`, such as `_torn/` and Ray's `_SUCCESS`, left out).

    Raises:
        InvalidItemError: a directory with no shard in it.
    """
    p = Path(str(path))
    if str(path) == "-" or not p.is_dir():
        return [p]
    shards = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in SHARD_SUFFIXES
                    and not f.name.startswith((".", "_")))
    if not shards:
        raise InvalidItemError("is a directory with no results shards (.parquet, .jsonl or .json files, as "
                               "`judgeflow run --ray -o DIR` writes); give a results file or such a directory",
                               path=str(path))
    return shards


def typed_rows(path: str | Path) -> Iterator[tuple[int, Any]]:
    """`read_rows`, each results row typed as JSONL's (CSV's text and Parquet's JSON cells read back)."""
    fmt = format_of(path)
    typer = {"csv": csv_typed, "parquet": parquet_typed, "arrow": parquet_typed}.get(fmt)
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
    out = []
    files = result_files(path)
    shards = Path(str(path)).is_dir()
    for file in files:
        p = str(file)
        for line, rec in typed_rows(file):
            if isinstance(rec, InvalidItemError):
                raise rec
            if not isinstance(rec, Mapping) or "status" not in rec or "label" not in rec:
                raise InvalidItemError("not a judgeflow result row (needs 'id', 'label' and 'status'); "
                                       "give the file written by `judgeflow run -o`", path=p, line=line)
            check_status(rec, p, line)
            try:
                out.append(Judgment.from_row(_unflat(rec) if shards else dict(rec)))
            except ValidationError as e:
                err = e.errors()[0]
                field = ".".join(str(x) for x in err["loc"])
                raise InvalidItemError(f"field '{field}': {err['msg']} (input {err.get('input')!r})",
                                       path=p, line=line, field=field) from None
    if not out:
        raise InvalidItemError("the results file has no rows", path=str(path))
    return out


def _unflat(rec: Mapping[str, Any]) -> dict[str, Any]:
    """A row as `Judgment.from_row` takes it: a Ray shard's columns that no row of this one filled (null)
    are left out, as the row had none."""
    return {k: v for k, v in rec.items() if v is not None or k in ("label", "human_label")}
