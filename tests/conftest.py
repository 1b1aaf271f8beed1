from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/fakes/ (the one package of test fakes)

ROOT = Path(__file__).resolve().parents[1]
#: ../shared beside the project (for a git worktree under /work/wt/<name>, the nearest ancestor's)
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT.parent / "shared")
SHARED_DATA = SHARED / "data"
FAKE_LLM = SHARED / "tools" / "fake_llm.py"


def pytest_configure(config: pytest.Config) -> None:
    """Every process the suite starts (the CLI, a nested pytest, an example, a server) imports
    judgeflow again. Where PYTHONDONTWRITEBYTECODE is set (common in containers and CI) each one
    compiled every judgeflow module it imported from source, about 0.3-0.45 s of CPU a process.
    The children write bytecode beside the sources, as Python does by default (`__pycache__/`,
    ignored by git); third-party packages already have theirs. The test process writes them too,
    and pytest keeps each test module's rewritten asserts beside it: without that every run
    rewrote and compiled all the test modules again (a collection 20 -> 11 s of CPU from the
    second run on)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runlive", action="store_true", default=False,
                     help="run tests that call real providers (need API keys; cost money)")
    parser.addoption("--runserver", action="store_true", default=False,
                     help="run tests against a real local OpenAI-compatible server (llama.cpp; "
                          "bash ../shared/tools/llamacpp-server.sh 8765 starts one)")
    parser.addoption("--server-url", default="http://127.0.0.1:8765/v1",
                     help="the server for --runserver tests (default http://127.0.0.1:8765/v1)")


#: fixtures that reach ../shared, and whether what they need is beside this checkout
NEEDS_SHARED = {"shared_data": lambda: (SHARED_DATA / "factual_qa.jsonl").exists(),
                "fake_llm": FAKE_LLM.exists, "fake_llm_rules": FAKE_LLM.exists}
_NOT_RUN = pytest.StashKey[dict[str, int]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Opt-in tests are not run unless asked for, and are counted once after collecting (one line a
    kind, with how to run them) rather than skipped one by one: live provider tests (--runlive),
    real local server tests (--runserver), and tests whose point is ../shared (its labelled data,
    the unmodified fake_llm.py), which run where ../shared is beside the checkout (a plain clone has
    none)."""
    absent = {name for name, present in NEEDS_SHARED.items() if not present()}
    why = {"live": "live provider test(s): pass --runlive (and set API keys) to run them",
           "server": "real local server test(s): pass --runserver (and start one) to run them",
           "shared": "test(s) need ../shared beside the checkout (its data or tools/fake_llm.py)"}
    kept, away, counts = [], [], dict.fromkeys(why, 0)
    for item in items:
        kind = ("live" if "live" in item.keywords and not config.getoption("--runlive") else
                "server" if "server" in item.keywords and not config.getoption("--runserver") else
                "shared" if absent & set(getattr(item, "fixturenames", ())) else None)
        if kind is None:
            kept.append(item)
        else:
            away.append(item)
            counts[kind] += 1
    if away:
        config.hook.pytest_deselected(items=away)
        items[:] = kept
    config.stash[_NOT_RUN] = {why[kind]: n for kind, n in counts.items() if n}


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    return [f"not run: {n} {text}" for text, n in config.stash.get(_NOT_RUN, {}).items()]


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """Default tests never see real keys or a configured model."""
    if "live" in request.keywords:
        return
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "JUDGEFLOW_MODEL", "JUDGEFLOW_BASE_URL", "OPENAI_BASE_URL",
                "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


_LIMITS_DIRS = itertools.count()


@pytest.fixture(autouse=True)
def _fresh_limiters(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test starts with no rate limits learned (limiters are process-wide, per endpoint and key),
    and its own folder of limits shared between processes (made only when a limit is met; child
    processes inherit it)."""
    from judgeflow.backends import local_pace
    from judgeflow.backends.limits import forget

    folder = tmp_path_factory.getbasetemp() / "shared-limits" / str(next(_LIMITS_DIRS))
    monkeypatch.setenv("JUDGEFLOW_LIMITS_DIR", str(folder))
    forget()
    local_pace.forget()


@pytest.fixture(autouse=True, scope="session")
def _own_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """judgeflow's user cache (remembered price lookups) goes to a temporary directory, not ~/.cache;
    child processes inherit it."""
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[str]:
    """http://127.0.0.1:<port> of ../shared/tools/fake_llm.py (unmodified: it fills every reply from the JSON
    schema the request carries), run as a subprocess; skipped when it is not beside the project."""
    if not FAKE_LLM.exists():
        pytest.skip("../shared/tools/fake_llm.py is not beside the project")
    from fakes import schema_fake  # tests/ is on sys.path (this conftest's folder)

    with schema_fake(FAKE_LLM) as url:
        yield url.removesuffix("/v1")


@pytest.fixture(scope="module")
def fake_llm_rules() -> Iterator[str]:
    """The same, with --model-rules (OpenAI's parameter rules for reasoning models, with its error texts)."""
    if not FAKE_LLM.exists():
        pytest.skip("../shared/tools/fake_llm.py is not beside the project")
    from fakes import schema_fake

    with schema_fake(FAKE_LLM, "--model-rules") as url:
        yield url


@pytest.fixture
def shared_data() -> Path:
    if not (SHARED_DATA / "factual_qa.jsonl").exists():
        pytest.skip("../shared/data is not beside the project")
    return SHARED_DATA
