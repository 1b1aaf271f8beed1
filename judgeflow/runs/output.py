"""A run's files: the input's content hash (resume refuses a changed file) and the output checks and writer.

    sha = file_sha(Path("items.jsonl"))                          # "-": stdin, read once
    with spool(Path("-")) as (path, sha): ...                    # stdin copied to a file, to be read twice
    check_output(Path("out.jsonl"), Path("items.jsonl"))         # fail before judging anything
    write_output(store, run_id, Path("out.jsonl"), trace=False)   # judgeflow.io.write_results ("-": stdout)
    fmt = output_format(Path("out.csv"), None)                   # "csv": --format, else the suffix, else jsonl
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..files import STDIO, read_bytes, same_file
from ..io import FORMATS, OutputError, write_results
from ..results import Judgment
from .store import RunStore
from .summary import Tally
from .with_inputs import with_inputs

__all__ = ["FORMATS", "OutputError", "check_output", "check_output_writable", "file_sha", "output_format", "spool",
           "write_output"]

def output_format(path: Path, fmt: str | None) -> str:
    """The results file's format: `fmt`, else the -o suffix (.csv, .parquet), else jsonl. Fails before
    anything is judged when it cannot be written (Parquet without pyarrow, Parquet to stdout)."""
    fmt = fmt or {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}.get(path.suffix.lower(), "jsonl")
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r} is not one of: {', '.join(FORMATS)}")
    if fmt == "parquet":
        if str(path) == STDIO:
            raise ConfigError("--format parquet cannot be written to stdout (-o -): give a file, e.g. -o results.parquet")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ConfigError("--format parquet needs pyarrow, which is not installed: pip install pyarrow "
                              "(or write --format csv or jsonl)") from None
    return fmt


def file_sha(path: Path) -> str:
    """sha256 of the input, read in chunks ("-": stdin, read once, whole; `spool` streams it)."""
    if str(path) == STDIO:
        return hashlib.sha256(read_bytes(path)).hexdigest()
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                sha.update(chunk)
    except OSError:
        read_bytes(path)  # raises the one clear message for a file that cannot be read
        raise
    return sha.hexdigest()


@contextlib.contextmanager
def spool(path: Path) -> Iterator[tuple[Path, str]]:
    """(a path the input can be read from as often as needed, its sha256): a file is itself;
    stdin is copied once, in chunks, to a temporary file that is removed afterwards."""
    if str(path) != STDIO:
        yield path, file_sha(path)
        return
    sha = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="judgeflow-stdin-") as tmp:
        copy = Path(tmp) / "stdin"
        with copy.open("wb") as f:
            while chunk := sys.stdin.buffer.read(1 << 20):
                sha.update(chunk)
                f.write(chunk)
        yield copy, sha.hexdigest()


def check_output(path: Path, input_path: Path, *, store: Path | None = None) -> None:
    """Fail before judging anything if OUTPUT is the input or the run store, the store is the
    input (also via links), or OUTPUT cannot be written."""
    if store is not None and _same_path(store, input_path):
        raise OutputError(f"{store}: the run store is the input file {input_path} (the store would overwrite the "
                          "items); give another --store path, e.g. .judgeflow/runs.sqlite")
    if str(path) == STDIO:
        return
    if _same_path(path, input_path):
        raise OutputError(f"{path}: is the input file {input_path} (the results would replace the items); "
                          "give another -o path, e.g. results.jsonl")
    if store is not None and _same_path(path, store):
        raise OutputError(f"{path}: is the run store --store {store} (the results and the store would overwrite "
                          "each other); give another -o path, e.g. results.jsonl")
    check_output_writable(path)


def _same_path(a: Path, b: Path) -> bool:
    """One file, also through links, or one path once resolved (a file that does not exist yet)."""
    if STDIO in (str(a), str(b)):
        return False
    return same_file(a, b) or Path(a).resolve() == Path(b).resolve()


def check_output_writable(path: Path) -> None:
    """Fail before judging anything if OUTPUT cannot be written."""
    if path.exists() and not path.is_dir() and not path.is_file():  # a device or a pipe: written into, never replaced
        if not os.access(path, os.W_OK):
            raise OutputError(f"{path}: cannot be written; choose another -o path")
        return
    if path.is_dir():
        raise OutputError(f"{path}: is a directory; give a file path for -o, e.g. {path / 'results.jsonl'}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"{path.parent}: cannot create the output directory ({e.strerror}); choose another -o path") from None
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputError(f"{path}: the output file is read-only; make it writable or choose another -o path")
    probe = path.with_name(f".{path.name}.{os.getpid()}.probe")
    try:
        probe.open("w").close()
        probe.unlink()
    except OSError as e:
        raise OutputError(f"{path.parent}: cannot write the output there ({e.strerror}); "
                          "choose another -o path") from None


def write_output(store: RunStore, run_id: str, path: Path, *, trace: bool, tally: Tally | None = None,
                 fmt: str = "jsonl", inputs: Mapping[str, Mapping[str, Any]] | None = None) -> int:
    """(Re)write OUTPUT from the store: a temporary file, fsync, then an atomic rename ("-": stdout).

    The results stream from the store to the file; each is added to `tally` on the way (the summary's
    running totals, without reading the results again). `fmt` "csv" and "parquet" write flat rows.
    `inputs` (id -> texts, `with_inputs.input_texts`): each row gets its item's texts (`--with-inputs`)."""

    def row_of(j: Judgment) -> dict[str, Any]:
        return with_inputs(j.to_row(trace=trace), inputs.get(j.id)) if inputs else j.to_row(trace=trace)

    def rows() -> Iterator[dict[str, Any]]:
        for j in store.results(run_id):
            if tally is not None:
                tally.add(j)
            yield row_of(j)

    try:
        columns: list[str] | None = None
        if fmt != "jsonl":
            seen: dict[str, None] = {}  # the union of the rows' columns, in first-seen order
            for j in store.results(run_id):
                seen.update(dict.fromkeys(row_of(j)))
            columns = list(seen)
        return write_results(path, rows(), fmt=fmt, columns=columns)
    except OutputError as e:
        raise OutputError(f"{e}; every finished result is saved in the store {store.path}: fix this and run "
                          "the same command with --resume to write them") from None


def run_input(results: Path, store: Path | None = None) -> Path | None:
    """The items file the run that wrote `results` read, as the run store recorded it (path and sha256).

    Looks in `store`, else `.judgeflow/runs.sqlite` here, else beside `results`. None when no store
    knows a run that wrote `results` (or it read stdin).

    Raises:
        ConfigError: the recorded input moved, or changed since the run (naming both and the fix).
    """
    from ..errors import ConfigError
    from .store import DEFAULT_STORE

    out = str(results.resolve())
    for path in ([store] if store else [DEFAULT_STORE, results.resolve().parent / DEFAULT_STORE]):
        if not path.is_file():
            continue
        with RunStore(path, readonly=True) as s:
            run = s.latest_run(output_path=out)
        if run is None or not run.input_path or run.input_path == STDIO:
            continue
        given = Path(run.input_path)
        if not given.is_file():
            raise ConfigError(f"the run that wrote {results} read {given}, which is no longer there (moved or "
                              f"deleted; run store {path}): pass --items with its new path")
        if run.input_sha and file_sha(given) != run.input_sha:
            raise ConfigError(f"{given} changed since the run that wrote {results} read it (its sha256 differs; run "
                              f"store {path}): pass --items with the file the run read")
        return given
    return None
