"""A limiter state file written by another process (or planted) is validated and bounded (issue 46, F27)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from judgeflow.backends.limits import MAX_BELIEVED_WAIT, Limiter
from judgeflow.backends.shared_limits import SharedState

YEARS_31 = 31 * 365 * 86400


def test_a_blocked_until_31_years_ahead_is_ignored_with_a_warning(tmp_path: Path, caplog) -> None:
    state = tmp_path / "x.json"
    state.write_text(json.dumps({"endpoint": "e", "blocked_until": time.time() + YEARS_31, "buckets": {}}))
    lim = Limiter(name="e", shared=SharedState(state))
    with caplog.at_level(logging.WARNING, logger="judgeflow"), lim._synced():
        blocked = lim.blocked_until
    assert blocked == 0.0
    assert "blocked for" in caplog.text and "ignored" in caplog.text
    assert json.loads(state.read_text())["blocked_until"] == 0.0  # written back clean for the other processes


def test_a_near_block_from_another_process_is_still_believed(tmp_path: Path) -> None:
    state = tmp_path / "x.json"
    state.write_text(json.dumps({"endpoint": "e", "blocked_until": time.time() + 5, "buckets": {}}))
    lim = Limiter(name="e", shared=SharedState(state))
    with lim._synced():
        left = lim.blocked_until - time.monotonic()
    assert 3 < left <= MAX_BELIEVED_WAIT


@pytest.mark.parametrize("planted", [
    '{"spent": ["abc", 1, 2, 3], "blocked_until": "x"}',
    '{"buckets": [1, 2], "blocked_until": NaN}',
    '{"buckets": {"requests": {"limit": NaN, "rate": 1, "level": 1, "at": 1, "source": "set", "low": 0, '
    '"high": 1, "seen": 1}}, "blocked_until": Infinity}',
    '{"buckets": {"requests": "abc"}}',
    "[" * 30000 + "]" * 30000,
    "[1, 2]",
])
def test_a_planted_state_file_never_raises(tmp_path: Path, planted: str) -> None:
    state = tmp_path / "x.json"
    state.write_text(planted)
    lim = Limiter(name="e", shared=SharedState(state))
    with lim._synced():
        pass
    assert lim.blocked_until == 0.0 and not lim.buckets
