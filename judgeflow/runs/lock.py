"""One writer per run: an OS lock on a small file beside the run store.

    lock = RunLock.acquire(Path(".judgeflow/runs.sqlite"), run_id)   # RunBusy if another process has it
    ...
    lock.release()

The lock is flock(2), exclusive, on `<store>.locks/<run id>.lock`, `<store>` being the store's real
path (symlinks resolved), and on a second file named by the store file's identity (device and
inode) in a per-user directory of the temporary folder, so neither a symlink nor a hard link to
the store gives a second lock. The kernel releases it when its
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
import importlib
import os
import re
import socket
import tempfile
import time
from pathlib import Path
from types import ModuleType

from ..errors import StoreError


def _fcntl() -> ModuleType | None:
    try:
        return importlib.import_module("fcntl")
    except ImportError:  # Windows
        return None


fcntl = _fcntl()


class RunBusy(StoreError):
    """Another process is writing the run."""


def _lock_name(run_id: str) -> str:
    return run_id if re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", run_id) and not run_id.startswith(".") else \
        hashlib.sha256(run_id.encode()).hexdigest()[:32]


def lock_path(store: Path, run_id: str) -> Path:
    """The lock file of `run_id` in the run store `store` (beside its real path: symlinks resolved)."""
    real = store.resolve()
    return real.with_name(real.name + ".locks") / f"{_lock_name(run_id)}.lock"


def identity_lock_path(store: Path, run_id: str) -> Path | None:
    """The lock file of `run_id` named by the store file's identity (device, inode): every name of
    the file (a hard link anywhere on the machine) finds the same one. None if the store is not a file."""
    try:
        st = os.stat(store)
    except OSError:
        return None
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"judgeflow-{uid}-locks" / f"{st.st_dev:x}-{st.st_ino:x}" / f"{_lock_name(run_id)}.lock"


class RunLock:
    """A held run lock (see the module docstring)."""

    def __init__(self, path: Path, fd: int | None, also: RunLock | None = None) -> None:
        self.path, self._fd, self._also = path, fd, also

    @classmethod
    def acquire(cls, store: Path, run_id: str) -> RunLock:
        """Take the run's locks (by the store's real path, and by its identity), or raise RunBusy
        naming the process that holds them."""
        lock = cls._take(lock_path(store, run_id), run_id)
        ident = identity_lock_path(store, run_id) if lock._fd is not None else None
        if ident is not None:
            try:
                lock._also = cls._take(ident, run_id, mode=0o700)
            except BaseException:
                lock.release()
                raise
        return lock

    @classmethod
    def _take(cls, path: Path, run_id: str, *, mode: int = 0o777) -> RunLock:
        if fcntl is None:
            return cls(path, None)
        try:
            path.parent.mkdir(mode=mode, parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{path.parent}: cannot create the run locks directory ({e.strerror}); "
                             "pass --store PATH in a writable directory") from None
        while True:
            fd = _open(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
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
        """Remove the files and drop the locks (idempotent)."""
        if self._also is not None:
            self._also.release()
            self._also = None
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


def _holder(fd: int, wait: float = 1.0) -> str:
    """What the holder wrote into the lock file. It writes just after it locks, so a writer refused
    in between finds the file empty: read again for up to `wait` seconds before saying less."""
    deadline = time.monotonic() + wait
    while True:
        text = os.pread(fd, 200, 0).decode(errors="replace").strip()
        if text or time.monotonic() >= deadline:
            return text or "another process"
        time.sleep(0.02)


def _still_there(fd: int, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)
