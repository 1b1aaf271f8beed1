"""The response cache: ONE key function, used by the run store's cache and the pytest file cache.

    key = cache_key(judge, item)        # None if the item cannot be routed (an invalid row)
    FileCache(".judgeflow/pytest-cache").get(key) / .put(key, judgment)

The key covers everything that determines a judge's answer for an item: the backend
fingerprint (model, temperature, ...), the routed criterion's content, the strategy and routing
settings, the requirement checker when coverage applies, and the item's judged content (not its
id, label or extra fields). Unscored results are never cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..errors import JudgeflowError
from ..items import Item
from ..results import Judgment, TraceEntry, Usage
from ..routing import choose_criterion

#: bump when a change in judgeflow itself makes earlier cached results stale
CACHE_VERSION = 1
COVERAGE_VERSION = 1
JUDGED_FIELDS = frozenset({"question", "answer", "reference", "source", "spec", "mode", "criterion"})


def cache_key(judge: Any, item: Item) -> str | None:
    """The response-cache key for `judge` answering `item`; None if the item cannot be routed."""
    combined = getattr(judge, "combined_cache_key", None)
    if combined is not None:  # a panel or cascade: built from its members' keys, made here
        return combined(item, cache_key)  # type: ignore[no-any-return]
    try:
        criterion, _ = choose_criterion(item, criterion=judge.criterion, mode=judge.mode)
    except JudgeflowError:
        return None
    data = {
        "v": CACHE_VERSION,
        "backend": judge.backend.fingerprint,
        "criterion": criterion.fingerprint,
        "strategy": judge.strategy,
        "mode": judge.mode,
        "run_criterion": judge.criterion.fingerprint if judge.criterion else None,
        "item": item.model_dump(include=set(JUDGED_FIELDS)),
    }
    # surrogatepass: a lone surrogate in an Item built in code must not crash the key
    key = hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()
    checker = coverage_checker(judge, item, "spec" if criterion.covers_spec else criterion.mode)
    if checker is None:
        return key
    coverage = f"{key}|coverage-v{COVERAGE_VERSION}|{checker.fingerprint}|{criterion.coverage_fingerprint}"
    return hashlib.sha256(coverage.encode()).hexdigest()


def coverage_checker(judge: Any, item: Item, routed_mode: str) -> Any:
    """The requirement coverage whose answer is part of this item's result, if any."""
    coverage = getattr(judge, "coverage", None)
    if coverage is None or not item.spec or routed_mode != "spec":
        return None
    return coverage


def from_cache(hit: Judgment, item: Item, *, model: str, strategy: str, keep_trace: bool = True) -> Judgment:
    """A cached judgment served for `item`: its id, label and extra fields, no usage, `cached=True`."""
    trace = hit.trace if keep_trace else []
    if keep_trace and not trace:  # cached by a judge that kept no trace: say so, never an empty audit
        trace = [TraceEntry(step="cache", reply={
            "note": "served from the response cache; the run that judged it kept no trace "
                    "(judge again without the cache, e.g. --no-cache, to record one)"})]
    return hit.model_copy(update={
        "id": item.id, "human_label": item.label, "extra": item.extra, "cached": True, "usage": Usage(),
        "model": model, "strategy": strategy, "trace": trace,
        "judges": [v.model_copy(update={"usage": Usage(), "cached": True}) for v in hit.judges] if hit.judges else None,
    })


class FileCache:
    """Judged results as one JSON file per key in a directory (safe for parallel writers)."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)

    key = staticmethod(cache_key)

    def get(self, key: str) -> Judgment | None:
        path = self.dir / f"{key}.json"
        try:
            return Judgment.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:  # a torn or stale file: judge again and overwrite it
            return None

    def put(self, key: str, judgment: Judgment) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        data = judgment.model_copy(update={"trace": [], "cached": False}).model_dump_json()
        fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, self.dir / f"{key}.json")
