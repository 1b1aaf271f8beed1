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
from collections.abc import Callable

from ..backends import default_model
from ..config.judging import DEFAULT_ESCALATE_ON, CascadeSpec, JudgeSpec, PanelSpec
from ..ensembles.panel import RULES
from ..errors import ConfigError
from .argtypes import positive_int

Member = Callable[..., JudgeSpec]


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


def _split(spec: str, flag: str) -> list[str]:
    parts = [s.strip() for s in spec.split(",") if s.strip()]
    if not parts:
        raise ConfigError(f"{flag} is empty: give provider/model names separated by commas")
    return parts


def judging_of(args: argparse.Namespace, member: Member) -> PanelSpec | CascadeSpec:
    """The panel or cascade the flags name; `member(ref, keep_trace=)` makes one member's JudgeSpec
    ("provider/model" or "provider/model@BASE_URL") with the run's other flags."""
    trace, samples = bool(args.trace), args.samples
    common = {"keep_trace": trace, "concurrency": args.concurrency}
    tie = 1 if str(args.panel_tie) == "1" else None

    def panel(default: str | None) -> PanelSpec | None:
        refs = _split(args.panel, "--panel") if args.panel else [default] if samples > 1 and default else []
        if not refs:
            return None
        return PanelSpec(members=[member(m, keep_trace=trace) for m in refs], rule=args.panel_rule,
                         samples=samples, tie=tie, **common)

    if not args.cascade:
        made = panel(args.model or default_model())
        if made is None:
            raise ConfigError("an ensemble needs --panel, --samples N > 1 or --cascade")
        return made
    parts = _split(args.cascade, "--cascade")
    if len(parts) != 2:
        raise ConfigError(f"--cascade takes two judges, CHEAP,STRONG (got {len(parts)}: {args.cascade})")
    cheap_ref, strong_ref = parts
    if cheap_ref == "panel":
        if not args.panel:
            raise ConfigError("--cascade panel,STRONG needs --panel M1,M2,... for the cheap judge")
        cheap: JudgeSpec | PanelSpec | None = panel(None)
    else:
        if args.panel:
            raise ConfigError("--panel with --cascade: write --cascade panel,STRONG to use the panel as the "
                              "cheap judge")
        cheap = panel(cheap_ref) or member(cheap_ref, keep_trace=trace)
    assert cheap is not None
    return CascadeSpec(cheap=cheap, strong=member(strong_ref, keep_trace=trace), escalate_on=args.escalate_on,
                       audit_rate=args.audit_rate, seed=args.audit_seed, **common)


def flags_of(spec: PanelSpec | CascadeSpec, *, at_url: bool) -> list[str]:
    """The flags that name `spec` again (`at_url`: each member as model@its base URL)."""
    def ref(j: JudgeSpec) -> str:
        return f"{j.model}@{j.client.base_url}" if at_url and j.client.base_url else j.model

    def panel(p: PanelSpec) -> list[str]:
        if len(p.members) == 1:  # samples of one judge: --model is the sampled judge
            return ["--model", ref(p.members[0]), "--samples", str(p.samples)]
        return (["--panel", ",".join(ref(m) for m in p.members), "--panel-rule", p.rule, "--panel-tie",
                 "1" if p.tie == 1 else "unscored"] + (["--samples", str(p.samples)] if p.samples > 1 else []))

    if isinstance(spec, PanelSpec):
        return panel(spec)
    cheap = spec.cheap
    flags = panel(cheap) if isinstance(cheap, PanelSpec) and len(cheap.members) > 1 else []
    if isinstance(cheap, PanelSpec) and len(cheap.members) == 1:  # the sampled cheap judge
        first = ref(cheap.members[0])
        flags, name = ["--samples", str(cheap.samples)], first
    else:
        name = "panel" if isinstance(cheap, PanelSpec) else ref(cheap)
    return flags + ["--cascade", f"{name},{ref(spec.strong)}", "--escalate-on", spec.escalate_on,
                    "--audit-rate", str(spec.audit_rate), "--audit-seed", str(spec.seed)]


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
    """The panel/cascade flags' own rules (how the flags name members), said in the flags' words; how
    the judgings compose (samples, --batch, coverage, repeats) is the specs' validators' (config/)."""
    if not active(args):
        return
    if args.model and (args.panel or args.cascade):
        raise ConfigError("--model with --panel or --cascade: name the models in --panel or --cascade instead "
                          "(with --samples alone, --model is the sampled judge)")
    if args.samples > 1 and not args.temperature:  # said before any client is built (arch3b: Panel
        # checks samples on its built members, after a missing API key would be reported)
        raise ConfigError(f"--samples {args.samples} needs a temperature above 0: at temperature 0 every "
                          "sample gives the same answer; add --temperature 0.7 (or drop --samples)")
    check_one_wire(args)
