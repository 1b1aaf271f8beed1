"""Items: reading JSONL and CSV, aliases, source shapes, labels, and bad rows."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from langchain_core.documents import Document

from judgeflow import InvalidItemError, Item, load_items, read_items
from judgeflow.items import ALIASES, parse_label


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.mark.parametrize("field, alias", [
    ("source", "context"), ("source", "contexts"), ("source", "documents"),
    ("reference", "ground_truth"), ("answer", "response"), ("question", "task"),
    ("spec", "requirements"), ("id", "item_id"), ("label", "is_hallucination"),
])
def test_alias_is_resolved_and_recorded(field: str, alias: str) -> None:
    record = {"id": "a1", "answer": "x", alias: "1" if field == "label" else "value"}
    if field == "id":
        record.pop("id")
    if field == "answer":
        record.pop("answer")
    item = Item.from_record(record)
    assert item.aliases == {field: alias}
    got = getattr(item, field)
    assert got == (["value"] if field == "source" else 1 if field == "label" else "value")
    assert alias not in item.extra


def test_canonical_name_wins_over_alias_and_alias_stays_extra() -> None:
    item = Item.from_record({"id": "1", "answer": "a", "response": "other", "context": "ctx"})
    assert item.answer == "a" and item.aliases == {"source": "context"}
    assert item.extra == {"response": "other"}


def test_blank_canonical_field_falls_back_to_alias() -> None:
    item = Item.from_record({"id": "1", "answer": "", "response": "the answer"})
    assert item.answer == "the answer" and item.aliases == {"answer": "response"}


@pytest.mark.parametrize("value, expected", [
    pytest.param("one doc", ["one doc"], id="str"),
    pytest.param(["d1", "d2"], ["d1", "d2"], id="list-of-str"),
    pytest.param([{"page_content": "p"}, {"text": "t", "title": "T"}], ["p", "T\nt"], id="dicts"),
    pytest.param('["a", "b"]', ["a", "b"], id="json-list-in-a-string"),
    pytest.param("[not json]", ["[not json]"], id="bracketed-text-kept"),
])
def test_source_shapes(value: object, expected: list[str]) -> None:
    assert Item.from_record({"id": "s", "answer": "a", "source": value}).source == expected


def test_source_as_langchain_documents() -> None:
    docs = [Document(page_content="Paris is in France."),
            Document(page_content="It has the Eiffel Tower.", metadata={"title": "Paris"})]
    item = Item.from_record({"id": "d", "answer": "a", "documents": docs})
    assert item.source == ["Paris is in France.", "Paris\nIt has the Eiffel Tower."]
    assert item.aliases == {"source": "documents"}
    assert item.source_text is not None and "[Document 2]" in item.source_text


def test_source_of_bad_type_names_field_and_shapes() -> None:
    with pytest.raises(InvalidItemError) as e:
        Item.from_record({"id": "bad", "answer": "a", "source": [1, 2]})
    assert e.value.field == "source" and "item 'bad'" in str(e.value)
    assert "langchain-core Documents" in str(e.value)


@pytest.mark.parametrize("raw, label", [
    (1, 1), (0, 0), (True, 1), (False, 0), ("true", 1), ("false", 0), ("yes", 1), ("no", 0),
    ("YES", 1), (" No ", 0), ("1", 1), ("0", 0), ("1.0", 1), ("0.0", 0), (1.0, 1), ("", None), (None, None),
])
def test_labels(raw: object, label: int | None) -> None:
    assert parse_label(raw) == label


def test_bad_label_is_an_error_naming_the_field() -> None:
    with pytest.raises(InvalidItemError) as e:
        Item.from_record({"id": "l", "answer": "a", "label": "maybe"})
    assert e.value.field == "label" and "'maybe'" in str(e.value)


def test_missing_answer_names_the_aliases(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "items.jsonl", [{"id": "q-1", "question": "?", "reference": "r"}])
    (err,) = list(read_items(path))
    assert isinstance(err, InvalidItemError)
    assert err.field == "answer" and err.line == 1 and err.item_id == "q-1"
    msg = str(err)
    assert msg.startswith(f"{path}:1: item 'q-1'")
    for alias in ("response", "output", "prediction"):
        assert alias in msg


def test_missing_id_uses_the_line_and_says_how_to_fix() -> None:
    item = Item.from_record({"answer": "a"}, path="f.jsonl", line=3)
    assert item.id == "line-3"
    with pytest.raises(InvalidItemError) as e:
        Item.from_record({"answer": "a"})
    assert e.value.field == "id" and '"id"' in str(e.value)


def test_bad_mode_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidItemError) as e:
        Item.from_record({"id": "m", "answer": "a", "mode": "strict"})
    assert e.value.field == "mode" and "factual, faithfulness, spec" in str(e.value)
    assert Item.from_record({"id": "m", "answer": "a", "mode": "Faithful"}).mode == "faithfulness"
    assert Item.from_record({"id": "m", "answer": "a", "mode": "auto"}).mode is None


def test_jsonl_broken_line_becomes_an_error_row_and_the_rest_are_read(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "items.jsonl", [
        {"id": "a", "answer": "x", "reference": "r"},
        '{"id": "b", "answer": ',
        "",
        {"id": "c", "answer": "y", "reference": "r"},
        '["not", "an", "object"]',
    ])
    rows = list(read_items(path))
    assert len(rows) == 4
    assert [r.id for r in rows if isinstance(r, Item)] == ["a", "c"]
    broken, not_object = rows[1], rows[3]
    assert isinstance(broken, InvalidItemError) and broken.line == 2 and broken.path == str(path)
    assert str(broken).startswith(f"{path}:2: not valid JSON")
    assert isinstance(not_object, InvalidItemError) and not_object.line == 5
    assert "JSON object" in str(not_object)
    with pytest.raises(InvalidItemError, match=":2: not valid JSON"):
        load_items(path)


@pytest.mark.parametrize(("line", "cause"), [
    ('{"id": "q3", "answer": "x", "reference": "r",}', "trailing comma"),
    ("{'id': 'q3', 'answer': 'x', 'reference': 'r'}", "single quotes"),
    ('{"id": "q3", "answer": "x", "reference": None}', "null/true/false"),
    ('\ufeff{"id": "q3", "answer": "x", "reference": "r"}', "byte-order mark"),
])
def test_a_broken_line_keeps_its_id_and_names_the_likely_cause(tmp_path: Path, line: str, cause: str) -> None:
    """Before, such a row became `line-2` (its result no longer joined to its label) and the
    message never said why."""
    path = write_jsonl(tmp_path / "items.jsonl", [{"id": "a", "answer": "x", "reference": "r"}, line])
    broken = list(read_items(path))[1]
    assert isinstance(broken, InvalidItemError) and broken.item_id == "q3" and broken.line == 2
    assert cause in str(broken) and str(broken).startswith(f"{path}:2: not valid JSON")


def test_a_latin1_line_keeps_its_id_and_names_the_encoding(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes('{"id": "a", "answer": "caf\u00e9", "reference": "r"}\n'.encode()
                     + '{"id": "q2", "answer": "caf\u00e9", "reference": "r"}\n'.encode("latin-1"))
    rows = list(read_items(path))
    assert isinstance(rows[0], Item)
    assert isinstance(rows[1], InvalidItemError) and rows[1].item_id == "q2" and "not UTF-8" in str(rows[1])
    assert "iconv" in str(rows[1])


def test_an_unreadable_id_is_not_guessed(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "items.jsonl", ['{"answer": "x", "reference": "r",}'])
    broken = next(iter(read_items(path)))
    assert isinstance(broken, InvalidItemError) and broken.item_id is None


def test_jsonl_extra_fields_and_label_carried(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "items.jsonl", [
        {"id": 7, "question": "q", "answer": "a", "ground_truth": "g", "label": "yes",
         "dataset": "halueval_qa", "meta": {"k": [1, 2]}},
    ])
    (item,) = load_items(path)
    assert item.id == "7" and item.reference == "g" and item.label == 1
    assert item.extra == {"dataset": "halueval_qa", "meta": {"k": [1, 2]}}
    assert item.aliases == {"reference": "ground_truth"}


def test_csv_with_json_list_source_aliases_labels_and_bad_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "items.csv", [
        {"id": "r1", "task": "Q?", "response": "ans", "contexts": json.dumps(["doc one", "doc two"]),
         "label": "no", "dataset": "lfqa"},
        {"id": "r2", "task": "Q?", "response": "", "contexts": "plain source", "label": "true",
         "dataset": "lfqa"},
        {"id": "r3", "task": "Q?", "response": "ans3", "contexts": "plain source", "label": "",
         "dataset": "lfqa"},
    ])
    r1, r2, r3 = list(read_items(path))
    assert isinstance(r1, Item) and r1.source == ["doc one", "doc two"] and r1.label == 0
    assert r1.aliases == {"question": "task", "answer": "response", "source": "contexts"}
    assert r1.extra == {"dataset": "lfqa"}
    assert isinstance(r2, InvalidItemError) and r2.line == 3 and r2.field == "answer"
    assert str(r2).startswith(f"{path}:3: item 'r2' has no 'answer'")
    assert isinstance(r3, Item) and r3.source == ["plain source"] and r3.label is None


def test_csv_multiline_cell_reports_the_physical_end_line(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "items.csv", [
        {"id": "m1", "answer": "line one\nline two", "reference": "r"},
        {"id": "m2", "answer": "", "reference": "r"},
    ])
    first, second = list(read_items(path))
    assert isinstance(first, Item) and first.answer == "line one\nline two"
    assert isinstance(second, InvalidItemError) and second.line == 4


def test_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InvalidItemError, match="no such file"):
        list(read_items(tmp_path / "nope.jsonl"))


def test_alias_table_covers_the_issue_names() -> None:
    assert {"context", "contexts", "documents"} <= set(ALIASES["source"])
    assert "ground_truth" in ALIASES["reference"] and "response" in ALIASES["answer"]


def test_jsonl_with_a_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_text(json.dumps({"id": "b", "answer": "a", "reference": "r"}) + "\n", encoding="utf-8-sig")
    assert [i.id for i in load_items(path)] == ["b"]


def test_a_json_array_file_is_read_item_by_item(tmp_path) -> None:
    f = tmp_path / "items.json"
    f.write_text('[{"id": "a", "answer": "x", "reference": "y"}, {"id": "b"}, 3]')
    rows = list(read_items(f))
    assert isinstance(rows[0], Item) and rows[0].id == "a"
    assert isinstance(rows[1], InvalidItemError) and rows[1].line == 2 and rows[1].field == "answer"
    assert isinstance(rows[2], InvalidItemError) and rows[2].line == 3
    (tmp_path / "bad.json").write_text('{"id": 1}')
    with pytest.raises(InvalidItemError, match="array of item objects"):
        list(read_items(tmp_path / "bad.json"))


def test_valid_and_invalid_rows_keep_the_same_other_fields() -> None:
    """A row with both `source` and `context` judges `source`; `context` is an other field on the
    valid row AND on the invalid one (it was dropped from invalid rows before)."""
    from judgeflow import Judge

    row = {"id": "q", "source": "Paris is in France.", "context": "unused", "note": "n"}
    judge = Judge("baseline/lexical")
    valid = judge.judge({**row, "answer": "Paris is in France."})
    invalid = judge.judge(row)  # no answer
    assert invalid.status == "invalid" and valid.status == "judged"
    assert valid.extra == {"context": "unused", "note": "n"}
    assert {k: v for k, v in invalid.extra.items() if k != "line"} == valid.extra
