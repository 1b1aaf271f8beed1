"""Result rows with their inputs (`run`'s default `--with-inputs`, `results_to_dataframe(..., items=...)`), labels
as Int64."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow import Judge, read_items
from judgeflow.calibration.labels import read_results
from judgeflow.cli import main
from judgeflow.frames import results_to_dataframe
from judgeflow.results import Judgment

pd = pytest.importorskip("pandas")
SAMPLE = Path(__file__).parents[2] / "examples" / "data" / "factual_qa_sample.jsonl"


def items_by_id() -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, SAMPLE.read_text().splitlines())}


def test_a_plain_run_writes_the_texts_beside_each_verdict(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert main(["run", str(SAMPLE), "-o", str(out), "--model", "baseline/lexical",
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    src = items_by_id()
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 48
    for r in rows:
        assert (r["question"], r["answer"], r["reference"]) == tuple(src[r["id"]][k] for k in ("question", "answer",
                                                                                                  "reference"))
        assert list(r)[-3:] == ["question", "answer", "reference"]  # after the result's own fields
    back = read_results(out)
    assert back[0].extra["answer"] == src[back[0].id]["answer"]  # read back, the texts are there for calibrate
    df = results_to_dataframe(out)  # what a pandas user is shown: the inputs beside the verdicts
    assert {"question", "answer", "reference", "label"} <= set(df.columns)
    assert df.loc[0, "answer"] == src[df.loc[0, "id"]]["answer"] and str(df["label"].dtype) == "Int64"
    plain = tmp_path / "p.jsonl"
    assert main(["run", str(SAMPLE), "-o", str(plain), "--model", "baseline/lexical", "--no-with-inputs",
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    assert "answer" not in json.loads(plain.read_text().splitlines()[0])


def test_the_resume_command_keeps_the_choice():
    from judgeflow.cli.flags import resume_command
    from judgeflow.config.judging import JudgeSpec
    from judgeflow.config.run import RunSpec
    from judgeflow.runs.run import record_of

    s = RunSpec(judging=JudgeSpec(model="baseline/lexical"), input="i.jsonl", output="o.jsonl")
    assert "inputs" not in resume_command(s) and record_of(s)["spec"]["with_inputs"] is True  # the default
    off = s.model_copy(update={"with_inputs": False})
    assert "--no-with-inputs" in resume_command(off) and record_of(off)["spec"]["with_inputs"] is False


def test_dataframe_joined_with_its_items_and_nullable_labels():
    items = list(read_items(SAMPLE))[:4]
    results = Judge("baseline/lexical").judge_many(items)
    results.append(Judgment.unscored("extra", "timed out"))
    df = results_to_dataframe(results, items=SAMPLE)
    assert str(df["label"].dtype) == "Int64" and df["label"].isna().tolist() == [False] * 4 + [True]
    assert df["label"].tolist()[:4] == [j.label for j in results[:4]]
    assert df.loc[0, "answer"] == items[0].answer and df.loc[0, "question"] == items[0].question
    assert pd.isna(df.loc[4, "answer"])  # no item with that id: no texts, the row kept
    same = results_to_dataframe(results, items=items)
    assert same.loc[1, "reference"] == items[1].reference
    assert str(results_to_dataframe(results)["human_label"].dtype) == "Int64"
