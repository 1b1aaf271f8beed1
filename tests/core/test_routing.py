"""The routing table: run criterion > run mode > item criterion > item mode > source > spec >
reference > a clear error; `routed_by` says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from judgeflow import InvalidItemError, Item, Judge, load_criterion
from judgeflow.routing import choose_criterion

ALL = {"source": ["src"], "spec": "spec", "reference": "ref"}


def item(**fields: Any) -> Item:
    return Item.from_record({"id": "it-1", "answer": "An answer.", **fields})


@pytest.mark.parametrize("fields, run, expected, why", [
    # run-level criterion beats everything, including the item's own criterion and mode
    pytest.param({**ALL, "criterion": "spec_compliance", "mode": "spec"},
                 {"criterion": "reference_faithfulness", "mode": "faithfulness"},
                 "reference_faithfulness", "criterion reference_faithfulness set for the run", id="run-criterion"),
    # run-level mode beats the item's criterion and mode
    pytest.param({**ALL, "criterion": "spec_compliance", "mode": "spec"}, {"mode": "factual"},
                 "factual_correctness", "mode factual set for the run", id="run-mode"),
    # 'auto' is no mode at all
    pytest.param({**ALL, "criterion": "spec_compliance", "mode": "factual"}, {"mode": "auto"},
                 "spec_compliance", "item field criterion=spec_compliance", id="run-auto-defers"),
    pytest.param({**ALL, "criterion": "reference_faithfulness", "mode": "spec"}, {},
                 "reference_faithfulness", "item field criterion=reference_faithfulness", id="item-criterion"),
    pytest.param({**ALL, "mode": "factual"}, {}, "factual_correctness", "item field mode=factual", id="item-mode"),
    pytest.param(ALL, {}, "source_faithfulness", "source present", id="source"),
    pytest.param({"spec": "s", "reference": "r"}, {}, "spec_compliance", "spec present", id="spec"),
    pytest.param({"reference": "r"}, {}, "factual_correctness", "reference present", id="reference"),
    pytest.param({"context": "c"}, {}, "source_faithfulness", "source present", id="source-by-alias"),
])
def test_routing_table(fields: dict[str, Any], run: dict[str, Any], expected: str, why: str) -> None:
    crit = run.get("criterion")
    chosen, routed_by = choose_criterion(
        item(**fields), criterion=load_criterion(crit) if crit else None, mode=run.get("mode"))
    assert chosen.name == expected
    assert routed_by == why


def test_nothing_to_judge_against_is_a_clear_error() -> None:
    with pytest.raises(InvalidItemError) as e:
        choose_criterion(item(question="Q?"))
    msg = str(e.value)
    assert e.value.item_id == "it-1" and "item 'it-1'" in msg
    assert all(f in msg for f in ("source", "reference", "spec")) and "mode=factual" in msg


def test_factual_mode_without_reference_judges_by_knowledge() -> None:
    chosen, why = choose_criterion(item(question="Q?"), mode="factual")
    assert chosen.name == "factual_correctness" and why == "mode factual set for the run"


@pytest.mark.parametrize("fields, run_mode, missing, crit, alternative", [
    pytest.param({"reference": "r"}, "faithfulness", "source", "source_faithfulness", "--mode factual",
                 id="faithfulness-without-source"),
    pytest.param({"source": "s"}, "spec", "spec", "spec_compliance", "--mode faithfulness",
                 id="spec-without-spec"),
    pytest.param({"reference": "r", "mode": "spec"}, None, "spec", "spec_compliance", "--mode factual",
                 id="item-mode-without-field"),
])
def test_item_lacking_required_field_names_id_field_and_alternative(
    fields: dict[str, Any], run_mode: str | None, missing: str, crit: str, alternative: str
) -> None:
    with pytest.raises(InvalidItemError) as e:
        choose_criterion(item(**fields), mode=run_mode)
    assert e.value.field == missing and e.value.item_id == "it-1"
    msg = str(e.value)
    assert f"item 'it-1' has no '{missing}'" in msg and f"criterion '{crit}' requires it" in msg
    assert alternative in msg


def test_run_criterion_requirement_is_checked_too() -> None:
    with pytest.raises(InvalidItemError, match="'reference_faithfulness' requires it"):
        choose_criterion(item(source="s"), criterion=load_criterion("reference_faithfulness"))


def test_unknown_item_criterion_is_an_invalid_row_naming_the_item() -> None:
    result = Judge("baseline/lexical").judge({"id": "q9", "answer": "a", "reference": "r",
                                              "criterion": "no_such_criterion"})
    assert result.status == "invalid" and result.label is None
    assert "q9" in (result.error or "") and "no_such_criterion" in (result.error or "")


def test_item_criterion_by_path(tmp_path: Path) -> None:
    src = Path(load_criterion("factual_correctness").path).read_text(encoding="utf-8")
    p = tmp_path / "mine.toml"
    p.write_text(src.replace('name = "factual_correctness"', 'name = "mine"'), encoding="utf-8")
    chosen, why = choose_criterion(item(reference="r", criterion=str(p)))
    assert chosen.name == "mine" and why == f"item field criterion={p}"


@pytest.mark.parametrize("judge_kwargs, record, criterion, routed_by, status", [
    ({}, {"reference": "Paris"}, "factual_correctness", "reference present", "judged"),
    ({}, {"source": "Paris is the capital of France."}, "source_faithfulness", "source present", "judged"),
    ({"mode": "factual"}, {"source": "Paris is the capital of France.", "reference": "Paris"},
     "factual_correctness", "mode factual set for the run", "judged"),
    ({"criterion": "reference_faithfulness"}, {"reference": "Paris"}, "reference_faithfulness",
     "criterion reference_faithfulness set for the run", "judged"),
    ({"mode": "spec"}, {"reference": "Paris"}, None, None, "invalid"),
    ({}, {}, None, None, "invalid"),
])
def test_judgment_records_criterion_and_why(
    judge_kwargs: dict[str, Any], record: dict[str, Any], criterion: str | None, routed_by: str | None, status: str
) -> None:
    result = Judge("baseline/lexical", **judge_kwargs).judge(
        {"id": "cap", "question": "What is the capital of France?", "answer": "Paris.", **record})
    assert (result.criterion, result.routed_by, result.status) == (criterion, routed_by, status)
    if status == "invalid":
        assert result.label is None and "item 'cap'" in (result.error or "")
