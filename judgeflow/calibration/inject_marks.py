"""How injected test rows are marked, so they never mix with real results.

`judgeflow inject` writes each row with an `injected` field (a list of {type, start, end}; [] for
an untouched control) and an id ending in `#inj-TYPE` (`#inj-none` for a control). The field
travels into the judged rows (a result row carries its input's other fields), so any command
reading results can tell. `calibrate` and `gate` refuse such rows: their recall is reported by
`judgeflow inject --report RESULTS`.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from ..errors import InvalidItemError
from ..results import Judgment

FIELD = "injected"
#: the id suffix of an injected row: `ID#inj-date`, `ID#inj-none` for an untouched control
ID_MARK = "#inj-"


class Injection(BaseModel):
    """One changed span of an injected answer."""

    type: str
    start: int
    """[start, end) character offsets into the injected answer."""
    end: int
    original: str = ""
    """The text it replaced ("" for an invented detail)."""


def is_injected(j: Judgment) -> bool:
    """The row was made by `judgeflow inject` (a known positive or its untouched control)."""
    return FIELD in j.extra or ID_MARK in j.id


def check_real(rows: Iterable[Judgment], where: str) -> None:
    """Raise when any row is an injected test row.

    Raises:
        InvalidItemError: naming the first such id and the command that reads them.
    """
    for j in rows:
        if is_injected(j):
            raise InvalidItemError(
                f"row {j.id!r} was made by `judgeflow inject` (a known-positive test answer, field "
                f"'{FIELD}'): injected rows never mix with real results; report them with "
                f"`judgeflow inject --report {where}`, and judge the real answers in a run of their own",
                path=where, field=FIELD, item_id=j.id)
