"""What a CI gate costs in model calls: the example bot's answers judged on main, then on pull requests.

    python benchmarks/gate_cost.py                 # the 40 questions of examples/qa_bot_ci, graph strategy

Runs `judgeflow run` and `judgeflow gate` exactly as the workflow in examples/qa_bot_ci does, with an
LLM judge against the local fake provider (tests/fakes/provider.py, in this process: it counts the
requests it answers) and one run store kept between the runs, as actions/cache keeps `.judgeflow/` in CI:

1. main: every answer is judged (the baseline);
2. a pull request that does not change the bot: every answer is served from the response cache;
3. a pull request that changes 4 answers: only those are judged;
4. the gate itself: reads two results files, sends nothing;
5. opt-in test-retest on main (`--repeats 3`): the first verdict of each answer is the cached one.

Prints the requests the provider received in each step, the calls the rows account for, and the
ratio to the first step.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu import _fakes  # noqa: E402

from judgeflow.cli import main  # noqa: E402

EXAMPLE = ROOT / "examples" / "qa_bot_ci"


def bot() -> Any:
    spec = importlib.util.spec_from_file_location("qa_bot", EXAMPLE / "bot.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answers(path: Path, changed: int = 0) -> Path:
    """The bot's answers; the first `changed` of them reworded (a pull request that changes the bot)."""
    quiz = bot().quiz_bot
    rows = [json.loads(line) for line in (EXAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    with path.open("w", encoding="utf-8") as f:
        for k, r in enumerate(rows):
            answer = quiz(r["question"]) + (" (Reworded by the pull request.)" if k < changed else "")
            f.write(json.dumps({**r, "answer": answer}) + "\n")
    return path


def calls(results: Path) -> int:
    return sum(json.loads(line)["usage"]["calls"] for line in results.read_text(encoding="utf-8").splitlines())


def run(args: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(args)


def main_() -> None:
    with _fakes().FakeProvider(latency=0.0) as fake, tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        judge = ["--model", "openai/fake-judge", "--base-url", fake.base_url, "--store", str(d / "runs.sqlite"),
                 "--no-progress"]
        steps: list[tuple[str, int, int]] = []
        for name, changed, out in (("main: baseline, every answer judged", 0, "baseline.jsonl"),
                                   ("PR, bot unchanged", 0, "pr1.jsonl"), ("PR, 4 answers changed", 4, "pr2.jsonl")):
            before = len(fake.requests)
            assert run(["run", str(answers(d / f"answers-{out}", changed)), "-o", str(d / out), *judge]) == 0
            steps.append((name, len(fake.requests) - before, calls(d / out)))
        before = len(fake.requests)
        code = run(["gate", str(d / "pr2.jsonl"), "--baseline", str(d / "baseline.jsonl")])
        steps.append((f"the gate itself (exit {code})", len(fake.requests) - before, 0))
        before = len(fake.requests)
        assert run(["run", str(d / "answers-baseline.jsonl"), "-o", str(d / "repeats.jsonl"), *judge, "--repeats", "3"]) == 0
        steps.append(("main with --repeats 3 (opt-in)", len(fake.requests) - before, calls(d / "repeats.jsonl")))
    first = steps[0][1]
    print(f"{'step':40} {'requests':>9} {'row calls':>10} {'ratio to main':>14}")
    for name, n, rows in steps:
        print(f"{name:40} {n:>9} {rows:>10} {n / first:>14.3f}")


if __name__ == "__main__":
    main_()
