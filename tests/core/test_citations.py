"""The answer's own citations (#53): markers read, fabricated decided in code, misattributed from the judge
and from where its quote is, precision and recall per answer and per run."""

from __future__ import annotations

import json

import pytest

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Judge
from judgeflow.citations import find_markers, run_citations
from tests.fakes.scripted import FakeLLM

SOURCES = ["Paris is the capital of France.", "Berlin is the capital of Germany."]


def rag(answer: str) -> dict:
    """A row as RAGAS writes it: the contexts are numbered from 1 in this order."""
    return {"id": "q1", "user_input": "Capitals?", "retrieved_contexts": SOURCES, "response": answer}


def test_the_common_marker_forms_name_their_sources() -> None:
    answer = ("A [1]. B [1, 2]. C [1-2]. D [Source B]. E [^n]. F [the report](https://ex.org/r). G [7].\n\n"
              "[^n]: Source 2")
    sources = [*SOURCES, "Report\nsee https://ex.org/r for details"]
    got = [(m.text, m.docs) for m in find_markers(answer, sources)]
    assert got == [("[1]", [1]), ("[1, 2]", [1, 2]), ("[1-2]", [1, 2]), ("[Source B]", [2]), ("[^n]", [2]),
                   ("[the report](https://ex.org/r)", [3]), ("[7]", [None])]


@pytest.mark.parametrize("says", ["supported", "contradicted", "not_found"])
def test_a_marker_with_no_source_is_fabricated_whatever_the_judge_says(says: str) -> None:
    answer = "Paris is the capital of France [7]."
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Paris is the capital of France", quote="Paris is the capital of France")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict=says, basis="source",
                                       evidence="Paris is the capital of France")]),
    ])
    r = Judge(backend=llm.backend()).judge(rag(answer))
    c1 = r.claims[0]
    assert r.criterion == "source_faithfulness" and r.label == 1
    assert c1.verdict == "fabricated_citation" and c1.error and c1.citation == "fabricated" and c1.cites == ["[7]"]
    assert "names no source (2 given)" in c1.reason
    assert r.citations["fabricated"] == 1 and r.citations["precision"] == 0.0 and r.citations["recall"] == 0.0
    # the judge was shown the citation, and never offered the code-only verdict
    check = llm.requests[1]
    assert "[cites [7], which names no source]" in str(check) and "fabricated_citation" not in str(check)


def test_a_misattributed_citation_from_the_fake_scripted_judge() -> None:
    answer = "Berlin is the capital of Germany [1]."
    llm = FakeLLM("anthropic", [
        Claims(claims=[Claim(id="c1", text="Berlin is the capital of Germany", quote="Berlin is the capital of Germany")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="misattributed_citation", basis="source",
                                       evidence="Berlin is the capital of Germany",
                                       reason="document 2 states it, not document 1")]),
    ])
    r = Judge(backend=llm.backend()).judge(rag(answer))
    c1 = r.claims[0]
    assert r.label == 1 and c1.verdict == "misattributed_citation" and c1.citation == "misattributed"
    assert "[cites document 1]" in llm.user_prompts()[1]
    assert r.citations == {"markers": 1, "pairs": 1, "supporting": 0, "claims": 1, "supported_claims": 0,
                           "fabricated": 0, "misattributed": 1, "precision": 0.0, "recall": 0.0}


def test_supported_by_another_document_than_cited_is_misattributed_in_code() -> None:
    answer = "Paris is the capital of France [1] and Berlin is the capital of Germany [1]."
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Paris is the capital of France", quote="Paris is the capital of France"),
                       Claim(id="c2", text="Berlin is the capital of Germany",
                             quote="Berlin is the capital of Germany")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source", evidence="capital of France"),
                            ClaimCheck(claim_id="c2", verdict="supported", basis="source",
                                       evidence="Berlin is the capital of Germany")]),
    ])
    r = Judge(backend=llm.backend()).judge(rag(answer))
    c1, c2 = r.claims
    assert (c1.verdict, c1.citation) == ("supported", "supported") and not c1.error
    assert (c2.verdict, c2.citation) == ("misattributed_citation", "misattributed") and c2.error
    assert "the evidence is in document 2, but the answer cites document 1" in c2.reason
    assert r.label == 1 and r.citations["precision"] == 0.5 and r.citations["recall"] == 0.5


