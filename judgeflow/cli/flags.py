"""`judgeflow run`'s flags and the `RunSpec` they stand for, all three ways, from the spec fields.

    add_run_flags(parser)         # the flags, generated from the fields' `option(..., flag=, cli=)`
    spec = to_spec(args)          # the parsed flags -> one RunSpec by name (lm-eval's from_cli)
    resume_command(spec)          # the command line that resumes it (no credentials)

Each spec field declares its flag once (`option(default, doc, flag=..., results=..., cli=...)` in
config/): `JudgeSpec`, `ClientConfig` and `RunSpec` fields become argparse flags (the type from the
field's annotation, a Literal's values as choices, a bool as a switch, the help from its doc or
`cli`), are read back from the flag's dest and written back as that flag, so a new judging option
needs no line here. The panel, samples and cascade flags name several members in one string:
`cli.ensemble` declares them and turns them into a `PanelSpec` or `CascadeSpec`.
"""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel

from ..backends import default_model, member_reasoning
from ..backends.llm_judge import DEFAULT_MODEL_ENV, OFFLINE_MODEL
from ..config.client import ClientConfig, option_cli, option_flag
from ..config.judging import JudgeSpec, JudgingSpec, RepeatsSpec
from ..config.run import RunSpec
from ..items import parse_column_map
from ..judging import DEFAULT_CONCURRENCY
from ..redact import mask_urls, redact
from . import ensemble
from .argtypes import (
    non_negative_int,
    positive_float,
    positive_int,
    positive_seconds,
    share,
    temperature,
)

#: fields whose flag is read and written by hand here (the rest: by field name)
_BY_HAND = {
    "model",
    "keep_trace",
    "concurrency",
    "coverage",
    "base_url",
    "judging",
    "input",
    "output",
    "column_map",
    "kind",
}


#: how the command line says the judge's fields (JudgeSpec is defined beside Judge; these move into
#: its `option(cli=...)` with it, issue #49)
JUDGE_CLI: dict[str, dict[str, Any]] = {
    "model": {
        "help": f"provider/model (default ${DEFAULT_MODEL_ENV}, else {OFFLINE_MODEL}, offline)"
    },
    "mode": {
        "default": "auto",
        "choices": ["auto", "factual", "faithfulness", "spec"],
        "help": "route by fields (auto) or force a mode",
    },
    "criterion": {"help": "a criterion name or .toml path for every item (overrides --mode)"},
    "strategy": {"help": "graph: decompose then check (2 calls); single: one call"},
    "coverage": {
        "default": None,
        "help": "requirement coverage for spec items: also check each requirement "
        "of the spec as met / not_met / not_applicable (default: on with --mode spec)",
    },
    "concurrency": {"type": "positive_int", "help": "items judged at once (default %(default)s)"},
    "check_dropped": {
        "help": "judge the answer whole: numbers, dates and names no claim carries are checked "
        "as added claims (default on; --no-check-dropped names them in the row as not checked)"
    },
    "knowledge": {
        "help": "claims the reference does not settle (factual criteria): default (the check call "
        "decides) or commit-first (the judge first fills the claim's masked values; a verdict from "
        "knowledge stands only where both agree, else unverifiable); default: the criterion's "
        "[knowledge]"
    },
    "evidence": {
        "metavar": "FILE",
        "help": "documents for claims the reference does not settle: a JSONL file "
        '({"text", "id", "title"} a line) or a folder of .txt/.md files; claims settled by a '
        "quote found in them get basis evidence",
    },
}
#: argparse value types, by the name a field's `cli["type"]` gives
TYPES: dict[str, Any] = {
    "positive_int": positive_int,
    "count": non_negative_int,
    "seconds": positive_seconds,
    "rate": positive_float,
    "temperature": temperature,
    "share": share,
    "path": Path,
    "float": float,
    "int": int,
}
#: the --help headings of `cli["group"]`
GROUPS = {"provider": "how the judge calls the provider"}


def delimiter(value: str) -> str:
    """--delimiter: one character (`\\t` or `tab` for a tab)."""
    value = {"\\t": "\t", "tab": "\t"}.get(value, value)
    if len(value) != 1 or value in '"\r\n':
        raise argparse.ArgumentTypeError(
            f"{value!r} is not one character; e.g. --delimiter ';' or --delimiter tab"
        )
    return value


TYPES["delimiter"] = delimiter


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """`judgeflow run`'s spec flags: what judges, the run's own, how it calls the provider."""
    judging = p.add_argument_group("what judges")
    for name in ("model", *(n for n in JudgeSpec.model_fields if n not in ("model", "keep_trace"))):
        if option_flag(JudgeSpec, name):
            add_field(judging, JudgeSpec, name, JUDGE_CLI.get(name))
    for name in ClientConfig.model_fields:
        if option_flag(ClientConfig, name) and not option_cli(ClientConfig, name).get("group"):
            add_field(judging, ClientConfig, name)
    run = p.add_argument_group("the run")
    for name in RunSpec.model_fields:
        if option_flag(RunSpec, name) and not option_cli(RunSpec, name).get("group"):
            add_field(p if name in ("input", "output", "format") else run, RunSpec, name)
    provider_flags(p)


