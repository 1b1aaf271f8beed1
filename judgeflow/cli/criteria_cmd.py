"""`judgeflow criteria list [--json]`, `criteria show NAME [--json]` and `criteria validate FILE...`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from ..criteria import list_criteria, load_criterion
from ..errors import CriterionError
from . import SUMMARIES
from .argtypes import Subparsers
from .render import console, fit


def register(sub: Subparsers) -> None:
    p = sub.add_parser("criteria", help=SUMMARIES["criteria"])
    csub = p.add_subparsers(dest="criteria_command", required=True, metavar="ACTION")
    lp = csub.add_parser("list", help="list shipped criteria")
    lp.add_argument("--json", action="store_true", help="print the criteria as a JSON array")
    lp.set_defaults(func=cmd_list)
    sp = csub.add_parser("show", help="show one criterion (a shipped name or a .toml path)")
    sp.add_argument("name")
    sp.add_argument("--json", action="store_true", help="print the criterion as JSON")
    sp.set_defaults(func=cmd_show)
    vp = csub.add_parser("validate", help="check your own criterion files (TOML): fields, verdicts, prompts")
    vp.add_argument("files", nargs="+", help="criterion .toml files")
    vp.set_defaults(func=cmd_validate)


def cmd_list(args: argparse.Namespace) -> int:
    shipped = [load_criterion(name) for name in list_criteria()]
    if args.json:
        print(json.dumps([{"name": c.name, "family": c.family, "requires": ["answer", *c.requires],
                           "error_verdicts": c.error_verdicts, "description": c.description,
                           "path": str(c.path)} for c in shipped], indent=2, ensure_ascii=False))
        return 0
    table = Table("criterion", "mode", "requires", "error verdicts", "description")
    for c in shipped:
        table.add_row(*(escape(cell) for cell in (c.name, c.family, ", ".join(["answer", *c.requires]),
                                                  ", ".join(c.error_verdicts), c.description)))
    fit(table)
    name = table.columns[0]  # the names a user types: never broken over two lines
    name.no_wrap, name.min_width = True, max(len(c.name) for c in shipped)
    console().print(table)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Load each file as judgeflow would; print what it defines, or the first error per file."""
    con, err = console(), console(stderr=True)
    bad = 0
    for f in args.files:
        try:
            c = load_criterion(Path(f))
        except CriterionError as e:
            err.print(f"[red]invalid:[/red] {escape(str(e))}", soft_wrap=True)
            bad += 1
            continue
        con.print(f"ok: {f}: criterion {c.name!r} ({c.family}), requires {', '.join(['answer', *c.requires])}; "
                  f"verdicts {', '.join(c.verdicts)} (errors: {', '.join(c.error_verdicts)}); offline roles "
                  f"{', '.join(f'{k}={v}' for k, v in c.verdict_roles().items())}; "
                  f"fingerprint {c.fingerprint}", soft_wrap=True, markup=False)
    return 2 if bad else 0


def cmd_show(args: argparse.Namespace) -> int:
    c = load_criterion(args.name)
    if args.json:
        print(json.dumps(c.model_dump() | {"fingerprint": c.fingerprint}, indent=2, ensure_ascii=False))
        return 0
    con = console()
    con.print(f"[bold]{escape(c.name)}[/bold] ({escape(c.family)}) — {escape(c.description)}")
    con.print(f"requires: {', '.join(['answer', *c.requires])}; optional: {', '.join(c.optional) or 'none'}", markup=False)
    con.print(f"bases: {', '.join(c.bases)}; fact kinds: {', '.join(c.fact_kinds)}", markup=False)
    con.print("verdicts:")
    con.print(c.verdict_guide(), markup=False)
    con.print(f"file: {c.path}", markup=False)
    return 0
