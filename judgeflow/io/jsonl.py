"""JSONL, judgeflow's own format: one JSON object per line, both directions.

    for line, row in files.read_rows("results.jsonl"): ...   # the one text reader: streamed, bad lines as errors
    write_results("results.jsonl", rows)                  # atomic ("-": stdout)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from .atomic import atomic_file

STDIO = "-"


def json_line(row: dict[str, Any]) -> str:
    """One JSONL line (no newline); a lone surrogate stays a JSON \\u escape, still valid JSON."""
    line = json.dumps(row, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(row, ensure_ascii=True)
    return line


def write_lines(f: IO[str], rows: Iterable[dict[str, Any] | str]) -> int:
    """Write rows; a str is a row already made by `json_line` (a writer that keeps them skips re-encoding)."""
    n = 0
    for row in rows:
        f.write((row if isinstance(row, str) else json_line(row)) + "\n")
        n += 1
    f.flush()
    return n


def write_results(path: str | Path, rows: Iterable[dict[str, Any] | str]) -> int:
    """Write rows as JSON lines to `path` atomically (`atomic.atomic_file`); "-" writes to stdout.
    Returns the number of rows.

    Raises:
        OutputError: the file cannot be written (the message names it and why).
    """
    if str(path) == STDIO:
        return write_lines(sys.stdout, rows)
    with atomic_file(path) as f:
        return write_lines(f, rows)
