"""`judgeflow run` options for panels, self-consistency and cascades, and their summary lines.

    --panel m1,m2,m3 [--panel-rule majority|any|all] [--panel-tie 1|unscored]
    --samples N                        (needs --temperature > 0)
    --cascade CHEAP,STRONG [--escalate-on label1,unscored,disagree,confidence<X] [--audit-rate R]
    --repeats K                        (test-retest: one judge K times; built in run.py, not here)

A member is "provider/model", optionally "provider/model@BASE_URL" for its own endpoint.
`--cascade panel,STRONG` uses the --panel (or --samples) judge as the cheap judge.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..ensembles.cascade import DEFAULT_ESCALATE_ON
from ..errors import ConfigError
from .argtypes import positive_int
from ..ensembles.panel import RULES
from ..runs.ensemble_spec import split as _split


def add_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("panels, cascades and repeats")
    g.add_argument("--panel", metavar="M1,M2,...",
                   help="a panel of judges that vote (each provider/model[@base_url]); see --panel-rule")
    g.add_argument("--panel-rule", default="majority", choices=RULES,
                   help="majority (default), any (1 if any says 1: recall first), all (1 only if all say 1: precision first)")
    g.add_argument("--panel-tie", default="1", choices=["1", "unscored"],
                   help="the label of a majority tie (default 1: the item goes to a person; see README)")
    g.add_argument("--samples", type=int, default=1,
                   help="self-consistency: judge each item N times per model (needs --temperature > 0); "
                        "label = majority, confidence = agreeing share")
    g.add_argument("--cascade", metavar="CHEAP,STRONG",
                   help="a cheap judge on every item, the strong one only on escalated (and audited) items; "
                        "CHEAP may be 'panel' for the --panel judge")
    g.add_argument("--escalate-on", default=DEFAULT_ESCALATE_ON,
                   help=f"when to escalate (comma-separated): label1, unscored, disagree, confidence<X "
                        f"(default {DEFAULT_ESCALATE_ON})")
    g.add_argument("--audit-rate", type=float, default=0.0,
                   help="also send this random share of the other items to the strong judge, to estimate "
                        "what the cascade missed (e.g. 0.1)")
    g.add_argument("--audit-seed", type=int, default=0, help="seed of the audit draw (default 0)")
    g.add_argument("--repeats", type=positive_int, default=1, metavar="K",
                   help="test-retest: judge each item K times with the same judge (providers are not deterministic, "
                        "at temperature 0 too); the label is the first verdict, all K are kept under `repeats` for "
                        "`judgeflow stability`, `gate` and `calibrate`; K - 1 more calls an item (default 1: none)")


def active(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "panel", None) or getattr(args, "cascade", None) or getattr(args, "samples", 1) > 1)


def settings(args: argparse.Namespace) -> dict[str, Any] | None:
    """What the results depend on (recorded with the run; a resume must match)."""
    if not active(args):
        return None
    return {"panel": args.panel, "panel_rule": args.panel_rule, "panel_tie": args.panel_tie, "samples": args.samples,
            "cascade": args.cascade, "escalate_on": args.escalate_on if args.cascade else None,
            "audit_rate": args.audit_rate if args.cascade else None, "audit_seed": args.audit_seed if args.cascade else None}


def resume_flags(args: argparse.Namespace) -> list[str]:
    flags: list[str] = []
    if args.panel:
        flags += ["--panel", args.panel, "--panel-rule", args.panel_rule, "--panel-tie", args.panel_tie]
    if args.samples > 1:
        flags += ["--samples", str(args.samples)]
    if args.cascade:
        flags += ["--cascade", args.cascade, "--escalate-on", args.escalate_on, "--audit-rate", str(args.audit_rate),
                  "--audit-seed", str(args.audit_seed)]
    return flags


def wire_family(model: str) -> str:
    """The request format a provider speaks: OpenAI's (openai, azure, ollama) or its own."""
    from ..backends.providers import known, provider

    name = model.partition("/")[0]
    return provider(name).family_title if known(name) else name.capitalize()


def check_one_wire(args: argparse.Namespace) -> None:
    """One --base-url cannot serve members that speak different wires (OpenAI and Anthropic)."""
    if not args.base_url:
        return
    specs = [*(_split(args.panel, "--panel") if args.panel else []),
             *(s for s in (_split(args.cascade, "--cascade") if args.cascade else []) if s != "panel")]
    shared = [s for s in specs if "@" not in s]  # the members --base-url applies to
    wires = sorted({wire_family(s) for s in shared})
    if len(wires) > 1:
        example = ",".join(f"{s}@http://HOST:PORT{'/v1' if wire_family(s) == 'OpenAI' else ''}" for s in shared[:2])
        raise ConfigError(f"--base-url {args.base_url} is one endpoint, but the members {', '.join(shared)} speak "
                          f"{' and '.join(wires)} requests: give each member its own endpoint as model@url "
                          f"(e.g. {example}) and drop --base-url")


def check(args: argparse.Namespace) -> None:
    """The panel/cascade flags' own rules, said in the flags' words (the specs check the rest)."""
    if not active(args):
        return
    if args.batch:
        raise ConfigError("--batch does not support --panel, --samples or --cascade yet: run them online "
                          "(drop --batch), or judge each model on its own with --batch and compare the runs")
    if args.model and (args.panel or args.cascade):
        raise ConfigError("--model with --panel or --cascade: name the models in --panel or --cascade instead "
                          "(with --samples alone, --model is the sampled judge)")
    if args.samples < 1:
        raise ConfigError(f"--samples must be at least 1, got {args.samples}")
    if args.samples > 1 and not args.temperature:
        raise ConfigError(f"--samples {args.samples} needs a temperature above 0: at temperature 0 every sample "
                          f"gives the same answer; add --temperature 0.7 (or drop --samples)")
    flag = getattr(args, "coverage", None)
    if bool(flag) if flag is not None else args.mode == "spec":
        raise ConfigError("requirement coverage (--mode spec / --coverage) does not run in panels or cascades "
                          "yet: add --no-coverage, or judge with one --model")
    check_one_wire(args)
