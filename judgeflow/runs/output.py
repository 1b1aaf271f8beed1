"""A run's files: the input's content hash (resume refuses a changed file) and the output checks and writer.

    sha = file_sha(Path("items.jsonl"))                          # "-": stdin, read once
    with spool(Path("-")) as (path, sha): ...                    # stdin copied to a file, to be read twice
    check_output(Path("out.jsonl"), Path("items.jsonl"))         # fail before judging anything
    write_output(store, run_id, Path("out.jsonl"), trace=False)   # tmp file, fsync, atomic rename ("-": stdout)
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
from ..files import STDIO, OutputError, read_bytes, same_file, write_jsonl_atomic
from ..results import Judgment, flat_row
from .store import RunStore
from .summary import Tally
from .with_inputs import with_inputs

__all__ = ["FORMATS", "OutputError", "check_output", "check_output_writable", "file_sha", "output_format", "spool",
           "write_output"]

#: the results file's formats (`--format`); CSV and Parquet hold flat rows (lists and objects as JSON)
FORMATS = ("jsonl", "csv", "parquet")


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
            yield row_of(j) if fmt == "jsonl" else flat_row(row_of(j))

    try:
        if fmt == "jsonl":
            return write_jsonl_atomic(path, rows())
        columns: dict[str, None] = {}  # the union of the rows' columns, in first-seen order
        for j in store.results(run_id):
            columns.update(dict.fromkeys(row_of(j)))
        return write_table_atomic(path, rows(), list(columns), fmt)
    except OutputError as e:
        raise OutputError(f"{e}; every finished result is saved in the store {store.path}: fix this and run "
                          "the same command with --resume to write them") from None


def write_table_atomic(path: Path, rows: Iterator[dict[str, Any]], columns: list[str], fmt: str) -> int:
    """Flat rows as CSV (streamed) or Parquet (one table) through a temporary file and a rename
    ("-": CSV to stdout). Returns the number of rows."""
    import csv

    if str(path) == STDIO:
        writer = csv.DictWriter(sys.stdout, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        return sum(1 for row in rows if writer.writerow(row) is not None)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            if fmt == "csv":
                writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
                writer.writeheader()
                n = sum(1 for row in rows if writer.writerow(row) is not None)
        if fmt == "parquet":
            import pyarrow.parquet as pq

            table = list(rows)
            pq.write_table(_table(table, columns), tmp)
            n = len(table)
        os.replace(tmp, path)
        return n
    except OSError as e:
        raise OutputError(f"{path}: cannot write the results ({e.strerror})") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _table(rows: list[dict[str, Any]], columns: list[str]) -> Any:
    """An Arrow table: each column typed by what its values share, else as text (an input column of
    mixed types)."""
    import pyarrow as pa

    data = {}
    for name in columns:
        values = [r.get(name) for r in rows]
        try:
            arr = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arr = pa.array([None if v is None else str(v) for v in values], type=pa.string())
        data[name] = arr.cast(pa.string()) if pa.types.is_null(arr.type) else arr
    return pa.table(data)


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
        with RunStore(path) as s:
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
