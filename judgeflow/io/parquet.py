"""Parquet results, both directions (needs pyarrow: `pip install pyarrow`).

    write_results("results.parquet", rows, columns)    # one table, atomically; never to stdout
    for line, row in read_rows("results.parquet"): ...   # line = 1-based row number

Each column is typed by what its values share, else written as text (an input column of mixed
types); lists and objects are JSON text, read back as lists and objects for the result's fields.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InvalidItemError
from ..results import flat_row
from .atomic import atomic_file
from .csv import JSON_CELLS, RESULT_FIELDS

MAGIC = b"PAR1"
SUFFIXES = (".parquet", ".pq")
#: Arrow IPC files (Feather v2: `df.to_feather`, `pyarrow.feather.write_feather`), read as input rows too
ARROW_MAGIC = b"ARROW1"
ARROW_SUFFIXES = (".arrow", ".feather", ".ipc")
NEEDS = "pip install pyarrow"


def is_parquet(path: str | Path) -> bool:
    """A .parquet/.pq name, or a file that starts with Parquet's magic bytes."""
    return _named_or_starts(path, SUFFIXES, MAGIC)


def is_arrow(path: str | Path) -> bool:
    """An .arrow/.feather/.ipc name, or a file that starts with the Arrow IPC file magic."""
    return _named_or_starts(path, ARROW_SUFFIXES, ARROW_MAGIC)


def _named_or_starts(path: str | Path, suffixes: tuple[str, ...], magic: bytes) -> bool:
    if str(path) == "-":
        return False
    p = Path(path)
    if p.suffix.lower() in suffixes:
        return True
    try:
        with p.open("rb") as f:
            return f.read(len(magic)) == magic
    except OSError:
        return False


def _table(rows: list[dict[str, Any]], columns: list[str]) -> Any:
    import pyarrow as pa

    data = {}
    for name in columns:
        values = [r.get(name) for r in rows]
        try:
            arr = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arr = pa.array([None if v is None else str(v) for v in values], type=pa.string())
        data[name] = arr.cast(pa.string()) if pa.types.is_null(arr.type) else arr
    return pa.table(data)


def write_results(path: str | Path, rows: Iterable[dict[str, Any]], columns: list[str]) -> int:
    """Result rows (`Judgment.to_row`) as one Parquet table with these columns, atomically."""
    import pyarrow.parquet as pq

    table = [flat_row(r) for r in rows]
    with atomic_file(path, binary=True) as f:
        pq.write_table(_table(table, columns), f)
    return len(table)


def read_rows(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(row number, row) per row of a Parquet file, read a row group at a time.

    Raises:
        InvalidItemError: pyarrow is not installed, or the file is not a Parquet file it can read.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidItemError(f"is a Parquet file, and reading it needs pyarrow: {NEEDS} (or save it as JSONL or "
                               "CSV; results: write them with --format jsonl)", path=str(path)) from None
    try:
        f = pq.ParquetFile(path)
    except FileNotFoundError:
        raise InvalidItemError("no such file; give a results or items file", path=str(path)) from None
    except Exception as e:  # pyarrow raises ArrowInvalid, OSError, ... for a damaged file
        raise InvalidItemError(f"cannot be read as Parquet ({e}); give the file `judgeflow run -o X.parquet` "
                               "wrote", path=str(path)) from None
    n = 0
    for group in range(f.num_row_groups):
        for row in f.read_row_group(group).to_pylist():
            n += 1
            yield n, row


def read_arrow_rows(path: str | Path) -> Iterator[tuple[int, Any]]:
    """(row number, row) per row of an Arrow IPC / Feather file, a record batch at a time.

    Raises:
        InvalidItemError: pyarrow is not installed, or the file is not an Arrow file it can read.
    """
    try:
        import pyarrow.ipc as ipc
    except ImportError:
        raise InvalidItemError(f"is an Arrow/Feather file, and reading it needs pyarrow: {NEEDS} (or save it as "
                               "JSONL or CSV)", path=str(path)) from None
    try:
        reader = ipc.open_file(str(path))
    except FileNotFoundError:
        raise InvalidItemError("no such file; give a results or items file", path=str(path)) from None
    except Exception as e:  # ArrowInvalid for a damaged or compressed-v1 file
        raise InvalidItemError(f"cannot be read as an Arrow IPC (Feather v2) file ({e}); save it with "
                               "df.to_feather(...) or as Parquet", path=str(path)) from None
    n = 0
    for i in range(reader.num_record_batches):
        for row in reader.get_batch(i).to_pylist():
            n += 1
            yield n, row


def typed(row: dict[str, Any]) -> dict[str, Any]:
    """A results row read from Parquet, its JSON text cells (claims, usage, ...) parsed back."""
    import json

    out = {}
    for k, v in row.items():
        if isinstance(v, str) and (k in JSON_CELLS or (k not in RESULT_FIELDS and v[:1] in ("[", "{"))):
            try:
                parsed = json.loads(v)
            except ValueError:
                parsed = v  # the reader names the field
            v = parsed if k in JSON_CELLS or isinstance(parsed, (list, dict)) else v
        if v is None and k in ("claims", "usage", "trace"):
            continue
        out[k] = v
    return out
