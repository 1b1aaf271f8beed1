"""Results to stdout (`-o -`): JSONL (the default) or CSV; Parquet is refused before judging.

What is written to stdout and saved (`judgeflow run -o - > r.jsonl`, or `--format csv -o - > r.csv`)
reads back with the file readers of its format.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from .csv import write_rows
from .jsonl import write_lines


def write_results(rows: Iterable[dict[str, Any]], fmt: str = "jsonl", columns: list[str] | None = None) -> int:
    """Write result rows to stdout as JSONL, or as CSV with `columns`."""
    if fmt == "csv":
        return write_rows(sys.stdout, rows, columns or [])
    return write_lines(sys.stdout, rows)
