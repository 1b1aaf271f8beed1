"""What a public benchmark is to `judgeflow bench`: one module of one shape (`BENCHMARK = Benchmark(...)`).

A benchmark names its upstream repository at a pinned commit, each file's hash (sha256, or the git
blob id where no copy of the file could be read to compute a sha256: also a hash of the content),
its licence, a converter from the benchmark's own files to judgeflow items (with the human label
and, where the benchmark has them, the annotated answer spans), its own metric, and the published
figures printed beside it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..results import Judgment


@dataclass(frozen=True)
class SourceFile:
    """One upstream file at the pinned commit and the hash it must have."""

    path: str
    """The path inside the repository (also the path under the cache and under `--data`)."""
    sha256: str | None = None
    git_blob: str | None = None
    """The git blob id (sha1 of "blob <size>\\0" + content), when no sha256 could be learnt."""

    def check(self, data: bytes) -> str | None:
        """None if `data` is this file; else what was expected and what was found."""
        if self.sha256 is not None:
            got = hashlib.sha256(data).hexdigest()
            return None if got == self.sha256 else f"sha256 {got}, expected {self.sha256}"
        if self.git_blob is not None:
            got = git_blob_id(data)
            return None if got == self.git_blob else f"git blob id {got}, expected {self.git_blob}"
        raise ValueError(f"{self.path}: a benchmark file needs a sha256 or a git blob id")


def git_blob_id(data: bytes) -> str:
    """The id git gives a file of this content (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class Figure:
    """One of the benchmark's own figures, measured on this run."""

    name: str
    value: float | None
    ci: tuple[float, float] | None = None
    n: int = 0
    note: str = ""

    def text(self) -> str:
        if self.value is None:
            return "undefined" + (f" ({self.note})" if self.note else "")
        ci = f" [{self.ci[0]:.3f}, {self.ci[1]:.3f}]" if self.ci else ""
        return f"{self.value:.3f}{ci}" + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class Published:
    """A published figure to print beside ours: who, which metric, the value, where it is from."""

    who: str
    metric: str
    value: float | None
    cite: str
    note: str = ""


Converter = Callable[[Path], Iterator[dict[str, Any]]]
Metric = Callable[[Sequence[Judgment], int], list[Figure]]
PublishedOf = Callable[[Sequence[dict[str, Any]], int], list[Published]]


@dataclass(frozen=True)
class Benchmark:
    """A public benchmark: where it is, under what licence, how to read it and how it is scored."""

    name: str
    title: str
    repo: str
    """owner/name on GitHub."""
    commit: str
    files: tuple[SourceFile, ...]
    licence: str
    """The licence in a few lines: its name, the holder and what it allows."""
    licence_url: str
    convert: Converter
    """Reads the files (in one directory, at their repository paths) into item records, in a fixed order."""
    metric: Metric
    """The benchmark's own figures from the result rows (seeded intervals)."""
    published: tuple[Published, ...] = ()
    published_on_items: PublishedOf | None = None
    """Figures the release itself allows on the very items judged (e.g. the detectors' predictions it ships)."""
    needs_consent: bool = False
    """The licence restricts use (non-commercial, share-alike): downloading asks first."""
    ab: tuple[str, str] | None = None
    """The source study's A/B: the strict reference criterion and factual correctness."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def url(self, base: str, path: str) -> str:
        """Where a file is downloaded from: BASE/owner/name/commit/path (raw.githubusercontent.com's layout)."""
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{path}"
