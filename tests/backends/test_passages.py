"""Long sources: passages, BM25 selection, and evidence cited by passage (offline and fake LLM)."""

from __future__ import annotations

import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, ConfigError, Judge
from judgeflow.backends import make_backend
from judgeflow.backends.passages import (
    PassageJudge,
    cite,
    locate,
    parse_citation,
    select_passages,
    split_documents,
    split_passages,
)

FILLER = "The region has a continental climate with cold winters and warm summers. "
CHRONICLE = ("Moscow is the capital of Russia.\n\n"
             "The city was first mentioned in the chronicles in 1147, when Yuri Dolgorukiy invited "
             "his ally Sviatoslav to a feast there. " + FILLER * 20)
KREMLIN = "In 1156 the prince ordered wooden walls to be built around the Kremlin. " + "Trade routes ran along the river. " * 40
SOURCES = [CHRONICLE, KREMLIN]


def test_split_keeps_every_sentence_within_the_size() -> None:
    passages = split_passages(CHRONICLE, doc=3, passage_chars=300)
    assert len(passages) > 3
    assert all(p.doc == 3 for p in passages)
    assert [p.index for p in passages] == list(range(1, len(passages) + 1))
    assert all(len(p.text) <= 300 for p in passages)
    joined = " ".join(p.text for p in passages)
    assert "first mentioned in the chronicles in 1147" in joined
    assert joined.count("continental climate") == 20


def test_selection_keeps_the_passage_each_claim_needs_in_reading_order() -> None:
    passages = split_documents(SOURCES, passage_chars=250)
    claims = ["The Kremlin got wooden walls in 1156.", "Moscow was first mentioned in 1147."]
    chosen = select_passages(claims, passages, max_chars=600)
    assert sum(len(p.text) for p in chosen) <= 600
    labels = [(p.doc, p.index) for p in chosen]
    assert labels == sorted(labels)  # reading order, not score order
    texts = " ".join(p.text for p in chosen)
    assert "1147" in texts and "1156" in texts


def test_short_sources_are_kept_whole() -> None:
    passages = split_documents(["Moscow was founded in 1147."])
    assert select_passages(["anything"], passages, max_chars=1000) == passages


def test_locate_and_cite_name_the_passage() -> None:
    passages = split_documents(SOURCES, passage_chars=250)
    p = locate("ordered wooden walls to be built", passages)
    assert p is not None and (p.doc, p.index) == (2, 1)
    cited = cite("ordered wooden walls to be built", passages)
    assert cited.startswith("[document 2, passage 1] ")
    assert parse_citation(cited) == (2, 1, "ordered wooden walls to be built")
    assert parse_citation("plain quote") == (None, None, "plain quote")
    assert cite("", passages) == ""
    assert cite("completely unrelated words zebra", passages) == "completely unrelated words zebra"


def test_offline_judge_checks_each_claim_against_its_passage() -> None:
    judge = Judge("baseline/lexical", max_source_chars=800)
    assert isinstance(judge.backend, PassageJudge)
    assert "passages=800" in judge.backend.fingerprint
    result = judge.judge({"id": "m", "answer": "Moscow was first mentioned in 1247. "
                          "In 1156 the prince ordered wooden walls around the Kremlin.", "source": SOURCES})
    assert result.label == 1
    c1, c2 = result.claims
    assert c1.verdict == "contradicted" and parse_citation(c1.evidence)[:2] == (1, 1)
    assert c2.verdict == "supported" and parse_citation(c2.evidence)[:2] == (2, 1)


def test_default_backend_sends_sources_whole() -> None:
    assert not isinstance(make_backend("baseline/lexical"), PassageJudge)


