"""Language detection, claims kept in the answer's language, fixed verdicts, per-language reports."""

from __future__ import annotations

import pytest
from fakes import FakeLLM

from judgeflow import (
    Claim,
    ClaimCheck,
    ClaimChecks,
    Claims,
    Judge,
    Judgment,
    list_criteria,
    load_criterion,
)
from judgeflow.items import Item
from judgeflow.languages import by_language, detect_language, language_of, with_language
from judgeflow.results import ClaimResult


@pytest.mark.parametrize(("text", "lang"), [
    ("Moscow was founded in 1147 by Yuri Dolgorukiy.", "en"),
    ("По летописной версии, Москву основал князь Юрий Долгорукий в 1147 году.", "ru"),
    ("Moskau wurde 1147 von Juri Dolgoruki gegründet und ist die Hauptstadt.", "de"),
    ("Moscou a été fondée en 1147 par Iouri Dolgorouki, selon la chronique.", "fr"),
    ("Moscú fue fundada en 1147 por Yuri Dolgoruki según la crónica.", "es"),
    ("Москву заснував Юрій Долгорукий у 1147 році, і це столиця.", "uk"),
    ("東京は日本の首都です。", "ja"),
    ("北京是中国的首都", "zh"),
    ("Η Αθήνα είναι η πρωτεύουσα.", "el"),
    ("1147", None),
    ("", None),
])
def test_detect_language(text: str, lang: str | None) -> None:
    assert detect_language(text) == lang


def test_every_criterion_keeps_claims_in_the_answers_language() -> None:
    for name in list_criteria():
        c = load_criterion(name)
        for key in ("decompose", "single"):
            text = " ".join(getattr(c.prompts, key).split())
            assert "language" in text, f"{name}.{key} does not tell the model to keep the answer's language"
    assert "answer's own language" in Claim.model_fields["text"].description


def test_with_language_records_and_keeps_an_explicit_one() -> None:
    item = Item(id="q", answer="Москву основал Юрий Долгорукий.")
    assert with_language(item).extra == {"language": "ru"}
    assert with_language(item.model_copy(update={"extra": {"language": "xx"}})).extra == {"language": "xx"}
    assert with_language(Item(id="q", answer="42", question="Сколько?")).extra == {"language": "ru"}


def test_russian_claims_stay_russian_and_a_russian_verdict_is_reasked() -> None:
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Москву основал Юрий Долгорукий.", kind="name"),
                       Claim(id="c2", text="Москва основана в 1247 году.", kind="date")]),
        # a verdict in the answer's language is outside the vocabulary: Instructor re-asks
        {"checks": [{"claim_id": "c1", "verdict": "подтверждено", "basis": "reference"},
                    {"claim_id": "c2", "verdict": "противоречит", "basis": "reference"}]},
        ClaimChecks(checks=[
            ClaimCheck(claim_id="c1", verdict="supported", basis="reference", evidence="Юрий Долгорукий"),
            ClaimCheck(claim_id="c2", verdict="contradicted", basis="reference", evidence="1147"),
        ]),
    ])
    result = Judge(backend=llm.backend()).judge(
        {"id": "moscow", "question": "Кто основал Москву и когда?",
         "answer": "Москву основал Юрий Долгорукий в 1247 году.", "reference": "Юрий Долгорукий, 1147 год"})
    assert result.label == 1
    assert [c.verdict for c in result.claims] == ["supported", "contradicted"]
    assert all(detect_language(c.text) == "ru" for c in result.claims)
    assert len(llm.requests) == 3  # the re-ask
    reask = str(llm.requests[2]["messages"])
    assert "подтверждено" in reask and "is not one of" in reask
    assert language_of(result) == "ru"  # from the claims' text when the input did not record it


def test_report_per_language() -> None:
    def j(label: int | None, lang: str | None, human: int | None = None, text: str = "") -> Judgment:
        extra = {"language": lang} if lang else {}
        claims = [ClaimResult(id="c1", text=text)] if text else []
        return Judgment(id="x", label=label, human_label=human, extra=extra, claims=claims,
                        status="judged" if label is not None else "unscored")
    report = by_language([j(1, "ru", 1), j(0, "ru", 1), j(None, "en"), j(0, None, text="Это утверждение на русском."),
                          j(0, None)])
    assert report["ru"] == {"items": 3, "label_1": 1, "label_0": 2, "unscored": 0, "labelled": 2, "agree": 1}
    assert report["en"]["unscored"] == 1
    assert report["?"]["items"] == 1
    assert list(report) == ["?", "en", "ru"]


def test_english_answers_of_the_labelled_data_are_detected_as_english(shared_data) -> None:  # type: ignore[no-untyped-def]
    from judgeflow import read_items

    langs = [detect_language(i.answer) for i in read_items(shared_data / "factual_qa.jsonl") if isinstance(i, Item)]
    detected = [lang for lang in langs if lang is not None]
    assert len(detected) > 900
    assert detected.count("en") / len(detected) >= 0.99  # short answers like "No" or "I am a bird" included


def test_every_judgment_records_the_answer_language_for_per_language_reports(tmp_path, capsys) -> None:
    import json as _json

    from judgeflow.cli import main

    items = tmp_path / "items.jsonl"
    items.write_text(
        '{"id": "ru", "answer": "Москва была основана в 1247 году Юрием Долгоруким.", '
        '"reference": "1147, Юрий Долгорукий", "label": 1}\n'
        '{"id": "en", "answer": "Moscow was founded in 1147 by Yuri Dolgorukiy.", '
        '"reference": "1147, by Yuri Dolgorukiy", "label": 0}\n',
        encoding="utf-8",
    )
    out = tmp_path / "out.jsonl"
    assert main(["run", str(items), "-o", str(out), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    rows = {r["id"]: r for r in map(_json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert rows["ru"]["language"] == "ru" and rows["en"]["language"] == "en"
    capsys.readouterr()
    assert main(["calibrate", str(out), "--by", "language", "--json"]) == 0
    assert {"ru", "en"} <= set(_json.dumps(_json.loads(capsys.readouterr().out)).replace('"', " ").split())