def test_correct_citations_pass_and_an_uncited_answer_has_no_citations() -> None:
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Berlin is the capital of Germany", quote="Berlin is the capital of Germany")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source", evidence="capital of Germany")]),
        Claims(claims=[Claim(id="c1", text="Berlin is the capital of Germany", quote="Berlin is the capital of Germany")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source", evidence="capital of Germany")]),
    ])
    judge = Judge(backend=llm.backend())
    cited = judge.judge(rag("Berlin is the capital of Germany [2]."))
    assert cited.label == 0 and cited.claims[0].citation == "supported"
    assert cited.citations["precision"] == 1.0 and cited.citations["recall"] == 1.0
    plain = judge.judge(rag("Berlin is the capital of Germany."))
    assert plain.label == 0 and plain.citations is None and "citations" not in plain.to_row()
    assert "\nc1: Berlin is the capital of Germany\n" in llm.user_prompts()[3]  # no note
    # the misattributed verdict is offered (guide and schema) only where a claim carries a citation
    cited_check, plain_check = llm.requests[1], llm.requests[3]
    assert "- misattributed_citation (an error)" in llm.user_prompts()[1]
    assert "misattributed_citation" in json.dumps(cited_check["tools"])
    assert "misattributed_citation" not in llm.user_prompts()[3] + json.dumps(plain_check["tools"])
    assert "- not_found (an error)" in llm.user_prompts()[3]
    assert run_citations([cited.citations, plain.citations, None])["answers"] == 1


def test_the_offline_judge_also_gets_fabricated_citations() -> None:
    r = Judge("baseline/lexical").judge(rag("Paris is the capital of France [3]."))
    assert r.label == 1 and any(c.citation == "fabricated" for c in r.claims)


def test_a_long_cited_source_cut_into_passages_keeps_the_answers_numbering() -> None:
    from judgeflow.backends.passages import PassageJudge

    filler = "The museum opens at nine and the gift shop sells postcards of the river. " * 30
    sources = [filler + "Paris is the capital of France.", filler, filler + "Berlin is the capital of Germany."]
    answer = "Berlin is the capital of Germany [3]."
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Berlin is the capital of Germany", quote="Berlin is the capital of Germany")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source",
                                       evidence="Berlin is the capital of Germany")]),
    ])
    r = Judge(backend=PassageJudge(llm.backend(), max_source_chars=1500)).judge(
        {"id": "long", "user_input": "Capital?", "retrieved_contexts": sources, "response": answer})
    check = llm.user_prompts()[1]
    assert "[cites document 3]" in check and "[document 3, passage" in check  # not "names no source"
    assert r.label == 0 and r.claims[0].citation == "supported"
    assert r.claims[0].evidence.startswith("[document 3, passage")


def test_a_panel_row_carries_its_deciding_members_citations() -> None:
    from judgeflow import Panel

    panel = Panel([Judge("baseline/lexical"), Judge("baseline/lexical", threshold=0.6)])
    r = panel.judge(rag("Paris is the capital of France [7]."))
    assert r.label == 1 and r.citations is not None and r.citations["fabricated"] == 1


@pytest.mark.parametrize("text", ["France's capital city is Paris", "Something else entirely about trains"])
def test_a_fabricated_marker_is_never_lost_when_no_claim_can_be_placed(text: str) -> None:
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text=text)]),  # a paraphrase: not in the answer, so not placed
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source", evidence="capital of France")]),
    ])
    r = Judge(backend=llm.backend(), check_dropped=False).judge(rag("Paris is the capital of France [7]."))
    assert r.label == 1 and r.citations["fabricated"] == 1
    bad = [c for c in r.claims if c.citation == "fabricated"]
    assert len(bad) == 1 and bad[0].verdict == "fabricated_citation" and bad[0].cites == ["[7]"]
    assert bad[0].id == ("c1" if "capital" in text else "f1")


@pytest.mark.parametrize("answer", ["The value lies in [0, 1].", "The 1999 report [1999] says so.",
                                    "Use `items[1]` to get it.", "```\nx = a[2]\n```"])
def test_intervals_years_and_code_are_not_citations(answer: str) -> None:
    assert find_markers(answer, SOURCES) == []