def test_budget_smaller_than_a_passage_is_refused() -> None:
    with pytest.raises(ConfigError, match="max_source_chars"):
        Judge("baseline/lexical", max_source_chars=100)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_llm_sees_only_relevant_numbered_passages_and_evidence_is_cited(provider: str) -> None:
    answer = "Moscow was first mentioned in 1247. Wooden walls were built around the Kremlin in 1156."
    llm = FakeLLM(provider, [
        Claims(claims=[Claim(id="c1", text="Moscow was first mentioned in 1247.", kind="date"),
                       Claim(id="c2", text="Wooden walls were built around the Kremlin in 1156.", kind="date")]),
        ClaimChecks(checks=[
            ClaimCheck(claim_id="c1", verdict="contradicted", basis="source",
                       evidence="first mentioned in the chronicles in 1147", reason="the source says 1147"),
            ClaimCheck(claim_id="c2", verdict="supported", basis="source",
                       evidence="ordered wooden walls to be built around the Kremlin", reason="stated"),
        ]),
    ])
    judge = Judge(backend=PassageJudge(llm.backend(), max_source_chars=600))
    result = judge.judge({"id": "m", "question": "When was Moscow first mentioned?",
                          "answer": answer, "source": SOURCES})
    assert result.label == 1
    check_prompt = llm.user_prompts()[1]
    assert '<document index="1">' in check_prompt and '<document index="2">' in check_prompt
    assert "first mentioned in the chronicles in 1147" in check_prompt
    assert "ordered wooden walls" in check_prompt
    # irrelevant passages are left out: only the first passage of each document is sent
    assert check_prompt.count("Trade routes ran along the river") < 40 // 4
    assert check_prompt.count("continental climate") < 20 // 4
    assert [c.evidence for c in result.claims] == [
        "[document 1, passage 1] first mentioned in the chronicles in 1147",
        "[document 2, passage 1] ordered wooden walls to be built around the Kremlin",
    ]


def test_llm_short_source_is_unchanged_but_still_cited() -> None:
    source = ["Moscow was first mentioned in 1147.", "The Kremlin walls were built in 1156."]
    replies = [
        Claims(claims=[Claim(id="c1", text="The walls date from 1156.", kind="date")]),
        ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source",
                                       evidence="The Kremlin walls were built in 1156.", reason="stated")]),
    ]
    plain, wrapped = FakeLLM("openai", list(replies)), FakeLLM("openai", list(replies))
    Judge(backend=plain.backend()).judge({"id": "k", "answer": "The walls date from 1156.", "source": source})
    result = Judge(backend=PassageJudge(wrapped.backend(), max_source_chars=4000)).judge(
        {"id": "k", "answer": "The walls date from 1156.", "source": source})
    assert wrapped.user_prompts() == plain.user_prompts()
    assert result.claims[0].evidence.startswith("[document 2, passage 1] ")


