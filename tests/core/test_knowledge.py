"""The knowledge step (#52): commit-first checks, evidence for claims the reference lacks, decided-by.

Commit-first is faked at the HTTP boundary (the real SDK and Instructor run; `FakeLLM`), against
the schema-following fake (random but valid replies) and with the offline judge (no knowledge).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import MOSCOW_QUESTION, FakeLLM, SchemaProvider

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Item, Judge, load_criterion
from judgeflow.backends import Evidence
from judgeflow.build import build
from judgeflow.knowledge import compare, decided, decided_by, mask, settle, shares

ERRORS = ["contradicted", "false_fact"]
# the reference says nothing about the founder: the check call decides it from knowledge
ITEM = {"id": "m", "question": "When was Moscow founded and by whom?", "reference": "1147",
        "answer": "Moscow was founded in 1147 by Ivan the Terrible."}


def check(verdict: str, basis: str = "knowledge") -> ClaimCheck:
    return ClaimCheck(claim_id="c1", verdict=verdict, basis=basis, reason="r")


def test_mask_hides_the_claims_values_but_keeps_what_the_question_names() -> None:
    slot = mask("c1", "Moscow was founded in 1147 by Yuri Dolgorukiy.", MOSCOW_QUESTION)
    assert slot is not None and slot.values == ("1147", "Yuri Dolgorukiy")
    assert "1147" not in slot.masked and "Dolgorukiy" not in slot.masked and slot.masked.startswith("Moscow")
    capital = mask("c1", "The capital of Australia is Canberra.", "What is the capital of Australia?")
    assert capital is not None and capital.values == ("Canberra",)
    assert mask("c1", "It is a lovely city.", None) is None  # nothing concrete to commit to


def test_compare_folds_case_accents_order_and_spelling_variants_but_not_numbers() -> None:
    slot = mask("c1", "It opened on 31 March 1889 in Paris.", None)
    assert slot is not None
    assert compare(slot, "March 31, 1889; paris")[0] == "agree"
    assert compare(slot, "1887; Paris") == ("differ", ["31 March 1889"])
    assert compare(slot, "")[0] == "none" and compare(slot, "unknown")[0] == "none"
    founder = mask("c1", "Moscow was founded by Yuri Dolgorukiy.", None)
    assert founder is not None and compare(founder, "Yury Dolgoruky")[0] == "agree"


@pytest.mark.parametrize("verdict, said, expected", [
    ("supported", "1147", "supported"),        # both reads say it is right
    ("false_fact", "1150", "false_fact"),      # both reads say it is wrong
    ("supported", "1150", "unverifiable"),     # the check accepted a value the judge does not name
    ("false_fact", "1147", "unverifiable"),    # the check rejected the value the judge itself names
    ("supported", "", "unverifiable"),         # no commitment
])
def test_a_verdict_from_knowledge_stands_only_where_both_reads_agree(verdict: str, said: str, expected: str) -> None:
    slot = mask("c1", "Moscow was founded in 1147.", "When was Moscow founded?")
    out = settle(check(verdict), slot, said, errors=ERRORS, unsettled="unverifiable")
    assert out.verdict == expected
    assert (out.basis == "none") == (expected == "unverifiable")
    if expected == "unverifiable":
        assert out.reason.startswith("commit-first:") and verdict in out.reason


def test_decided_by_counts_each_claim_once() -> None:
    rows = [check("supported", "reference"), check("supported", "source"), check("supported"),
            check("supported", "evidence"), check("unverifiable", "none"), check("unverifiable", "knowledge")]
    counts = decided_by(rows)
    assert counts == {"reference": 2, "knowledge": 1, "evidence": 1, "unverifiable": 2}
    assert shares(counts) == {"reference": 0.3333, "knowledge": 0.1667, "evidence": 0.1667, "unverifiable": 0.3333}
    assert decided(None, None) == "unverifiable"


def scripted(commitment: str, verdict: str = "supported") -> FakeLLM:
    claims = Claims(claims=[Claim(id="c1", text="Moscow was founded in 1147.", kind="date"),
                            Claim(id="c2", text="Moscow was founded by Ivan the Terrible.", kind="name")])
    checks = ClaimChecks(checks=[
        ClaimCheck(claim_id="c1", verdict="supported", basis="reference", evidence="1147", reason="same year"),
        ClaimCheck(claim_id="c2", verdict=verdict, basis="knowledge", evidence="", reason="from knowledge")])
    return FakeLLM("openai", [claims, checks, {"c2": {"values": commitment}}])


def test_commit_first_masks_the_value_and_a_disagreement_is_unverifiable_never_supported() -> None:
    llm = scripted("Yuri Dolgorukiy")
    j = Judge(backend=llm.backend(), criterion="factual_correctness", knowledge="commit-first").judge(ITEM)
    by_id = {c.id: c for c in j.claims}
    assert by_id["c1"].verdict == "supported" and by_id["c1"].basis == "reference"
    assert by_id["c2"].verdict == "unverifiable" and by_id["c2"].basis == "none"
    assert "Yuri Dolgorukiy" in by_id["c2"].reason and "Ivan the Terrible" in by_id["c2"].reason
    assert j.label == 0  # factual_correctness does not list unverifiable among its errors
    commit = llm.requests[-1]
    prompt = llm.user_prompts()[-1]
    assert commit["tools"][0]["function"]["name"] == "Commitments"
    assert "[blank 1]" in prompt and "Ivan" not in prompt and "Terrible" not in prompt
    assert "1147" not in prompt.split("<slots>")[1]  # only c2 is asked: the reference settled c1
    assert [t.step for t in j.trace] == ["decompose", "check", "commit"] and j.usage.calls == 3


def test_commit_first_keeps_a_false_fact_the_commitment_confirms_is_wrong() -> None:
    j = Judge(backend=scripted("Yuri Dolgorukiy", verdict="false_fact").backend(), criterion="factual_correctness",
              knowledge="commit-first").judge(ITEM)
    assert j.label == 1 and j.claims[1].verdict == "false_fact" and "committed first" in j.claims[1].reason


def test_unverifiable_counts_as_an_error_only_where_the_criterion_says_so(tmp_path: Path) -> None:
    text = Path(load_criterion("factual_correctness").path).read_text(encoding="utf-8")
    own = tmp_path / "strict_knowledge.toml"
    own.write_text(text.replace('name = "factual_correctness"', 'name = "strict_knowledge"').replace(
        'error_verdicts = ["contradicted", "false_fact"]', 'error_verdicts = ["contradicted", "false_fact", "unverifiable"]'),
        encoding="utf-8")
    j = Judge(backend=scripted("").backend(), criterion=str(own), knowledge="commit-first").judge(ITEM)
    assert j.label == 1 and j.claims[1].verdict == "unverifiable"


def test_default_stays_todays_knowledge_step_with_the_same_cache_key() -> None:
    llm = scripted("unused")
    j = Judge(backend=llm.backend(), criterion="factual_correctness").judge(ITEM)
    assert j.claims[1].verdict == "supported" and j.claims[1].basis == "knowledge" and j.usage.calls == 2
    plain = Judge("baseline/lexical", criterion="factual_correctness")
    it = Item.from_record(ITEM)
    assert plain.fingerprint(it) == Judge("baseline/lexical", criterion="factual_correctness",
                                          knowledge="default").fingerprint(it)
    assert plain.fingerprint(it) != Judge("baseline/lexical", criterion="factual_correctness",
                                          knowledge="commit-first").fingerprint(it)


def test_schema_fake_factual_run_with_commit_first_gives_unverifiable_verdicts() -> None:
    # distinct questions: the fake's reply is drawn from the request body, so identical items are one draw
    items = [{**ITEM, "id": f"m{n}", "question": f"{ITEM['question']} (case {n})"} for n in range(8)]
    with SchemaProvider(seed=5) as fake:
        judge = Judge("openai/x", base_url=fake.base_url + "/v1", api_key="k", criterion="factual_correctness",
                      knowledge="commit-first", concurrency=4)
        results = judge.judge_many(items)
        steps = [t.step for j in results for t in j.trace]
    claims = [c for j in results for c in j.claims]
    assert "commit" in steps
    knowledge_reasons = [c for c in claims if c.reason.startswith("commit-first:")]
    assert knowledge_reasons and all(c.verdict == "unverifiable" and c.basis == "none" for c in knowledge_reasons)
    for j in results:  # an unverifiable claim never makes the label by itself (the criterion does not list it)
        if j.status == "judged" and all(c.verdict in ("supported", "unverifiable") for c in j.claims):
            assert j.label == 0


DOCS = [{"id": "d1", "title": "Founding", "text": "Moscow was founded in 1147 by Yuri Dolgorukiy, prince of Suzdal."},
        {"id": "d2", "text": "Paris is the capital of France. The Eiffel Tower opened in 1889."},
        {"id": "d3", "text": "Canberra has been the capital of Australia since 1913."}]


def write_docs(path: Path) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    return path


@pytest.mark.parametrize("source", ["file", "folder", "function"])
def test_three_documents_supply_quoted_code_verified_evidence(tmp_path: Path, source: str) -> None:
    docs: Any = write_docs(tmp_path / "docs.jsonl")
    if source == "folder":
        folder = tmp_path / "docs"
        folder.mkdir()
        for d in DOCS:
            (folder / f"{d['id']}.txt").write_text(d["text"], encoding="utf-8")
        docs = folder
    elif source == "function":
        docs = lambda query: [d["text"] for d in DOCS]  # noqa: E731 - a retriever is any function of a query
    item = {"id": "e", "question": "Tell me about Moscow.", "reference": "Moscow is the capital of Russia.",
            "answer": "Moscow was founded in 1147 by Yuri Dolgorukiy."}
    j = Judge("baseline/lexical", criterion="factual_correctness", evidence=docs).judge(item)
    (claim,) = j.claims
    assert claim.basis == "evidence" and claim.verdict == "supported" and claim.evidence_found is True
    assert claim.evidence.startswith("[document 1, passage 1]") and "1147" in claim.evidence
    without = Judge("baseline/lexical", criterion="factual_correctness").judge(item)
    assert without.claims[0].basis != "evidence"


def test_an_evidence_quote_not_in_the_passages_settles_nothing() -> None:
    claims = Claims(claims=[Claim(id="c1", text="Moscow was founded by Ivan the Terrible.", kind="name")])
    first = ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="knowledge", reason="k")])
    invented = ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="reference",
                                              evidence="Ivan the Terrible founded Moscow", reason="made up")])
    llm = FakeLLM("openai", [claims, first, invented])
    item = {**ITEM, "answer": "Moscow was founded by Ivan the Terrible."}
    j = Judge(backend=llm.backend(), criterion="factual_correctness", evidence=[d["text"] for d in DOCS]).judge(item)
    # the made-up quote is not in the documents: they settle nothing
    assert j.status == "judged" and j.claims[0].basis == "knowledge"
    assert "<reference>" in llm.user_prompts()[-1] and "Yuri Dolgorukiy" in llm.user_prompts()[-1]


def test_evidence_file_errors_name_the_file_line_field_and_fix(tmp_path: Path) -> None:
    bad = tmp_path / "docs.jsonl"
    bad.write_text('{"text": "ok"}\n{"body": "no text"}\n', encoding="utf-8")
    with pytest.raises(Exception, match=r"docs.jsonl:2: field 'text' is missing"):
        Evidence.of(bad)
    with pytest.raises(Exception, match="no such file or folder"):
        Evidence.of(tmp_path / "missing.jsonl")


def test_judge_spec_records_knowledge_and_evidence_path(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs.jsonl")
    spec = Judge("baseline/lexical", knowledge="commit-first", evidence=docs).spec()
    assert spec.knowledge == "commit-first" and spec.evidence == str(docs)
    again = build(spec)
    assert again.knowledge == "commit-first" and again.evidence is not None


class Doc:
    def __init__(self, text: str) -> None:
        self.page_content, self.metadata = text, {}


class Retriever:
    """A LangChain-shaped retriever (`invoke(query)` -> Documents with `page_content`), without LangChain."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def invoke(self, query: str) -> list[Doc]:
        self.queries.append(query)
        return [Doc(d["text"]) for d in DOCS if any(w in d["text"] for w in query.split() if w[:1].isupper())]


