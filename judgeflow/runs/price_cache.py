"""genai-prices lookups remembered on disk, so a run's summary need not import the package.

Importing genai-prices (its whole price database, and httpx for its updater) takes about 0.4 s,
more than the rest of a re-run served from the cache. A lookup depends only on the model and the
installed database, so it is remembered in `$XDG_CACHE_HOME/judgeflow/prices.json` (default
`~/.cache/judgeflow/`) under the installed database's identity (its data file's path, size and
modification time, read without importing it): installing another version of genai-prices
starts afresh. A missing, unreadable or unwritable cache is no error: the lookup is made again.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from ..io.atomic import OutputError, atomic_file

MISSING = object()


def cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "judgeflow" / "prices.json"


def installed() -> str | None:
    """The installed genai-prices database's identity, or None when it is not importable."""
    try:
        spec = importlib.util.find_spec("genai_prices")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(next(iter(spec.submodule_search_locations))) / "data.py"
    try:
        st = data.stat()
    except OSError:
        return None
    return f"{data}:{st.st_size}:{st.st_mtime_ns}"


def _read(key: str) -> dict[str, Any]:
    try:
        saved = json.loads(cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return saved.get("models", {}) if isinstance(saved, dict) and saved.get("database") == key else {}


def recall(key: str, model: str) -> Any:
    """The remembered lookup for `model` (a dict of Price fields, or None: not in the database),
    or MISSING."""
    return _read(key).get(model, MISSING)


def remember(key: str, model: str, value: dict[str, Any] | None) -> None:
    path = cache_file()
    models = {**_read(key), model: value}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(path, durable=False) as f:
            json.dump({"database": key, "models": models}, f)
    except (OSError, OutputError):
        pass
