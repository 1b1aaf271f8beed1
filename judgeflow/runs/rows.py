"""A run's input rows: read (and re-read) from a file, checked before anything is judged.

    rows = input_rows(path, name="items.jsonl", limit=None, max_input_chars=200_000)   # lazily
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InvalidItemError
from ..items import ColumnMap, Item, checked_item, read_items
from ..traces import Turns


def input_rows(source: Path, *, name: str | None = None, limit: int | None = None, max_input_chars: int,
               column_map: ColumnMap | None = None, turns: Turns = "last",
               system: bool = False, delimiter: str | None = None) -> Iterator[Item | InvalidItemError]:
    """One pass over the input rows, read from the file (each call reads it again); conversations
    judged at their last reply or at every turn (`turns`), the system prompt as evidence or not."""
    read = read_items(source, name=name or str(source), column_map=column_map, turns=turns, system=system,
                      delimiter=delimiter)
    return guard_input_size(islice(read, limit) if limit else read, max_input_chars, Path(name or source))


def guard_input_size(rows: Iterable[Any], limit: int, path: Path) -> Iterator[Any]:
    """Rows whose texts together exceed `limit` characters become invalid rows, not huge requests (lazily)."""
    if limit < 1:
        raise ConfigError(f"--max-input-chars must be positive, got {limit}")
    return _guarded(rows, limit, path)


def _guarded(rows: Iterable[Any], limit: int, path: Path) -> Iterator[Any]:
    for row in rows:
        yield checked_item(row, limit, path=str(path)) if isinstance(row, Item) else row
