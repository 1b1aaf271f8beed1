"""`judgeflow criteria list` and `judgeflow criteria show NAME [--json]`."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from ..criteria import list_criteria, load_criterion


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("criteria", help="list or show the judging criteria")
    csub = p.add_subparsers(dest="criteria_command", required=True, metavar="ACTION")
    lp = csub.add_parser("list", help="list shipped criteria")
    lp.set_defaults(func=cmd_list)
    sp = csub.add_parser("show", help="show one criterion (a shipped name or a .toml path)")
    sp.add_argument("name")
    sp.add_argument("--json", action="store_true", help="print the criterion as JSON")
    sp.set_defaults(func=cmd_show)


def cmd_list(args: argparse.Namespace) -> int:
    table = Table("criterion", "mode", "requires", "error verdicts", "description")
    for name in list_criteria():
        c = load_criterion(name)
        table.add_row(c.name, c.mode, ", ".join(["answer", *c.requires]), ", ".join(c.error_verdicts), c.description)
    Console().print(table)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    c = load_criterion(args.name)
    if args.json:
        print(json.dumps(c.model_dump() | {"fingerprint": c.fingerprint}, indent=2, ensure_ascii=False))
        return 0
    con = Console()
    con.print(f"[bold]{c.name}[/bold] ({c.mode}) — {c.description}")
    con.print(f"requires: answer, {', '.join(c.requires) or '-'}; optional: {', '.join(c.optional) or '-'}")
    con.print(f"bases: {', '.join(c.bases)}; fact kinds: {', '.join(c.fact_kinds)}")
    con.print("verdicts:")
    con.print(c.verdict_guide(), markup=False)
    con.print(f"file: {c.path}")
    return 0
