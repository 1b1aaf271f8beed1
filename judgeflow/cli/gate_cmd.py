"""`judgeflow gate CANDIDATE --baseline BASELINE [--alpha A] [--max-rate R] [--markdown F] [--json]`."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import SUMMARIES
from .argtypes import Subparsers, share
from .calibrate_cmd import show
from .render import console, fit

if TYPE_CHECKING:
    from ..calibration.gate import Flip, GateResult

EXIT_CODES = """exit codes: 0 the candidate is not worse; 1 it is worse (the paired test, --max-rate or --max-unscored
or the answer rate decided: the output names which); 2 the runs cannot be compared (other items, criterion or judge model:
the message says what differs) or bad input"""
#: GitHub Actions sets this to a file whose Markdown is shown on the run's page
STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def register(sub: Subparsers) -> None:
    p = sub.add_parser("gate", help=SUMMARIES["gate"], epilog=EXIT_CODES)
    p.add_argument("candidate", help="the changed bot's results (.jsonl from `judgeflow run -o`, or a run id in --store)")
    p.add_argument("--baseline", required=True, help="the baseline's results on the same questions with the same "
                                                     "judge (a results file or a run id)")
    p.add_argument("--store", type=Path, help="the run store that run ids are looked up in (default .judgeflow/runs.sqlite)")
    p.add_argument("--alpha", type=share, default=0.05,
                   help="significance level of the paired test; intervals are at 1 - alpha (default 0.05)")
    p.add_argument("--max-rate", type=share, help="also fail when the candidate's hallucination rate is above this share "
                                                  "and so is its interval's lower bound (e.g. 0.1)")
    p.add_argument("--max-unscored", type=share, default=None,
                   help="fail when more than this share of a run's rows is unscored or invalid (default 0.05)")
    p.add_argument("--detect", type=share, metavar="SHARE",
                   help="a regression to size the gate for (e.g. 0.05 = 5 points): prints the paired items needed to "
                        "catch it with 80%% power")
    p.add_argument("--markdown", type=Path, metavar="FILE",
                   help=f"write the Markdown summary here (it is appended to ${STEP_SUMMARY_ENV} when that is set)")
    p.add_argument("--stability", nargs="+", metavar="RUN",
                   help="the candidate's answers judged again by the same judge (--no-cache): items whose label "
                        "differs are unstable, and their flips are reported apart, not counted as regressions")
    p.add_argument("--repeats", type=int, metavar="K",
                   help="the runs were judged with `run --repeats K`: check every scored row carries K verdicts "
                        "(items whose repeats differ are unstable either way)")
    p.add_argument("--labels", type=Path, metavar="FILE",
                   help="people's labels of the baseline's answers (.jsonl/.csv with id and label, e.g. a "
                        "calibration sample of the baseline): both rates corrected for the judge's measured false "
                        "alarms and misses, and whether a regression could be the judge's (informs; does not decide)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=cmd_gate)


def cmd_gate(args: argparse.Namespace) -> int:
    from ..calibration.gate import DEFAULT_MAX_UNSCORED, gate
    from ..calibration.gate_report import gate_markdown

    result = gate(args.candidate, args.baseline, alpha=args.alpha, max_rate=args.max_rate, store=args.store, detect=args.detect,
                  max_unscored=DEFAULT_MAX_UNSCORED if args.max_unscored is None else args.max_unscored,
                  stability=args.stability, repeats=args.repeats, labels=args.labels)
    text = gate_markdown(result)
    written = write_markdown(text, args.markdown)
    show(result, render, as_json=args.json)
    for where in written:
        console(stderr=True).print(f"Markdown summary -> {where}")
    return result.exit_code


def write_markdown(text: str, path: Path | None) -> list[str]:
    """Write the summary to `path` and append it to $GITHUB_STEP_SUMMARY when set; where it went."""
    out = []
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(str(path))
    summary = os.environ.get(STEP_SUMMARY_ENV)
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(text + "\n")
        out.append(f"${STEP_SUMMARY_ENV}")
    return out


def _why(f: Flip) -> str:
    return f"{f.claim.verdict}: {f.claim.text}" if f.claim else (f.reason or "")


def render(r: GateResult, con: Console) -> None:
    from ..calibration.answer_rate import answer_cell
    from ..calibration.rates import rate_text

    t = Table("run", "results", f"rate [{r.candidate.level:.0%} Wilson]", "answer rate", "unscored", "invalid", "rows",
              "model calls", title="hallucination rate (share of scored rows labelled 1) beside the answer rate (share "
              "of scored answers with something checkable)", title_justify="left")
    for role, s, a in (("baseline", r.baseline, r.baseline_answers), ("candidate", r.candidate, r.candidate_answers)):
        t.add_row(role, escape(s.name), rate_text(s), answer_cell(a), str(s.unscored), str(s.invalid), str(s.rows),
                  f"{s.calls}" + (f" ({s.cached} cached rows)" if s.cached else ""))
    con.print(fit(t))
    con.print(f"paired on {r.paired} items ({r.not_paired} unscored or invalid in a run): {len(r.got_worse)} went 0 -> 1, "
              f"{len(r.got_better)} went 1 -> 0; McNemar exact p = {r.mcnemar_p:.3g}")
    for o in r.rules:
        con.print(f"  {'[red]FAIL[/red]' if o.failed else '[green]ok[/green]'}  {o.rule}: {escape(o.text)}", soft_wrap=True)
    con.print(f"  power: {escape(r.power)}", soft_wrap=True)
    if r.corrected is not None:
        con.print(f"  judge: {escape(r.corrected.text)}", soft_wrap=True)
    if r.repeats:
        con.print(f"  judge stability: {len(r.unstable)} item(s) flip between the judge's own verdicts; "
                  f"{len(r.unstable_flips)} flip(s) on them set aside (not regressions)")
    for title, flips in (("went 0 -> 1", r.got_worse), ("went 1 -> 0", r.got_better),
                         ("flipped on unstable items (set aside)", r.unstable_flips)):
        if flips:
            t = Table("id", "deciding claim (of the run that says 1)", "unstable", title=f"{len(flips)} item(s) {title}",
                      title_justify="left")
            for f in flips[:20]:
                t.add_row(escape(f.id), escape(_why(f)[:120]), "yes" if f.unstable else "")
            con.print(fit(t))
            if len(flips) > 20:
                con.print(f"... {len(flips) - 20} more (see --json)")
    color = "green" if r.passed else "red"
    con.print(f"[bold {color}]{escape(r.verdict)}[/bold {color}]", soft_wrap=True)
