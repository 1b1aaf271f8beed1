"""`judgeflow run` options for panels, self-consistency and cascades, and their summary lines.

    --panel m1,m2,m3 [--panel-rule majority|any|all] [--panel-tie 1|unscored]
    --samples N                        (needs --temperature > 0)
    --cascade CHEAP,STRONG [--escalate-on label1,unscored,disagree,confidence<X] [--audit-rate R]

A member is "provider/model", optionally "provider/model@BASE_URL" for its own endpoint.
`--cascade panel,STRONG` uses the --panel (or --samples) judge as the cheap judge.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..cascade import DEFAULT_ESCALATE_ON, Cascade, cascade_estimate
from ..errors import ConfigError
from ..judge import Judge
from ..panel import RULES, Ensemble, Panel
from ..results import Judgment, Usage
from ..runs.pricing import estimate_cost


def add_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("panels and cascades")
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


def _split(spec: str, flag: str) -> list[str]:
    parts = [s.strip() for s in spec.split(",") if s.strip()]
    if not parts:
        raise ConfigError(f"{flag} is empty: give provider/model names separated by commas")
    return parts


def make(args: argparse.Namespace, member_kwargs: Callable[[str], dict[str, Any]]) -> Ensemble | None:
    """The panel or cascade the options ask for, or None for a single judge.

    `member_kwargs(model)` gives the Judge keyword arguments for one member (retries, temperature, ...).
    """
    if not active(args):
        return None
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
    tie = 1 if args.panel_tie == "1" else None

    def member(spec: str) -> Judge:
        model, _, url = spec.partition("@")
        kw = member_kwargs(model)
        if url:
            kw["base_url"] = url
        return Judge(model, mode=args.mode, criterion=args.criterion, strategy=args.strategy,
                     concurrency=args.concurrency, keep_trace=args.trace, **kw)

    def panel_judge(default_model: str | None) -> Panel | None:
        if args.panel:
            return Panel([member(m) for m in _split(args.panel, "--panel")], rule=args.panel_rule,
                         samples=args.samples, tie=tie, concurrency=args.concurrency, keep_trace=args.trace)
        if args.samples > 1 and default_model:
            return Panel([member(default_model)], samples=args.samples, tie=tie, concurrency=args.concurrency,
                         keep_trace=args.trace)
        return None

    if not args.cascade:
        from ..backends.llm_judge import default_model

        judge = panel_judge(args.model or default_model())
        assert judge is not None
        return judge
    parts = _split(args.cascade, "--cascade")
    if len(parts) != 2:
        raise ConfigError(f"--cascade takes two judges, CHEAP,STRONG (got {len(parts)}: {args.cascade})")
    cheap_spec, strong_spec = parts
    cheap: Judge | Panel | None
    if cheap_spec == "panel":
        if not args.panel:
            raise ConfigError("--cascade panel,STRONG needs --panel M1,M2,... for the cheap judge")
        cheap = panel_judge(None)
    else:
        if args.panel:
            raise ConfigError("--panel with --cascade: write --cascade panel,STRONG to use the panel as the cheap judge")
        cheap = panel_judge(cheap_spec) or member(cheap_spec)
    assert cheap is not None
    return Cascade(cheap, member(strong_spec), escalate_on=args.escalate_on, audit_rate=args.audit_rate,
                   seed=args.audit_seed, concurrency=args.concurrency, keep_trace=args.trace)


def _cost(model: str | None, usage: Usage, prices: Any) -> float | None:
    if model is None:
        return None
    if model.startswith(("baseline/", "ollama/")):
        return 0.0
    return estimate_cost(model, usage, prices=prices)


def _money(x: float | None) -> str:
    return "unknown" if x is None else f"${x:,.4f}"


def summary_lines(results: list[Judgment], prices: Any) -> list[str]:
    """Per-member calls and cost; for a cascade, the cost against the strong judge alone and the audit."""
    per: dict[tuple[str, str], Usage] = {}
    for j in results:
        for v in j.judges or []:
            per.setdefault((v.role or "member", v.model or "?"), Usage()).add(v.usage)
    lines, total, known = [], 0.0, True
    for (role, model), u in per.items():
        c = _cost(model, u, prices)
        known = known and c is not None
        total += c or 0.0
        lines.append(f"{role} {model}: {u.calls:,} calls, tokens in {u.input_tokens:,} out {u.output_tokens:,}, "
                     f"cost {_money(c)}" + ("" if c is not None else " (add its price with --prices FILE)"))
    lines.append(f"estimated cost: {_money(total if known else None)} at list prices, all judges")
    if not any(j.cascade for j in results):
        votes = [j for j in results if j.agreement]
        if votes:
            split = sum(1 for j in votes if j.agreement and j.agreement.split("/")[0] != j.agreement.split("/")[1])
            lines.append(f"judges disagree on {split} of {len(votes)} labelled items "
                         "(`judgeflow sample --focus disagreement` to read them)")
        return lines
    est = cascade_estimate(results)
    strong_model = next((m for (r, m) in per if r == "strong"), None)
    lines.append(f"cascade: {est.escalated} of {est.n} items escalated to the strong judge, {est.audited} audited")
    if est.strong_audit_items and strong_model:
        per_item = Usage(calls=est.strong_audit_usage.calls, input_tokens=est.strong_audit_usage.input_tokens,
                         output_tokens=est.strong_audit_usage.output_tokens)
        scale = est.n / est.strong_audit_items
        alone = Usage(calls=round(per_item.calls * scale), input_tokens=round(per_item.input_tokens * scale),
                      output_tokens=round(per_item.output_tokens * scale))
        c_alone = _cost(strong_model, alone, prices)
        cascade_calls = sum(u.calls for u in per.values())
        ratio = f" ({total / c_alone:.0%} of it)" if known and c_alone else ""
        lines.append(f"strong judge alone (measured on the {est.strong_audit_items} audited items, extrapolated to "
                     f"{est.n}): about {alone.calls:,} calls, cost {_money(c_alone)}; the cascade: {cascade_calls:,} "
                     f"calls, {_money(total if known else None)}{ratio}")
    elif est.n:
        lines.append("strong judge alone: not estimated (no audited item judged this session; use --audit-rate R)")
    if est.miss_rate is not None and est.miss_rate_ci and est.est_missed_ci and est.agreement_ci:
        lines.append(f"audit: the strong judge flags {est.audit_misses} of {est.audited_scored} audited items the cascade "
                     f"passed: miss rate {est.miss_rate:.1%} (Wilson 95% CI {est.miss_rate_ci[0]:.1%}-"
                     f"{est.miss_rate_ci[1]:.1%}), about {est.est_missed:.0f} missed items "
                     f"({est.est_missed_ci[0]:.0f}-{est.est_missed_ci[1]:.0f}) among the {est.n - est.escalated} "
                     f"not escalated")
        lines.append(f"estimated agreement of the cascade with the strong judge alone: {est.agreement:.1%} "
                     f"(95% CI {est.agreement_ci[0]:.1%}-{est.agreement_ci[1]:.1%})")
    return lines
