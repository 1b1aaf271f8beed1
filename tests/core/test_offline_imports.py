"""The offline path never imports the provider SDKs (issue 11: they cost seconds at start-up), nor
LangGraph and LangChain when nothing traces (about a second of CPU a process: an item is judged by
`workflow.run_steps`; the compiled graph is built only for a tracer, a Runnable or a server)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = """
import json, sys
from judgeflow import Judge
judge = Judge("baseline/lexical")
r = judge.judge({"id": "q1", "question": "When was Moscow founded?",
                 "answer": "In 1247, by Yuri Dolgorukiy.", "reference": "1147, by Yuri Dolgorukiy"})
rs = list(judge.judge_many([{"id": "s", "answer": "Paris is in France.", "source": "Paris is the capital of France."}]))
print(json.dumps({"label": r.label, "labels": [x.label for x in rs],
                  "loaded": sorted(m for m in ("openai", "anthropic", "instructor", "langgraph", "langchain_core")
                                  if m in sys.modules)}))
"""


@pytest.mark.slow
def test_offline_judge_does_not_import_the_provider_sdks() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["label"] == 1 and got["labels"] == [0]
    assert got["loaded"] == [], f"the offline path imported {got['loaded']}"


VERSION_SCRIPT = """
import contextlib, io, json, sys
from judgeflow.cli import main
for argv in (["--version"], ["--help"]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(argv)
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("judgeflow.", "pydantic", "rich", "langgraph",
                                                                "numpy", "openai")))))
"""


@pytest.mark.slow  # a fresh interpreter
def test_version_and_help_import_no_command_and_no_judging_code() -> None:
    """Before: `judgeflow --version` imported every command module and the judging core (pydantic,
    criteria, backends, rich; about 0.35 s of CPU before the version was printed)."""
    out = subprocess.run([sys.executable, "-c", VERSION_SCRIPT], capture_output=True, text=True, timeout=120,
                         check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(loaded) <= {"judgeflow.cli", "judgeflow._moved", "judgeflow.errors"}, loaded
