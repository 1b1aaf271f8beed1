"""Items from LangChain Documents, chain output dicts and pandas DataFrames."""

from __future__ import annotations

import builtins
import math

import pytest
from fakes import MOSCOW_QUESTION, MOSCOW_WRONG, FakeLLM, moscow_checks, moscow_claims
from langchain_core.documents import Document
from langchain_core.messages import AIMessage

from judgeflow import ConfigError, InvalidItemError, Judge
from judgeflow.integrations.langchain import from_dataframe, from_dict, from_langchain

DOCS = [Document(page_content="Moscow was first mentioned in 1147.", metadata={"title": "Moscow"}),
        Document(page_content="Yuri Dolgorukiy was prince of Suzdal.")]


def test_question_documents_and_answer() -> None:
    item = from_langchain(MOSCOW_QUESTION, DOCS, AIMessage(content="In 1147."), id="q1")
    assert item.id == "q1" and item.answer == "In 1147."
    assert item.source == ["Moscow\nMoscow was first mentioned in 1147.", "Yuri Dolgorukiy was prince of Suzdal."]
    assert item.question == MOSCOW_QUESTION
    again = from_langchain(MOSCOW_QUESTION, iter(DOCS), "In 1147.")
    assert again.id.startswith("lc-") and again.id == from_langchain(MOSCOW_QUESTION, DOCS, "In 1147.").id


@pytest.mark.parametrize("record", [
    {"input": "When?", "context": DOCS, "answer": "In 1147."},                      # create_retrieval_chain
    {"query": "When?", "result": "In 1147.", "source_documents": DOCS},             # RetrievalQA
    {"question": "When?", "output": "In 1147.", "documents": [d.page_content for d in DOCS]},
    {"question": "When?", "answer": AIMessage(content="In 1147."),
     "context": [{"page_content": d.page_content} for d in DOCS]},
], ids=["retrieval_chain", "retrieval_qa", "strings", "dicts_and_message"])
def test_chain_output_dicts(record: dict) -> None:
    item = from_dict(record)
    assert item.question == "When?" and item.answer == "In 1147."
    assert len(item.source or []) == 2 and item.source is not None and "1147" in item.source[0]


def test_dict_keeps_other_fields_and_rejects_no_answer() -> None:
    item = from_dict({"id": 7, "input": "q", "answer": "a", "reference": "r", "run": "x"})
    assert item.id == "7" and item.reference == "r" and item.extra == {"run": "x"}
    with pytest.raises(InvalidItemError, match="answer"):
        from_dict({"input": "q", "context": DOCS})
    with pytest.raises(InvalidItemError, match="source"):
        from_dict({"input": "q", "answer": "a", "context": [object()]})


def test_dataframe_rows_with_nan_cells() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame([
        {"qid": "a", "question": "When?", "answer": "In 1147.", "context": ["Moscow: 1147."], "reference": math.nan, "label": 0},
        {"qid": "b", "question": "Who?", "answer": "Yuri.", "context": None, "reference": "Yuri Dolgorukiy", "label": 1},
    ])
    a, b = from_dataframe(df, id_column="qid")
    assert (a.id, a.source, a.reference, a.label) == ("a", ["Moscow: 1147."], None, 0)
    assert (b.id, b.source, b.reference, b.label) == ("b", None, "Yuri Dolgorukiy", 1)
    assert [i.id for i in from_dataframe(df.drop(columns=["qid"]))] == ["0", "1"]
    with pytest.raises(ConfigError, match="id_column"):
        from_dataframe(df, id_column="nope")
    with pytest.raises(InvalidItemError, match="row 1"):
        from_dataframe(pd.DataFrame([{"answer": "x", "reference": "y"}, {"question": "no answer"}]))


def test_dataframe_without_pandas_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_pandas(name: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ConfigError, match="pip install pandas"):
        from_dataframe([{"answer": "x"}])


def test_retrieved_documents_reach_the_judge_as_numbered_documents() -> None:
    llm = FakeLLM("openai", [
        moscow_claims(),
        moscow_checks(basis="source", evidence="first mentioned in 1147", reason="1147, not 1247"),
    ])
    item = from_dict({"input": MOSCOW_QUESTION, "context": DOCS, "answer": MOSCOW_WRONG})
    result = Judge(backend=llm.backend()).judge(item)
    assert result.label == 1 and result.criterion == "source_faithfulness"
    prompt = llm.user_prompts()[1]
    assert '<document index="1">\nMoscow\nMoscow was first mentioned in 1147.' in prompt
    assert '<document index="2">\nYuri Dolgorukiy was prince of Suzdal.' in prompt
