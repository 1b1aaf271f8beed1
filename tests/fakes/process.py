"""`judgeflow` as a child process for the signal tests (Ctrl-C, SIGTERM, kill), and the store's
row count to wait on.

A child inherits its parent's signal dispositions: when pytest itself was started in the
background by a shell, SIGINT is ignored and so it is in every child, and a Ctrl-C test would
test nothing. `start_cli` sets the child's SIGINT disposition explicitly: `default` (a terminal's
foreground process, where Ctrl-C works) or `ignored` (a background job, `cmd &`).
"""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

#: for the pytest runs that tests start (in a directory without this repository's pyproject.toml):
#: the plugins that pyproject.toml's addopts turns off, as PYTEST_ADDOPTS. langsmith's and phoenix's
#: pytest plugins are no test's subject and cost about 1 s of CPU per pytest start; Hypothesis's
#: (which this suite needs, and those runs' tests never use) about 0.6 s more.
FOREIGN_PLUGINS_OFF = "-p no:langsmith_plugin -p no:phoenix -p no:hypothesispytest"


def pytest_env(env: dict[str, str]) -> dict[str, str]:
    """`env` for a child pytest: the foreign plugins off (kept beside any PYTEST_ADDOPTS already there)."""
    return {**env, "PYTEST_ADDOPTS": f"{env.get('PYTEST_ADDOPTS', '')} {FOREIGN_PLUGINS_OFF}".strip()}


def start_cli(args: list[str], cwd: Path, *, sigint: Literal["default", "ignored"] = "default") -> subprocess.Popen[str]:
    disposition = signal.SIG_DFL if sigint == "default" else signal.SIG_IGN
    return subprocess.Popen([sys.executable, "-m", "judgeflow", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, disposition))


def stored_count(store: Path, table: Literal["results", "cache"] = "results") -> int:
    """Results recorded in a run store so far, or entries in its response cache (0 while it does not exist yet)."""
    try:
        db = sqlite3.connect(store, timeout=5)
        try:
            return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def wait_for_results(store: Path, n: int, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    """Wait until the running `proc` has recorded `n` results."""
    deadline = time.monotonic() + timeout
    while stored_count(store) < n:
        assert proc.poll() is None, f"the run ended early: {proc.communicate()}"
        assert time.monotonic() < deadline, "the run recorded nothing"
        time.sleep(0.05)


@contextlib.contextmanager
def schema_fake(path: Path, *args: str) -> Iterator[str]:
    """../shared/tools/fake_llm.py (the schema-following fake, unmodified) on 127.0.0.1, a free port:
    yields its OpenAI base URL (`.../v1`) and stops it afterwards. Its replies are drawn from
    (--seed, the request body): the same seed answers the same request the same way."""
    proc = subprocess.Popen([sys.executable, str(path), "--port", "0", "--host", "127.0.0.1", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("PORT="), line
        yield f"http://127.0.0.1:{int(line.strip().split('=')[1])}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
