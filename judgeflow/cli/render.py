"""Consoles and tables for the CLI: nothing a reader needs is cut off.

When stdout (or stderr) is not a terminal (`| cat`, a file, CI logs) the console is wide, so
lines and tables are never wrapped at 80 columns. In a terminal, `fit(table)` keeps every
numeric column at the width of its longest value (it never shrinks to `0.…`) and folds long
words in text columns onto the next line instead of ending them with an ellipsis.
"""

from __future__ import annotations

import re
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

#: width used when the stream is not a terminal: wide enough that no table is squeezed
PIPE_WIDTH = 1000
_NUMERIC = re.compile(r"^[\s\d.,:%()\[\]+\-$€]*\d[\s\d.,:%()\[\]+\-$€]*$|^-$|^undefined$|^None$")


def console(*, stderr: bool = False) -> Console:
    """A rich console that is wide (no wrapping) when its stream is not a terminal."""
    stream = sys.stderr if stderr else sys.stdout
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return Console(stderr=stderr, highlight=False, width=None if tty else PIPE_WIDTH)


def _plain(cell: object) -> str:
    return Text.from_markup(cell).plain if isinstance(cell, str) else str(cell)


def fit(table: Table) -> Table:
    """Numeric columns keep their full width; text columns fold rather than truncate."""
    for col in table.columns:
        cells = [_plain(c) for c in col._cells]
        if cells and all(_NUMERIC.match(c) for c in cells):
            col.no_wrap = True
            col.min_width = max(len(c) for c in [*cells, _plain(col.header)])
        else:
            col.overflow = "fold"
    return table
