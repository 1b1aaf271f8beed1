"""RunSettings: one typed object builds the Judge for a CLI run, resume, batch replay and online re-judging."""

from __future__ import annotations

import shlex
from pathlib import Path

from judgeflow.cli import build_parser
from judgeflow.runs.batch import ReplayTransport, replay_judge
from judgeflow.runs.batch.ledger import BatchLedger
from judgeflow.runs.settings import RunSettings
from judgeflow.runs.store import RunStore


def settings(*argv: str) -> RunSettings:
    args = build_parser().parse_args(["run", "in.jsonl", "-o", "out.jsonl", *argv])
    return RunSettings.from_args(args)


def test_the_record_round_trips_and_builds_the_same_judge() -> None:
    s = settings("--model", "baseline/lexical", "--mode", "spec", "--strategy", "single", "--threshold", "0.7")
    again = RunSettings.from_record(s.record())
    assert again.diff(s) == []
    judge = again.judge()
    assert judge.coverage is not None and judge.mode == "spec" and judge.strategy == "single"
    assert judge.backend.fingerprint == s.judge().backend.fingerprint
    assert RunSettings.from_record(settings("--model", "baseline/lexical", "--no-coverage", "--mode", "spec")
                                   .record()).judge().coverage is None


def test_diff_names_what_changed() -> None:
    old = settings("--model", "baseline/lexical")
    new = settings("--model", "baseline/lexical", "--strategy", "single", "--threshold", "0.3")
    assert new.diff(old) == ["strategy: 'graph' then, 'single' now", "threshold: None then, 0.3 now"]


def test_the_delimiter_is_recorded_compared_and_resumed() -> None:
    """#49: `--delimiter` (#48) was a flag with no spec field, so the record lost it and a resume read
    the CSV with the sniffed delimiter instead."""
    s = settings("--model", "baseline/lexical", "--delimiter", ";")
    assert s.record()["delimiter"] == ";" and s.spec().delimiter == ";"
    assert RunSettings.from_record(s.record()).delimiter == ";"
    assert settings("--model", "baseline/lexical").diff(s) == ["delimiter: ';' then, None now"]
    assert "--delimiter ';'" in s.resume_command()


def test_resume_command_and_record_never_hold_a_credential() -> None:
    s = settings("--model", "openai/gpt-4o-mini", "--base-url", "https://user:s3cret@example.com/v1")
    assert "s3cret" not in s.resume_command() and "credentials removed" in s.resume_command()
    assert "s3cret" not in str(s.record())
    assert s.resume_command().startswith("judgeflow run in.jsonl -o out.jsonl --model openai/gpt-4o-mini")


def test_batch_replay_keeps_the_runs_requirement_coverage(tmp_path: Path) -> None:
    s = settings("--model", "openai/gpt-4o-mini", "--mode", "spec", "--strategy", "single")
    with RunStore(tmp_path / "runs.sqlite") as store:
        judge = replay_judge(s.record(), ReplayTransport(BatchLedger(store), "run-1"))
    assert judge.coverage is not None  # the replayed run judges what the online run would have (was lost before)
    assert judge.strategy == "single" and judge.mode == "spec"


def test_the_resume_command_keeps_coverage_off_or_on_against_the_modes_default() -> None:
    """A `--mode spec --no-coverage` run resumed with its printed command has the same settings (the
    command used to drop the flag, so the resume was refused as "other settings")."""
    for argv in (["--mode", "spec", "--no-coverage"], ["--coverage"], ["--mode", "spec"], []):
        s = settings("--model", "baseline/lexical", *argv)
        again = build_parser().parse_args(shlex.split(s.resume_command())[1:])
        assert RunSettings.from_args(again).diff(s) == [], argv
