"""Trace rows through `judgeflow run`: the trace set against the in-repo fake (real SDK + Instructor),
against the shared schema-following fake, a flat LangSmith export, and --turns all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeProvider
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


@pytest.mark.slow
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_trace_set_against_the_shared_schema_following_fake(tmp_path: Path, fake_llm: str, wire: str) -> None:
    """An extra check: the shared fake fills replies from the sent schema alone (the trace criterion's
    verdict and basis enums included)."""
    out = tmp_path / "out.jsonl"
    code = main(["run", str(TRACES), "-o", str(out), "--model", f"{wire}/fake-judge", "--no-progress",
                 "--base-url", f"{fake_llm}/v1" if wire == "openai" else fake_llm, "--store", str(tmp_path / "runs.sqlite")])
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and len(rows) == 18
    assert all(r["status"] == "judged" and r["criterion"] == "trace_grounding" for r in rows)


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
    assert run is not None and run.settings["turns"] == "all" and "--turns all" in (run.command or "")
