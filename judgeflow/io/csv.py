"""CSV results, both directions: flat rows (lists and objects as JSON cells) and typed back.

    write_results("results.csv", rows, columns)     # atomic ("-": stdout)
    typed(row)                                      # a CSV row read back as the JSONL row it was

CSV holds text only, so a result row read back is typed by the result's own fields: `label` and
`human_label` "0"/"1" -> 0/1, an empty cell -> null (never 0), `claims`, `usage`, `requirements`,
`judges`, `cascade`, `repeats`, `trace` parsed from JSON, `confidence` a number. The input's own
columns stay text, except list and object cells (written as JSON) and an invalid row's `line`.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from ..results import Judgment, flat_row
from .atomic import atomic_file

STDIO = "-"
def _is_json_cell(annotation: Any) -> bool:
    """A list, dict or model field (written as a JSON cell by `flat_row`)."""
    import typing

    args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    return any((typing.get_origin(a) or a) in (list, dict) or isinstance(a, type) and issubclass(a, BaseModel)
               for a in args)


#: the result fields a results row carries (an input column of the same name is written input_NAME):
#: the Judgment's own fields, so a field added there is read back typed without a second list here
RESULT_FIELDS = tuple(n for n in Judgment.model_fields if n not in ("extra", "cached"))
#: result fields written as JSON cells
JSON_CELLS = tuple(n for n in RESULT_FIELDS if _is_json_cell(Judgment.model_fields[n].annotation))
#: result fields whose empty cell means "use the default" (an empty list, zero usage), not null
DEFAULTED = ("claims", "usage", "trace")
LABELS = ("label", "human_label")


def _cell(name: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if name in LABELS:
        return {"0": 0, "1": 1, "": None}.get(value.strip(), value)  # anything else: the reader names the field
    if value == "":
        return None
    if name in JSON_CELLS:
        try:
            return json.loads(value)
        except ValueError:
            return value  # the reader names the field
    if name == "confidence":
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _input_cell(name: str, value: Any) -> Any:
    """An input column as the run wrote it: a list or object cell (written as JSON) read back as one,
    the `line` of an invalid row a number; anything else stays text."""
    if not isinstance(value, str):
        return value
    if name == "line" and value.isdigit():
        return int(value)
    if value[:1] in ("[", "{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed if isinstance(parsed, (list, dict)) else value
    return value


def typed(row: dict[str, Any]) -> dict[str, Any]:
    """A results row read from CSV (all text) typed back as `Judgment.to_row` wrote it."""
    out = {}
    for k, v in row.items():
        if k in RESULT_FIELDS:
            v = _cell(k, v)
            if v is None and k in DEFAULTED:
                continue
        else:
            v = _input_cell(k, v)
        out[k] = v
    return out


def write_rows(f: IO[str], rows: Iterable[dict[str, Any]], columns: list[str]) -> int:
    writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    n = 0
    for row in rows:
        writer.writerow(flat_row(row))
        n += 1
    f.flush()
    return n


def write_results(path: str | Path, rows: Iterable[dict[str, Any]], columns: list[str]) -> int:
    """Result rows (`Judgment.to_row`) as CSV with these columns, atomically ("-": stdout)."""
    if str(path) == STDIO:
        return write_rows(sys.stdout, rows, columns)
    with atomic_file(path, newline="") as f:
        return write_rows(f, rows, columns)
