"""One writer per run: an OS lock on a small file beside the run store.

    lock = RunLock.acquire(Path(".judgeflow/runs.sqlite"), run_id)   # RunBusy if another process has it
    ...
    lock.release()

The lock is flock(2), exclusive, on `<store>.locks/<run id>.lock`. The kernel releases it when its
process ends in any way (exit, crash, kill -9, a power loss), so it never outlives its holder: a
lock file left behind means nothing, the next writer takes it. Two opens of the file conflict
even within one process. The holder writes its pid, host and start time into the file, for the
message a second writer gets. Release removes the file; `acquire` checks that the file it locked
is still the one at the path (another process may have removed it between open and lock), the
usual protocol for removable lock files.

flock is advisory and local: every judgeflow that writes the run takes it, and it holds between
processes on one machine (a store on a network file system shared by several machines is not
covered). Where `fcntl` does not exist (Windows), there is no lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import time
from pathlib import Path

from ..errors import StoreError

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


class RunBusy(StoreError):
    """Another process is writing the run."""


def lock_path(store: Path, run_id: str) -> Path:
    """The lock file of `run_id` in the run store `store`."""
    name = run_id if re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", run_id) and not run_id.startswith(".") else \
        hashlib.sha256(run_id.encode()).hexdigest()[:32]
    return store.with_name(store.name + ".locks") / f"{name}.lock"


class RunLock:
    """A held run lock (see the module docstring)."""

    def __init__(self, path: Path, fd: int | None) -> None:
        self.path, self._fd = path, fd

    @classmethod
    def acquire(cls, store: Path, run_id: str) -> RunLock:
        """Take the run's lock, or raise RunBusy naming the process that holds it."""
        path = lock_path(store, run_id)
        if fcntl is None:
            return cls(path, None)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{path.parent}: cannot create the run locks directory ({e.strerror}); "
                             "pass --store PATH in a writable directory") from None
        while True:
            fd = _open(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 200).decode(errors="replace").strip() or "another process"
                os.close(fd)
                raise RunBusy(
                    f"run {run_id} is being written by another judgeflow process ({holder}); two writers would "
                    "judge, and pay for, the same items twice. Wait for it to end, or stop it (its results are "
                    f"kept), then run this command again (lock: {path})") from None
            if _still_there(fd, path):
                break
            os.close(fd)  # removed by its last holder between our open and our lock: take the new file
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode())
        return cls(path, fd)

    def release(self) -> None:
        """Remove the file and drop the lock (idempotent)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # while still locked: a waiting writer sees it gone and opens the new one
        os.close(self._fd)
        self._fd = None


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as e:
        raise StoreError(f"{path}: cannot open the run lock ({e.strerror}); pass --store PATH in a writable "
                         "directory") from None


def _still_there(fd: int, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)
