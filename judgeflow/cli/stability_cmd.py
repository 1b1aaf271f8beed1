"""`judgeflow stability RUN [RUN ...] [--json] [-o MERGED.jsonl]`: test-retest of a judge."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..calibration import DEFAULT_BOOT
from . import SUMMARIES
from .argtypes import Subparsers
from .calibrate_cmd import show
from .render import console, fit

if TYPE_CHECKING:
    from ..calibration.stability import StabilityReport


def register(sub: Subparsers) -> None:
    p = sub.add_parser("stability", help=SUMMARIES["stability"])
    p.add_argument("runs", nargs="+", help="two or more results files (or run ids) of the same items judged again "
                                           "with --no-cache, or one run made with `judgeflow run --repeats K`")
    p.add_argument("--store", type=Path, help="the run store that run ids are looked up in")
    p.add_argument("-o", "--output", type=Path, metavar="MERGED.jsonl",
                   help="also write the first run's rows carrying every run's verdict as repeats (what `gate`, "
                        "`calibrate` and `sample --focus unstable` read)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--n-boot", type=int, default=DEFAULT_BOOT, help=f"bootstrap resamples (default {DEFAULT_BOOT})")
    p.set_defaults(func=cmd_stability)


def cmd_stability(args: argparse.Namespace) -> int:
    from ..calibration.stability import merged, stability
    from ..io.jsonl import write_results

    report = stability(args.runs, store=args.store, seed=args.seed, n_boot=args.n_boot)
    if args.output:
        write_results(args.output, (j.to_row() for j in merged(args.runs, store=args.store)))
    show(report, render, as_json=args.json)
    if args.output:
        console(stderr=True).print(f"rows with repeats -> {args.output}")
    return 0 if report.compared else 1  # nothing measured (no item with two scored verdicts): not a pass


def render(r: StabilityReport, con: Console) -> None:
    con.print(f"[bold]stability[/bold]: {r.repeats} verdicts per item from {escape(', '.join(r.sources))}; "
              f"judge {escape(', '.join(r.models))}")
    con.print(f"items {r.items} ({r.compared} with two or more scored verdicts); unscored verdicts {r.unscored}; "
              f"invalid rows {r.invalid}")
    kappa = "undefined" if r.kappa is None else f"{r.kappa:.2f}" + (
        f" [{r.kappa_ci[0]:.2f}, {r.kappa_ci[1]:.2f}]" if r.kappa_ci else "")
    flip = "-" if r.flip_rate is None else f"{r.flip_rate:.1%}" + (
        f" [{r.flip_ci[0]:.1%}, {r.flip_ci[1]:.1%}]" if r.flip_ci else "")
    t = Table("statistic", "value", "what it means", title_justify="left")
    t.add_row("items that flip [95% CI]", f"{r.flipped} ({flip})", "share of items whose verdicts differ between repeats")
    t.add_row("pair disagreement", "-" if r.disagreement is None else f"{r.disagreement:.1%}",
              "chance that two verdicts on one item differ")
    t.add_row("kappa between repeats [95% CI]", kappa, r.kappa_method + (f" ({r.kappa_note})" if r.kappa_note else ""))
    con.print(fit(t))
    if r.unstable:
        t = Table("id", "verdicts", "deciding claims of the repeats that say 1", title="items that flip", title_justify="left")
        for s in r.unstable[:15]:
            claims = "; ".join(f"#{k + 1} {v.claim.verdict}: {v.claim.text}" for k, v in enumerate(s.verdicts) if v.claim)
            t.add_row(escape(s.id), " ".join("-" if x is None else str(x) for x in s.labels), escape(claims[:160]))
        con.print(fit(t))
        if len(r.unstable) > 15:
            con.print(f"... {len(r.unstable) - 15} more (see --json)")
    con.print(f"[bold]verdict:[/bold] {escape(r.verdict)}", soft_wrap=True)
    for w in r.warnings:
        con.print(f"[yellow]warning:[/yellow] {escape(w)}", soft_wrap=True)
