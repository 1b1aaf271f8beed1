"""#36 item 1: `judgeflow run`'s flags come from the spec's fields: every flag is some field's flag
(ClientConfig, the judging specs, RunSpec) or is named here as the command line's own; every
field's flag exists; a flag that changes results is compared on resume."""

from __future__ import annotations

import argparse

from judgeflow.cli import build_parser
from judgeflow.config import CascadeSpec, ClientConfig, JudgeSpec, PanelSpec, RepeatsSpec, RunSpec, option_flag
from judgeflow.config.client import affects_results
from judgeflow.runs.settings import RESULT_SETTINGS

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
    """A field marked `affects_results` whose flag the CLI records flat is in RESULT_SETTINGS (the
    rest is compared through the recorded judging spec)."""
    flat = {"--" + k.replace("_", "-") for k in RESULT_SETTINGS} | {"--map", "--panel", "--cascade", "--samples",
                                                                    "--panel-rule", "--panel-tie", "--escalate-on",
                                                                    "--audit-rate", "--audit-seed", "--reasks"}
    for flag, (spec, name) in field_flags().items():
        if affects_results(spec, name) and flag != "INPUT":
            assert flag in flat or flag in ("--criterion", "--coverage", "--check-dropped"), (spec.__name__, name, flag)


def test_the_flat_settings_declare_each_flag_once() -> None:
    """RunSettings (the CLI's flat view of a RunSpec): from_args, client_config, with_judging and the
    resume command read one table (`setting(...)`); it names real flags and ClientConfig fields, and
    covers every RunSpec field."""
    from judgeflow.runs.settings import FLAGS, RunSettings

    dests = {a.dest for a in run_parser()._actions}
    for name, (flag, dest, client, _) in FLAGS.items():
        assert flag in run_flags() and dest in dests, name
        assert client is None or client in ClientConfig.model_fields, name
    assert set(RunSpec.model_fields) - {"judging"} <= set(RunSettings.model_fields)


def test_a_command_line_round_trips_through_the_resume_command() -> None:
    import shlex

    from judgeflow.runs.settings import RunSettings

    argv = ["run", "in.jsonl", "-o", "out.jsonl", "--model", "openai/gpt-4o-mini", "--retries", "1", "--rpm", "30",
            "--http-transport", "httpx", "--max-tokens", "512", "--turns", "all", "--system-prompt", "--trace",
            "--map", "answer=reply", "--limit", "5", "--temperature", "0.3", "--budget", "$1.50"]
    s = RunSettings.from_args(build_parser().parse_args(argv))
    again = RunSettings.from_args(build_parser().parse_args(shlex.split(s.resume_command())[1:]))
    assert again == s
    assert s.client_config().provider_retries == 1 and s.client_config().rpm == 30
    assert s.budget == "$1.50" and "--budget '$1.50'" in s.resume_command()  # the cap is repeated, quoted
