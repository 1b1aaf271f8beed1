"""The first pass over a run's input, before anything is judged: ids, aliases and unusable rows.

    check = check_input(rows, path, criterion=judge.criterion, mode=judge.mode)
    check.rows, check.aliases          # rows read; (field, alias) counts
    raise_if_all_invalid(check, path)  # every row unusable for one reason: say it once (exit 2)

A row is unusable when it cannot be read, lacks a field, or has nothing its criterion can judge
it against (routing is checked here too, without a model). Such rows still become `invalid`
result rows when only some are; when every row fails for the same reason, the input, not the
rows, is wrong (usually a column under a name judgeflow does not know), and one message says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidItemError
from ..items import Item
from ..judging import invalid_judgment
from ..routing import choose_criterion
from .summary import MAX_REASONS, invalid_reason


@dataclass
class InputCheck:
    """What the first pass found."""

    rows: int = 0
    aliases: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(field, alias) -> rows that gave the field under that alias (or a mapped column)."""
    invalid: Counter[str] = field(default_factory=Counter)
    """reason -> unusable rows (at most MAX_REASONS reasons)."""
    fields: dict[str, str] = field(default_factory=dict)
    """reason -> the field it names."""
    columns: list[str] = field(default_factory=list)
    """The first unusable row's columns (for the hint)."""

    def note(self, err: InvalidItemError, columns: Iterable[str]) -> None:
        reason = invalid_reason(err.bare_message)
        if reason in self.invalid or len(self.invalid) < MAX_REASONS:
            self.invalid[reason] += 1
            self.fields.setdefault(reason, err.field or "")
        if not self.columns:
            self.columns = [str(c) for c in columns]


def check_input(rows: Iterable[Any], path: Path, *, criterion: Any = None, mode: str | None = None) -> InputCheck:
    """One pass over the rows: ids unique (every row counts, invalid ones too: an invalid row keeps
    the id it was given, or `line-N`), aliases used, and why rows are unusable.

    Raises:
        InvalidItemError: two rows share an id (results, resume and the output are keyed by id).
    """
    check = InputCheck()
    first: dict[str, int] = {}  # id -> its line (or -row number): ints, not strings, for 100,000s of rows
    for n, it in enumerate(rows, 1):
        if isinstance(it, InvalidItemError):
            item_id, line = invalid_judgment(it).id, it.line
            check.note(it, (it.record or {}).keys())
        else:
            item_id, line = it.id, it.line
            check.aliases.update(it.aliases.items())
            _check_route(it, check, criterion, mode)
        if item_id in first:
            where = f"line {line}" if line is not None else f"row {n}"
            seen = first[item_id]
            raise InvalidItemError(
                f"item id {item_id!r} is used on {f'line {seen}' if seen > 0 else f'row {-seen}'} and {where}; "
                "ids must be unique within a run (results, resume and the output are keyed by id): rename one",
                path=str(path), field="id", item_id=item_id)
        first[item_id] = line if line is not None else -n
        check.rows = n
    return check


def _check_route(item: Item, check: InputCheck, criterion: Any, mode: str | None) -> None:
    try:
        choose_criterion(item, criterion=criterion, mode=mode)
    except InvalidItemError as e:
        check.note(e, ["id", *(f for f in ("question", "answer", "reference", "source", "spec")
                               if getattr(item, f)), *item.extra])


def raise_if_all_invalid(check: InputCheck, path: Path) -> None:
    """Every row (two or more) unusable for the same reason: one error naming it and the fix."""
    if check.rows < 2 or len(check.invalid) != 1:
        return
    ((reason, n),) = check.invalid.items()
    if n != check.rows:
        return
    fld = check.fields.get(reason, "")
    target = {"source|spec|reference": "reference (or source, spec)"}.get(fld, fld)
    hint = ""
    if fld in ("answer", "source|spec|reference", "source", "reference", "spec", "id") and check.columns:
        hint = (f" The rows' columns are: {', '.join(check.columns)}; if one of them holds the "
                f"{target}, read it with --map {fld.split('|')[-1]}=COLUMN.")
    raise InvalidItemError(f"all {n} rows are unusable for the same reason: {reason}.{hint} Nothing was judged",
                           path=str(path), field=fld or None)
