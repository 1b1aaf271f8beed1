"""assert_no_hallucination, its on-disk cache, and the pytest plugin (fixture and options)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from fakes import MOSCOW_RIGHT, MOSCOW_WRONG, FakeLLM, moscow_checks, moscow_claims
from fakes.process import pytest_env

from judgeflow import Judge, testing
from judgeflow.runs.cache import Cached, FileCache
from judgeflow.testing import Checker, assert_no_hallucination

REF = "Yuri Dolgorukiy founded Moscow in 1147."


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(testing.CACHE_DIR_ENV, str(tmp_path / "cache"))
    testing.configure()
    return tmp_path / "cache"


def test_offline_pass_and_fail_with_the_claim_listed(_cache_in_tmp: Path) -> None:
    ok = assert_no_hallucination("Moscow was founded in 1147 by Yuri Dolgorukiy.", reference=REF)
    assert ok.label == 0
    with pytest.raises(AssertionError) as err:
        assert_no_hallucination("Moscow was founded in 1247 by Yuri Dolgorukiy.", reference=REF,
                                question="Who founded Moscow and when?")
    msg = str(err.value)
    assert "judgeflow found a hallucination (factual_correctness, baseline/lexical)" in msg
    assert "c1 [contradicted] Moscow was founded in 1247 by Yuri Dolgorukiy." in msg
    assert "reason: states ['1247']" in msg
    assert len(list(_cache_in_tmp.glob("*.json"))) == 2


def test_source_spec_and_json_answers() -> None:
    assert_no_hallucination("The walls were built in 1156.", source=["The Kremlin walls were built in 1156."])
    with pytest.raises(AssertionError, match="not_found"):
        assert_no_hallucination("The walls were painted blue in 1156.", source="The Kremlin walls were built in 1156.")
    assert_no_hallucination({"status": "shipped", "days": 3}, spec="Status must be shipped. Delivery within 3 days.")


def test_no_evidence_is_unscored_and_fails_unless_allowed() -> None:
    with pytest.raises(AssertionError, match="could not judge the answer \\(invalid"):
        assert_no_hallucination("anything")
    assert assert_no_hallucination("anything", allow_unscored=True).label is None


def test_the_second_call_is_served_from_the_cache_without_a_model_call(tmp_path: Path) -> None:
    replies = [moscow_claims(), moscow_checks(reason="the reference says 1147")]
    llm = FakeLLM("openai", replies)
    cache = FileCache(tmp_path / "c")
    inner = Judge(backend=llm.backend(), keep_trace=False)
    judge = Checker(Cached(inner, cache, keep_trace=False))
    for attempt in range(2):
        with pytest.raises(AssertionError) as err:
            judge.assert_no_hallucination(MOSCOW_WRONG, reference="1147")
        assert "reason: the reference says 1147" in str(err.value)
        assert ("cached" in str(err.value)) == (attempt == 1)
    assert len(llm.requests) == 2  # decompose + check, once
    # a different model or criterion is a different key
    other = Judge(backend=FakeLLM("anthropic").backend())
    item = testing.make_item(MOSCOW_WRONG, reference="1147")
    assert other.fingerprint(item) != inner.fingerprint(item)
    assert Judge("baseline/lexical", criterion="reference_faithfulness").fingerprint(item) != Judge(
        "baseline/lexical").fingerprint(item)


def test_unscored_results_are_not_cached(tmp_path: Path) -> None:
    judge = Checker(Cached(Judge(backend=FakeLLM("openai", [500]).backend()), FileCache(tmp_path / "c")))
    assert judge.assert_no_hallucination("x", reference="y", allow_unscored=True).label is None
    assert not (tmp_path / "c").exists()


def test_a_torn_cache_file_is_judged_again(tmp_path: Path) -> None:
    inner = Judge("baseline/lexical")
    judge = Checker(Cached(inner, FileCache(tmp_path)))
    item = testing.make_item(MOSCOW_RIGHT, reference=REF)
    key = inner.fingerprint(item)
    assert key is not None
    (tmp_path / f"{key}.json").write_text("{not json")
    first = judge.judge_item(item)
    assert (first.label, first.cached) == (0, False)
    assert judge.judge_item(item).cached
    assert json.loads((tmp_path / f"{key}.json").read_text())["label"] == 0


def test_plugin_is_registered_as_a_pytest11_entry_point() -> None:
    eps = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert eps.get("judgeflow") == "judgeflow.pytest_plugin"


@pytest.mark.slow
def test_plugin_fixture_and_failure_message_in_a_real_pytest_run(tmp_path: Path) -> None:
    (tmp_path / "test_bot.py").write_text(textwrap.dedent('''
        from judgeflow.testing import assert_no_hallucination

        def test_right(judgeflow_judge):
            judgeflow_judge.assert_no_hallucination("Moscow was founded in 1147.", reference="Moscow, 1147")

        def test_wrong_year():
            assert_no_hallucination("Moscow was founded in 1247.", reference="Moscow was founded in 1147.")
    '''))
    env = pytest_env({k: v for k, v in os.environ.items() if not k.startswith(("JUDGEFLOW_", "OPENAI_", "ANTHROPIC_"))})
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--judgeflow-model", "baseline/lexical",
           "--judgeflow-cache-dir", str(tmp_path / "jc"), str(tmp_path / "test_bot.py")]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "1 failed, 1 passed" in out.stdout, out.stdout + out.stderr
    assert "c1 [contradicted] Moscow was founded in 1247." in out.stdout
    assert len(list((tmp_path / "jc").glob("*.json"))) == 2


def test_the_model_follows_judgeflow_model_between_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    from judgeflow import ConfigError

    assert assert_no_hallucination(MOSCOW_RIGHT, reference=REF).model == "baseline/lexical"
    monkeypatch.setenv("JUDGEFLOW_MODEL", "openai/gpt-4o-mini")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        assert_no_hallucination(MOSCOW_RIGHT, reference=REF)


def test_default_cache_is_under_the_pytest_rootdir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(testing.CACHE_DIR_ENV)
    import judgeflow.pytest_plugin as plugin

    assert plugin.rootdir is not None  # this very session loaded the plugin
    assert testing.cache_dir() == plugin.rootdir / ".judgeflow" / "pytest-cache"   # as the docs say (#34)
    monkeypatch.setattr(plugin, "rootdir", None)
    assert testing.cache_dir() == Path(".judgeflow") / "pytest-cache"


@pytest.mark.slow
def test_plugin_hides_its_frames_uses_pytest_cache_and_names_its_option(tmp_path: Path) -> None:
    """Issue 11: no judgeflow frames or docstring in a failure; --cache-clear clears the judged
    results (they live in pytest's config.cache); the no-key message names --judgeflow-model."""
    (tmp_path / "test_bot.py").write_text(textwrap.dedent('''
        import json, os
        from judgeflow.testing import assert_no_hallucination

        def test_right(judgeflow_judge):
            r = judgeflow_judge.assert_no_hallucination("Moscow was founded in 1147.", reference="Moscow, 1147")
            with open(os.environ["CACHED_LOG"], "a") as f:
                f.write(json.dumps(r.cached) + "\\n")

        def test_wrong_year():
            assert_no_hallucination("Moscow was founded in 1247.", reference="Moscow was founded in 1147.")
    '''))
    env = pytest_env({k: v for k, v in os.environ.items() if not k.startswith(("JUDGEFLOW_", "OPENAI_", "ANTHROPIC_"))})
    env["CACHED_LOG"] = str(tmp_path / "cached.log")
    base = [sys.executable, "-m", "pytest", "-q", "--judgeflow-model", "baseline/lexical", str(tmp_path / "test_bot.py")]
    first = subprocess.run(base, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "1 failed, 1 passed" in first.stdout, first.stdout + first.stderr
    assert "judgeflow/testing.py" not in first.stdout and "Args:" not in first.stdout, first.stdout
    assert "c1 [contradicted] Moscow was founded in 1247." in first.stdout
    assert len(list((tmp_path / ".judgeflow" / "pytest-cache").glob("*.json"))) == 2  # where the docs say (#34)
    subprocess.run(base, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    subprocess.run([*base, "--cache-clear"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert (tmp_path / "cached.log").read_text().split() == ["false", "true", "false"]

    nokey = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--judgeflow-model",
                            "openai/gpt-4o-mini", str(tmp_path / "test_bot.py")],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "--judgeflow-model baseline/lexical" in nokey.stdout, nokey.stdout
    assert "use --model " not in nokey.stdout


def test_the_fixture_judges_without_asserting(judgeflow_judge) -> None:  # type: ignore[no-untyped-def]
    """#34: `judgeflow_judge.judge(...)` returns the Judgment of a wrong answer instead of raising."""
    r = judgeflow_judge.judge("Moscow was founded in 1247.", reference="Moscow was founded in 1147.")
    assert r.label == 1 and r.claims
    assert judgeflow_judge.judge("Moscow was founded in 1147.", reference="Moscow was founded in 1147.").label == 0
