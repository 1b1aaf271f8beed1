"""#34, docs as tests: every `judgeflow` command shown in a code block of README.md or docs/*.md is
executed here (in-process, through `judgeflow.cli.main` as the console script calls it: the README's
commands also run as a subprocess in a plain archive, tests/test_front_door.py), page by page in the
page's order, in a sandbox holding the shipped examples and
generated items (a page that drifts from the code fails CI). Commands that name a model run against
the in-repository schema fake through --base-url; the few that cannot run here are listed in
NOT_RUNNABLE with the reason. A synopsis (placeholders in capitals) is checked with --help; `tune`
gets --folds 2 --candidates 1 when the page gives no --folds (the same code, fewer calls)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from fakes import SchemaProvider
from fakes.generated import generated_items, write_jsonl

pytestmark = pytest.mark.acceptance
ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: (page, command start) -> why it is not run here
NOT_RUNNABLE = {
    ("runs.md", 'judgeflow run "s3://'): "needs an S3 bucket and a Ray cluster (the Ray path: tests/integrations/test_ray.py)",
    ("calibration.md", "judgeflow review"): "serves the labelling page until stopped (tests/calibration/test_label_app*.py)",
    ("panels-and-cascades.md", "judgeflow run items.jsonl -o r.jsonl --panel"): "names three providers' endpoints "
        "(OpenAI, Anthropic, Ollama); panels against fakes are tested in tests/core/test_ensembles.py",
    ("panels-and-cascades.md", "judgeflow run items.jsonl -o r.jsonl --cascade"): "needs two distinct models' "
        "endpoints; cascades against fakes are tested in tests/core/test_ensembles.py",
    ("production.md", "judgeflow watch http://127.0.0.1:6006"): "watches a live Phoenix until stopped "
        "(tests/integrations/test_phoenix.py starts one and runs it)",
    ("production.md", "judgeflow watch otlp://"): "listens for traces until stopped (tests/runs/test_watch.py "
        "sends it traces, then SIGTERM)",
}
#: (page, command start) -> the refusal it must give here, and why (the sandbox's judge is offline)
REFUSALS = {
    ("calibration.md", "judgeflow sample items.jsonl --results merged.jsonl --focus unstable"):
        "no item whose verdict flips",  # the offline judge's repeats never flip: the page's own fallback message
}
LABEL_ANSWERS = "1\n0\n" * 30 + "q\n"


def commands(page: Path) -> list[tuple[int, str]]:
    """(line, command) for each `judgeflow ...` line of the page's code blocks (continuations joined)."""
    out, block, lines = [], False, page.read_text(encoding="utf-8").splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("```"):
            block = not block
        elif block and re.match(r"\s*(\$ )?(pip install -e \. && )?judgeflow ", line):
            start, cmd = k + 1, line.strip().removeprefix("$ ").removeprefix("pip install -e . && ")
            while cmd.endswith("\\"):
                k += 1
                cmd = cmd[:-1].rstrip() + " " + lines[k].strip()
            out.append((start, cmd))
        k += 1
    return out


def runnable(cmd: str, base_url: str) -> list[str] | None:
    """The argv to run for a command as shown: its comment dropped, an optional `[--flag]` given, a
    choice `[a|b]` left out, a model pointed at the fake; None for a synopsis (placeholders)."""
    cmd = re.sub(r"\s+#.*$", "", cmd)
    cmd = re.sub(r"\s*\[[^\]]*\|[^\]]*\]", "", cmd)  # [a|b]: a choice, left out
    cmd = re.sub(r"\[([^\]]*)\]", r"\1", cmd)  # [--json]: an option, given
    argv = shlex.split(cmd)
    if any(re.fullmatch(r"[A-Z][A-Z_.]+(\.jsonl)?|provider/model|\|", a) for a in argv):
        return None
    if any(a.startswith(("openai/", "anthropic/")) for a in argv) and "--base-url" not in argv:
        argv += ["--base-url", base_url + "/v1"]
    if "--editor-model" in argv:  # tune's editor has its own endpoint (MODEL@URL): the fake's, on its own wire
        k = argv.index("--editor-model") + 1
        if "@" not in argv[k] and argv[k].startswith(("openai/", "anthropic/")):
            argv[k] += "@" + (base_url + "/v1" if argv[k].startswith("openai/") else base_url)
    return argv


