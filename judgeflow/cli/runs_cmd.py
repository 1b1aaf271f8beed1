"""`judgeflow runs [list|show RUN|diff RUN_A RUN_B] [--store FILE] [--json]`: the run history in the store."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from . import SUMMARIES
from .argtypes import Subparsers
from .render import console, fit

if TYPE_CHECKING:
    from ..runs.history import RunCard, RunDiff
    from ..runs.store import RunStore


def register(sub: Subparsers) -> None:
    p = sub.add_parser("runs", help=SUMMARIES["runs"])
    p.add_argument("action", nargs="?", default="list", choices=("list", "show", "diff"),
                   help="list (default): every run, newest first; show RUN: one run's settings and rates; "
                        "diff RUN_A RUN_B: settings that differ, both rates, the items whose label changed")
    p.add_argument("run", nargs="*", help="run id(s) (from `judgeflow runs`); `latest` and `previous` name the two newest")
    p.add_argument("--store", type=Path, help="the run store (default .judgeflow/runs.sqlite)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_runs)


def _ids(store: RunStore, names: list[str]) -> list[str]:
    newest = [r.run_id for r in sorted(store.runs(), key=lambda r: r.created, reverse=True)]
    alias = {"latest": newest[0] if newest else None, "previous": newest[1] if len(newest) > 1 else None}
    return [alias.get(n) or n for n in names]


def cmd_runs(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..runs.history import RunCard, RunDiff, run_card, run_diff, run_list
    from ..runs.store import DEFAULT_STORE, RunStore
    from .flags import resume_command

    where = args.store or DEFAULT_STORE
    if not Path(where).exists():
        raise ConfigError(f"no run store at {where}: `judgeflow run` makes one (or pass --store FILE)")
    want = {"list": 0, "show": 1, "diff": 2}[args.action]
    if len(args.run) != want:
        raise ConfigError(f"`judgeflow runs {args.action}` takes {want} run id(s), got {len(args.run)}: "
                          + {"list": "judgeflow runs", "show": "judgeflow runs show RUN",
                             "diff": "judgeflow runs diff RUN_A RUN_B"}[args.action])
    with RunStore(where, readonly=True) as store:
        ids = _ids(store, args.run)
        report = (run_list(store) if args.action == "list" else run_card(store, ids[0]) if args.action == "show"
                  else run_diff(store, *ids))
        if isinstance(report, RunCard) and not report.command:  # opened from Python: derived from its record
            spec = store.get_run(report.run_id).spec
            report.command = resume_command(spec) if spec is not None and spec.input and spec.output else None
    if args.json or (args.action == "show" and not _terminal()):  # a pipe gets the card as data, not a table
        print(json.dumps([c.model_dump() for c in report], indent=2) if isinstance(report, list)
              else report.model_dump_json(indent=2))
    elif isinstance(report, list):
        render_list(report)
    elif isinstance(report, RunDiff):
        render_diff(report)
    else:
        render_card(report)
    return 0


def _terminal() -> bool:
    import sys

    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _criteria(c: RunCard) -> str:
    """The run's criterion: the one given, else routed, with the criteria its rows were judged by."""
    used = ", ".join(f"{k} {n}" for k, n in sorted(c.criteria.items(), key=lambda kv: -kv[1]))
    given = str(c.criterion).partition("@")[0] if c.criterion else None
    return given or (f"routed ({used})" if used else "routed")


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
    con.print("[bold]settings[/bold]")
    width = max(con.width - 4, 40)
    for k, v in sorted(c.settings.items()):
        if v not in (None, "", [], {}):
            text = json.dumps(v) if not isinstance(v, str) else v
            if len(k) + len(text) + 2 > width:  # a long value (the judging spec) in full with --json
                text = text[:max(width - len(k) - 5, 10)] + "..."
            con.print(f"  {escape(k)}: {escape(text)}", soft_wrap=True)
    if c.command:
        con.print(f"resume: {escape(c.command)}", soft_wrap=True)


def render_diff(d: RunDiff) -> None:
    con = console()
    con.print(f"[bold]A[/bold] {escape(d.a.run_id)} ({d.a.created})  vs  [bold]B[/bold] {escape(d.b.run_id)} "
              f"({d.b.created})")
    for side, c in (("A", d.a), ("B", d.b)):
        con.print(f"  {side}: {escape(str(c.input_path))} judged by {escape(str(c.model))}, criterion "
                  f"{escape(_criteria(c))}", soft_wrap=True)
    if d.same_input is not None:
        con.print("inputs: the same file content" if d.same_input else
                  "inputs: [yellow]different[/yellow] (the files' contents differ: an item may have another answer)",
                  soft_wrap=True)
    shown = [s if len(s) <= 160 else s[:157] + "..." for s in d.settings]  # in full with --json
    con.print("settings: " + ("the same" if not shown else "; ".join(escape(s) for s in shown)), soft_wrap=True)
    for side, c in (("A", d.a), ("B", d.b)):
        con.print(f"  {side}: rate {_pct(c.rate)} ({c.ones} of {c.scored} scored), answer rate {_pct(c.answer_rate)}, "
                  f"unscored {c.unscored}, invalid {c.invalid}, {c.rows} rows")
    worse = sum(f.b == 1 for f in d.flipped)
    con.print(f"paired on {d.paired} items scored in both: {len(d.flipped)} flipped ({worse} 0 -> 1, "
              f"{len(d.flipped) - worse} 1 -> 0)" + (f"; only in A: {len(d.only_a)}" if d.only_a else "")
              + (f"; only in B: {len(d.only_b)}" if d.only_b else ""))
    if d.flipped and not d.same_input:
        unknown = len(d.flipped) - len(d.answer_changes()) - len(d.judge_changes())
        con.print(f"of the flips: {len(d.answer_changes())} with a changed answer or evidence (the input changed), "
                  f"{len(d.judge_changes())} on the same text (the judge changed)"
                  + (f", {unknown} unknown (an input file is gone)" if unknown else ""), soft_wrap=True)
    if d.flipped:
        t = Table("id", "A", "B", "why", "B's reason", title="flipped items", title_justify="left")
        for f in d.flipped[:30]:
            why = {True: "answer", False: "judge", None: "?"}[f.answer_changed]
            t.add_row(escape(f.id), str(f.a), str(f.b), why, escape((f.reason or "")[:100]))
        con.print(fit(t))
        if len(d.flipped) > 30:
            con.print(f"... {len(d.flipped) - 30} more (see --json)")
