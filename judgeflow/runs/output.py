"""A run's files: the input's content hash (resume refuses a changed file) and the atomic output writer.

    sha = file_sha(Path("items.jsonl"))
    check_output_writable(Path("out.jsonl"))                     # fail before judging anything
    write_output(store, run_id, Path("out.jsonl"), trace=False)   # tmp file, fsync, atomic rename
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..errors import InvalidItemError, JudgeflowError
from .store import RunStore


class OutputError(JudgeflowError):
    """The output file cannot be written."""


def file_sha(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except FileNotFoundError:
        raise InvalidItemError("no such file; give a .jsonl or .csv file of items", path=str(path)) from None
    return h.hexdigest()


def check_output_writable(path: Path) -> None:
    """Fail before judging anything if OUTPUT cannot be written."""
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


def write_output(store: RunStore, run_id: str, path: Path, *, trace: bool) -> int:
    """(Re)write OUTPUT from the store: a temporary file, fsync, then an atomic rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    n = 0
    try:
        with tmp.open("w", encoding="utf-8") as f:
            for j in store.results(run_id):
                f.write(json.dumps(j.to_row(trace=trace), ensure_ascii=False) + "\n")
                n += 1
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise OutputError(
            f"{path}: cannot write the results ({e.strerror}); every finished result is saved in the store "
            f"{store.path}: fix this and run the same command with --resume to write them"
        ) from None
    return n
