"""One endpoint's rate limits shared by every process on this machine that calls it with one key.

Two judgeflow processes on one key (two terminals, CI jobs on one runner, a served graph beside a
run) each used to pace to the whole limit, and together were answered 429 on a third of their
requests. Now each endpoint (provider, base URL, key hash, model: `limits.limiter_for`'s key) has a
small state file, `$JUDGEFLOW_LIMITS_DIR/<hash>.json` (default `$XDG_CACHE_HOME/judgeflow/limits/`,
i.e. `~/.cache/judgeflow/limits/`), holding its token buckets: limit, refill rate, level and the time
of that level, on wall-clock time. Every model request reserves its cost in that file under an
exclusive `fcntl.flock`, and every reply's re-sync to the provider's `remaining` is written there,
so all the processes draw from one bucket; across machines the `remaining` headers still do it.

Why a file under flock and token-bucket arithmetic (not sqlite, not a server):
- **nothing to clean up after a crash**: the state holds no holders and no leases, only a level
  that refills with wall-clock time. A process killed mid-request (or while its requests waited
  for their slots) leaves only the debt of its reservations, as if it had sent them, which the
  refill pays off (within its waiting requests' cost / the rate: seconds, not a lease to time out).
  The kernel drops a dead process's flock. A learned limit no reply confirmed for `limits.BELIEVE_FOR` is forgotten,
  as in one process; so is a limit set with `--rpm`/`--tpm` that no process re-affirmed for as long.
- **never held across a network call**: the lock is taken for one read-modify-write of a few
  hundred bytes (no await inside it) before a request is sent and after its reply is read.
- **cheap**: one open file per endpoint, flock + pread + JSON + pwrite per request, about 20-40 us
  of CPU (`python benchmarks/shared_key.py --overhead`), against ~2,500 us a call for the client.
  An endpoint with no limit known writes nothing; a request then costs one `stat` of the file.
- **only the key's hash**: the file name is a hash of (provider, base URL, key hash, model) and the
  file holds numbers and the redacted endpoint name, never the key or a URL's credentials.
- **or process-local**: when the directory cannot be made, opened or locked (read-only home, no
  fcntl), a warning says so once and this process paces to the limit by itself, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.bounded import loads

log = logging.getLogger("judgeflow")

#: where the state files go (default: $XDG_CACHE_HOME/judgeflow/limits)
DIR_ENV = "JUDGEFLOW_LIMITS_DIR"
#: set to 0 to pace each process alone (as before 0.3)
SHARE_ENV = "JUDGEFLOW_SHARED_LIMITS"
#: a bucket's level is never read as more than this many whole limits below zero (a corrupt file;
#: real debts are the reservations of requests waiting for their slots, a few windows at most)
MAX_DEBT = 16.0
_WARNED: set[str] = set()


def state_dir() -> Path:
    given = os.environ.get(DIR_ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "judgeflow" / "limits"


def enabled() -> bool:
    return os.environ.get(SHARE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def file_name(key: tuple[str, str, str, str]) -> str:
    """The state file of a limiter key (provider, base URL, key hash, model): a hash of all four."""
    return hashlib.sha256("\0".join(key).encode()).hexdigest()[:32] + ".json"


def _warn_once(what: str, error: BaseException | str) -> None:
    if what not in _WARNED:
        _WARNED.add(what)
        log.warning("rate limits: %s (%s); this process paces to the limit by itself, and other processes on "
                    "the same key are not counted until their replies show it (set %s to a writable folder)",
                    what, error, DIR_ENV)


class SharedState:
    """The state file of one endpoint (see the module docstring). `session()` yields its contents
    (a dict, {} when new or unreadable) under an exclusive lock and writes them back if changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        self.broken = False

    @classmethod
    def for_key(cls, key: tuple[str, str, str, str]) -> SharedState | None:
        if not enabled():
            return None
        try:
            import fcntl  # noqa: F401 - POSIX only
        except ImportError:
            _warn_once("no fcntl on this platform", "limits are not shared between processes")
            return None
        return cls(state_dir() / file_name(key))

    def exists(self) -> bool:
        """True when some process has shared a limit of this endpoint (one stat, no lock)."""
        return self.fd is not None or os.path.exists(self.path)

    def _open(self) -> int | None:
        if self.fd is None and not self.broken:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as e:
                self.broken = True
                _warn_once(f"cannot use {self.path.parent}", e)
        return self.fd

    @contextlib.contextmanager
    def session(self, create: bool = True) -> Iterator[dict[str, Any] | None]:
        """The shared state under the lock (None: unusable, or absent and `create` is False)."""
        if self.fd is None and (self.broken or (not create and not os.path.exists(self.path))):
            yield None
            return
        fd = self._open()
        if fd is None:
            yield None
            return
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as e:
            self.broken, self.fd = True, None
            os.close(fd)
            _warn_once(f"cannot lock {self.path}", e)
            yield None
            return
        try:
            raw = os.pread(fd, 65536, 0)
            try:
                data = loads(raw) if raw else {}  # bounded: another process's file, nested any depth
            except ValueError:
                data = {}
            if not isinstance(data, dict):
                data = {}
            before = dict(data)
            yield data
            if data != before:
                out = json.dumps(data, separators=(",", ":")).encode()
                os.pwrite(fd, out, 0)
                os.ftruncate(fd, len(out))
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def wall_offset() -> float:
    """time.time() - time.monotonic(): monotonic times in this process <-> wall-clock in the file."""
    return time.time() - time.monotonic()
