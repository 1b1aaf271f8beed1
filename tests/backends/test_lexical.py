"""The offline `baseline/lexical` judge: unit behaviour, and agreement with human labels on
../shared/data (sanity floors, not exact values)."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest
from fakes import MOSCOW_RIGHT, MOSCOW_WRONG, moscow, moscow_by_whom
from sklearn.metrics import cohen_kappa_score

from judgeflow import CriterionError, Item, Judge, LexicalJudge, list_criteria, load_criterion
from judgeflow.aggregate import aggregate, merge
from judgeflow.backends.lexical import split_claims
from judgeflow.results import Usage
from judgeflow.routing import choose_criterion

lexical = Judge("baseline/lexical")

MOSCOW = moscow_by_whom(id="m")


def test_wrong_year_is_caught() -> None:
    r = lexical.judge(MOSCOW)
    assert r.label == 1 and r.criterion == "factual_correctness"
    (claim,) = r.claims
    assert claim.verdict == "contradicted" and claim.kind == "date" and claim.basis == "reference"
    assert "1247" in claim.reason and "1147" in claim.reason


def test_right_year_and_name_is_0() -> None:
    assert lexical.judge(dict(MOSCOW, answer="Moscow was founded in 1147 by Yuri Dolgorukiy.")).label == 0


def test_number_only_reference_matching_the_answer_is_0() -> None:
    item = moscow(id="y", answer=MOSCOW_RIGHT, reference="1147")
    assert lexical.judge(item).label == 0
    assert lexical.judge(dict(item, answer=MOSCOW_WRONG)).label == 1


def test_russian_wrong_year_is_caught() -> None:
    r = lexical.judge({"id": "ru", "question": "Когда и кем основана Москва?",
                       "answer": "Москва основана в 1247 году Юрием Долгоруким", "reference": "1147, Юрий Долгорукий"})
    assert r.label == 1 and r.claims[0].verdict == "contradicted" and "1247" in r.claims[0].reason


@pytest.mark.parametrize("answer", ["I have no comment.", "I don't know", "Не знаю.", "  ", "Unknown."])
def test_refusal_has_no_claims_and_is_0(answer: str) -> None:
    assert split_claims(answer) == []
    r = lexical.judge(dict(MOSCOW, answer=answer or "x")) if answer.strip() else None
    if r is not None:
        assert r.label == 0 and r.claims == [] and "no checkable claims" in (r.reason or "")


def test_claims_are_sentences_with_kinds() -> None:
    claims = split_claims("Paris is the capital. It has 2.1 million people; Victor Hugo lived there. Born in May 1802!")
    assert [c.id for c in claims] == ["c1", "c2", "c3", "c4"]
    assert [c.kind for c in claims] == ["other", "number", "name", "date"]


def test_a_lead_in_line_is_not_a_claim() -> None:
    answer = "Here is a concise summary of the passage:\nThe Eiffel Tower stands in Paris."
    assert [c.text for c in split_claims(answer)] == ["The Eiffel Tower stands in Paris."]
    r = lexical.judge({"id": "lead", "answer": answer, "source": "The Eiffel Tower stands in Paris, France."})
    assert r.label == 0


def test_thousands_separator_is_the_same_number() -> None:
    item = {"id": "n", "answer": "The stadium holds 60,000 people.", "source": "The stadium holds 60000 people."}
    assert lexical.judge(item).label == 0
    assert lexical.judge(dict(item, answer="The stadium holds 80,000 people.")).label == 1


def test_source_faithfulness_unsupported_detail_is_1() -> None:
    src = "The Eiffel Tower stands in Paris. It was completed in 1889."
    ok = lexical.judge({"id": "s1", "answer": "The Eiffel Tower stands in Paris.", "source": src})
    bad = lexical.judge({"id": "s2", "answer": "The Eiffel Tower stands in Paris. Napoleon painted it green.",
                         "source": src})
    assert ok.label == 0 and ok.claims[0].evidence == "The Eiffel Tower stands in Paris."
    assert bad.label == 1 and [c.verdict for c in bad.claims] == ["supported", "not_found"]


def test_spec_compliance_value_change_is_a_violation() -> None:
    spec = "The API must return JSON. Requests time out after 30 seconds."
    ok = lexical.judge({"id": "a1", "answer": "The API returns JSON with a 30 second timeout.", "spec": spec})
    bad = lexical.judge({"id": "a2", "answer": "The API returns JSON with a 60 second timeout.", "spec": spec})
    assert (ok.criterion, ok.label) == ("spec_compliance", 0)
    assert bad.label == 1 and bad.claims[0].verdict == "violates_spec"


@pytest.mark.parametrize("name", list_criteria())
def test_verdicts_are_in_each_criterion_vocabulary(name: str) -> None:
    crit = load_criterion(name)
    item = Item(id="v", question="Q?", answer="Paris is in France. It has 99 bridges. Zorro lives there.",
                reference="Paris, France", source=["Paris is the capital of France."], spec="Mention Paris.")
    backend = LexicalJudge()

    async def go() -> list[Any]:
        claims = await backend.decompose(item, crit, Usage(), [])
        return await backend.check(item, crit, claims, Usage(), [])

    checks = asyncio.run(go())
    assert checks and all(c.verdict in crit.verdicts and c.basis in crit.bases for c in checks)


def test_a_role_naming_no_verdict_fails_when_the_criterion_loads(tmp_path: Path) -> None:
    """A renamed verdict that [roles] still names is caught at load (so by `criteria validate`), not at run time."""
    src = Path(load_criterion("factual_correctness").path).read_text(encoding="utf-8")
    p = tmp_path / "custom.toml"
    p.write_text(src.replace("supported =", "fine ="), encoding="utf-8")
    with pytest.raises(CriterionError, match=r"roles.pass: 'supported' is not among verdicts"):
        load_criterion(str(p))


def test_a_criterion_with_its_own_verdict_names_is_judged_offline(tmp_path: Path) -> None:
    """#36: offline judges mapped verdicts by a hard-coded synonym list, so a criterion with its own
    names passed `criteria validate` and failed at run time (seen failing on the old code)."""
    src = Path(load_criterion("factual_correctness").path).read_text(encoding="utf-8")
    src = src[:src.index("[roles]")] + src[src.index("[verdicts]"):]  # no [roles]: the defaults apply
    for old, new in (("supported", "fine"), ("contradicted", "clash"), ("unverifiable", "open_question")):
        src = src.replace(f'"{old}"', f'"{new}"').replace(f"\n{old} =", f"\n{new} =")
    p = tmp_path / "own_names.toml"
    p.write_text(src, encoding="utf-8")
    crit = load_criterion(str(p))
    assert crit.verdict_roles()["pass"] == "fine" and crit.verdict_roles()["conflict"] == "clash"
    for model in ("baseline/lexical", "baseline/rouge-l"):
        result = Judge(model, criterion=str(p)).judge(MOSCOW)
        assert result.status == "judged" and {c.verdict for c in result.claims} <= set(crit.verdicts), model


def test_deterministic_and_free() -> None:
    a, b = lexical.judge(MOSCOW), lexical.judge(MOSCOW)
    assert a.model_dump(exclude={"trace"}) == b.model_dump(exclude={"trace"})
    assert a.usage.calls == 0 and a.model == "baseline/lexical"


# --- agreement with human labels on ../shared/data -----------------------------------------------


def lexical_labels(rows: list[dict[str, Any]]) -> list[int | None]:
    """The labels the graph would give, computed by calling the same steps directly (fast)."""
    backend = LexicalJudge()

    async def go() -> list[int | None]:
        out = []
        for row in rows:
            item = Item.from_record({k: v for k, v in row.items() if k != "meta"})  # a judge never sees meta
            crit, _ = choose_criterion(item)
            claims = await backend.decompose(item, crit, Usage(), [])
            checks = await backend.check(item, crit, claims, Usage(), []) if claims else []
            out.append(aggregate(merge(claims, checks, crit), crit)[0])
        return out

    return asyncio.run(go())


@lru_cache(maxsize=1)
def judged_by_dataset(data_dir: str) -> dict[str, tuple[list[dict[str, Any]], list[int | None]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name in ("factual_qa.jsonl", "faithfulness.jsonl"):
        for line in (Path(data_dir) / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            groups[row["dataset"]].append(row)
    return {d: (rows, lexical_labels(rows)) for d, rows in groups.items()}


@pytest.mark.parametrize("dataset, floor", [
    ("halueval_qa", 0.5), ("lfqa_verification", 0.4), ("truthfulqa", 0.05), ("faithbench", 0.05),
])
def test_kappa_with_human_labels_is_above_floor(shared_data: Path, dataset: str, floor: float) -> None:
    rows, predicted = judged_by_dataset(str(shared_data))[dataset]
    assert None not in predicted  # the offline judge always decides
    kappa = cohen_kappa_score([r["label"] for r in rows], predicted)
    assert kappa > floor, f"{dataset}: kappa {kappa:.3f}"


def test_graph_gives_the_same_labels_as_the_direct_steps() -> None:
    """Rows of each kind (the shipped factual sample, source summaries), not ../shared's data: the
    point is the graph against the direct steps, which any labelled rows show (a plain clone runs it)."""
    from fakes.labelled import factual_rows, faithfulness_rows

    for rows in (factual_rows(15), faithfulness_rows(15)):
        predicted = lexical_labels(rows)
        results = lexical.judge_many([{k: v for k, v in r.items() if k != "meta"} for r in rows])
        assert [j.label for j in results] == predicted
        assert {0, 1} <= set(predicted)  # both outcomes compared, not one
        assert all(j.id == str(r["id"]) for j, r in zip(results, rows))


def test_an_extra_sentence_after_the_reference_answer_is_not_an_error() -> None:
    # factual_correctness: correct extra details are not errors, even offline
    assert lexical.judge({"id": "x1", "answer": "Paris. It is on the Seine.", "reference": "Paris"}).label == 0
    assert lexical.judge({"id": "x2", "answer": "Lyon. It is on the Rhone.", "reference": "Paris"}).label == 1


def test_document_headers_are_not_evidence_numbers() -> None:
    src = ["Apples cost 5 dollars a kilo.", "Pears cost 7 dollars a kilo."]
    r = lexical.judge({"id": "d1", "answer": "Apples cost 1 dollar a kilo.", "source": src})
    assert r.label == 1 and r.claims[0].verdict == "contradicted"


def test_a_number_the_spec_does_not_discuss_is_an_extra_not_a_violation() -> None:
    spec = "Raise the upload limit from 20 MB to 50 MB. Mention the ticket."
    ok = lexical.judge({"id": "s1", "answer": "The upload limit is now 50 MB. See ticket 4711.", "spec": spec})
    bad = lexical.judge({"id": "s2", "answer": "The upload limit is now 70 MB.", "spec": spec})
    assert ok.label == 0 and [c.verdict for c in ok.claims] == ["complies", "extra"]
    assert bad.label == 1


def test_number_normaliser_keeps_3_10_distinct_from_3_1() -> None:
    """Python 3.10 is not Python 3.1 (issue 11); decimal commas and zero fractions still normalise."""
    from judgeflow.text import numbers

    assert numbers("Python 3.10") == {"3.10"} and numbers("Python 3.1") == {"3.1"}
    assert numbers("2,5 kg") == numbers("2.5 kg") == {"2.5"}
    assert numbers("5.0 and 5.00") == {"5"} and numbers("1,000 people") == {"1000"}
    from judgeflow import Judge

    r = Judge("baseline/lexical").judge({"id": "v", "question": "Which Python added match statements?",
                                         "answer": "Python 3.1 added them.", "reference": "Python 3.10"})
    assert r.label == 1, r.reason