def test_cli_max_source_chars_cites_passages(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from judgeflow.cli import main

    items = tmp_path / "rag.jsonl"
    items.write_text(json.dumps({"id": "m", "answer": "Moscow was first mentioned in 1247.", "source": SOURCES}) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["run", str(items), "-o", str(out), "--max-source-chars", "800",
                 "--store", str(tmp_path / "s.sqlite")]) == 0
    row = json.loads(out.read_text())
    assert row["label"] == 1 and row["claims"][0]["evidence"].startswith("[document 1, passage 1] ")


def test_single_strategy_selects_by_answer_sentences_and_cites() -> None:
    from judgeflow.schemas import JudgedClaim, SingleJudgment

    llm = FakeLLM("openai", [SingleJudgment(claims=[JudgedClaim(
        id="c1", text="The Kremlin got wooden walls in 1156.", verdict="supported", basis="source",
        evidence="ordered wooden walls to be built around the Kremlin")])])
    judge = Judge(backend=PassageJudge(llm.backend(), max_source_chars=600), strategy="single")
    result = judge.judge({"id": "k", "answer": "The Kremlin got wooden walls in 1156.", "source": SOURCES})
    assert result.label == 0 and len(llm.requests) == 1
    prompt = llm.user_prompts()[0]
    assert "ordered wooden walls" in prompt and "first mentioned in the chronicles" not in prompt
    assert result.claims[0].evidence.startswith("[document 2, passage 1] ")


def test_a_claim_sharing_no_word_with_the_source_still_gets_passages() -> None:
    # a paraphrase in another script: no term in common with any passage; before, the check step
    # was sent `<source>(none given)</source>`, a false alarm
    passages = split_documents(SOURCES, passage_chars=300)
    chosen = select_passages(["Москва основана давно"], passages, max_chars=900)
    assert chosen and sum(len(p.text) for p in chosen) <= 900
    assert chosen[0].doc == 1 and chosen[0].index == 1  # the budget filled in reading order
    # one claim matches, one does not: the matching one keeps its passage, the rest fills the budget
    mixed = select_passages(["Kremlin walls 1156", "Москва"], passages, max_chars=900)
    assert any("wooden walls" in p.text for p in mixed) and sum(len(p.text) for p in mixed) > 300
    replies = [Claims(claims=[Claim(id="c1", text="Москва основана давно.", kind="date")]),
               ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source",
                                              evidence="Moscow is the capital of Russia.", reason="stated")])]
    llm = FakeLLM("openai", replies)
    Judge(backend=PassageJudge(llm.backend(), max_source_chars=600)).judge(
        {"id": "ru", "answer": "Москва основана давно.", "source": SOURCES})
    check_prompt = llm.user_prompts()[1]
    assert "(none given)" not in check_prompt and "Moscow is the capital of Russia." in check_prompt


def test_model_judges_cut_long_sources_by_default_and_leave_short_ones_alone() -> None:
    from judgeflow.backends import DEFAULT_MAX_SOURCE_CHARS

    claims = Claims(claims=[Claim(id="c1", text="The walls date from 1156.", kind="date")])
    checks = ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="source",
                                            evidence="wooden walls to be built around the Kremlin", reason="ok")])
    long_source = [CHRONICLE * 20, KREMLIN]  # ~40k characters
    assert sum(map(len, long_source)) > 2 * DEFAULT_MAX_SOURCE_CHARS
    for source, cut in ((long_source, True), (["The Kremlin walls were built in 1156."], False)):
        llm = FakeLLM("openai", [claims, checks])
        judge = Judge("openai/gpt-fake", api_key="k", base_url="http://llm.test/v1", http_client=llm.http_client())
        assert isinstance(judge.backend, PassageJudge)
        result = judge.judge({"id": "w", "answer": "The walls date from 1156.", "source": source})
        sent = llm.user_prompts()[1]
        if cut:  # the passages that matter, within the budget (the prompt's own text besides)
            assert len(sent) < DEFAULT_MAX_SOURCE_CHARS + 3000 and "wooden walls" in sent
        else:
            assert source[0] in sent
        assert result.claims[0].evidence.startswith("[document 2, passage") == cut  # cited only when cut
    off = Judge("openai/gpt-fake", api_key="k", base_url="http://llm.test/v1", max_source_chars=0)
    assert not isinstance(off.backend, PassageJudge)


def test_a_json_object_and_a_code_block_are_never_cut_in_two() -> None:
    import json as _json

    flights = [{"id": f"F{i}", "dep": f"0{i}:40", "note": "seat map and fare rules follow " * 2} for i in range(8)]
    doc = "[tool search, c1]\ncalled search with {}\nreturned:\n" + _json.dumps({"flights": flights, "count": 8}, indent=1)
    passages = split_passages(doc, passage_chars=200)
    objects = [_json.dumps(f, indent=1).replace("\n", "\n  ") for f in flights]  # as written inside the list
    assert len(passages) > 3 and all(any(o in p.text for p in passages) for o in objects)
    code = "Here it is.\n\n```python\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n```\n\nThat is all. Really."
    block = "```python\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n```"
    assert block in [p.text for p in split_passages(code, passage_chars=20)]
