"""QA bots in CI: pytest tests that fail when the bot's answer has a hallucination.

What it shows: `assert_no_hallucination` and the `judgeflow_judge` fixture (from judgeflow's
pytest plugin, installed with judgeflow) judge a quiz bot's answers against short references
or source passages, and `assert_rate_below` holds the hallucination rate over all the questions
under a limit (by the upper bound of its interval). A failing test lists each failing claim with
its verdict, reason and evidence. Judged results are cached under .judgeflow/pytest-cache, so a
re-run with unchanged answers makes no model calls. Offline by default; one test checks that the
bot's wrong year is caught and prints the failure message a real failing test would show (`-rP`).

    python -m pytest examples/qa_bot_ci -rP                                      # offline, no key
    python -m pytest examples/qa_bot_ci --judgeflow-model openai/gpt-4o-mini    # an LLM judge
    python -m pytest examples/qa_bot_ci --judgeflow-no-cache                    # judge afresh

Per item, a test fails on any hallucination; for the whole question set, the workflow beside this
file (qa-bot-gate.yml) runs the bot over questions.jsonl, judges the answers and fails the build
only when the bot got significantly worse than baseline.jsonl (`judgeflow gate`).
(The project's own test run does not collect this file: its testpaths is tests/.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bot import quiz_bot  # the bot beside this file (pytest puts this folder on sys.path)

from judgeflow import Item
from judgeflow.testing import assert_no_hallucination, assert_rate_below

QUESTIONS = Path(__file__).with_name("questions.jsonl")

KNOWLEDGE = {
    "moscow": "The chronicles first mention Moscow in 1147; Yuri Dolgorukiy is regarded as its founder.",
    "kremlin": "In 1156 Yuri Dolgorukiy had the first wooden walls of the Kremlin built.",
}


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


def test_hallucination_rate_over_all_questions(judgeflow_judge) -> None:  # type: ignore[no-untyped-def]
    """The dataset level: the rate's upper 95% bound must be under 20% (one wrong year in 40 passes;
    the point estimate alone would pass a bot that answered 5 questions without error)."""
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()]
    results = [judgeflow_judge.judge_item(Item.from_record({**r, "answer": quiz_bot(r["question"])})) for r in rows]
    rate = assert_rate_below(results, 0.20)
    print(f"hallucination rate {rate.ones}/{rate.scored}, 95% interval {rate.ci[0]:.1%} to {rate.ci[1]:.1%}")