def sandbox(tmp: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp / "examples", ignore=shutil.ignore_patterns(".judgeflow", "__pycache__"))
    rows = generated_items(60)
    for name in ("items.jsonl", "labelled.jsonl", "mine.jsonl", "leaflet_answers.jsonl"):
        write_jsonl(tmp / name, rows)
    shutil.copy(ROOT / "criteria" / "factual_correctness.toml", tmp / "my_rules.toml")
    from judgeflow.cli import main

    for name in ("results.jsonl", "candidate.jsonl", "baseline.jsonl", "a.jsonl", "b.jsonl"):  # what a page's earlier steps made
        assert main(["run", str(tmp / "items.jsonl"), "-o", str(tmp / name), "--store", str(tmp / ".judgeflow" / "runs.sqlite"),
                     "--no-progress"]) == 0
    return tmp


class Done:
    """What a command left: its exit code and stderr (as `subprocess.run` gives them)."""

    def __init__(self, returncode: int, stderr: str) -> None:
        self.returncode, self.stderr = returncode, stderr


def run_in_process(argv: list[str], stdin: str | None, capfd: pytest.CaptureFixture[str]) -> Done:
    """`judgeflow ARGV...` as the console script runs it (`judgeflow.cli.main`), in this process: a
    command's code is the same either way, and each subprocess paid for a fresh interpreter and
    judgeflow's imports (most of this test's CPU). An exception that escapes is its traceback."""
    import io
    import traceback

    from judgeflow.backends import local_pace
    from judgeflow.backends.limits import forget
    from judgeflow.cli import main

    forget()  # each command starts with no rate limits learned, as a new process does
    local_pace.forget()
    capfd.readouterr()
    real_stdin, sys.stdin = sys.stdin, io.StringIO(stdin or "")
    try:
        code = main(argv[1:])
    except SystemExit as e:  # --help, argparse's errors
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported as the subprocess's traceback was
        return Done(99, capfd.readouterr().err + traceback.format_exc())
    finally:
        sys.stdin = real_stdin
    return Done(code or 0, capfd.readouterr().err)


#: the pages that show a judgeflow command (the others have nothing to run: no test, not a skip)
SHOWING = [page for page in PAGES if commands(page)]


def test_the_pages_that_show_commands_are_found() -> None:
    assert {"README.md", "calibration.md", "runs.md"} <= {page.name for page in SHOWING}


@pytest.mark.parametrize("page", SHOWING, ids=lambda p: p.name)
def test_every_command_on_the_page_runs(page, tmp_path, monkeypatch, capfd):
    shown = commands(page)
    box = sandbox(tmp_path)
    for name in [k for k in os.environ if k.startswith(("JUDGEFLOW_", "OPENAI_", "ANTHROPIC_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-docs")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-fake-docs")
    monkeypatch.setenv("JUDGEFLOW_LIMITS_DIR", str(tmp_path / "limits"))
    monkeypatch.chdir(box)
    failures = []
    with SchemaProvider(seed=2) as fake:
        for line, cmd in shown:
            if any(page.name == p and cmd.startswith(c) for p, c in NOT_RUNNABLE):
                continue
            if page.name == "calibration.md" and cmd.startswith("judgeflow stability run1.jsonl"):
                shutil.copy(box / "results.jsonl", box / "run1.jsonl")  # the page's first run, named run1
            argv = runnable(cmd, fake.base_url)
            if argv is None:
                sub = [a for a in shlex.split(re.sub(r"\s+#.*$", "", cmd))[1:3] if a.islower() and a.isalpha()]
                argv = ["judgeflow", *sub[:1], "--help"]
            if argv[1:3] == ["tune"] or argv[1] == "tune":
                argv += ["--folds", "2", "--candidates", "1"] if "--folds" not in argv else []
            done = run_in_process(argv, LABEL_ANSWERS if argv[1] == "label" else None, capfd)
            refusal = next((m for (p, c), m in REFUSALS.items() if page.name == p and cmd.startswith(c)), None)
            if refusal is not None:
                if done.returncode != 2 or refusal not in done.stderr:
                    failures.append(f"{page.name}:{line}: {cmd}\n  expected the refusal {refusal!r}: {done.stderr[-600:]}")
            elif done.returncode not in (0, 1) or "Traceback" in done.stderr:
                failures.append(f"{page.name}:{line}: {cmd}\n  exit {done.returncode}: {done.stderr.strip()[-600:]}")
    assert not failures, "\n".join(failures)
