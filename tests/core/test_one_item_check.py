"""One item check for every input path: files, `watch`, the served graph and the Python API refuse
an oversized item and an `answer` that is a list alike (issue 46, F21 and F31)."""

from __future__ import annotations

import asyncio
import json
import runpy
from pathlib import Path

import pytest

from judgeflow import Judge
from judgeflow.cli import main
from tests.fakes.otel_traces import rag_trace, request, trace_id, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
BIG = "Paris is in France. " * 15_000  # 300,000 characters: over the default 200,000
SOURCE = "Paris is the capital of France."


@pytest.fixture(scope="module")
def graph():
    return runpy.run_path(str(ROOT / "graphs" / "judge.py"))["graph"]


def test_the_served_graph_refuses_an_answer_that_is_a_list(graph):
    with pytest.raises(Exception, match="list"):
        asyncio.run(graph.ainvoke({"item": {"id": "l", "answer": ["Paris", "is in France"], "source": SOURCE}},
                                  context={"model": "baseline/lexical"}))


def test_the_served_graph_refuses_an_item_over_the_input_limit(graph, monkeypatch):
    item = {"id": "b", "answer": BIG, "source": SOURCE}
    out = asyncio.run(graph.ainvoke({"item": item}, context={"model": "baseline/lexical"}))
    assert out["status"] == "invalid" and "--max-input-chars" in out["error"]
    monkeypatch.setenv("JUDGEFLOW_MAX_INPUT_CHARS", "100")  # the operator's own bound
    out = asyncio.run(graph.ainvoke({"item": {"id": "s", "answer": "Paris is in France, for sure.", "source": SOURCE * 3}},
                                    context={"model": "baseline/lexical"}))
    assert out["status"] == "invalid" and "--max-input-chars 100" in out["error"]


def test_the_python_api_refuses_both_like_a_file_does(tmp_path):
    judge = Judge("baseline/lexical")
    listed = judge.judge({"id": "a", "answer": ["Paris", "France"], "source": SOURCE})
    big = judge.judge({"id": "b", "answer": BIG, "source": SOURCE})
    assert listed.status == "invalid" and "list" in listed.error
    assert big.status == "invalid" and "--max-input-chars" in big.error
    items = tmp_path / "i.jsonl"
    items.write_text(json.dumps({"id": "a", "answer": ["Paris", "France"], "source": SOURCE}) + "\n")
    out = tmp_path / "o.jsonl"
    main(["run", str(items), "-o", str(out), "--model", "baseline/lexical", "--store", str(tmp_path / "s.sqlite"),
          "--no-progress"])
    row = json.loads(out.read_text())
    assert row["status"] == "invalid" and "'answer' is a list, not text" in row["error"]
    assert "'answer' is a list, not text" in listed.error


def test_watch_applies_max_input_chars(tmp_path):
    spans = rag_trace(7)
    for a in spans[2]["attributes"]:
        if a["key"] in ("output.value", "llm.output_messages.0.message.content"):
            a["value"] = {"stringValue": "Paris is in France. " * 100}
    path = write_jsonl(tmp_path / "t.jsonl", [request(spans), request(rag_trace(8))])
    out = tmp_path / "o.jsonl"
    assert main(["watch", str(path), "--once", "--model", "baseline/lexical", "--store", str(tmp_path / "s.sqlite"),
                 "--max-input-chars", "1000", "-o", str(out)]) == 0
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows[trace_id(7)]["status"] == "invalid" and "--max-input-chars 1,000" in rows[trace_id(7)]["error"]
    assert rows[trace_id(8)]["status"] == "judged"
