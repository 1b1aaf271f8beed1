"""A newcomer's rough edges (#39), each seen failing on the old code first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow.cli import main
from judgeflow.criteria import load_criterion
from judgeflow.ensembles.panel import Panel
from judgeflow.errors import CriterionError
from judgeflow.items import read_items
from judgeflow.runs.rows import input_rows

CRITERIA = Path(__file__).parents[2] / "criteria"


def test_samples_name_the_judge_sensibly():
    p = Panel(["openai/gpt-4o-mini"], samples=5, temperature=0.7, api_key="test-key")  # no call is made
    assert p.model == "panel/majority:openai/gpt-4o-mini (5 samples)"  # was panel/majority:openai/gpt-4o-minix5
    two = Panel(["openai/gpt-4o-mini", "openai/gpt-4o"], samples=3, temperature=0.7, api_key="test-key")
    assert two.model == "panel/majority:openai/gpt-4o-mini,openai/gpt-4o (3 samples each)"
    assert Panel(["baseline/lexical", "baseline/rouge-l"]).model == "panel/majority:baseline/lexical,baseline/rouge-l"


def test_criteria_show_lists_what_is_required(capsys):
    assert main(["criteria", "show", "factual_correctness"]) == 0
    out = capsys.readouterr().out
    assert "requires: answer;" in out and "answer, -" not in out


def test_an_unknown_criterion_key_gets_a_did_you_mean(tmp_path):
    text = (CRITERIA / "factual_correctness.toml").read_text()
    bad = tmp_path / "fc.toml"
    bad.write_text(text.replace("[verdicts]", "[verdict]", 1))
    with pytest.raises(CriterionError, match=r"verdict: unknown key; did you mean 'verdicts'\?"):
        load_criterion(bad)
    bad.write_text(text.replace("\ndecompose =", "\ndecompse =", 1))
    with pytest.raises(CriterionError, match=r"prompts.decompse: unknown key; did you mean 'decompose'\?"):
        load_criterion(bad)


def test_a_semicolon_csv_is_read_and_a_wrong_delimiter_gets_a_hint(tmp_path, capsys):
    """A spreadsheet saved in a locale whose decimal mark is the comma: before, refused whole."""
    f = tmp_path / "items.csv"
    f.write_text("id;question;answer;reference\nq1;Who?;Ann;Ann wrote it, in 1990\nq2;When?;1990;\"1990; or 1991\"\n")
    (q1, q2) = list(read_items(f))
    assert (q1.id, q1.answer, q1.reference) == ("q1", "Ann", "Ann wrote it, in 1990")
    assert q2.reference == "1990; or 1991"
    out = tmp_path / "o.jsonl"
    assert main(["run", str(f), "--model", "baseline/lexical", "-o", str(out),
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    assert [r["id"] for r in map(json.loads, out.read_text().splitlines())] == ["q1", "q2"]
    tabbed = tmp_path / "tabbed.csv"
    tabbed.write_text("id|question|answer|reference\nq1|Who?|Ann|Ann\n")
    assert [i.id for i in read_items(tabbed, delimiter="|")] == ["q1"]
    # a delimiter given by hand that the header does not use: the hint names the right one
    assert main(["run", str(f), "--model", "baseline/lexical", "-o", str(tmp_path / "o2.jsonl"), "--delimiter", ",",
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "separated by semicolons" in err and "items.csv:1" in err and "--delimiter ';'" in err


def test_a_misspelt_map_column_gets_its_own_message(tmp_path):
    f = tmp_path / "items.csv"
    f.write_text("id,question,respnse\nq1,Who?,Ann\n")
    (row,) = list(read_items(f, column_map={"answer": "response"}))
    assert "--map answer=response: the row has no column 'response'; did you mean 'respnse'?" in str(row)
    (plain,) = list(read_items(f))
    assert "--map" not in str(plain) and "has no 'answer'" in str(plain)
    f.write_text("id,question,text\nq1,Who?,Ann\n")
    (far,) = list(read_items(f, column_map={"answer": "reply"}))
    assert "--map answer=reply: the row has no column 'reply'; its columns are: id, question, text" in str(far)


def test_the_size_error_advises_what_helps(tmp_path):
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps({"id": "big", "answer": "A", "source": "x" * 500}) + "\n")
    (row,) = list(input_rows(f, max_input_chars=100))
    msg = str(row)
    assert "raise --max-input-chars" in msg and "does not lift this limit" in msg
    assert "--max-source-chars keeps only" not in msg


def test_the_served_graph_asks_only_for_the_item():
    from judgeflow.served import build_served_graph

    schema = build_served_graph().get_input_jsonschema()
    assert list(schema["properties"]) == ["item"]  # was 14 fields, 13 of them the graph's own
