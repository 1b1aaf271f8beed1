"""Trace rows through `judgeflow run`: the trace set against the in-repo fakes (real SDK + Instructor:
the rule-based provider and the schema-following one, the in-repo stand-in for ../shared's
fake_llm.py), a flat LangSmith export, and --turns all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeProvider, SchemaProvider
from fakes.traces import OPENAI, TRACES

from judgeflow import read_items
from judgeflow.cli import main
from judgeflow.runs.store import RunStore


def test_a_trace_set_judged_through_the_fake_provider(tmp_path: Path) -> None:
    """The real openai SDK + Instructor against the loopback fake: every row scored, routed to the
    trace criterion, and every tool result of every trace in what was sent."""
    out = tmp_path / "out.jsonl"
    with FakeProvider() as fake:
        code = main(["run", str(TRACES), "-o", str(out), "--model", "openai/fake-judge",
                     "--base-url", fake.base_url + "/v1", "--store", str(tmp_path / "runs.sqlite"), "--no-progress"])
        sent = "\n".join(str(m.get("content")) for body in fake.requests for m in body.get("messages", []))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    items = list(read_items(TRACES))
    assert code == 0 and len(rows) == len(items) == 18
    assert all(r["status"] == "judged" and r["label"] in (0, 1) for r in rows)
    assert {r["criterion"] for r in rows} == {"trace_grounding"}
    results = [m.text for it in items for m in it.messages or [] if m.role == "tool"]
    assert len(results) >= 18 and all(text in sent for text in results)
    assert "[tool get_weather, call_1]" in sent and "[user turn 1]" in sent


def judge_traces_against(tmp_path: Path, root: str, wire: str) -> None:
    """The trace set through `judgeflow run` against a schema-following fake at `root`: it fills replies
    from the sent schema alone (the trace criterion's verdict and basis enums included)."""
    out = tmp_path / "out.jsonl"
    code = main(["run", str(TRACES), "-o", str(out), "--model", f"{wire}/fake-judge", "--no-progress",
                 "--base-url", f"{root}/v1" if wire == "openai" else root, "--store", str(tmp_path / "runs.sqlite")])
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and len(rows) == 18
    assert all(r["status"] == "judged" and r["criterion"] == "trace_grounding" for r in rows)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_trace_set_against_the_schema_following_fake(tmp_path: Path, wire: str) -> None:
    with SchemaProvider(seed=0) as fake:
        judge_traces_against(tmp_path, fake.base_url, wire)


def test_the_cli_reads_a_flat_langsmith_export_and_judges_every_turn(tmp_path: Path) -> None:
    runs = [{"id": "r1", "name": "agent", "run_type": "chain", "parent_run_id": None,
             "inputs": {"question": "Weather in Paris?"}, "outputs": {"output": "It is 25 C and sunny."}},
            {"id": "t1", "name": "get_weather", "run_type": "tool", "parent_run_id": "r1",
             "start_time": "2025-01-01T00:00:01", "inputs": {"input": "Paris"}, "outputs": {"output": "18 C, rain"}}]
    export = tmp_path / "export.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in runs))
    out = tmp_path / "out.jsonl"
    store = str(tmp_path / "runs.sqlite")
    assert main(["run", str(export), "-o", str(out), "--store", store, "--no-progress"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["label"], r["criterion"]) for r in rows] == [("r1", 1, "trace_grounding")]
    assert rows[0]["claims"][0]["cited"] == "tool get_weather, t1"

    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps({"id": "t", "messages": OPENAI}) + "\n")
    out_all = tmp_path / "all.jsonl"
    assert main(["run", str(traces), "-o", str(out_all), "--store", store, "--no-progress", "--turns", "all"]) == 0
    assert [json.loads(line)["id"] for line in out_all.read_text().splitlines()] == ["t#t2", "t#t4"]

    with RunStore(store) as s:
        run = s.latest_run(output_path=str(out_all))
    assert run is not None and run.spec.turns == "all" and "--turns all" in (run.command or "")


def _flat_export(tmp_path: Path, runs: list[dict]) -> Path:
    export = tmp_path / "export.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in runs))
    return export


def test_a_parent_run_id_cycle_in_a_langsmith_export_gives_an_invalid_row(tmp_path: Path, capsys) -> None:
    """Issue 35, item 12: runs whose parent_run_id forms a cycle were dropped with no row."""
    runs = [{"id": "r1", "name": "agent", "run_type": "chain", "parent_run_id": None,
             "inputs": {"question": "Weather in Paris?"}, "outputs": {"output": "It is 18 C."}},
            {"id": "a", "name": "loop-a", "run_type": "chain", "parent_run_id": "b",
             "inputs": {"question": "Q?"}, "outputs": {"output": "A."}},
            {"id": "b", "name": "loop-b", "run_type": "chain", "parent_run_id": "a",
             "inputs": {"question": "Q?"}, "outputs": {"output": "A."}},
            {"id": "c", "name": "under-the-loop", "run_type": "tool", "parent_run_id": "b",
             "inputs": {"input": "x"}, "outputs": {"output": "y"}}]
    out = tmp_path / "out.jsonl"
    code = main(["run", str(_flat_export(tmp_path, runs)), "-o", str(out), "--store", str(tmp_path / "s.sqlite"),
                 "--no-progress"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in rows] == ["judged", "invalid"], rows
    bad = rows[1]
    assert "parent_run_id" in bad["error"] and "cycle" in bad["error"] and "'a'" in bad["error"], bad["error"]
    assert "line 2" in bad["error"] or bad.get("line") == 2 or ":2" in bad["error"], bad["error"]
    assert code == 0 and "invalid: 1" in capsys.readouterr().err  # invalid rows are reported, as for any input
    from judgeflow.errors import InvalidItemError
    from judgeflow.integrations.langsmith import from_langsmith_runs

    with pytest.raises(InvalidItemError, match="cycle"):
        from_langsmith_runs(runs)


def test_a_3000_deep_langsmith_chain_is_read_without_recursion_error(tmp_path: Path) -> None:
    """Issue 35, item 12: a 3,000-deep chain crashed with RecursionError."""
    runs = [{"id": "r0", "name": "agent", "run_type": "chain", "parent_run_id": None,
             "inputs": {"question": "Weather in Paris?"}, "outputs": {"output": "It is 18 C."}}]
    runs += [{"id": f"r{k}", "name": f"step{k}", "run_type": "chain", "parent_run_id": f"r{k - 1}",
              "start_time": f"2025-01-01T00:00:{k % 60:02d}", "inputs": {}, "outputs": {}} for k in range(1, 3000)]
    runs.append({"id": "t1", "name": "get_weather", "run_type": "tool", "parent_run_id": "r2999",
                 "inputs": {"input": "Paris"}, "outputs": {"output": "18 C, rain"}})
    out = tmp_path / "out.jsonl"
    code = main(["run", str(_flat_export(tmp_path, runs)), "-o", str(out), "--store", str(tmp_path / "s.sqlite"),
                 "--no-progress"])
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert code == 0 and [(r["id"], r["status"]) for r in rows] == [("r0", "judged")], rows
    assert rows[0]["claims"][0]["cited"] == "tool get_weather, t1"
