"""#36 item 1: one typed spec builds the judging and is the run's record.

Every Judging gives its spec back and the spec builds it again (a round trip, through JSON too);
the store records the spec, a resume rebuilds the judging from it (panels from Python too); a run's
record says what judged it, not what its settings assumed; the rules of composition are validators.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from judgeflow import Cascade, ConfigError, Judge, Panel, Repeats
from judgeflow.build import build
from judgeflow.config import (
    JUDGING,
    CascadeSpec,
    ClientConfig,
    JudgeSpec,
    PanelSpec,
    RepeatsSpec,
    RunSpec,
    spec_of,
)
from judgeflow.runs.run import Run
from judgeflow.runs.store import RunStore
from tests.fakes.items import moscow

OFFLINE = ("baseline/lexical", "baseline/rouge-l")


def judgings():
    """One of each Judging, built by hand (not from a spec)."""
    lex = Judge("baseline/lexical", threshold=0.4, strategy="single", mode="factual")
    rouge = Judge("baseline/rouge-l", criterion="factual_correctness")
    llm = Judge("openai/gpt-4o-mini", api_key="sk-test-secret", temperature=0.7, rpm=30, max_source_chars=0)
    return {
        "judge": lex,
        "llm": llm,
        "panel": Panel([lex, rouge], rule="any", tie=None),
        "samples": Panel([llm], samples=3),
        "cascade": Cascade(Panel([lex, rouge]), llm, escalate_on="disagree,unscored", audit_rate=0.2, seed=7),
        "repeats": Repeats(rouge, 3),
    }


@pytest.mark.parametrize("name", list(judgings()))
def test_every_judging_round_trips_through_its_spec(name: str) -> None:
    judging = judgings()[name]
    spec = spec_of(judging)
    rebuilt = build(spec)
    assert type(rebuilt) is type(judging) and rebuilt.model == judging.model
    assert spec_of(rebuilt) == spec
    item = moscow(source=["Moscow was founded in 1147."])
    from judgeflow.items import Item

    assert rebuilt.fingerprint(Item.model_validate(item)) == judging.fingerprint(Item.model_validate(item))
    stored = spec.model_dump_json()  # what the run store keeps
    assert "sk-test-secret" not in stored
    assert JUDGING.validate_json(stored).model_dump() == spec.model_dump()


def test_a_panel_is_built_from_python_as_the_cli_builds_it() -> None:
    spec = PanelSpec(members=[JudgeSpec(model=m) for m in OFFLINE], rule="all")
    panel = build(spec)
    assert isinstance(panel, Panel) and panel.rule == "all" and [m.model for m in panel.judges] == list(OFFLINE)
    assert panel.judge(moscow()).label in (0, 1)


@pytest.mark.parametrize("make, why", [
    (lambda: RepeatsSpec(judging=PanelSpec(members=[JudgeSpec(model=m) for m in OFFLINE])), "repeats take one judge"),
    (lambda: PanelSpec(members=[JudgeSpec(model="baseline/lexical")]), "a panel of one judge"),
    (lambda: PanelSpec(members=[JudgeSpec(model="baseline/lexical")], samples=3),
     "every sample would give the same"),
    # the model family's temperature is the built judge's to know (a reasoning model samples at
    # its own)
    (lambda: build(PanelSpec(members=[JudgeSpec(model="openai/gpt-4o-mini")], samples=3),
                   api_key="k"), "temperature above 0"),
    (lambda: CascadeSpec(cheap=JudgeSpec(model=OFFLINE[0]), strong=JudgeSpec(model=OFFLINE[1]), escalate_on="disagree"),
     "several votes"),
    (lambda: RunSpec(judging=PanelSpec(members=[JudgeSpec(model=m) for m in OFFLINE]), batch=True), "--batch"),
    (lambda: RunSpec(judging=RepeatsSpec(judging=JudgeSpec(model=OFFLINE[0])), batch=True), "--batch"),
    (lambda: RunSpec(judging=PanelSpec(members=[JudgeSpec(model=m, coverage=True) for m in OFFLINE])), "coverage"),
    (lambda: JudgeSpec(model=OFFLINE[0], client=ClientConfig.of(None, {"temprature": 0.2})), "did you mean 'temperature'"),
])
def test_the_rules_of_composition_are_validators_python_users_get(make, why) -> None:
    with pytest.raises((ConfigError, ValueError), match=why):
        make()


def _items(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(json.dumps(moscow(id=f"q{i}")) for i in range(3)) + "\n")
    return path


def test_the_record_says_what_judged_not_what_the_settings_assumed(tmp_path: Path) -> None:
    """The bug in #36: `Run.open` with the settings and a `Judge("baseline/rouge-l", strategy="single")`
    recorded `strategy: graph`, and the resume command would have continued with graph."""
    items = _items(tmp_path)
    from judgeflow.cli.flags import resume_command

    settings = RunSpec(judging=JudgeSpec(model="baseline/rouge-l"), input=str(items),
                       output=str(tmp_path / "out.jsonl"))
    judge = Judge("baseline/rouge-l", strategy="single")
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, settings, judging=judge)
        assert run.info.spec.judging.strategy == "single"
        assert "--strategy single" in resume_command(run.info.spec)
        rebuilt = run.judging()
        assert isinstance(rebuilt, Judge) and rebuilt.strategy == "single"


def test_a_run_refuses_a_judging_its_record_does_not_describe(tmp_path: Path) -> None:
    """Seen failing on the old code: the run judged with `single` under a record saying `graph`."""
    items = _items(tmp_path)
    settings = RunSpec(judging=JudgeSpec(model="baseline/rouge-l"), input=str(items),
                       output=str(tmp_path / "out.jsonl"))
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, settings)

        async def judge_all() -> list[object]:
            return [j async for j in run.judge(Judge("baseline/rouge-l", strategy="single"))]

        with pytest.raises(ConfigError, match=r"strategy: 'graph' then, 'single' now"):
            asyncio.run(judge_all())


def test_a_python_panel_run_is_recorded_and_resumed_from_its_spec(tmp_path: Path) -> None:
    items = _items(tmp_path)
    spec = RunSpec(judging=PanelSpec(members=[JudgeSpec(model=m) for m in OFFLINE], rule="any"),
                   input=str(items), output=str(tmp_path / "out.jsonl"))
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, spec)

        async def first() -> None:
            async for _ in run.judge(run.judging()):
                break  # stopped after one row

        asyncio.run(first())
        run.stop()
        again = Run.open(store, spec, resume=True)
        assert again.run_id == run.run_id
        rebuilt = again.judging()
        assert isinstance(rebuilt, Panel) and rebuilt.spec() == spec.judging
        other = spec.model_copy(update={"judging": PanelSpec(members=[JudgeSpec(model=m) for m in OFFLINE])})
        with pytest.raises(ConfigError, match="rule"):
            Run.open(store, other, resume=True)  # the stored spec is compared: another rule is another run


def test_the_specs_name_the_modes_and_knowledge_strategies_the_core_has() -> None:
    """config/ is below items and knowledge, so it names their values itself: they must not drift."""
    from judgeflow.config.judging import KNOWLEDGE, MODES
    from judgeflow.items import FAMILIES
    from judgeflow.knowledge import STRATEGIES

    assert MODES == ("auto", *FAMILIES) and KNOWLEDGE == tuple(STRATEGIES)
