"""`judgeflow compare A.jsonl B.jsonl [--labels F] [--json] [--html REPORT.html]`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import SUMMARIES
from .argtypes import Subparsers
from .calibrate_cmd import add_report_args, emit, fmt, kappa_text, refuse_injected
from .render import fit

if TYPE_CHECKING:
    from ..calibration.comparison import ComparisonReport, Decision


def register(sub: Subparsers) -> None:
    p = sub.add_parser("compare", help=SUMMARIES["compare"])
    p.add_argument("a", type=Path, help="results .jsonl of run A")
    p.add_argument("b", type=Path, help="results .jsonl of run B (the same items)")
    add_report_args(p)
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from ..calibration.comparison import compare  # numpy: only for this command
    from ..calibration.report_html import write_comparison_html

    for run in (args.a, args.b):  # injected test rows (`judgeflow inject`) never mix with real results
        if Path(run).exists():
            refuse_injected(Path(run))
    report = compare(args.a, args.b, args.labels, seed=args.seed, n_boot=args.n_boot)
    return emit(args, report, render, lambda: write_comparison_html(
        report, args.html, title=f"{report.a.name} vs {report.b.name}"))


def _why(d: Decision) -> str:
    return f"{d.claim.id} {d.claim.verdict}: {d.claim.text}" if d.claim else (d.reason or "")


def render(r: ComparisonReport, con: Console) -> None:
    con.print(f"[bold]compare[/bold]: A = {escape(r.a.name)}, B = {escape(r.b.name)}; {r.n} paired items of "
              f"{r.total} (labelled and scored by both); human labels from {escape(str(r.label_source))}")
    t = Table("run", "kappa [95% CI]", "PABAK", "bal. acc.", "accuracy", "F1", "false alarms", "misses", "unscored",
              title="each run on the paired items", title_justify="left")
    for side, s in (("A", r.a), ("B", r.b)):
        a = s.agreement
        t.add_row(escape(f"{side} {s.name}"), kappa_text(a), fmt(a.pabak), fmt(a.balanced_accuracy), fmt(a.accuracy),
                  fmt(a.f1),
                  f"{a.false_alarms} ({fmt(a.false_alarm_share, True)})", f"{a.misses} ({fmt(a.miss_share, True)})",
                  str(s.unscored))
    t.columns[0].no_wrap = t.columns[1].no_wrap = True
    con.print(fit(t))
    if r.a.agreement.prevalence is not None:
        con.print(f"base rate on the paired items: {r.a.agreement.prevalence:.0%} labelled 1 by people "
                  f"(judge A {fmt(r.a.agreement.judge_rate, True)}, B {fmt(r.b.agreement.judge_rate, True)})")
    diff = "undefined"
    if r.kappa_diff is not None:
        ci = f" [{r.kappa_diff_ci[0]:+.2f}, {r.kappa_diff_ci[1]:+.2f}]" if r.kappa_diff_ci else ""
        diff = f"{r.kappa_diff:+.2f}{ci}"
    con.print(f"kappa(B) - kappa(A): {diff} (paired bootstrap 95% CI)")
    con.print(f"McNemar exact: A right & B wrong {r.a_right_b_wrong}, B right & A wrong {r.b_right_a_wrong}, "
              f"p = {r.mcnemar_p:.3g}")
    if r.spans is not None:
        from ..calibration.span_compare import span_comparison_text

        for line in span_comparison_text(r.spans, (r.a.name, r.b.name)):
            con.print(escape(line))
    con.print(f"[bold]verdict:[/bold] {escape(r.verdict)}")
    for w in r.warnings:
        con.print(f"[yellow]warning:[/yellow] {escape(w)}")
    if r.disagreements:
        t = Table("id", "human", "A", "B", "A decided by", "B decided by",
                  title="items the runs label differently", title_justify="left")
        for d in r.disagreements[:10]:
            t.add_row(escape(d.id), str(d.human), str(d.a.label), str(d.b.label), escape(_why(d.a)[:90]),
                      escape(_why(d.b)[:90]))
        con.print(fit(t))
        if len(r.disagreements) > 10:
            con.print(f"... {len(r.disagreements) - 10} more (see --json or --html)")
