"""Result formats, one owner for both directions: a reader exists for every writer.

    write_results("out.csv", rows, fmt="csv", columns=cols)   # jsonl (default), csv, parquet; "-": stdout
    read_results("out.csv")                                   # -> [Judgment], typed as from JSONL
    read_rows("out.parquet")                                  # (line, row) for any readable format

Modules: `atomic` (the package's one atomic writer), `jsonl`, `csv`, `parquet`, `stdout` (each
format's writer and its reader), `results` (format detection, typing back,
the status/label check). `judgeflow.files` stays the text parser (JSONL/CSV/JSON lines to rows).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import csv as csv_format
from . import jsonl, parquet, stdout
from .atomic import OutputError, atomic_file
from .jsonl import json_line

#: the results file's formats (`--format`)
FORMATS = ("jsonl", "csv", "parquet")
STDIO = "-"

__all__ = ["FORMATS", "OutputError", "atomic_file", "check_status", "format_of", "json_line", "read_results",
           "read_rows", "typed_rows", "write_results"]


def __getattr__(name: str) -> Any:
    """The readers (`results`) load on first use: `judgeflow.files`, the text parser they build on,
    imports this package's writer, so importing them here would make a cycle."""
    if name in ("check_status", "format_of", "read_results", "read_rows", "typed_rows"):
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def write_results(path: str | Path, rows: Iterable[dict[str, Any]], *, fmt: str = "jsonl",
                  columns: list[str] | None = None) -> int:
    """Write result rows (`Judgment.to_row`) to `path` in `fmt`, atomically ("-": stdout).

    CSV and Parquet take `columns` (the union of the rows' keys when not given; the rows are then
    held in memory). Returns the number of rows.

    Raises:
        OutputError: the file cannot be written.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {FORMATS}")
    if fmt == "jsonl":
        return jsonl.write_results(path, rows)
    if columns is None:
        rows = list(rows)
        columns = list(dict.fromkeys(k for r in rows for k in r))
    if str(path) == STDIO:
        if fmt == "parquet":
            raise OutputError("Parquet cannot be written to stdout (-o -): give a file, e.g. -o results.parquet")
        return stdout.write_results(rows, fmt, columns)
    if fmt == "csv":
        return csv_format.write_results(path, rows, columns)
    return parquet.write_results(path, rows, columns)
