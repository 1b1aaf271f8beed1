"""A run's input rows: read (and re-read) from a file, checked before anything is judged.

    rows = input_rows(path, name="items.jsonl", limit=None, max_input_chars=200_000)   # lazily
    total, aliases = check_unique_ids(rows, path)                                       # one pass
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InvalidItemError
from ..items import Item, read_items
from ..judging import row_id


def input_rows(source: Path, *, name: str | None = None, limit: int | None = None,
               max_input_chars: int) -> Iterator[Item | InvalidItemError]:
    """One pass over the input rows, read from the file (each call reads it again)."""
    read = read_items(source, name=name or str(source))
    return guard_input_size(islice(read, limit) if limit else read, max_input_chars, Path(name or source))


def check_unique_ids(rows: Iterable[Any], path: Path) -> tuple[int, Counter[tuple[str, str]]]:
    """The store keys results by id (resume, output): two rows with one id would collapse into one.

    Every row counts, invalid ones too (an invalid row keeps the id it was given, or `line-N`).
    Returns the number of rows and the input fields read by alias ((field, alias) counts), so one
    pass over the input does all of it.
    """
    first: dict[str, int] = {}  # id -> its line (or -row number): ints, not strings, for 100,000s of rows
    aliases: Counter[tuple[str, str]] = Counter()
    n = 0
    for n, it in enumerate(rows, 1):
        item_id, line = row_id(it), it.line
        if isinstance(it, Item) and it.aliases:
            aliases.update(it.aliases.items())
        if item_id in first:
            where = f"line {line}" if line is not None else f"row {n}"
            seen = first[item_id]
            raise InvalidItemError(
                f"item id {item_id!r} is used on {f'line {seen}' if seen > 0 else f'row {-seen}'} and {where}; "
                "ids must be unique within a run (results, resume and the output are keyed by id): rename one",
                path=str(path), field="id", item_id=item_id)
        first[item_id] = line if line is not None else -n
    return n, aliases


def guard_input_size(rows: Iterable[Any], limit: int, path: Path) -> Iterator[Any]:
    """Rows whose texts together exceed `limit` characters become invalid rows, not huge requests (lazily)."""
    if limit < 1:
        raise ConfigError(f"--max-input-chars must be positive, got {limit}")
    return _guarded(rows, limit, path)


def _guarded(rows: Iterable[Any], limit: int, path: Path) -> Iterator[Any]:
    for row in rows:
        if isinstance(row, Item):
            size = sum(len(t) for t in (row.answer, row.question or "", row.reference or "", row.spec or "",
                                        *(row.source or [])))
            if size > limit:
                err = InvalidItemError(
                    f"the item's texts are {size:,} characters, more than --max-input-chars {limit:,}; cut the "
                    "source (--max-source-chars keeps only the relevant passages) or raise --max-input-chars",
                    path=str(path), field="answer/source", item_id=row.id)
                err.record = {"id": row.id, "label": row.label, **row.extra}
                row = err
        yield row
