"""baseline/rouge-l: the study's ROUGE-L baseline as a judge, scored by the rouge-score package."""

from __future__ import annotations

import asyncio

import pytest
from rouge_score import rouge_scorer

from judgeflow import Item, Judge, load_criterion
from judgeflow.backends import make_backend
from judgeflow.backends.rouge import RougeJudge, UnicodeTokenizer, verdict_pair
from judgeflow.errors import ConfigError
from judgeflow.results import Usage

REF = "The watermelon seeds pass through your digestive system"


def test_scores_equal_rouge_score_on_english() -> None:
    judge = RougeJudge()
    plain = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    for answer in ("Watermelon seeds pass through the digestive system", "You grow watermelons in your stomach",
                   "Nothing happens"):
        assert judge.score(answer, REF) == pytest.approx(plain.score(REF, answer)["rougeL"].fmeasure)


def test_unicode_text_is_not_dropped() -> None:
    assert UnicodeTokenizer().tokenize("Москва основана в 1147 году") == ["москва", "основана", "в", "1147", "году"]
    assert RougeJudge().score("Москва основана в 1147 году", "Москва основана в 1147 году") == 1.0


@pytest.mark.parametrize(("criterion", "passing", "failing"), [
    ("factual_correctness", "supported", "contradicted"),
    ("reference_faithfulness", "supported", "not_in_reference"),
    ("source_faithfulness", "supported", "not_found"),
])
def test_verdicts_come_from_the_criterion(criterion: str, passing: str, failing: str) -> None:
    assert verdict_pair(load_criterion(criterion)) == (passing, failing)


def test_threshold_decides_the_label() -> None:
    item = {"id": "w", "question": "What happens if you eat watermelon seeds?", "reference": REF,
            "answer": "Watermelon seeds pass through the digestive system"}
    score = RougeJudge().score(item["answer"], REF)
    low = Judge("baseline/rouge-l", threshold=round(score - 0.05, 2)).judge(item)
    high = Judge("baseline/rouge-l", threshold=round(score + 0.05, 2)).judge(item)
    assert (low.label, high.label) == (0, 1)
    assert len(high.claims) == 1 and high.claims[0].text == item["answer"]
    assert high.claims[0].verdict == "contradicted" and f"{score:.2f}" in high.claims[0].reason
    assert high.model == "baseline/rouge-l"


def test_source_uses_the_best_document() -> None:
    item = Item(id="s", answer="The bridge opened in 1932.",
                source=["Unrelated text about rivers and fish.", "The bridge opened in 1932 after six years."])
    judge, crit = RougeJudge(threshold=0.5), load_criterion("source_faithfulness")
    claims = asyncio.run(judge.decompose(item, crit, Usage(), []))
    checks = asyncio.run(judge.check(item, crit, claims, Usage(), []))
    assert checks[0].verdict == "supported" and "(document 2)" in checks[0].reason
    assert checks[0].basis == "source"


def test_no_evidence_is_unscored_not_zero() -> None:
    result = Judge("baseline/rouge-l", criterion="factual_correctness").judge({"id": "x", "answer": "Paris."})
    assert result.label is None and result.status == "unscored"
    assert "nothing to compare" in (result.error or "")


def test_registered_and_validated() -> None:
    assert isinstance(make_backend("baseline/rouge-l", threshold=0.25), RougeJudge)
    assert make_backend("baseline/rouge-l", threshold=0.25).threshold == 0.25
    with pytest.raises(ConfigError, match="between 0 and 1"):
        RougeJudge(threshold=3)
    with pytest.raises(ConfigError, match="baseline/rouge-l"):
        make_backend("baseline/bleu")
    assert RougeJudge(threshold=0.2).fingerprint != RougeJudge(threshold=0.3).fingerprint
