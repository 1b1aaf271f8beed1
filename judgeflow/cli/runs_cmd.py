"""`judgeflow runs [list|show RUN|diff RUN_A RUN_B] [--store FILE] [--json]`: the run history in the store."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from .argtypes import Subparsers
from . import SUMMARIES
from .render import console, fit

if TYPE_CHECKING:
    from ..runs.history import RunCard, RunDiff


def register(sub: Subparsers) -> None:
    p = sub.add_parser("runs", help=SUMMARIES["runs"])
    p.add_argument("action", nargs="?", default="list", choices=("list", "show", "diff"),
                   help="list (default): every run, newest first; show RUN: one run's settings and rates; "
                        "diff RUN_A RUN_B: settings that differ, both rates, the items whose label changed")
    p.add_argument("run", nargs="*", help="run id(s) (from `judgeflow runs`); `latest` and `previous` name the two newest")
    p.add_argument("--store", type=Path, help="the run store (default .judgeflow/runs.sqlite)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_runs)


def _ids(store: object, names: list[str]) -> list[str]:
    newest = [r.run_id for r in sorted(store.runs(), key=lambda r: r.created, reverse=True)]  # type: ignore[attr-defined]
    alias = {"latest": newest[0] if newest else None, "previous": newest[1] if len(newest) > 1 else None}
    return [alias.get(n) or n for n in names]


def cmd_runs(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..runs.history import run_card, run_diff, run_list
    from ..runs.store import DEFAULT_STORE, RunStore

    where = args.store or DEFAULT_STORE
    if not Path(where).exists():
        raise ConfigError(f"no run store at {where}: `judgeflow run` makes one (or pass --store FILE)")
    want = {"list": 0, "show": 1, "diff": 2}[args.action]
    if len(args.run) != want:
        raise ConfigError(f"`judgeflow runs {args.action}` takes {want} run id(s), got {len(args.run)}: "
                          + {"list": "judgeflow runs", "show": "judgeflow runs show RUN",
                             "diff": "judgeflow runs diff RUN_A RUN_B"}[args.action])
    with RunStore(where) as store:
        ids = _ids(store, args.run)
        report = (run_list(store) if args.action == "list" else run_card(store, ids[0]) if args.action == "show"
                  else run_diff(store, *ids))
    if args.json:
        print(json.dumps([c.model_dump() for c in report], indent=2) if isinstance(report, list)
              else report.model_dump_json(indent=2))
    else:
        {"list": render_list, "show": render_card, "diff": render_diff}[args.action](report)  # type: ignore[operator]
    return 0


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def render_list(cards: list[RunCard]) -> None:
    t = Table("run", "created (UTC)", "status", "model", "criterion", "rows", "rate", "answer rate", "unscored",
              "invalid", title=f"{len(cards)} run(s), newest first", title_justify="left")
    for c in cards:
        t.add_row(escape(c.run_id), c.created, c.status, escape(str(c.model)), escape(str(c.criterion or "routed")),
                  str(c.rows), _pct(c.rate), _pct(c.answer_rate), str(c.unscored), str(c.invalid))
    console().print(fit(t))


def render_card(c: RunCard) -> None:
    con = console()
    con.print(f"[bold]run {escape(c.run_id)}[/bold] ({c.status}, {c.created}): {escape(str(c.input_path))} -> "
              f"{escape(str(c.output_path))}", soft_wrap=True)
    con.print(f"{c.rows} of {c.total} rows: hallucination rate {_pct(c.rate)} ({c.ones} of {c.scored} scored), answer "
              f"rate {_pct(c.answer_rate)}; unscored {c.unscored}, invalid {c.invalid}; {c.calls} model calls"
              + (f", {c.output_tokens:,} output tokens of which {c.reasoning_tokens:,} reasoning" if c.reasoning_tokens
                 else ""))
    t = Table("setting", "value", title="settings", title_justify="left")
    for k, v in sorted(c.settings.items()):
        if v not in (None, "", [], {}):
            t.add_row(escape(k), escape(json.dumps(v) if not isinstance(v, str) else v))
    con.print(fit(t))
    if c.command:
        con.print(f"resume: {escape(c.command)}", soft_wrap=True)


def render_diff(d: RunDiff) -> None:
    con = console()
    con.print(f"[bold]A[/bold] {escape(d.a.run_id)} ({d.a.created})  vs  [bold]B[/bold] {escape(d.b.run_id)} "
              f"({d.b.created})")
    con.print("settings: " + ("the same" if not d.settings else "; ".join(escape(s) for s in d.settings)), soft_wrap=True)
    for side, c in (("A", d.a), ("B", d.b)):
        con.print(f"  {side}: rate {_pct(c.rate)} ({c.ones} of {c.scored} scored), answer rate {_pct(c.answer_rate)}, "
                  f"unscored {c.unscored}, invalid {c.invalid}, {c.rows} rows")
    worse = sum(f.b == 1 for f in d.flipped)
    con.print(f"paired on {d.paired} items scored in both: {len(d.flipped)} flipped ({worse} 0 -> 1, "
              f"{len(d.flipped) - worse} 1 -> 0)" + (f"; only in A: {len(d.only_a)}" if d.only_a else "")
              + (f"; only in B: {len(d.only_b)}" if d.only_b else ""))
    if d.flipped:
        t = Table("id", "A", "B", "B's reason", title="flipped items", title_justify="left")
        for f in d.flipped[:30]:
            t.add_row(escape(f.id), str(f.a), str(f.b), escape((f.reason or "")[:100]))
        con.print(fit(t))
        if len(d.flipped) > 30:
            con.print(f"... {len(d.flipped) - 30} more (see --json)")
