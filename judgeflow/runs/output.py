"""A run's files: the input's content hash (resume refuses a changed file) and the output checks and writer.

    sha = file_sha(Path("items.jsonl"))                          # "-": stdin, read once
    check_output(Path("out.jsonl"), Path("items.jsonl"))         # fail before judging anything
    write_output(store, run_id, Path("out.jsonl"), trace=False)   # tmp file, fsync, atomic rename ("-": stdout)
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..files import STDIO, OutputError, read_bytes, same_file, write_jsonl_atomic
from .store import RunStore

__all__ = ["OutputError", "check_output", "check_output_writable", "file_sha", "write_output"]


def file_sha(path: Path) -> str:
    return hashlib.sha256(read_bytes(path)).hexdigest()


def check_output(path: Path, input_path: Path) -> None:
    """Fail before judging anything if OUTPUT is the input (also via links), or cannot be written."""
    if str(path) == STDIO:
        return
    if same_file(path, input_path):
        raise OutputError(f"{path}: is the input file {input_path} (the results would replace the items); "
                          "give another -o path, e.g. results.jsonl")
    check_output_writable(path)


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


def write_output(store: RunStore, run_id: str, path: Path, *, trace: bool) -> int:
    """(Re)write OUTPUT from the store: a temporary file, fsync, then an atomic rename ("-": stdout)."""
    try:
        return write_jsonl_atomic(path, (j.to_row(trace=trace) for j in store.results(run_id)))
    except OutputError as e:
        raise OutputError(f"{e}; every finished result is saved in the store {store.path}: fix this and run "
                          "the same command with --resume to write them") from None
