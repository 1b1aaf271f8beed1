"""`watch -o FILE.jsonl`: each verdict written as it is judged, with its item's texts, and flushed.

    out = WatchOutput.open(path, run)       # a new file starts with what the run judged before
    out.write(judgment, texts)              # one JSONL line, flushed: `tail -f` and readers see it at once
    out.close()

A watch runs for days; its results file is a log that grows while it runs, not a file written when it
stops. Each row is the run's result row (`Judgment.to_row`) with the trace's question, answer,
reference, source and spec after it (`with_inputs`), as `run` writes them. A restart appends to the
same file (each trace is judged once, so no row repeats); a file that is missing or empty is first
filled with the results the run store holds for the watch (those carry no texts: the store keeps
verdicts). Other formats (`.csv`, `.parquet`) cannot grow by a row: they are written whole from the
store when the watch stops, as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ..io.atomic import OutputError
from ..io.jsonl import json_line
from ..results import Judgment
from .with_inputs import with_inputs

#: the suffixes written row by row (anything but CSV and Parquet is JSONL, as `run -o` decides)
WHOLE_FILE_SUFFIXES = (".csv", ".parquet", ".pq")


def streams(path: Path | None) -> bool:
    """Whether `watch -o path` writes row by row (JSONL) rather than whole at the stop."""
    return path is not None and str(path) != "-" and path.suffix.lower() not in WHOLE_FILE_SUFFIXES


class WatchOutput:
    """An append-only JSONL results file, one flushed line per verdict."""

    def __init__(self, f: IO[str], path: Path) -> None:
        self.f, self.path, self.written = f, path, 0

    @classmethod
    def open(cls, path: Path, run: Any) -> WatchOutput:
        """Open `path` for appending; a new (or empty) file first gets the run's stored results."""
        try:
            fresh = not path.exists() or path.stat().st_size == 0
            f = path.open("a", encoding="utf-8")
        except OSError as e:
            raise OutputError(f"{path}: cannot write the watch's results there ({e.strerror}); choose another -o "
                              "path") from None
        out = cls(f, path)
        if fresh:
            for j in run.store.results(run.run_id):
                out.write(j, None, flush=False)
            f.flush()
        return out

    def write(self, j: Judgment, texts: Mapping[str, Any] | None, *, flush: bool = True) -> None:
        """One result row (with the item's texts, when known), flushed unless told otherwise."""
        self.f.write(json_line(with_inputs(j.to_row(), texts)) + "\n")
        self.written += 1
        if flush:
            self.f.flush()

    def close(self) -> None:
        self.f.close()
