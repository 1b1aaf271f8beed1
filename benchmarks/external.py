"""What some benchmarks need that the repository does not ship: the labelled evaluation sets and a
fake provider that follows any JSON schema it is sent (their licences differ from the project's).

They are found in a `shared/` folder holding `data/` and `tools/fake_llm.py` in a parent directory
of the checkout (the development set-up), or at $JUDGEFLOW_SHARED. Without them a benchmark stops
with one line saying so; `startup.py` and `panels.py` need neither.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """The folder holding data/ and tools/fake_llm.py (it may not exist: see `need_shared`)."""
    given = os.environ.get("JUDGEFLOW_SHARED")
    if given:
        return Path(given)
    return next((p / "shared" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT.parent / "shared")


def need_shared(shared: Path | None = None) -> Path:
    """`shared` (default `shared_dir()`), or stop: the benchmark cannot run without it."""
    shared = shared or shared_dir()
    if not (shared / "data").is_dir() or not (shared / "tools" / "fake_llm.py").is_file():
        raise SystemExit(f"this benchmark needs the labelled evaluation sets and the schema-following fake "
                         f"provider, which the repository does not ship; not found at {shared}: set "
                         "JUDGEFLOW_SHARED to the folder holding data/ and tools/fake_llm.py")
    return shared
