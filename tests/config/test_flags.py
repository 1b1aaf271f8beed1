"""#36 item 1: `judgeflow run`'s flags come from the spec's fields: every flag is some field's flag
(ClientConfig, the judging specs, RunSpec) or is named here as the command line's own; every
field's flag exists; a flag that changes results is compared on resume."""

from __future__ import annotations

import argparse

from judgeflow.cli import build_parser
from judgeflow.cli.flags import dest, flagged, resume_command, to_spec
from judgeflow.config import (
    CascadeSpec,
    ClientConfig,
    JudgeSpec,
    PanelSpec,
    RepeatsSpec,
    RunSpec,
    option_flag,
)
from judgeflow.config.client import affects_results
from judgeflow.config.run import flat_view, results_view

SPECS = (ClientConfig, JudgeSpec, PanelSpec, CascadeSpec, RepeatsSpec, RunSpec)
#: flags of the command line itself (how it runs, prints or spreads out), not of what a run is
CLI_ONLY = {"-h", "--help", "--resume", "--no-progress", "--json", "--no-coverage", "--no-check-dropped",
            "--no-with-inputs"}
#: `--ray*`: where a run is spread (integrations/ray.py); `--otel*`: where its verdicts are also sent
#: (integrations/otel.py, cli/otel_args.py, shared with `watch`): not what a run is
CLI_ONLY_PREFIX = ("--ray", "--otel")
#: a second spelling of a field's flag
ALIASES = {"--output": "-o"}


def run_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["run"]


def run_flags() -> set[str]:
    return {s for a in run_parser()._actions for s in a.option_strings} | {"INPUT"}


def field_flags() -> dict[str, tuple[type, str]]:
    return {flag: (spec, name) for spec in SPECS for name in spec.model_fields
            if (flag := option_flag(spec, name)) is not None}


def test_every_run_flag_is_a_spec_field_or_the_command_lines_own() -> None:
    known = set(field_flags()) | CLI_ONLY
    missing = sorted(f for f in run_flags()
                     if ALIASES.get(f, f) not in known and not f.startswith(CLI_ONLY_PREFIX))
    assert missing == [], f"flags with no spec field (declare one with `option(..., flag=...)`): {missing}"


def test_every_fields_flag_exists() -> None:
    assert sorted(set(field_flags()) - run_flags()) == []


def test_flags_that_change_results_are_compared_on_resume() -> None:
    """A field marked `affects_results` is in the spec's results view (what a resume compares); one
    that does not is left out of it."""
    view = flat_view(results_view(RunSpec(judging=JudgeSpec(model="baseline/lexical"))))
    for spec in (JudgeSpec, ClientConfig, RunSpec):
        for name in flagged(spec):
            assert (name in view) == affects_results(spec, name), (spec.__name__, name)


def test_each_fields_flag_is_read_by_its_name() -> None:
    """`cli.flags` reads every flagged field of JudgeSpec, ClientConfig and RunSpec from the dest of
    its flag (no table per flag): each dest is one the parser fills."""
    dests = {a.dest for a in run_parser()._actions}
    for spec in (JudgeSpec, ClientConfig, RunSpec):
        for name, flag in flagged(spec).items():
            assert flag in run_flags() and dest(flag) in dests, (spec.__name__, name)


def test_a_command_line_round_trips_through_the_resume_command() -> None:
    import shlex

    argv = ["run", "in.jsonl", "-o", "out.jsonl", "--model", "openai/gpt-4o-mini", "--retries", "1", "--rpm", "30",
            "--http-transport", "httpx", "--max-tokens", "512", "--turns", "all", "--system-prompt", "--trace",
            "--map", "answer=reply", "--limit", "5", "--temperature", "0.3", "--budget", "$1.50"]
    s = to_spec(build_parser().parse_args(argv))
    again = to_spec(build_parser().parse_args(shlex.split(resume_command(s))[1:]))
    assert again == s
    client = s.judging.judges()[0].client
    assert client.provider_retries == 1 and client.rpm == 30
    assert s.budget == "$1.50" and "--budget '$1.50'" in resume_command(s)  # the cap is repeated, quoted


def test_panels_cascades_and_repeats_round_trip_through_the_resume_command() -> None:
    import shlex

    for extra in (["--panel", "openai/a,anthropic/b@http://127.0.0.1:9/v1", "--panel-rule", "any"],
                  ["--model", "openai/a", "--samples", "3", "--temperature", "0.7"],
                  ["--cascade", "openai/a,openai/b", "--audit-rate", "0.2", "--audit-seed", "3"],
                  ["--panel", "openai/a,openai/c", "--cascade", "panel,openai/b", "--escalate-on", "disagree"],
                  ["--model", "openai/a", "--repeats", "3", "--concurrency", "4"]):
        s = to_spec(build_parser().parse_args(["run", "in.jsonl", "-o", "out.jsonl", *extra]))
        again = to_spec(build_parser().parse_args(shlex.split(resume_command(s))[1:]))
        assert again == s, extra


def test_a_new_option_needs_only_its_field() -> None:
    """`cli.flags` makes a flag from a field alone: its type from the annotation, a Literal's values as
    choices, a bool as a switch, the help from its doc; and reads it back by name."""
    from typing import Literal

    import pytest
    from pydantic import BaseModel

    from judgeflow.cli.flags import add_field, given
    from judgeflow.config.client import option

    class Probe(BaseModel):
        n: int | None = option(None, "How many things.", flag="--n-things", results=True)
        which: Literal["a", "b"] = option("a", "Which one.", flag="--which", results=True)
        on: bool = option(False, "A switch.", flag="--on", results=False)

    p = argparse.ArgumentParser(prog="probe")
    for name in Probe.model_fields:
        add_field(p, Probe, name)
    assert given(p.parse_args(["--n-things", "3", "--which", "b", "--on"]), Probe) == {"n": 3, "which": "b",
                                                                                       "on": True}
    assert given(p.parse_args([]), Probe) == {"which": "a", "on": False}
    assert "how many things" in p.format_help()
    with pytest.raises(SystemExit):
        p.parse_args(["--which", "c"])
    with pytest.raises(SystemExit):
        p.parse_args(["--n-things", "many"])
