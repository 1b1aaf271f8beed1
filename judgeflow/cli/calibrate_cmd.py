"""`judgeflow calibrate RESULTS.jsonl [--labels F] [--by FIELD] [--json] [--html REPORT.html]`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..calibration import DEFAULT_BOOT
from . import SUMMARIES
from .argtypes import Subparsers
from .render import console, fit

if TYPE_CHECKING:
    from ..calibration.agreement import Agreement, CalibrationReport


def register(sub: Subparsers) -> None:
    p = sub.add_parser("calibrate", help=SUMMARIES["calibrate"])
    p.add_argument("results", type=Path, help="results .jsonl written by `judgeflow run`")
    p.add_argument("--by", metavar="FIELD",
                   help="also report per group: dataset, criterion, meta.category, ...; `judge` puts a panel's or "
                        "cascade's members side by side with the combined label")
    p.add_argument("--items", type=Path, metavar="FILE",
                   help="the items file the results were judged from: shows each disagreement's question, evidence "
                        "and answer in --html/--json (default: the file the run read, as the run store recorded "
                        "it, else the --labels file)")
    p.add_argument("--store", type=Path, metavar="FILE", help="the run store that knows which items file the run "
                                                              "read (default: .judgeflow/runs.sqlite here or beside "
                                                              "RESULTS)")
    p.add_argument("--retest", type=Path, action="append", metavar="RUN",
                   help="another results file of the same items by the same judge (judged with --no-cache): puts the "
                        "judge's test-retest kappa beside its kappa with people (repeat for more; rows made with "
                        "`run --repeats K` need none)")
    p.add_argument("--trust-youden", type=float, default=None, metavar="J",
                   help="the Youden's J (sensitivity + specificity - 1) the judge must be shown to reach (its "
                        "interval's lower end) for the verdict TRUSTED; below it (the upper end) UNTRUSTED, else "
                        "INCONCLUSIVE (default 0.5)")
    add_report_args(p, several=True)
    p.set_defaults(func=cmd_calibrate)


def add_report_args(p: argparse.ArgumentParser, *, several: bool = False) -> None:
    """--labels, --json, --html, --seed, --n-boot: shared by calibrate and compare (`several`: --labels repeats)."""
    more = ("; repeat it for a second labeller's file (or give one file whose rows name labelled_by): the judge "
            "is calibrated against the first labeller, and the people's kappa on the items both labelled is "
            "printed as the ceiling") if several else ""
    p.add_argument("--labels", type=Path, action="append" if several else "store",
                   help="human labels (.jsonl/.csv with id and label: 1/0, true/false, yes/no); "
                        f"default: each row's human_label{more}")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--html", type=Path, metavar="REPORT.html", help="also write a self-contained HTML report")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--n-boot", type=int, default=DEFAULT_BOOT, help=f"bootstrap resamples (default {DEFAULT_BOOT})")


def emit(args: argparse.Namespace, report: BaseModel, render_fn: Callable[[Any, Console], None],
         write_html: Callable[[], object]) -> int:
    """Write the HTML report if asked, then print JSON or the rich rendering."""
    if args.html:
        write_html()
    show(report, render_fn, as_json=args.json)
    if args.html:
        console(stderr=True).print(f"HTML report -> {args.html}", markup=False)
    return 0


def show(report: BaseModel, render_fn: Callable[[Any, Console], None], *, as_json: bool) -> None:
    """Print the report as JSON (--json) or with its rich rendering."""
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        render_fn(report, console())


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ..calibration.agreement import calibrate  # numpy: only for this command
    from ..calibration.report_html import write_calibration_html

    items = args.items
    if items is None and (args.html or args.json):  # the disagreements' texts: from the file the run read
        from ..errors import ConfigError
        from ..runs.output import run_input

        try:
            items = run_input(args.results, args.store)
        except ConfigError as e:
            console(stderr=True).print(f"note: {e}; the "
                                       "disagreements are shown without their texts", markup=False)
    from ..calibration.trust import DEFAULT_THRESHOLD

    refuse_injected(args.results)
    report = calibrate(args.results, args.labels, args.by, seed=args.seed, n_boot=args.n_boot, items=items,
                       retest=retest_of(args),
                       threshold=DEFAULT_THRESHOLD if args.trust_youden is None else args.trust_youden)
    return emit(args, report, render, lambda: write_calibration_html(
        report, args.html, title=f"Calibration: {args.results.name}"))


def refuse_injected(path: Path) -> None:
    """Injected test rows (`judgeflow inject`) never mix with real results: refuse them here."""
    from ..calibration.inject_marks import check_real
    from ..calibration.labels import read_results

    check_real(read_results(path), str(path))


def retest_of(args: argparse.Namespace) -> Any:
    """The judge's stability on these items: from --retest runs, or from the rows' own repeats; else None."""
    from ..calibration.labels import read_results
    from ..calibration.stability import stability

    if args.retest:
        return stability([args.results, *args.retest], seed=args.seed, n_boot=args.n_boot)
    rows = read_results(args.results)
    return stability(rows, seed=args.seed, n_boot=args.n_boot) if any(j.repeats for j in rows) else None


def fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{x:.0%}" if pct else f"{x:.2f}"


def kappa_text(a: Agreement) -> str:
    from ..calibration.agreement import kappa_text as text  # here: the parser never imports numpy

    return text(a)


def confusion_table(a: Agreement, title: str = "confusion (rows: human, columns: judge)") -> Table:
    c = a.confusion
    t = Table("", "judge 0", "judge 1", title=title, title_justify="left")
    t.add_row("human 0", str(c.tn), f"[yellow]{c.fp}[/yellow] false alarms")
    t.add_row("human 1", f"[magenta]{c.fn}[/magenta] misses", str(c.tp))
    return t


def metrics_table(a: Agreement) -> Table:
    c = a.confusion
    t = Table("statistic", "value", "what it means", title="on the scored, labelled items (class 1 = hallucination)",
              title_justify="left")
    t.add_row("n", str(a.n), "items with a judge label and a human label")
    t.add_row("Cohen's kappa [95% CI]", kappa_text(a), "agreement beyond chance (1 = perfect, 0 = chance)")
    t.add_row("base rate", f"{fmt(a.prevalence, True)} (judge {fmt(a.judge_rate, True)})",
              "share people labelled 1 (the judge's share): kappa reads differently at 5% and 50%")
    t.add_row("PABAK", fmt(a.pabak), "prevalence- and bias-adjusted kappa (2 x accuracy - 1)")
    t.add_row("balanced accuracy", fmt(a.balanced_accuracy), "mean of recall on 1s and on 0s (a constant judge: 0.50)")
    t.add_row("accuracy", fmt(a.accuracy), "share of items where judge and person agree")
    t.add_row("precision", fmt(a.precision), f"of {c.tp + c.fp} items the judge flagged, share people flagged")
    t.add_row("recall", fmt(a.recall), f"of {c.tp + c.fn} items people flagged, share the judge flagged")
    t.add_row("F1", fmt(a.f1), "harmonic mean of precision and recall")
    t.add_row("false alarms", f"{a.false_alarms} ({fmt(a.false_alarm_share, True)})",
              "judge 1, human 0 (share of all disagreements)")
    t.add_row("misses", f"{a.misses} ({fmt(a.miss_share, True)})", "judge 0, human 1 (share of all disagreements)")
    for col in t.columns[:2]:
        col.no_wrap = True
    return t


def render_publishable(report: CalibrationReport, con: Console) -> None:
    """The corrected rate (overall, per criterion, per error type) and the verdict on the judge."""
    from ..calibration.corrected import corrected_text
    from ..calibration.rates import pct

    if report.corrected_rate is not None:
        con.print(f"[bold]hallucination rate:[/bold] {escape(corrected_text(report.corrected_rate))}", soft_wrap=True)
    for name, c in report.corrected_by_criterion.items():
        con.print(f"  [bold]{escape(name)}[/bold]: {escape(corrected_text(c))}", soft_wrap=True)
    if report.corrected_by_type:
        t = Table("error type", "judge's 1s", "labelled", "confirmed", "confirmed rate [95%]",
                  title="by the type of the judge's deciding claim (people's labels carry no type: misses are not "
                        "in these)", title_justify="left")
        for r in report.corrected_by_type:
            rate = "-" if r.rate is None else f"{pct(r.rate)} [{pct(r.low)}, {pct(r.high)}]"
            t.add_row(escape(r.type), str(r.judged_ones), str(r.labelled), str(r.confirmed), rate)
        con.print(fit(t))
    color = {"TRUSTED": "green", "UNTRUSTED": "red"}.get(report.judge_verdict, "yellow")
    con.print(f"[bold {color}]judge: {escape(report.verdict.text)}[/bold {color}]", soft_wrap=True)
    con.print(f"  ({escape(report.verdict.rule)})", soft_wrap=True)


def render_header(report: CalibrationReport, con: Console) -> None:
    """What was compared: the rows, criteria, judge, labels; the answer rate and what decided the claims."""
    crit = ", ".join(f"{k} ({v})" for k, v in report.criteria.items())
    models = ", ".join(report.models)
    con.print(f"[bold]calibration[/bold]: {report.total} result rows; criterion {escape(crit)}; judge {escape(models)}; "
              f"human labels from {escape(str(report.label_source))}")
    con.print(f"used {report.n}; unscored {report.unscored} and invalid {report.invalid} (labelled, excluded); "
              f"unlabelled {report.unlabelled}")
    if report.answers is not None:
        from ..calibration.answer_rate import answer_text

        con.print(f"{escape(answer_text(report.answers))}: a refusal is a 0 that says nothing", soft_wrap=True)
    if report.decided_by is not None:
        con.print("claims decided by: " + ", ".join(f"{k} {v:.0%}" for k, v in report.decided_by.items())
                  + " (`--by decided_by` groups the items)", soft_wrap=True, markup=False)


def render(report: CalibrationReport, con: Console) -> None:
    render_header(report, con)
    table = metrics_table(report)
    for h in report.humans:
        table.add_row(f"kappa {escape(h.a)} vs {escape(h.b)}", kappa_text(h),  # type: ignore[arg-type]
                      f"the people with each other on {h.overlap} items both labelled: the ceiling")
    con.print(fit(table))
    con.print(fit(confusion_table(report)))
    if report.groups:
        t = Table(escape(report.by or "group"), "n", "excl.", "kappa [95% CI]", "acc", "F1", "false al.",
                  "misses", title=f"by {report.by} (excl. = labelled but unscored or invalid)", title_justify="left")
        t.columns[0].no_wrap = t.columns[3].no_wrap = True
        for g in report.groups:
            t.add_row(escape(str(g.group)), str(g.n), str(g.unscored), kappa_text(g), fmt(g.accuracy), fmt(g.f1),
                      str(g.false_alarms), str(g.misses))
        con.print(fit(t))
    if report.fleiss_members:
        fk = "undefined" if report.fleiss_kappa is None else f"{report.fleiss_kappa:.2f}"
        con.print(f"agreement between the {report.fleiss_members} members (Fleiss' kappa): {fk} on the "
                  f"{report.fleiss_items} labelled items all of them scored")
    if report.retest is not None:
        con.print(f"[bold]test-retest:[/bold] {report.retest.text}", soft_wrap=True)
    if report.citations is not None:
        c = report.citations
        con.print(f"[bold]citations[/bold] (in {c['answers']} answers that cite): precision {fmt(c['precision'], True)}, "
                  f"recall {fmt(c['recall'], True)}; fabricated {c['fabricated']}, misattributed {c['misattributed']}",
                  soft_wrap=True)
    if report.spans is not None:
        from ..calibration.span_metrics import span_text

        con.print(escape(span_text(report.spans)))
    for h in report.humans:
        con.print(f"[bold]human ceiling:[/bold] {escape(h.text)}", soft_wrap=True)
    if report.kappa_note:
        con.print(f"[yellow]note:[/yellow] {escape(report.kappa_note)}")
    con.print(f"[bold]diagnosis:[/bold] {escape(report.diagnosis)}")
    render_publishable(report, con)
    for g in report.groups:
        con.print(f"  [bold]{escape(str(g.group))}[/bold]: {escape(g.diagnosis)}")
    for w in report.warnings:
        con.print(f"[yellow]warning:[/yellow] {escape(w)}")
    if report.disagreements:
        examples = Table("id", "direction", "deciding claim / reason", title="some disagreements", title_justify="left")
        for d in report.disagreements[:8]:
            why = (f"{d.deciding_claim.verdict}: {d.deciding_claim.text}" if d.deciding_claim else d.reason or "")
            examples.add_row(escape(d.id), d.direction.replace("_", " "), escape(why[:120]))
        con.print(fit(examples))
        if len(report.disagreements) > 8:
            con.print(f"... {len(report.disagreements) - 8} more (see --json or --html)")
