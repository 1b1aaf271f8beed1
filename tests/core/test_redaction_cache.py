"""`redact` remembers its last long texts (a judged row's JSON is redacted for the response cache
and again for the run's row, #50): the same text gives the same output, and a key remembered since
is masked all the same."""

from __future__ import annotations

from typing import Any

import pytest

from judgeflow import redact as redaction


@pytest.fixture(autouse=True)
def no_known_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redaction, "_SECRETS", ())
    monkeypatch.setattr(redaction, "_LAST", {})


def long_text(*parts: Any) -> str:
    return ("The task_id field and a plain sentence. " * 80) + " ".join(map(str, parts))


def test_a_long_text_redacted_again_gives_the_same_output() -> None:
    text = long_text("Authorization: Bearer abcdefghijklmnop", "sk-proj-ABCDEFGH12345678")
    first = redaction.redact(text)
    assert "abcdefghijklmnop" not in first and "ABCDEFGH12345678" not in first
    assert redaction._LAST and redaction.redact(text) == first


def test_a_key_remembered_after_a_text_was_redacted_is_masked_in_it() -> None:
    key = "localkey-0123456789abcdef"  # no known key shape: masked only once remembered
    text = long_text("the endpoint echoed", key)
    assert key in redaction.redact(text)
    redaction.remember_secret(key)
    assert key not in redaction.redact(text) and redaction.MASK in redaction.redact(text)


def test_the_memory_of_long_texts_is_bounded() -> None:
    for n in range(200):
        redaction.redact(long_text(n))
    assert len(redaction._LAST) <= 64
