"""`judgeflow inject ITEMS -o OUT [--types T ...] [--seed N]` and `judgeflow inject --report RESULTS [--json]`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import SUMMARIES
from .argtypes import Subparsers
from .calibrate_cmd import show
from .render import console, fit

if TYPE_CHECKING:
    from ..calibration.inject_report import InjectReport

TYPES = ("date", "number", "name", "entity", "negation", "invented_detail")  # calibration.inject.TYPES


def register(sub: Subparsers) -> None:
    p = sub.add_parser("inject", help=SUMMARIES["inject"])
    p.add_argument("items", type=Path, nargs="?", help="items whose answers are correct (rows labelled 0; a file "
                                                       "without labels is taken as correct answers)")
    p.add_argument("-o", "--output", type=Path, help="the injected rows (.jsonl): judge them with `judgeflow run OUT "
                                                     "-o RESULTS` in a run of their own")
    p.add_argument("--types", nargs="+", choices=TYPES, default=list(TYPES),
                   help="error types to inject (default: all that apply to each answer)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0): the same seed, the same rows")
    p.add_argument("--model", metavar="provider/model",
                   help="let a model write each change (through the LLM seam; code finds its words in the answer "
                        "and records the offsets) instead of the rules")
    p.add_argument("--base-url", help="with --model: an OpenAI-compatible endpoint")
    p.add_argument("--report", type=Path, metavar="RESULTS",
                   help="instead: the judge's results on injected rows -> recall per error type, span overlap and "
                        "the false-alarm rate on the untouched answers")
    p.add_argument("--json", action="store_true", help="with --report: print the report as JSON")
    p.set_defaults(func=cmd_inject)


def cmd_inject(args: argparse.Namespace) -> int:
    from ..errors import ConfigError

    if args.report is not None:
        if args.items is not None or args.output is not None:
            raise ConfigError("--report RESULTS reads a results file only: give no ITEMS or -o with it")
        from ..calibration.inject_report import inject_report

        show(inject_report(args.report), render_report, as_json=args.json)
        return 0
    if args.items is None or args.output is None:
        raise ConfigError("judgeflow inject ITEMS -o OUT (or judgeflow inject --report RESULTS)")
    from ..calibration.inject import inject_file

    client = None
    if args.model:
        from ..backends.llm import make_client

        client = make_client(args.model, **({"base_url": args.base_url} if args.base_url else {}))
    s = inject_file(args.items, args.output, seed=args.seed, types=args.types, client=client, close_client=True)
    counts = ", ".join(f"{k} {v}" for k, v in s.injected.items()) or "none"
    con = console()
    if s.by != "rules":
        con.print(f"written by {s.by}; {s.not_placed} edit(s) dropped (their words are not in the answer, they change "
                  "nothing, or the call failed)", markup=False)
    con.print(f"injected into {s.correct} correct answer(s) of {s.read} rows ({s.skipped} labelled 1 or without an "
              f"answer skipped): {counts}; {s.controls} untouched control(s) -> {s.output}", markup=False)
    if s.assumed_correct:
        con.print("note: the file has no labels, so every answer was taken as correct; a wrong one among them "
                  "shows up as a false alarm on its control", markup=False)
    con.print(f"next: judgeflow run {s.output} -o injected_results.jsonl && judgeflow inject --report "
              "injected_results.jsonl", markup=False)
    return 0


def render_report(r: InjectReport, con: Console) -> None:
    from ..calibration.inject_report import report_rows

    t = Table("error type", "rows", "scored", "caught", "recall [95% Wilson]", "span overlap (of caught with spans)",
              "span precision",
              title=f"the judge ({escape(', '.join(r.models))}) on injected errors", title_justify="left")
    for row in report_rows(r):
        t.add_row(*(escape(str(v)) for v in row.values()))
    con.print(fit(t))
    con.print(escape(r.text), soft_wrap=True)
