"""Spans: each claim placed in the answer by code (offsets checked, never guessed), error spans on rows."""

from __future__ import annotations

import json

from fakes import FakeLLM

from judgeflow import Judge
from judgeflow.cli import main
from judgeflow.files import read_rows
from judgeflow.results import ClaimResult, Judgment
from judgeflow.spans import error_spans, locate, place, with_spans

ANSWER = "Moscow  was\nFOUNDED in 1247. It was founded by Yuri Dolgorukiy."


def test_locate_ignores_case_and_spacing_and_maps_back_to_the_answer() -> None:
    start, end = locate("moscow was founded in 1247.", ANSWER)  # type: ignore[misc]
    assert (start, end) == (0, 28) and ANSWER[start:end] == "Moscow  was\nFOUNDED in 1247."
    s, e = locate("“founded by Yuri Dolgorukiy”", ANSWER)  # type: ignore[misc]
    assert ANSWER[s:e] == "founded by Yuri Dolgorukiy"


def test_locate_joins_fragments_in_order_and_refuses_what_is_not_there() -> None:
    s, e = locate("Moscow ... 1247", ANSWER)  # type: ignore[misc]
    assert ANSWER[s:e] == "Moscow  was\nFOUNDED in 1247"
    assert locate("1247 ... Moscow", ANSWER) is None  # fragments out of order
    assert locate("founded in 1147", ANSWER) is None
    assert locate("   ", ANSWER) is None and locate("x", "") is None


def test_locate_keeps_offsets_right_after_a_character_that_folds_longer() -> None:
    text = "Die Straße ist lang. Sie ist 3 km lang."
    s, e = locate("sie ist 3 km lang", text)  # type: ignore[misc]
    assert text[s:e] == "Sie ist 3 km lang"


def test_place_prefers_the_quote_falls_back_to_the_text_and_says_when_it_cannot() -> None:
    by_quote = place(ClaimResult(id="c1", text="The city dates from 1247.", quote="founded in 1247"), ANSWER)
    assert by_quote.placed is True and ANSWER[slice(*by_quote.span)] == "FOUNDED in 1247"  # type: ignore[arg-type]
    by_text = place(ClaimResult(id="c2", text="founded by Yuri Dolgorukiy", quote="not in the answer"), ANSWER)
    assert by_text.placed is True and ANSWER[slice(*by_text.span)] == "founded by Yuri Dolgorukiy"  # type: ignore[arg-type]
    lost = place(ClaimResult(id="c3", text="Moscow is old.", quote="an invented quote"), ANSWER)
    assert lost.placed is False and lost.span is None
    assert lost.model_dump()["placed"] is False and "span" in lost.model_dump()  # it says so in the row


def test_error_spans_are_the_placed_error_claims_in_answer_order() -> None:
    claims = [place(ClaimResult(id="c1", text="founded by Yuri Dolgorukiy", error=True), ANSWER),
              place(ClaimResult(id="c2", text="founded in 1247", error=True), ANSWER),
              place(ClaimResult(id="c3", text="Moscow was", error=False), ANSWER),
              place(ClaimResult(id="c4", text="elsewhere", error=True), ANSWER)]
    spans = error_spans(claims, ANSWER)
    assert [s["claim"] for s in spans] == ["c2", "c1"]
    assert all(ANSWER[s["start"]:s["end"]] == s["text"] for s in spans)


def test_with_spans_leaves_unjudged_rows_alone_and_is_idempotent() -> None:
    j = Judgment(id="a", label=1, claims=[ClaimResult(id="c1", text="founded in 1247", error=True)])
    once = with_spans(j, ANSWER)
    assert once.spans == [{"start": 12, "end": 27, "claim": "c1", "text": "FOUNDED in 1247"}]
    assert with_spans(once, ANSWER) == once
    unscored = Judgment.unscored("b", "boom")
    assert with_spans(unscored, ANSWER) is unscored and "spans" not in unscored.to_row()


def test_the_offline_judge_places_its_own_sentences() -> None:
    answer = "Paris is in France. The Eiffel Tower was built in 1999."
    row = Judge(model="baseline/lexical").judge({
        "id": "p", "answer": answer,
        "source": "Paris is the capital of France. The Eiffel Tower was built in 1889."}).to_row()
    assert row["label"] == 1 and all(c["placed"] for c in row["claims"])
    assert [answer[s["start"]:s["end"]] for s in row["spans"]] == ["The Eiffel Tower was built in 1999."]


def test_the_decomposers_quote_is_checked_in_code_not_trusted() -> None:
    answer = "Moscow was founded in 1247 by Yuri Dolgorukiy."
    llm = FakeLLM("openai", [
        {"claims": [{"text": "Moscow was founded in 1247.", "kind": "date", "quote": "founded in 1247"},
                    {"text": "Yuri Dolgorukiy founded Moscow.", "kind": "name", "quote": "by Yuri Dolgoruki the Great"}]},
        {"c1": {"evidence": "1147", "reason": "r", "basis": "reference", "verdict": "contradicted"},
         "c2": {"evidence": "", "reason": "r", "basis": "reference", "verdict": "contradicted"}}])
    r = Judge(backend=llm.backend()).judge({"id": "m", "question": "When was Moscow founded?", "answer": answer,
                                            "reference": "Moscow was founded in 1147 by Yuri Dolgorukiy."})
    c1, c2 = r.claims
    assert c1.quote == "founded in 1247" and answer[slice(*c1.span)] == "founded in 1247"  # type: ignore[arg-type]
    assert c2.placed is False and c2.span is None  # the quote is not in the answer, nor the claim's text
    assert r.spans == [{"start": 11, "end": 26, "claim": "c1", "text": "founded in 1247"}]


def test_csv_carries_the_spans(tmp_path) -> None:  # type: ignore[no-untyped-def]
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "p", "answer": "Paris is in France. The tower was built in 1999.",
                                 "source": "Paris is in France. The tower was built in 1889."}) + "\n")
    out = tmp_path / "out.csv"
    assert main(["run", str(items), "-o", str(out), "--model", "baseline/lexical", "--format", "csv",
                 "--no-progress", "--no-cache"]) == 0
    ((_, row),) = list(read_rows(out))
    spans = json.loads(row["spans"]) if isinstance(row["spans"], str) else row["spans"]
    assert [s["text"] for s in spans] == ["The tower was built in 1999."]