def test_a_retriever_is_asked_once_per_open_claim_and_its_documents_quoted() -> None:
    retriever = Retriever()
    item = {"id": "r", "question": "Tell me about Moscow.", "reference": "Moscow is the capital of Russia.",
            "answer": "Moscow was founded in 1147 by Yuri Dolgorukiy."}
    j = Judge("baseline/lexical", criterion="factual_correctness", evidence=retriever).judge(item)
    assert retriever.queries == ["Moscow was founded in 1147 by Yuri Dolgorukiy."]
    assert j.claims[0].basis == "evidence" and j.claims[0].evidence_found is True


def test_a_reference_quote_the_reference_lacks_goes_to_the_commit_step() -> None:
    claims = Claims(claims=[Claim(id="c1", text="Moscow was founded by Yuri Dolgorukiy.", kind="name")])
    invented = ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="reference",
                                              evidence="Yuri Dolgorukiy founded Moscow in 1347.", reason="r")])
    item = {"id": "q", "question": "When was Moscow founded?", "reference": "1147",
            "answer": "Moscow was founded by Yuri Dolgorukiy."}
    llm = FakeLLM("openai", [claims, invented, {"c1": {"values": "Ivan Kalita"}}])
    j = Judge(backend=llm.backend(), criterion="factual_correctness", knowledge="commit-first").judge(item)
    assert j.claims[0].verdict == "unverifiable" and "Ivan Kalita" in j.claims[0].reason
    assert llm.requests[-1]["tools"][0]["function"]["name"] == "Commitments"
    plain = FakeLLM("openai", [claims, invented])
    kept = Judge(backend=plain.backend(), criterion="factual_correctness").judge(item)
    assert kept.claims[0].basis == "reference" and kept.claims[0].evidence_found is False  # default: as before
