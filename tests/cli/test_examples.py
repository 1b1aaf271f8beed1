"""The use-case examples run as-is with no key, and show what they say they show."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Judge
from judgeflow.languages import by_language

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def run_script(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """An example run as `python examples/NAME.py` runs it (as __main__, no key, 200 columns), in this
    process: its output is what the test reads; a fresh interpreter per example only re-paid the imports
    (tests/test_front_door.py runs every example as a subprocess in a plain archive)."""
    import runpy

    def run(script: Path) -> str:
        for name in [k for k in os.environ if k.startswith(("JUDGEFLOW_", "OPENAI_", "ANTHROPIC_"))]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("COLUMNS", "200")
        monkeypatch.chdir(EXAMPLES.parent)
        monkeypatch.setattr(sys, "argv", [str(script)])
        capsys.readouterr()
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as e:
            assert e.code in (0, None), capsys.readouterr()
        return capsys.readouterr().out

    return run


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rag_pipeline_prints_per_claim_passages(run_script) -> None:
    out = run_script(EXAMPLES / "rag_pipeline.py")
    assert "label 0 (source_faithfulness)" in out
    assert "contradicted The red brick walls were built between 1385 and 1395." in out
    assert "not_found    Its architect was blinded afterwards." in out
    assert "evidence (document 1, passage 3): 'In 1156 Yuri Dolgorukiy" in out
    assert "(rag | judge).batch(questions) -> labels [0, 1, 1]" in out


def test_agent_spec_review_extras_pass_missing_fails(run_script) -> None:
    out = run_script(EXAMPLES / "agent_spec_review.py")
    assert "extras_ok: label 0" in out
    assert "missing_link: label 1  requirement not met: r2 Link to the changelog" in out
    assert "wrong_value: label 1  claim c3 fails (verdict violates_spec): Python 3.8" in out


def test_russian_quiz_catches_the_wrong_year_offline(run_script) -> None:
    out = run_script(EXAMPLES / "russian_quiz.py")
    assert "ru-correct (ru): label 0, expected 0" in out
    assert "ru-wrong_year (ru): label 1, expected 1" in out
    assert "en-wrong_year (en): label 1, expected 1" in out
    assert "│ ru       │ 3     │" in out


def test_russian_quiz_with_a_model_uses_the_short_reference_and_catches_1247() -> None:
    quiz = load("russian_quiz")
    items = [i for i in quiz.items(offline=False) if i.id in ("ru-correct", "ru-wrong_year")]
    assert {i.reference for i in items} == {"Юрий Долгорукий"}
    llm = FakeLLM("openai", [
        Claims(claims=[Claim(id="c1", text="Москву основал Юрий Долгорукий.", kind="name"),
                       Claim(id="c2", text="Москва основана в 1147 году.", kind="date"),
                       Claim(id="c3", text="В 1156 году князь велел построить деревянные стены Кремля.", kind="date")]),
        ClaimChecks(checks=[
            ClaimCheck(claim_id="c1", verdict="supported", basis="reference", evidence="Юрий Долгорукий"),
            ClaimCheck(claim_id="c2", verdict="supported", basis="knowledge", reason="1147 по летописи"),
            ClaimCheck(claim_id="c3", verdict="supported", basis="knowledge", reason="верная деталь"),
        ]),
        Claims(claims=[Claim(id="c1", text="Москву основал Юрий Долгорукий.", kind="name"),
                       Claim(id="c2", text="Москва основана в 1247 году.", kind="date")]),
        ClaimChecks(checks=[
            ClaimCheck(claim_id="c1", verdict="supported", basis="reference", evidence="Юрий Долгорукий"),
            ClaimCheck(claim_id="c2", verdict="false_fact", basis="knowledge", reason="по летописи 1147, не 1247"),
        ]),
    ])
    judge = Judge(backend=llm.backend(), mode="factual", concurrency=1)
    correct, wrong = judge.judge_many(items)
    assert (correct.label, wrong.label) == (0, 1)
    assert "1247" in (wrong.reason or "") and wrong.claims[1].verdict == "false_fact"
    assert "<reference>\nЮрий Долгорукий\n</reference>" in llm.user_prompts()[1]
    assert "в 1247 году" in llm.user_prompts()[2]  # the Russian answer goes to the model as is
    assert by_language([correct, wrong])["ru"] == {"items": 2, "label_1": 1, "label_0": 1, "unscored": 0,
                                                   "labelled": 2, "agree": 2}


def test_agent_trace_review_names_the_tool_message_and_reports_kappa(run_script) -> None:
    out = run_script(EXAMPLES / "agent_trace_review.py")
    assert "weather: label 1 (trace_grounding: conversation (messages) present)" in out
    assert "evidence from tool get_weather, call_1: 'Paris: 18 C, light rain, wind 12 km/h.' (quote found in that message)" in out
    assert "the same item: True" in out
    assert "weather#t2: label 1" in out and "weather#t4: label" in out
    assert "calibration on traces.jsonl (18 hand-labelled traces): Cohen's kappa 0.89" in out


@pytest.mark.parametrize("name", ["rag_pipeline", "agent_spec_review", "russian_quiz", "agent_trace_review"])
def test_each_example_says_what_it_shows_and_how_to_run_it(name: str) -> None:
    doc = load(name).__doc__ or ""
    assert "What it shows" in doc and f"python examples/{name}.py" in doc


@pytest.mark.parametrize("name", ["quickstart", "criterion_ab", "rag_pipeline", "agent_spec_review", "russian_quiz",
                                  "agent_trace_review"])
def test_an_example_given_a_model_without_its_key_says_the_fix_not_a_traceback(
        name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """#48: `python examples/X.py --model openai/gpt-4o-mini` (each docstring's second command) with no key
    printed a 20-line traceback ending in the fix; it now ends with the fix alone."""
    import runpy

    for var in [k for k in os.environ if k.startswith(("JUDGEFLOW_", "OPENAI_", "ANTHROPIC_"))]:
        monkeypatch.delenv(var)
    monkeypatch.chdir(EXAMPLES.parent)
    monkeypatch.setattr(sys, "argv", [str(EXAMPLES / f"{name}.py"), "--model", "openai/gpt-4o-mini"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name="__main__")
    assert isinstance(stop.value.code, str) and stop.value.code.startswith("error: ")
    assert "needs an API key" in stop.value.code and "OPENAI_API_KEY" in stop.value.code
