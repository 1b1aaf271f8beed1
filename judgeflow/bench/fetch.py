"""Getting a benchmark's files: from the cache, from `--data DIR`, or downloaded at the pinned commit.

Every file is checked against its pinned hash before it is used. A download goes to a temporary
file beside its place in the cache and is renamed only once its hash matches; a mismatch is refused
(nothing is kept). A file already in the cache with the right hash is used without any request.
The licence is shown before anything is downloaded; a restrictive one (FaithBench's CC BY-NC-SA)
needs consent: a yes at the prompt, or `--accept-licence`.

The cache: `$JUDGEFLOW_CACHE_DIR/bench`, else `$XDG_CACHE_HOME/judgeflow/bench`, else
`~/.cache/judgeflow/bench`; one folder per benchmark and commit.
"""

from __future__ import annotations

import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from ..io.atomic import atomic_file
from ..io.bounded import read_capped
from .base import Benchmark, SourceFile

#: where files are downloaded from (raw.githubusercontent.com's layout: BASE/owner/name/commit/path)
DEFAULT_BASE = "https://raw.githubusercontent.com"
TIMEOUT = 60.0
#: a download's bounds: its bytes (the largest pinned file is a few tens of MB) and its total seconds
#: (a server that drips a byte at a time is cut there, not only when it goes quiet for TIMEOUT)
MAX_DOWNLOAD, DOWNLOAD_SECONDS = 512 * 1024 * 1024, 900.0


class BenchDataError(ConfigError):
    """A benchmark file is missing, cannot be downloaded, or is not the pinned file."""


def cache_root() -> Path:
    if os.environ.get("JUDGEFLOW_CACHE_DIR"):
        return Path(os.environ["JUDGEFLOW_CACHE_DIR"]) / "bench"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "judgeflow" / "bench"


def cache_dir(bench: Benchmark) -> Path:
    return cache_root() / bench.name / bench.commit


def licence_text(bench: Benchmark) -> str:
    return (f"{bench.title} ({bench.repo} at {bench.commit[:12]}) is licensed as follows:\n{bench.licence}\n"
            f"Full text: {bench.licence_url}")


def _cached(path: Path, f: SourceFile) -> bool:
    return path.is_file() and f.check(path.read_bytes()) is None


def from_data(bench: Benchmark, data: Path, warn: Callable[[str], None]) -> Path:
    """A copy on disk (`--data DIR`): each file at its repository path under DIR or by its name in DIR.
    A file that is not the pinned one is used with a warning (the figures may differ)."""
    if not data.is_dir():
        raise BenchDataError(f"--data {data}: not a directory; give the folder holding {bench.title}'s files "
                             f"({', '.join(f.path for f in bench.files[:3])}, ...)")
    for f in bench.files:
        path = _local(data, f)
        if path is None:
            raise BenchDataError(f"--data {data}: {f.path} is missing (looked for {data / f.path} and "
                                 f"{data / Path(f.path).name}); copy it from {bench.repo} at {bench.commit[:12]}, "
                                 "or leave out --data to download it")
        if (bad := f.check(path.read_bytes())) is not None:
            warn(f"{path} is not the pinned file ({bad}): the figures are for your copy, not the pinned release")
    return data


def _local(data: Path, f: SourceFile) -> Path | None:
    for path in (data / f.path, data / Path(f.path).name):
        if path.is_file():
            return path
    return None


def local_path(data: Path, f: SourceFile) -> Path:
    """Where a converter reads `f` from a directory made by `ensure` or given with --data."""
    path = _local(data, f)
    if path is None:
        raise BenchDataError(f"{data}: {f.path} is missing")
    return path


def ensure(bench: Benchmark, *, base: str = DEFAULT_BASE, accept: bool = False,
           ask: Callable[[str], bool] | None = None, say: Callable[[str], None] = print) -> Path:
    """The directory holding every file of `bench`, downloading what the cache lacks.

    Raises:
        BenchDataError: consent not given, a download failed, or a file is not the pinned one.
    """
    root = cache_dir(bench)
    missing = [f for f in bench.files if not _cached(root / f.path, f)]
    if not missing:
        return root
    say(licence_text(bench))
    if bench.needs_consent and not accept:
        question = f"Download {bench.title} under this licence? [y/N] "
        if ask is None and sys.stdin.isatty():
            ask = _ask_tty
        if ask is None or not ask(question):
            raise BenchDataError(f"{bench.title} is not downloaded: its licence needs your consent; read it "
                                 f"({bench.licence_url}) and pass --accept-licence, or give a copy with --data DIR")
    for f in missing:
        _download(bench, f, root, base, say)
    return root


def _ask_tty(question: str) -> bool:
    return input(question).strip().lower() in ("y", "yes")


def _download(bench: Benchmark, f: SourceFile, root: Path, base: str, say: Callable[[str], None]) -> None:
    url = bench.url(base, f.path)
    say(f"downloading {url}")
    try:
        deadline = time.monotonic() + DOWNLOAD_SECONDS
        with urllib.request.urlopen(url, timeout=TIMEOUT) as reply:  # noqa: S310 (an http(s) URL we built)
            size = reply.headers.get("Content-Length")
            if size is not None and size.strip().isdigit() and int(size) > MAX_DOWNLOAD:
                raise ValueError(f"{url} is {int(size):,} bytes, over the {MAX_DOWNLOAD:,} a benchmark file may be")
            data = read_capped(iter(lambda: reply.read1(1 << 16), b""), limit=MAX_DOWNLOAD, deadline=deadline,
                               what=f"{url}")
    except ValueError as e:
        raise BenchDataError(f"{e} ({DOWNLOAD_SECONDS:g} s and {MAX_DOWNLOAD:,} bytes at most); nothing was kept: "
                             "give a copy with --data DIR") from None
    except (urllib.error.URLError, OSError) as e:
        raise BenchDataError(f"{url}: cannot be downloaded ({getattr(e, 'reason', e)}); check the connection, "
                             "or give a copy with --data DIR") from None
    if (bad := f.check(data)) is not None:
        raise BenchDataError(f"{url}: not the pinned file ({bad}); nothing was kept. The upstream file changed or "
                             "the download was altered: use --data DIR with a copy you trust")
    path = root / f.path
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, binary=True) as out:
        out.write(data)
