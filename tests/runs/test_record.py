"""A run's record is its typed `RunSpec` (#49): the store keeps it, reads it back equal, and a
resume, a batch replay and online re-judging rebuild the judging from it alone."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from judgeflow.build import build
from judgeflow.cli import build_parser
from judgeflow.cli.flags import resume_command, to_spec
from judgeflow.config.client import ClientConfig
from judgeflow.config.judging import CascadeSpec, JudgeSpec, PanelSpec, RepeatsSpec
from judgeflow.config.run import RunSpec
from judgeflow.errors import ConfigError
from judgeflow.runs.batch import ReplayTransport, replay_judge
from judgeflow.runs.batch.ledger import BatchLedger
from judgeflow.runs.run import Run, record_diff, record_of
from judgeflow.runs.store import RunStore


def spec_of(*argv: str) -> RunSpec:
    return to_spec(build_parser().parse_args(["run", "in.jsonl", "-o", "out.jsonl", *argv]))


HOT = ClientConfig(temperature=0.7)
JUDGINGS = {
    "judge": JudgeSpec(
        model="baseline/lexical", strategy="single", client=ClientConfig(threshold=0.4)
    ),
    "panel": PanelSpec(
        members=[JudgeSpec(model="openai/a", client=HOT), JudgeSpec(model="anthropic/b")],
        rule="any",
        tie=None,
    ),
    "cascade": CascadeSpec(
        cheap=PanelSpec(members=[JudgeSpec(model="openai/a", client=HOT)], samples=3),
        strong=JudgeSpec(model="openai/b", mode="factual"),
        escalate_on="disagree",
        audit_rate=0.1,
        seed=7,
    ),
    "repeats": RepeatsSpec(judging=JudgeSpec(model="openai/a", knowledge="commit-first"), k=3),
}


@pytest.mark.parametrize("kind", sorted(JUDGINGS))
def test_a_stored_runspec_reads_back_equal(tmp_path: Path, kind: str) -> None:
    spec = RunSpec(
        judging=JUDGINGS[kind],
        input="in.jsonl",
        output="out.jsonl",
        turns="all",
        delimiter=";",
        column_map={"answer": "reply"},
        limit=5,
        budget="$1",
    )
    with RunStore(tmp_path / "runs.sqlite") as store:
        run_id = store.start_run(settings=record_of(spec, model="what judged"), output_path="out")
    with RunStore(tmp_path / "runs.sqlite", readonly=True) as store:
        info = store.get_run(run_id)
    assert info.spec == spec and type(info.spec.judging) is type(JUDGINGS[kind])
    assert info.model == "what judged"
    assert record_diff(info.settings, record_of(spec, model="x")) == []


def test_the_record_builds_the_same_judge(tmp_path: Path) -> None:
    items = tmp_path / "in.jsonl"
    items.write_text('{"id": "a", "answer": "Paris", "reference": "Paris is the capital."}\n')
    spec = spec_of(
        "--model",
        "baseline/lexical",
        "--mode",
        "spec",
        "--strategy",
        "single",
        "--threshold",
        "0.7",
    )
    spec = spec.model_copy(update={"input": str(items), "output": str(tmp_path / "out.jsonl")})
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, spec)
        judge = run.judging()
    assert judge.coverage is not None and judge.mode == "spec" and judge.strategy == "single"
    assert judge.backend.fingerprint == build(spec.judging).backend.fingerprint
    assert (
        spec_of("--model", "baseline/lexical", "--no-coverage", "--mode", "spec").judging.coverage
        is False
    )


def test_diff_names_what_changed() -> None:
    old = record_of(spec_of("--model", "baseline/lexical"))
    new = record_of(
        spec_of("--model", "baseline/lexical", "--strategy", "single", "--threshold", "0.3")
    )
    assert record_diff(old, new) == [
        "strategy: 'graph' then, 'single' now",
        "threshold: None then, 0.3 now",
    ]


def test_the_delimiter_is_recorded_compared_and_resumed() -> None:
    """#49: `--delimiter` (#48) was a flag with no spec field, so the record lost it and a resume read
    the CSV with the sniffed delimiter instead."""
    s = spec_of("--model", "baseline/lexical", "--delimiter", ";")
    assert record_of(s)["spec"]["delimiter"] == ";" and s.delimiter == ";"
    assert record_diff(record_of(s), record_of(spec_of("--model", "baseline/lexical"))) == [
        "delimiter: ';' then, None now"
    ]
    assert "--delimiter ';'" in resume_command(s)


def test_resume_command_and_record_never_hold_a_credential(tmp_path: Path) -> None:
    s = spec_of("--model", "openai/gpt-4o-mini", "--base-url", "https://user:s3cret@example.com/v1")
    assert "s3cret" not in resume_command(s) and "credentials removed" in resume_command(s)
    assert resume_command(s).startswith(
        "judgeflow run in.jsonl -o out.jsonl --model openai/gpt-4o-mini"
    )
    with RunStore(tmp_path / "runs.sqlite") as store:
        run_id = store.start_run(settings=record_of(s), output_path="out")
        assert "s3cret" not in str(store.get_run(run_id).settings)


def test_batch_replay_keeps_the_runs_requirement_coverage(tmp_path: Path) -> None:
    s = spec_of("--model", "openai/gpt-4o-mini", "--mode", "spec", "--strategy", "single")
    with RunStore(tmp_path / "runs.sqlite") as store:
        judge = replay_judge(s, ReplayTransport(BatchLedger(store), "run-1"))
    assert (
        judge.coverage is not None
    )  # the replayed run judges what the online run would have (was lost before)
    assert judge.strategy == "single" and judge.mode == "spec"


def test_the_resume_command_keeps_coverage_off_or_on_against_the_modes_default() -> None:
    """A `--mode spec --no-coverage` run resumed with its printed command has the same spec (the
    command used to drop the flag, so the resume was refused as "other settings")."""
    for argv in (["--mode", "spec", "--no-coverage"], ["--coverage"], ["--mode", "spec"], []):
        s = spec_of("--model", "baseline/lexical", *argv)
        assert spec_of(*shlex.split(resume_command(s))[5:]) == s, argv


def test_composition_rules_are_the_specs_validators() -> None:
    """Each "does not combine with" is a RunSpec or judging-spec validator, met from Python and the
    command line alike (the CLI holds no copy)."""
    with pytest.raises(ConfigError, match="--threshold applies to the offline judges"):
        RunSpec(judging=JudgeSpec(model="openai/a", client=ClientConfig(threshold=0.5)))
    with pytest.raises(ConfigError, match="--repeats does not combine with --batch"):
        spec_of("--model", "openai/a", "--repeats", "2", "--batch")
    with pytest.raises(ConfigError, match="--batch does not support --panel"):
        spec_of("--panel", "openai/a,openai/b", "--batch")
    with pytest.raises(
        ConfigError, match="--repeats does not combine with --panel, --samples or --cascade"
    ):
        spec_of("--panel", "openai/a,openai/b", "--repeats", "2")


def test_runs_show_derives_the_resume_command_of_a_python_run_from_its_record(
    tmp_path: Path, capsys
) -> None:
    """A run opened from Python records no command line: `runs show` derives it from the recorded
    spec, and that command resumes the run (the judging rebuilt from the record alone)."""
    from judgeflow.cli import main

    items = tmp_path / "in.jsonl"
    items.write_text(
        "".join(f'{{"id": "q{n}", "answer": "Paris.", "reference": "Paris."}}\n' for n in range(3))
    )
    spec = RunSpec(
        judging=JudgeSpec(model="baseline/lexical", strategy="single"),
        input=str(items),
        output=str(tmp_path / "out.jsonl"),
    )
    store_path = tmp_path / "runs.sqlite"
    with RunStore(store_path) as store:
        run = Run.open(store, spec)
        run.stop()
    assert main(["runs", "show", run.run_id, "--store", str(store_path), "--json"]) == 0
    import json

    command = json.loads(capsys.readouterr().out)["command"]
    assert command.startswith("judgeflow run") and "--strategy single" in command
    assert main([*shlex.split(command)[1:], "--store", str(store_path), "--no-progress"]) == 0
    assert f"resuming run {run.run_id}: 0 of 3 rows already done" in capsys.readouterr().err


def test_max_input_chars_above_the_default_is_the_runs_limit(tmp_path: Path) -> None:
    """#49 (an item was converted and checked three more times on its way to the judge, each time
    under the default 200,000): `--max-input-chars 300000` judged nothing over 200,000 characters."""
    from judgeflow.cli import main

    items = tmp_path / "in.jsonl"
    big = "Paris is the capital of France. " * 7000  # 224,000 characters
    items.write_text(json.dumps({"id": "big", "answer": "Paris.", "source": big}) + "\n")
    argv = [
        "run",
        str(items),
        "--model",
        "baseline/lexical",
        "--strategy",
        "single",
        "--no-progress",
        "--store",
        str(tmp_path / "runs.sqlite"),
    ]
    assert main([*argv, "-o", str(tmp_path / "a.jsonl"), "--max-input-chars", "300000"]) == 0
    assert json.loads((tmp_path / "a.jsonl").read_text())["status"] == "judged"
    assert main([*argv, "-o", str(tmp_path / "b.jsonl")]) == 1  # the default still refuses it
    assert "--max-input-chars 200,000" in json.loads((tmp_path / "b.jsonl").read_text())["error"]