def provider_flags(p: argparse.ArgumentParser) -> None:
    """How a run calls the provider: retries, rate limits, re-asks, timeout, HTTP stack, output
    shape, reasoning, spend cap (`judgeflow run`, `watch`)."""
    g = p.add_argument_group(GROUPS["provider"])
    for model in (ClientConfig, RunSpec):
        for name in model.model_fields:
            if option_cli(model, name).get("group") == "provider":
                add_field(g, model, name)


class OutputPath(argparse.Action):
    """-o PATH as a Path, remembering a trailing slash (Path drops it): `-o judged/` names a
    directory (`output_is_directory`)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        text = os.fspath(values)  # a str from the command line; a Path when called from Python
        setattr(namespace, self.dest, Path(text))
        namespace.output_is_directory = text != "-" and text.endswith(("/", os.sep))


def add_field(p: Any, model: type[BaseModel], name: str, cli: dict[str, Any] | None = None) -> None:
    """One field's flag: its type, choices, default and help from the field and its `cli`."""
    flag = option_flag(model, name)
    assert flag is not None, name
    field = model.model_fields[name]
    cli = {**option_cli(model, name), **(cli or {})}
    default = cli.get("default", None if field.is_required() else field.default)
    kind = _plain_type(field.annotation)
    doc = (field.description or "").rstrip(".")
    kw: dict[str, Any] = {"help": cli.get("help") or doc[:1].lower() + doc[1:]}
    if flag == "INPUT":
        p.add_argument("input", type=Path, **kw)
        return
    if kind is bool:
        kw.update(
            default=default,
            action=argparse.BooleanOptionalAction if default is not False else "store_true",
        )
    else:
        literal = (
            getattr(kind, "__args__", None)
            if getattr(kind, "__origin__", None) is Literal
            else None
        )
        kw.update(
            default=Path(default) if cli.get("type") == "path" and default is not None else default,
            type=TYPES.get(cli.get("type", ""), kind if kind in (int, float) else None),
            choices=cli.get("choices") or (list(literal) if literal else None),
            metavar=cli.get("metavar"),
        )
        if name == "column_map":
            kw.update(action="append", type=None, default=None)
        if name == "output":
            kw.update(action=OutputPath, type=None)
    p.add_argument(
        flag,
        *cli.get("aliases", []),
        dest=dest(flag),
        **{k: v for k, v in kw.items() if v is not None or k == "default"},
    )


def _plain_type(annotation: Any) -> Any:
    """`X | None` -> X (a field's value type, for argparse)."""
    args = [a for a in getattr(annotation, "__args__", ()) if a is not type(None)]
    if type(annotation).__name__ == "UnionType" or getattr(annotation, "__origin__", None) is Union:
        return args[0] if len(args) == 1 else annotation
    return annotation


def dest(flag: str) -> str:
    """The argparse dest of a field's flag (`--max-wait` -> max_wait, `-o` -> output)."""
    return {"-o": "output", "INPUT": "input"}.get(flag) or flag.lstrip("-").replace("-", "_")


def flagged(model: type[BaseModel]) -> dict[str, str]:
    """field -> flag, for the fields of `model` that have a `judgeflow run` flag read by name."""
    return {
        name: flag
        for name in model.model_fields
        if name not in _BY_HAND and (flag := option_flag(model, name)) and flag.startswith("--")
    }


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
    judge = {
        **given(args, JudgeSpec),
        "mode": mode,
        "concurrency": args.concurrency,
        "coverage": bool(flag) if flag is not None else mode == "spec",
    }
    client = given(args, ClientConfig)
    effort, profile = client.get("reasoning_effort"), client.get("profile")

    def member(ref: str, *, keep_trace: bool = True, one: bool = False) -> JudgeSpec:
        model, _, url = ref.partition("@")
        own = dict(client, base_url=url or getattr(args, "base_url", None))
        if not one:  # each member of a panel or cascade: the effort and profile that apply to it
            own["reasoning_effort"], own["profile"] = member_reasoning(model, effort, profile)
        return JudgeSpec(model=model, keep_trace=keep_trace, **judge, client=ClientConfig(**own))

    judging: JudgingSpec = (
        ensemble.judging_of(args, member)
        if ensemble.active(args)
        else member(args.model or default_model(), one=True)
    )
    if getattr(args, "repeats", 1) > 1:
        judging = RepeatsSpec(judging=judging, k=args.repeats, concurrency=args.concurrency)
    run = given(args, RunSpec)
    column_map = parse_column_map(getattr(args, "map", None)) or None
    return RunSpec(
        judging=judging,
        input=_plain(getattr(args, "input", None)),
        output=_plain(getattr(args, "output", None)),
        column_map=column_map,
        **run,
    )


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
        clean += (
            "   # credentials removed from --base-url: put them back, or set JUDGEFLOW_BASE_URL"
        )
    return clean


__all__ = ["add_field", "add_run_flags", "dest", "flagged", "given", "provider_flags",
           "resume_command", "to_spec"]
