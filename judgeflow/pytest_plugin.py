"""The pytest plugin (entry point `judgeflow` in the `pytest11` group): options and a fixture.

    pytest --judgeflow-model openai/gpt-4o-mini      # default: $JUDGEFLOW_MODEL, else offline
    pytest --judgeflow-model openai/my-judge --judgeflow-base-url http://127.0.0.1:8000/v1
    pytest --judgeflow-no-cache                      # judge afresh, ignore the cache (also: --cache-clear)

    def test_bot(judgeflow_judge):
        judgeflow_judge.assert_no_hallucination(answer, reference="1147")

Importing this module costs nothing: judgeflow itself is loaded only when the fixture is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("judgeflow", "judgeflow hallucination checks")
    group.addoption("--judgeflow-model", default=None,
                    help="judge model for assert_no_hallucination / judgeflow_judge (provider/model)")
    group.addoption("--judgeflow-base-url", default=None,
                    help="an OpenAI- or Anthropic-compatible endpoint for the judge model (vLLM, llama.cpp, a proxy)")
    group.addoption("--judgeflow-cache-dir", default=None,
                    help="where judged results are cached (default .judgeflow/pytest-cache under the rootdir)")
    group.addoption("--judgeflow-no-cache", action="store_true", default=False,
                    help="do not read or write cached judgements")


#: the pytest rootdir of the current session (the cache lives in <rootdir>/.judgeflow/pytest-cache)
rootdir: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    global rootdir
    rootdir = config.rootpath
    if config.getoption("cacheclear", default=False):  # `pytest --cache-clear` clears the judged results too
        import shutil

        shutil.rmtree(rootdir / ".judgeflow" / "pytest-cache", ignore_errors=True)
    model = config.getoption("--judgeflow-model", default=None)
    directory = config.getoption("--judgeflow-cache-dir", default=None)
    no_cache = config.getoption("--judgeflow-no-cache", default=False)
    base_url = config.getoption("--judgeflow-base-url", default=None)
    if model or directory or no_cache or base_url:
        from .testing import configure

        configure(model=model, cache_dir=directory, cache=not no_cache, base_url=base_url)


@pytest.fixture
def judgeflow_judge(request: pytest.FixtureRequest) -> Any:
    """A `testing.Checker` for the session's judge (--judgeflow-model, cached under .judgeflow/pytest-cache):
    `.judge(answer, ...)` -> Judgment, `.assert_no_hallucination(answer, ...)`, `.judge_item(item)`."""
    from .testing import cached_judge

    return cached_judge()
