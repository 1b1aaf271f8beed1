"""QA bots in CI: pytest tests that fail when the bot's answer has a hallucination.

What it shows: `assert_no_hallucination` and the `judgeflow_judge` fixture (from judgeflow's
pytest plugin, installed with judgeflow) judge a quiz bot's answers against short references
or source passages. A failing test lists each failing claim with its verdict, reason and
evidence. Judged results are cached under .judgeflow/pytest-cache, so a re-run with unchanged
answers makes no model calls. Offline by default; the last test checks that the bot's wrong
year is caught and prints the failure message a real failing test would show (`-rP`).

    python -m pytest examples/qa_bot_ci -rP                                      # offline, no key
    python -m pytest examples/qa_bot_ci --judgeflow-model openai/gpt-4o-mini    # an LLM judge
    python -m pytest examples/qa_bot_ci --judgeflow-no-cache                    # judge afresh

(The project's own test run does not collect this file: its testpaths is tests/.)
"""

from __future__ import annotations

import pytest

from judgeflow.testing import assert_no_hallucination

KNOWLEDGE = {
    "moscow": "The chronicles first mention Moscow in 1147; Yuri Dolgorukiy is regarded as its founder.",
    "kremlin": "In 1156 Yuri Dolgorukiy had the first wooden walls of the Kremlin built.",
}


def quiz_bot(question: str) -> str:
    """The bot under test (a stand-in for your LLM app)."""
    answers = {
        "Who founded Moscow?": "Moscow was founded by Yuri Dolgorukiy in 1147.",
        "When were the first Kremlin walls built?": "The first wooden walls of the Kremlin were built in 1156.",
        "When was Moscow first mentioned?": "Moscow was first mentioned in 1247.",  # a bug in the bot
    }
    return answers[question]


def test_founder_against_a_short_reference() -> None:
    assert_no_hallucination(quiz_bot("Who founded Moscow?"), question="Who founded Moscow?",
                            reference="Yuri Dolgorukiy, 1147")


def test_kremlin_walls_against_the_source(judgeflow_judge) -> None:  # type: ignore[no-untyped-def]
    judgeflow_judge.assert_no_hallucination(quiz_bot("When were the first Kremlin walls built?"),
                                            source=[KNOWLEDGE["kremlin"], KNOWLEDGE["moscow"]])


def test_wrong_year_is_caught() -> None:
    """The bot's bug is caught; `-rP` prints the message a failing test would show."""
    with pytest.raises(AssertionError) as failure:
        assert_no_hallucination(quiz_bot("When was Moscow first mentioned?"), reference=KNOWLEDGE["moscow"])
    print(failure.value)
    assert "Moscow was first mentioned in 1247." in str(failure.value)
