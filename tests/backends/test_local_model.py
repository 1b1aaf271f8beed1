"""Opt-in (--runserver): the examples' items judged by a real local model, at the local defaults.

Start one with `bash ../shared/tools/local-model-server.sh 8798` (builds llama-cpp-python, 20-50 min
on 2 CPUs; serves Qwen2.5-Coder-1.5B-Instruct as `qwen2.5-coder-1.5b`), then
`python -m pytest --runserver --server-url http://127.0.0.1:8798/v1 tests/backends/test_local_model.py`.
A call takes 15-160 s on 2 shared CPUs, so no `--timeout` is given: the point is that the local
deadline and pacing (`backends/local_pace.py`) score every judgeable item of a slow single-slot
server at the defaults, with every request sent counted. Skipped when the server does not answer.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from judgeflow.cli import main

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.server


def _model(url: str) -> str:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=600) as r:  # a busy single-slot server answers late
            return str(json.loads(r.read())["data"][0]["id"])
    except (urllib.error.URLError, OSError, KeyError, IndexError, ValueError) as e:
        pytest.skip(f"no local model server at {url} ({e}): start one with ../shared/tools/local-model-server.sh")


@pytest.mark.parametrize("strategy", ["single", "graph"])
def test_the_example_items_are_scored_by_a_real_local_model_at_the_defaults(
        tmp_path: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str], strategy: str) -> None:
    url = request.config.getoption("--server-url")
    model = _model(url)
    out = tmp_path / "out.jsonl"
    code = main(["run", str(ROOT / "examples" / "qa_items.jsonl"), "-o", str(out), "--model", f"openai/{model}",
                 "--base-url", url, "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--json",
                 "--strategy", strategy])
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.is_file() else []
    not_judged = [(r["id"], r["status"], r["error"]) for r in rows if r["status"] != "judged"]
    assert code in (0, 1), (code, captured.err[-3000:], not_judged)  # 3: a systemic provider error stopped it
    summary = json.loads(captured.out.strip().splitlines()[-1])
    assert len(rows) == 9, not_judged
    assert [r["error"] for r in rows if r["status"] == "unscored" and "timed out" in (r["error"] or "")] == []
    assert [r["id"] for r in rows if r["status"] == "invalid"] == ["no-evidence"]  # the example's own bad row
    scored = [r for r in rows if r["status"] == "judged"]
    assert len(scored) >= 6, [r["error"] for r in rows if r["status"] == "unscored"]
    calls = sum((r.get("usage") or {}).get("calls", 0) for r in rows)
    assert calls >= len(scored) and summary["calls"] == calls  # every request sent is counted, row and summary
