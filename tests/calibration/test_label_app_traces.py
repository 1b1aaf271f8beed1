"""The review app shows a conversation's messages under their labels, the cited message marked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.traces import TRACES

from judgeflow import Item, Judge, read_items


def test_the_review_app_shows_the_conversation_with_the_cited_message(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from judgeflow.calibration.label_app.session import ReviewSession

    items = [r for r in read_items(TRACES) if isinstance(r, Item)]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(j.to_row()) + "\n" for j in Judge("baseline/lexical").judge_many(items)))
    s = ReviewSession(results, tmp_path / "labels.jsonl", items=TRACES, reveal=True)
    i = next(k for k, it in enumerate(s.labeller.items) if it.id == "weather-wrong")
    view = s.item(i)
    assert view["source_labels"] == ["user turn 1", "tool get_weather, call_1"]
    assert view["source"][1].startswith("called get_weather with")  # the label is the heading, not text
    claim = view["judge"]["claims"][0]
    assert claim["cited"] == "tool get_weather, call_1"
    span = claim["spans"][0]
    assert span["doc"] == 1 and span["cited"]
    assert view["source"][1][span["start"]:span["end"]] == "Paris: 18 C, light rain, wind 12 km/h."
