"""`judgeflow sample INPUT -n 40 -o TO_LABEL.jsonl [--stratify-by FIELD] [--results R] [--seed N]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from ..calibration.sampling import FOCUS, FOCUS_NOTE, JUDGE_LABEL, sample_file
from . import SUMMARIES
from .argtypes import Subparsers
from .render import console, fit


def register(sub: Subparsers) -> None:
    p = sub.add_parser("sample", help=SUMMARIES["sample"])
    p.add_argument("input", type=Path, help="items (.jsonl or .csv)")
    p.add_argument("-n", type=int, default=40, help="sample size (default 40; the method asks for 30-50)")
    p.add_argument("-o", "--output", type=Path, required=True, help="the sample, .jsonl (label it with `judgeflow label`)")
    p.add_argument("--stratify-by", action="append", metavar="FIELD",
                   help=f"stratify by a field (dataset, meta.category, ...) or {JUDGE_LABEL} (needs --results); "
                        f"repeat for several; default {JUDGE_LABEL} with --results, else none")
    p.add_argument("--results", type=Path, help="the judge's results for these items: adds its verdict "
                                                "(hidden while labelling) and allows --stratify-by judge_label")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0): the same seed, the same sample")
    p.add_argument("--equal", action="store_true", help="equal shares per stratum instead of proportional")
    p.add_argument("--keep-labels", action="store_true", help="keep the input's own label (default: dropped)")
    p.add_argument("--focus", choices=FOCUS,
                   help="disagreement: only items where a panel's members (or samples, or a cascade's judges) "
                        "disagree; unstable: only items whose verdict flips between the judge's own repeats "
                        "(run --repeats K); to find criterion problems fast; NOT for kappa (needs --results)")
    p.add_argument("--overlap", action="store_true",
                   help="INPUT is a file one person labelled: draw -n of its labelled items (stratified by their "
                        "label) into a fresh copy, without their labels, for a second labeller (`judgeflow label "
                        "OUT --as NAME`); `calibrate --labels INPUT --labels OUT` then prints the people's kappa")
    p.set_defaults(func=cmd_sample)


def cmd_overlap(args: argparse.Namespace) -> int:
    from ..calibration.overlap import overlap_file

    s = overlap_file(args.input, args.n, args.output, seed=args.seed)
    shares = ", ".join(f"{n} labelled {k}" for k, n in s.by_label.items())
    console().print(f"overlap: {s.n} of the {s.pool} labelled rows ({shares}; seed {args.seed}), without their "
                    f"labels -> {s.output}\nnext: judgeflow label {s.output} --as NAME", markup=False)
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    if args.overlap:
        return cmd_overlap(args)
    s = sample_file(args.input, args.n, args.output, stratify_by=args.stratify_by, results=args.results,
                    seed=args.seed, equal=args.equal, keep_labels=args.keep_labels, focus=args.focus)
    con = console()
    if s.focus:
        con.print(f"[yellow]note:[/yellow] {FOCUS_NOTE}")
    how = f"stratified by {', '.join(s.stratify_by)}" if s.stratify_by else "simple random sample"
    con.print(f"sampled {s.n} of {s.pool} rows ({how}, seed {s.seed}) -> {s.output}", markup=False)
    if s.stratify_by:
        t = Table(" | ".join(s.stratify_by), "rows", "sampled")
        for st in s.strata:
            t.add_row(escape(st.key), str(st.size), str(st.sampled))
        con.print(fit(t))
    if s.without_results:
        con.print(f"[yellow]note:[/yellow] {s.without_results} input rows have no result and were left out")
    if s.labels_dropped:
        con.print("the input's own labels were left out (--keep-labels keeps them)")
    con.print(f"next: judgeflow label {s.output}", markup=False)
    return 0
