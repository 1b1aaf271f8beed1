"""What some benchmarks need that the repository does not ship: the labelled evaluation sets (their
licences differ from the project's) and, as the reference, the shared schema-following fake provider.

They are found in a `shared/` folder holding `data/` and `tools/fake_llm.py` in a parent directory
of the checkout (the development set-up), or at $JUDGEFLOW_SHARED. Without the shared fake, the
benchmarks that only need a fake that follows the JSON schema it is sent use the repository's own,
tests/fakes/schema_provider.py (`start_fake`); without the data a benchmark stops with one line
saying so (`need_data`). `startup.py`, `panels.py` and `memory.py` need neither.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IN_REPO_FAKE = ROOT / "tests" / "fakes" / "schema_provider.py"


def shared_dir() -> Path:
    """The folder holding data/ and tools/fake_llm.py (it may not exist: see `need_shared`)."""
    given = os.environ.get("JUDGEFLOW_SHARED")
    if given:
        return Path(given)
    return next((p / "shared" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT.parent / "shared")


def need_shared(shared: Path | None = None) -> Path:
    """`shared` (default `shared_dir()`), or stop: the benchmark needs the data and the shared fake's
    extras (its request log, rate limiter) that the in-repository fake does not have."""
    shared = need_data(shared)
    if not (shared / "tools" / "fake_llm.py").is_file():
        raise SystemExit(f"this benchmark needs the shared fake provider's request log and limiter, which the "
                         f"repository does not ship; not found at {shared}/tools/fake_llm.py: set JUDGEFLOW_SHARED "
                         "to the folder holding data/ and tools/fake_llm.py")
    return shared


def need_data(shared: Path | None = None) -> Path:
    """`shared` (default `shared_dir()`), or stop: the benchmark needs the labelled evaluation sets."""
    shared = shared or shared_dir()
    if not (shared / "data").is_dir():
        raise SystemExit(f"this benchmark needs the labelled evaluation sets, which the repository does not ship; "
                         f"not found at {shared}/data: set JUDGEFLOW_SHARED to the folder holding data/")
    return shared


def fake_script(shared: Path | None = None) -> Path:
    """The shared fake_llm.py when it is there, else the repository's schema-following fake (both take
    --port, --seed, --latency-ms and print PORT=N first)."""
    shared_fake = (shared or shared_dir()) / "tools" / "fake_llm.py"
    return shared_fake if shared_fake.is_file() else IN_REPO_FAKE


def start_fake(*flags: str, shared: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    """The schema-following fake on a free port in its own process: (process, root URL without /v1).
    Stop it with `proc.terminate(); proc.wait()`."""
    script = fake_script(shared)
    proc = subprocess.Popen([sys.executable, str(script), "--port", "0", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT="):
        proc.kill()
        raise SystemExit(f"{script.name} did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.strip().split('=')[1])}"


def pace_line(command: list[str] | None = None, *, base_url: str = "", timeout: float | None = None) -> str:
    """What pace a throughput figure ran under (#50): a localhost endpoint with no --timeout is paced
    by judgeflow's local pace (backends/local_pace.py: in flight and deadline follow its replies);
    a given --timeout, or a hosted endpoint, is not. `command`: a `judgeflow run` command line."""
    if command is not None:
        base_url = next((command[i + 1] for i, a in enumerate(command[:-1]) if a == "--base-url"), base_url)
        if "--timeout" in command:
            timeout = float(command[command.index("--timeout") + 1])
    from urllib.parse import urlsplit

    local = (urlsplit(base_url).hostname or "") in ("127.0.0.1", "localhost", "::1")
    if not local:
        return "pace: none (not a local endpoint; the provider's rate limits only)"
    if timeout is not None:
        return f"pace: off (--timeout {timeout:g} given: --concurrency as set)"
    return "pace: the local pace at the defaults (requests in flight follow the endpoint's replies, #50)"


_SAID: set[str] = set()


def say_pace(command: list[str]) -> None:
    """Print, once per pace, what pace a benchmark's `judgeflow run` command runs under."""
    line = pace_line(command)
    if line not in _SAID:
        _SAID.add(line)
        print(f"  ({line})", flush=True)
