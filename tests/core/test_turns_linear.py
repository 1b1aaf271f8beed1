"""`--turns all`: a conversation's evidence text grows linearly in its turns (issue 46, F8)."""

from __future__ import annotations

from judgeflow.items import items_from_record


def _conversation(turns: int) -> dict:
    messages = []
    for t in range(turns):
        messages += [
            {"role": "user", "content": f"What is the weather in city {t}?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{t}", "type": "function", "function": {"name": "weather", "arguments": f'{{"city": {t}}}'}}]},
            {"role": "tool", "tool_call_id": f"c{t}", "content": f"City {t}: sunny, 24 degrees. " + "x" * 2000},
            {"role": "assistant", "content": f"It is sunny and 24 degrees in city {t}."},
        ]
    return {"id": "conv", "messages": messages}


def _evidence_chars(turns: int) -> int:
    items = items_from_record(_conversation(turns), turns="all")
    assert len(items) == turns
    return sum(len(d) for it in items for d in it.source or [])


def test_evidence_text_is_linear_in_turns():
    small, big = _evidence_chars(150), _evidence_chars(300)
    assert big / small < 2.3, (small, big)


def test_the_last_turn_keeps_all_its_evidence_as_turns_last_does():
    conv = _conversation(60)
    last_all = items_from_record(conv, turns="all")[-1]
    (last,) = items_from_record(conv, turns="last")
    assert last_all.source == last.source and len(last.source) >= 60
