"""An edited criterion file is re-read in the same process (cache keys must see the change)."""

from __future__ import annotations

import os
from pathlib import Path

from judgeflow import load_criterion
from judgeflow.criteria import criteria_dirs


def test_editing_a_criterion_file_changes_its_fingerprint(tmp_path: Path) -> None:
    src = next(d for d in criteria_dirs()) / "factual_correctness.toml"
    mine = tmp_path / "mine.toml"
    mine.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    before = load_criterion(str(mine))
    assert load_criterion(str(mine)) is before  # unchanged file: served from the cache
    text = mine.read_text(encoding="utf-8")
    mine.write_text(text.replace("Judge every claim:", "Judge each claim strictly:"), encoding="utf-8")
    st = mine.stat()
    os.utime(mine, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    after = load_criterion(str(mine))
    assert "Judge each claim strictly:" in after.prompts.system
    assert after.fingerprint != before.fingerprint
