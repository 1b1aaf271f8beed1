"""`judgeflow label TO_LABEL.jsonl`: label a sample by hand in the terminal (resumable)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..calibration.labeller import label_file
from . import SUMMARIES
from .argtypes import Subparsers
from .render import console


def register(sub: Subparsers) -> None:
    p = sub.add_parser("label", help=SUMMARIES["label"])
    p.add_argument("file", type=Path, help="a .jsonl sample from `judgeflow sample` (labels are written into it)")
    p.add_argument("--start", type=int, metavar="N", help="start at item N (1-based) instead of the first open one")
    p.add_argument("--max-chars", type=int, default=1500, help="truncate long texts to about this many characters")
    p.add_argument("--as", dest="labeller", metavar="NAME",
                   help="who labels: each label is saved with labelled_by NAME, so `calibrate --labels A --labels B` "
                        "can put two people's agreement beside the judge's (a second person labels their own copy: "
                        "`judgeflow sample FILE --overlap -n 20 -o FILE2`)")
    p.set_defaults(func=cmd_label)


def cmd_label(args: argparse.Namespace) -> int:
    label_file(args.file, start=args.start - 1 if args.start else None, max_chars=args.max_chars,
               console=console(), name=args.labeller)  # never wrapped when written to a file or a pipe
    return 0
