"""Opt-in (--runserver): judge 10 items from examples/ with a real llama.cpp server.

Start one with `bash ../shared/tools/llamacpp-server.sh 8765` (builds llama-cpp-python, ~20 min on
2 CPUs; serves SmolLM2-135M-Instruct). Its verdicts are meaningless at 135M; the point is that
the endpoint works end to end: every item scored, each call small enough for the 4,096-token context.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from judgeflow.cli import main

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.server


def test_the_example_items_are_all_scored_by_a_real_llamacpp_server(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = request.config.getoption("--server-url")
    with urllib.request.urlopen(f"{url}/models", timeout=10) as r:
        model_id = json.loads(r.read())["data"][0]["id"]
    lines: list[str] = []
    for f in sorted((ROOT / "examples").rglob("*.jsonl")):
        lines += f.read_text(encoding="utf-8").splitlines()
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(lines[:10]) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["run", str(items), "-o", str(out), "--model", f"openai/{model_id}", "--base-url", url,
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--concurrency", "1", "--timeout", "300"])
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert code == 0 and len(rows) == len(lines[:10])  # examples/ holds 9 items today
    assert [r["error"] for r in rows if r["status"] == "unscored"] == []  # every judgeable item scored
    assert [r["id"] for r in rows if r["status"] == "invalid"] == ["no-evidence"]  # the example's own bad row
