"""Live provider checks: not run unless `pytest --runlive` (they need keys and cost a little).

    OPENAI_API_KEY=... pytest --runlive tests/backends/test_live.py
    ANTHROPIC_API_KEY=... JUDGEFLOW_LIVE_ANTHROPIC=anthropic/claude-sonnet-4-5 pytest --runlive tests/backends/test_live.py
"""

from __future__ import annotations

import os

import pytest

from judgeflow import Judge

pytestmark = pytest.mark.live

MODELS = [
    pytest.param(os.environ.get("JUDGEFLOW_LIVE_OPENAI", "openai/gpt-4o-mini"), "OPENAI_API_KEY", id="openai"),
    pytest.param(os.environ.get("JUDGEFLOW_LIVE_ANTHROPIC", "anthropic/claude-sonnet-4-5"), "ANTHROPIC_API_KEY", id="anthropic"),
]
QUESTION = "When was Moscow founded, and by whom?"
REFERENCE = "In 1147, by Yuri Dolgorukiy."


@pytest.mark.parametrize(("model", "key"), MODELS)
@pytest.mark.parametrize("strategy", ["graph", "single"])
def test_source_document_examples_against_a_real_model(model: str, key: str, strategy: str) -> None:
    if not os.environ.get(key):
        pytest.skip(f"{key} is not set")
    judge = Judge(model, strategy=strategy)
    wrong_year = judge.judge({"id": "y", "question": QUESTION, "reference": REFERENCE,
                              "answer": "Moscow was founded in 1247 by Yuri Dolgorukiy."})
    extra_detail = judge.judge({"id": "x", "question": QUESTION, "reference": REFERENCE,
                                "answer": "Moscow was founded in 1147 by Yuri Dolgorukiy, a son of Vladimir Monomakh."})
    assert wrong_year.label == 1, wrong_year.model_dump_json(indent=1)
    assert extra_detail.label == 0, extra_detail.model_dump_json(indent=1)
    assert wrong_year.usage.calls >= 1 and wrong_year.usage.input_tokens > 0
