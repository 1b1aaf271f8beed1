"""Items from columnar files (#47): a RAGAS dataset saved with `to_parquet`, the same as Arrow/Feather,
judged by `judgeflow run` as the README lists; pyarrow stays optional with a clear message."""

from __future__ import annotations

import builtins
import json

import pytest

from judgeflow.cli import main
from judgeflow.errors import InvalidItemError
from judgeflow.items import read_items

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

RAGAS = {"user_input": ["When was Moscow founded?", "What is the capital of France?"],
         "retrieved_contexts": [["Moscow was founded in 1147 by Yuri Dolgorukiy.", "It is on the Moskva river."],
                                ["Paris is the capital of France."]],
         "response": ["Moscow was founded in 1247.", "Paris is the capital of France."],
         "reference": ["Moscow was founded in 1147.", "Paris"]}


@pytest.fixture(params=["parquet", "feather"])
def ragas_file(request, tmp_path):
    path = tmp_path / f"ragas.{request.param}"
    getattr(pd.DataFrame(RAGAS), f"to_{request.param}")(path)
    return path


def test_a_ragas_dataset_saved_as_parquet_or_feather_is_read_with_its_list_of_contexts(ragas_file):
    items = list(read_items(ragas_file, name=str(ragas_file)))  # `run` passes a name: Parquet is still Parquet
    assert [i.question for i in items] == RAGAS["user_input"]
    assert [i.answer for i in items] == RAGAS["response"]
    assert [i.source for i in items] == RAGAS["retrieved_contexts"]
    assert [i.reference for i in items] == RAGAS["reference"]


def test_judgeflow_run_judges_a_ragas_parquet_file(ragas_file, tmp_path):
    out = tmp_path / "out.jsonl"
    assert main(["run", str(ragas_file), "-o", str(out), "--model", "baseline/lexical", "--store",
                 str(tmp_path / "s.sqlite")]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in rows] == ["judged", "judged"]
    assert [r["label"] for r in rows] == [1, 0]  # 1247 against the source's 1147; Paris supported


def test_without_pyarrow_a_parquet_input_says_how_to_read_it(ragas_file, monkeypatch):
    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(InvalidItemError, match="needs pyarrow: pip install pyarrow") as e:
        list(read_items(ragas_file))
    assert str(ragas_file) in str(e.value)
