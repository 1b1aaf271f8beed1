"""The run lock's message names its holder even when the holder has locked but not yet written."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from judgeflow.runs.lock import RunBusy, RunLock, lock_path

fcntl = pytest.importorskip("fcntl")


def test_a_writer_refused_between_the_holders_lock_and_its_note_still_names_the_holder(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    store.write_bytes(b"")
    path = lock_path(store, "r1")
    path.parent.mkdir(parents=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # locked, nothing written yet (the race CI met)
    writer = threading.Timer(0.15, lambda: os.write(fd, b"pid 4242 on host, since now"))
    writer.start()
    t0 = time.monotonic()
    with pytest.raises(RunBusy, match=r"another judgeflow process \(pid 4242 on host"):
        RunLock.acquire(store, "r1")
    assert time.monotonic() - t0 < 1.0
    writer.join()
    os.close(fd)


def test_a_holder_that_never_writes_is_named_vaguely_after_a_bounded_wait(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    store.write_bytes(b"")
    path = lock_path(store, "r1")
    path.parent.mkdir(parents=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    t0 = time.monotonic()
    with pytest.raises(RunBusy, match=r"\(another process\)"):
        RunLock.acquire(store, "r1")
    assert time.monotonic() - t0 < 3.0
    os.close(fd)
