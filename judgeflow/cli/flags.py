"""`judgeflow run`'s flags and the `RunSpec` they stand for, both ways, read from the spec fields.

    spec = to_spec(args)          # the parsed flags -> one RunSpec, by field name (lm-eval's from_cli)
    resume_command(spec)          # the command line that runs it again with --resume (no credentials)

Each spec field declares its flag once (`option(default, doc, flag=..., results=...)` in config/):
`JudgeSpec`, `ClientConfig` and `RunSpec` fields are read from the flag's argparse dest and written
back as that flag, so a new judging option needs no line here. The panel, samples and cascade flags
name several members in one string: `cli.ensemble` turns them into a `PanelSpec` or `CascadeSpec`.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..backends import default_model, member_reasoning
from ..config.client import ClientConfig, option_flag
from ..config.judging import CascadeSpec, JudgeSpec, JudgingSpec, PanelSpec, RepeatsSpec
from ..config.run import RunSpec
from ..items import parse_column_map
from ..judging import DEFAULT_CONCURRENCY
from ..redact import mask_urls, redact
from . import ensemble

#: fields whose flag is read and written by hand here (the rest: by field name)
_BY_HAND = {"model", "keep_trace", "concurrency", "coverage", "base_url", "judging", "input", "output",
            "column_map", "kind"}


def dest(flag: str) -> str:
    """The argparse dest of a field's flag (`--max-wait` -> max_wait, `-o` -> output)."""
    return {"-o": "output", "INPUT": "input"}.get(flag) or flag.lstrip("-").replace("-", "_")


def flagged(model: type[BaseModel]) -> dict[str, str]:
    """field -> flag, for the fields of `model` that have a `judgeflow run` flag read by name."""
    return {name: flag for name in model.model_fields
            if name not in _BY_HAND and (flag := option_flag(model, name)) and flag.startswith("--")}


def given(args: argparse.Namespace, model: type[BaseModel]) -> dict[str, Any]:
    """The fields of `model` whose flags `args` holds (None: the field's default)."""
    out = {}
    for name, flag in flagged(model).items():
        value = getattr(args, dest(flag), None)
        if value is not None:
            out[name] = str(value) if isinstance(value, Path) else value
    return out


def to_spec(args: argparse.Namespace) -> RunSpec:
    """The `RunSpec` of a `judgeflow run` (or `watch`) command line, in one step."""
    mode = None if getattr(args, "mode", None) in (None, "auto") else args.mode
    flag = getattr(args, "coverage", None)
    judge = {**given(args, JudgeSpec), "mode": mode, "concurrency": args.concurrency,
             "coverage": bool(flag) if flag is not None else mode == "spec"}
    client = given(args, ClientConfig)
    effort, profile = client.get("reasoning_effort"), client.get("profile")

    def member(ref: str, *, keep_trace: bool = True, one: bool = False) -> JudgeSpec:
        model, _, url = ref.partition("@")
        own = dict(client, base_url=url or getattr(args, "base_url", None))
        if not one:  # each member of a panel or cascade takes the effort and the profile that apply to it
            own["reasoning_effort"], own["profile"] = member_reasoning(model, effort, profile)
        return JudgeSpec(model=model, keep_trace=keep_trace, **judge, client=ClientConfig(**own))

    judging: JudgingSpec = (ensemble.judging_of(args, member) if ensemble.active(args)
                            else member(args.model or default_model(), one=True))
    if getattr(args, "repeats", 1) > 1:
        judging = RepeatsSpec(judging=judging, k=args.repeats, concurrency=args.concurrency)
    run = given(args, RunSpec)
    column_map = parse_column_map(getattr(args, "map", None)) or None
    return RunSpec(judging=judging, input=_plain(getattr(args, "input", None)),
                   output=_plain(getattr(args, "output", None)), column_map=column_map, **run)


def _plain(value: Any) -> str | None:
    return None if value is None else str(value)


def _flags_of(spec: BaseModel, skip: tuple[str, ...] = ()) -> list[str]:
    """The flags that say `spec`'s fields away from their defaults."""
    parts: list[str] = []
    for name, flag in flagged(type(spec)).items():
        value, default = getattr(spec, name), type(spec).model_fields[name].default
        if name in skip or value is None or value == default:
            continue
        if isinstance(value, bool):
            parts.append(flag if value else "--no-" + flag.removeprefix("--"))
        else:
            parts += [flag, str(value)]
    return parts


def resume_command(spec: RunSpec) -> str:
    """The command line that resumes a run of `spec`; credentials in URLs are removed (said)."""
    judging = spec.judging
    one = judging.judging if isinstance(judging, RepeatsSpec) else judging
    judges = one.judges()
    urls = {j.client.base_url for j in judges}
    shared = urls.pop() if len(urls) == 1 else None
    parts = ["judgeflow", "run", str(spec.input), "-o", str(spec.output)]
    if isinstance(one, JudgeSpec):
        parts += ["--model", one.model]
    else:
        parts += ensemble.flags_of(one, at_url=shared is None)
    if shared:
        parts += ["--base-url", shared]
    first = judges[0]
    parts += _flags_of(first)
    if first.coverage != (first.mode == "spec"):  # not the default for the mode: say it
        parts.append("--coverage" if first.coverage else "--no-coverage")
    parts += _flags_of(first.client)
    if one.concurrency != DEFAULT_CONCURRENCY:
        parts += ["--concurrency", str(one.concurrency)]
    if isinstance(judging, RepeatsSpec):
        parts += ["--repeats", str(judging.k)]
    parts += _flags_of(spec, skip=("batch",))
    for field, column in (spec.column_map or {}).items():
        parts += ["--map", f"{field}={column}"]
    command = shlex.join([*parts, "--resume"])
    clean = mask_urls(redact(command))
    if clean != command:  # never print or store a credential; say how to put it back
        clean += "   # credentials removed from --base-url: put them back, or set JUDGEFLOW_BASE_URL"
    return clean


__all__ = ["CascadeSpec", "PanelSpec", "dest", "flagged", "given", "resume_command", "to_spec"]
