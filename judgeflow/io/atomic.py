"""The package's one atomic writer: a temporary file beside the target, fsync, then a rename.

    with atomic_file(Path("results.csv"), newline="") as f:   # text; binary=True for Parquet
        f.write(...)

Readers of the target see the old file or the new one, never a torn one. A target that is not a
regular file (a device, a named pipe, /dev/stdout) is written into, never replaced; a directory is
refused. The new file keeps the old one's mode (else the umask's). Every way it fails is one
OutputError naming the file and why.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ..errors import JudgeflowError

__all__ = ["OutputError", "atomic_file"]


class OutputError(JudgeflowError):
    """The output file cannot be written."""


def _mode(p: Path) -> int | None:
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as e:
        raise OutputError(f"{p}: cannot write the results ({e.strerror})") from None
    if stat.S_ISDIR(mode):
        raise OutputError(f"{p}: is a directory; give a file path, e.g. {p / 'results.jsonl'}")
    return mode


@contextlib.contextmanager
def atomic_file(path: str | Path, *, binary: bool = False, newline: str | None = None,
                durable: bool = True) -> Iterator[IO[Any]]:
    """An open file whose content replaces `path` when the block ends without an exception.

    `durable=False` skips the fsync: for a cache that is rebuilt when lost (the rename stays atomic).

    Raises:
        OutputError: `path` is a directory, or cannot be written (the message names it and why).
    """
    p = Path(path)
    mode = _mode(p)
    kwargs: dict[str, Any] = {} if binary else {"encoding": "utf-8", "newline": newline}
    if mode is not None and not stat.S_ISREG(mode):  # /dev/stdout, a named pipe: write into it, never replace it
        try:
            with p.open("wb" if binary else "w", **kwargs) as f:
                yield f
        except OSError as e:
            raise OutputError(f"{p}: cannot write the results ({e.strerror})") from None
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    except OSError as e:
        raise OutputError(f"{p}: cannot write the results ({e.strerror})") from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", **kwargs) as f:
            yield f
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, p)
    except OSError as e:
        raise OutputError(f"{p}: cannot write the results ({e.strerror})") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
