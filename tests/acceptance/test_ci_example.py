"""#34: the shipped CI workflow's commands (examples/qa_bot_ci/qa-bot-gate.yml), the pytest plugin
example among them, run twice against the schema-following fake with only what the workflow caches
(.judgeflow/) kept between the runs: the second run makes 0 model calls. (The plugin used to cache
under .pytest_cache/d/judgeflow/, which the workflow does not keep: every CI run paid again.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from fakes import SchemaProvider
from fakes.process import pytest_env

pytestmark = pytest.mark.acceptance
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "qa_bot_ci"
STEPS = ("Run the bot", "Judge its answers", "Per-item checks", "Gate against the baseline")


def workflow_steps() -> list[str]:
    steps = yaml.safe_load((EXAMPLE / "qa-bot-gate.yml").read_text())["jobs"]["gate"]["steps"]
    runs = {s.get("name"): s.get("run") for s in steps}
    return [runs[name] for name in STEPS]


def fresh_checkout(repo: Path) -> None:
    """The repository as actions/checkout leaves it, plus what actions/cache restores (.judgeflow/)."""
    for child in repo.iterdir() if repo.exists() else ():
        if child.name != ".judgeflow":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(EXAMPLE, repo / "examples" / "qa_bot_ci", ignore=shutil.ignore_patterns(".judgeflow", "__pycache__"))


@pytest.mark.slow  # the workflow's shell steps, as CI runs them
def test_the_ci_workflow_twice_the_second_run_makes_no_model_calls(tmp_path):
    if shutil.which("judgeflow", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("the judgeflow command is not installed (pip install -e .)")
    repo = tmp_path / "repo"
    repo.mkdir()
    with SchemaProvider(seed=5) as fake:
        env = pytest_env({k: v for k, v in os.environ.items() if not k.startswith(("JUDGEFLOW_", "OPENAI_", "ANTHROPIC_"))})
        env.update(JUDGEFLOW_MODEL="openai/gpt-4o-mini", OPENAI_API_KEY="sk-fake-acceptance",
                   OPENAI_BASE_URL=fake.base_url + "/v1", PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}")
        calls = []
        for _ in range(2):
            fresh_checkout(repo)
            before = len(fake.requests)
            # the baseline judged by the same judge (the workflow's comment: refresh it on main)
            for cmd in ("python examples/qa_bot_ci/bot.py examples/qa_bot_ci/questions.jsonl -o base-answers.jsonl",
                        "judgeflow run base-answers.jsonl -o examples/qa_bot_ci/baseline.jsonl --no-progress",
                        *workflow_steps()):
                done = subprocess.run(cmd, shell=True, cwd=repo, env=env, capture_output=True, text=True, timeout=300)
                # the fake's verdicts are random: the per-item tests may fail and the gate may say FAIL (1), never 2
                ok = (0, 1, 2) if cmd.startswith("python -m pytest") else (0, 1) if cmd.startswith("judgeflow gate") else (0,)
                assert done.returncode in ok, (cmd, done.stdout[-2000:], done.stderr[-2000:])
            calls.append(len(fake.requests) - before)
    assert calls[0] > 0
    assert calls[1] == 0, calls
