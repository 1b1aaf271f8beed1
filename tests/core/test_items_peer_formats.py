"""Rows written for other evaluation tools are judged with the right criterion (issue #11, point 3).

Each row's answer carries an unsupported claim (21% and three new offices, against a source
saying 12%), so the offline judge labels it 1 when it is judged against the source. Judged
against the reference alone (the old routing of DeepEval rows) the same answer passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judgeflow import Item, Judge, read_items

QUESTION = "What did the report say about revenue?"
ANSWER = "Revenue rose 21% in 2023, and the company opened three new offices."
DOCS = ["The 2023 annual report: revenue rose 12%, driven mainly by cloud sales.", "Headcount was flat."]
GOLD = "Revenue rose 21%."  # a reference the answer agrees with: only the source shows the error


@pytest.fixture(scope="module")
def judge() -> Judge:
    return Judge(model="baseline/lexical")


def judged(judge: Judge, row: dict | Item):
    out = judge.judge(row)
    assert out.status == "judged", out.error
    return out


def test_ragas_row(judge: Judge) -> None:
    row = {"id": "ragas", "user_input": QUESTION, "retrieved_contexts": DOCS, "response": ANSWER, "reference": GOLD}
    item = Item.from_record(row)
    assert (item.question, item.answer, item.source, item.reference) == (QUESTION, ANSWER, DOCS, GOLD)
    out = judged(judge, row)
    assert (out.criterion, out.routed_by, out.label) == ("source_faithfulness", "source present", 1)


def test_deepeval_row(judge: Judge) -> None:
    row = {"id": "deepeval", "input": QUESTION, "actual_output": ANSWER, "retrieval_context": DOCS,
           "expected_output": GOLD}
    item = Item.from_record(row)
    assert item.source == DOCS and item.aliases["source"] == "retrieval_context"
    out = judged(judge, row)
    assert (out.criterion, out.label) == ("source_faithfulness", 1)
    # without expected_output the row is still judged; DeepEval's `context` is read too
    row.pop("expected_output")
    assert (judged(judge, row).criterion, judged(judge, row).label) == ("source_faithfulness", 1)
    row2 = {"id": "deepeval-ctx", "input": QUESTION, "actual_output": ANSWER, "context": DOCS}
    assert judged(judge, row2).label == 1
    # both: the retrieval context (what the answer was written from) is the source; context is carried
    both = Item.from_record({**row, "context": ["other"]})
    assert both.source == DOCS and both.extra == {"context": ["other"]}


def test_openevals_row(judge: Judge) -> None:
    row = {"id": "openevals", "inputs": QUESTION, "outputs": ANSWER, "reference_outputs": GOLD, "context": DOCS}
    item = Item.from_record(row)
    assert (item.question, item.answer, item.reference, item.source) == (QUESTION, ANSWER, GOLD, DOCS)
    out = judged(judge, row)
    assert (out.criterion, out.label) == ("source_faithfulness", 1)
    # dict-shaped, as openevals evaluators are called
    row = {"id": "openevals-dicts", "inputs": {"question": QUESTION}, "outputs": {"answer": ANSWER},
           "reference_outputs": {"answer": GOLD}, "context": DOCS}
    item = Item.from_record(row)
    assert (item.question, item.answer, item.reference) == (QUESTION, ANSWER, GOLD)
    assert item.aliases["reference"] == "reference_outputs.answer"
    assert judged(judge, row).label == 1


def test_langsmith_example_row(judge: Judge) -> None:
    row = {"id": "0b6c3a1e-langsmith", "inputs": {"question": QUESTION, "context": DOCS},
           "outputs": {"output": ANSWER, "run_id": "r-17"}, "metadata": {"split": "test"}}
    item = Item.from_record(row)
    assert (item.question, item.answer, item.source) == (QUESTION, ANSWER, DOCS)
    assert item.aliases == {"question": "inputs.question", "source": "inputs.context", "answer": "outputs.output"}
    assert item.extra == {"outputs": {"run_id": "r-17"}, "metadata": {"split": "test"}}  # carried through
    out = judged(judge, row)
    assert (out.criterion, out.routed_by, out.label) == ("source_faithfulness", "source present", 1)
    # only a reference: factual correctness, and the wrong year is caught
    row = {"id": "ls-2", "inputs": {"question": "When was Moscow founded?"},
           "outputs": {"answer": "Moscow was founded in 1247."}, "reference_outputs": {"answer": "In 1147."}}
    out = judged(judge, row)
    assert (out.criterion, out.label) == ("factual_correctness", 1)


def test_chat_inputs_are_the_question_as_json() -> None:
    msgs = [{"role": "user", "content": "When was Moscow founded?"}]
    item = Item.from_record({"id": "chat", "inputs": {"messages": msgs}, "outputs": "In 1247.", "reference": "1147"})
    assert item.question == '[{"role": "user", "content": "When was Moscow founded?"}]'


def test_an_answer_that_is_a_json_object_stays_whole() -> None:
    item = Item.from_record({"id": "j", "outputs": {"name": "Widget", "price": 3}, "reference": "x"})
    assert item.answer == '{"name": "Widget", "price": 3}'


def test_pandas_list_column_is_read_back_as_a_list(tmp_path: Path, judge: Judge) -> None:
    pd = pytest.importorskip("pandas")
    path = tmp_path / "ragas.csv"
    pd.DataFrame([{"id": "p1", "user_input": QUESTION, "retrieved_contexts": DOCS, "response": ANSWER,
                   "reference": GOLD},
                  {"id": "p2", "user_input": QUESTION, "retrieved_contexts": ["It's [not] a list: ['x'"],
                   "response": ANSWER, "reference": GOLD}]).to_csv(path, index=False)
    assert "['The 2023 annual report" in path.read_text()  # pandas writes the Python repr
    first, second = read_items(path)
    assert isinstance(first, Item) and first.source == DOCS  # two documents, no brackets or quotes
    assert isinstance(second, Item) and second.source == ["It's [not] a list: ['x'"]
    out = judged(judge, first)
    assert out.label == 1


@pytest.mark.parametrize("cell", ["['a', 1]", "['a'] + ['b']", "[__import__('os')]", "['a'"])
def test_only_a_whole_list_of_strings_literal_is_a_list(cell: str) -> None:
    assert Item.from_record({"id": "c", "answer": "a", "source": cell}).source == [cell]


def test_one_alias_table_for_files_and_integrations() -> None:
    """A RetrievalQA output row reads the same from a file as through integrations.langchain.from_dict,
    and a LangSmith run the same as through its evaluator's record: both use items.ALIASES."""
    from judgeflow.integrations.langchain import from_dict
    from judgeflow.integrations.langsmith import to_record

    row = {"id": "qa", "query": QUESTION, "result": ANSWER, "source_documents": DOCS}
    assert Item.from_record(row) == from_dict(row)
    assert (from_dict(row).answer, from_dict(row).source) == (ANSWER, DOCS)
    run = {"inputs": {"question": QUESTION, "answer": "stale"}, "outputs": {"result": ANSWER},
           "reference_outputs": {"output": GOLD}}
    item = Item.from_record({"id": "ls", **run})
    assert (item.question, item.answer, item.reference) == (QUESTION, ANSWER, GOLD)
    rec = to_record(run["inputs"], run["outputs"], run["reference_outputs"])
    assert (rec["question"], rec["answer"], rec["reference"]) == (item.question, item.answer, item.reference)
