"""Provider grounding metadata read as evidence by the trace reader (#53): Gemini, OpenAI, Anthropic."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from judgeflow import Item, Judge

ANSWER = "The Eiffel Tower is 330 metres tall."
QUESTION = {"role": "user", "content": "How tall is the Eiffel Tower?"}
GEMINI = {"role": "model", "parts": [{"text": ANSWER}], "groundingMetadata": {
    "webSearchQueries": ["eiffel tower height"],
    "groundingChunks": [{"web": {"uri": "https://example.org/eiffel", "title": "example.org"}},
                        {"retrievedContext": {"uri": "gs://b/tower.txt", "title": "tower.txt",
                                              "text": "The tower is 330 metres tall since 2022."}}],
    "groundingSupports": [{"segment": {"startIndex": 0, "endIndex": 36, "text": ANSWER},
                           "groundingChunkIndices": [0, 1]}]}}
OPENAI_CHAT = {"role": "assistant", "content": ANSWER, "annotations": [
    {"type": "url_citation", "url_citation": {"start_index": 0, "end_index": 36, "url": "https://example.org/eiffel",
                                              "title": "Eiffel Tower facts"}}]}
OPENAI_RESPONSES = {"role": "assistant", "content": [{"type": "output_text", "text": ANSWER, "annotations": [
    {"type": "url_citation", "start_index": 4, "end_index": 16, "url": "https://example.org/eiffel",
     "title": "Eiffel Tower facts"}]}]}
ANTHROPIC = {"role": "assistant", "content": [{"type": "text", "text": ANSWER, "citations": [
    {"type": "web_search_result_location", "url": "https://example.org/eiffel", "title": "Eiffel Tower facts",
     "cited_text": "The tower is 330 metres tall since 2022."}]}]}


@pytest.mark.parametrize(("reply", "expect"), [
    (GEMINI, ["searched: eiffel tower height", "url: https://example.org/eiffel",
              "The tower is 330 metres tall since 2022.", f"the provider says the reply rests on it for: {ANSWER}"]),
    (OPENAI_CHAT, ["source: Eiffel Tower facts", "url: https://example.org/eiffel", f"cited for: {ANSWER}"]),
    (OPENAI_RESPONSES, ["source: Eiffel Tower facts", "cited for: Eiffel Tower"]),
    (ANTHROPIC, ["url: https://example.org/eiffel", "The tower is 330 metres tall since 2022."]),
])
def test_grounding_metadata_is_one_evidence_message_before_the_reply(reply: dict, expect: list[str]) -> None:
    item = Item.from_record({"id": "g", "messages": [QUESTION, reply]})
    assert item.answer == ANSWER
    labels = [m.label for m in item.messages or []]
    assert labels == ["user turn 1", "tool web_search, grounding"]
    doc = item.source[-1]
    assert doc.startswith("[tool web_search, grounding]") and "provider grounding metadata" in doc
    assert all(x in doc for x in expect), doc


def test_langchain_gemini_messages_keep_their_grounding() -> None:
    reply = AIMessage(ANSWER, response_metadata={"grounding_metadata": GEMINI["groundingMetadata"]})
    item = Item.from_record({"id": "g", "messages": [HumanMessage(QUESTION["content"]), reply]})
    assert "The tower is 330 metres tall since 2022." in item.source[-1]


def test_a_grounded_reply_is_supported_by_its_metadata_for_the_offline_judge() -> None:
    with_meta = Judge("baseline/lexical").judge({"id": "g", "messages": [QUESTION, ANTHROPIC]})
    bare = Judge("baseline/lexical").judge({"id": "g", "messages": [QUESTION, {"role": "assistant", "content": ANSWER}]})
    assert with_meta.label == 0  # the number 330 is in the cited text the metadata gave
    assert bare.label == 1  # the same reply without its sources: nothing supports it
