"""`judgeflow run INPUT -o OUTPUT.jsonl`: judge every row of a JSONL/CSV file.

Every input row ends as exactly one output row: judged (label 1/0), unscored (label null,
the judge could not decide) or invalid (label null, the input row is unusable).

The run itself is `runs.run.Run` (open or resume, judge, commit, finish: see its docstring for
what a kill may lose, nothing paid for); this command parses the flags into a `RunSpec`, calls
it, shows progress, maps exceptions to exit codes and prints the summary. stdin is copied to a
temporary file first, so the input can be read twice (checked, then judged), streamed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from .. import interrupts
from ..backends.llm_judge import DEFAULT_MODEL_ENV, OFFLINE_MODEL, default_model
from ..build import build
from ..config.run import RunSpec
from ..errors import ConfigError, ProviderUnavailable
from ..files import STDIO
from ..judging import Judging
from ..runs.budget import spend_cap
from ..runs.gc_tuning import tuned_gc
from ..runs.output import OutputError, check_output, output_format, spool
from ..runs.run import Run
from ..runs.store import RunStore, StoreError
from . import SUMMARIES, ensemble, otel_args, ray_cmd
from .argtypes import Subparsers
from .flags import add_run_flags, resume_command, to_spec
from .render import console
from .run_view import Session, note_aliases, progress_bar, report

EXIT_CODES = """exit codes: 0 done; 1 done, but nothing was judged or the unscored share is above
--max-unscored, or stopped at --budget (rows unscored 'budget: ...'; --resume continues them); 2 bad
input or configuration; 3 stopped on a systemic provider error (authentication, refused connection,
unknown model or path, rejected request shape: fix it, then --resume); 130 interrupted (--resume
continues)"""


def register(sub: Subparsers) -> None:
    p = sub.add_parser("run", help=SUMMARIES["run"], epilog=EXIT_CODES)
    add_run_flags(p)  # every spec field's flag (cli/flags.py)
    p.add_argument("--resume", action="store_true", help="continue the last run that wrote OUTPUT: "
                   "finished items are not judged again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the end-of-run summary as one JSON "
                   "object on stdout (counts, tokens, cost)")
    otel_args.add_arguments(p)
    ray_cmd.add_arguments(p)
    ensemble.add_args(p)
    p.set_defaults(func=cmd_run)


def make_judge(args: argparse.Namespace, budget: Any = None,
               spec: RunSpec | None = None) -> Judging:
    """The Judge, Panel, Cascade or repeated Judge the flags ask for, built from the run's spec
    (`spec`, else parsed from `args`); every member's client shares `budget` (the one spend cap)."""
    if spec is None:
        ensemble.check(args)
        check_ray(args)
        spec = to_spec(args)
    return build(spec.judging, **({"budget": budget} if budget is not None else {}))


def check_ray(args: argparse.Namespace) -> None:
    """What `--ray` (not a spec field: where a run is spread) does not combine with yet."""
    if not getattr(args, "ray", False):
        return
    if getattr(args, "repeats", 1) > 1:
        raise ConfigError("--repeats does not combine with --ray yet: run locally (drop --ray)")
    if args.budget:
        raise ConfigError("--budget does not combine with --ray yet: each Ray worker would hold "
                          "its own cap; run locally (drop --ray) or cap the rows with --limit N")


def note_offline(args: argparse.Namespace, con: Console) -> None:
    if not args.model and not ensemble.active(args) and default_model() == OFFLINE_MODEL:
        con.print("[yellow]note:[/yellow] no model configured: judging offline with "
                  f"{OFFLINE_MODEL} (a lexical floor, not an LLM judge). Use --model "
                  "openai/gpt-4o-mini (with OPENAI_API_KEY), --model anthropic/<model>, --model "
                  f"ollama/<model>, or set {DEFAULT_MODEL_ENV}.")
    model = args.model or default_model()
    asked = [flag for flag, on in (
        ("--knowledge commit-first", getattr(args, "knowledge", None) == "commit-first"),
        ("--evidence", getattr(args, "evidence", None))) if on]
    if asked and model.startswith("baseline/") and not ensemble.active(args):  # #48: unsaid before
        one = len(asked) == 1
        con.print(f"note: {' and '.join(asked)} {'is a step' if one else 'are steps'} of an LLM "
                  f"judge: the offline {model} ignores {'it' if one else 'them'} (the labels are "
                  "those of a plain run); give --model", markup=False, soft_wrap=True)


def default_output(args: argparse.Namespace, con: Console) -> None:
    """No -o: ITEMS.results.jsonl beside the input (said in one line); stdin or --ray need an -o."""
    if args.output is not None:
        return
    if str(args.input) == STDIO or getattr(args, "ray", False):
        raise ConfigError("give the results file with -o, e.g. -o results.jsonl (-o - writes to "
                          "stdout)")
    args.output = args.input.with_name(f"{args.input.stem}.results.jsonl")
    con.print(f"note: no -o given: writing the results to {args.output}", markup=False,
              soft_wrap=True)


def cmd_run(args: argparse.Namespace, *, command: Callable[[str], str] | None = None) -> int:
    """`judgeflow run`; `command` turns the run's resume command into the caller's (`bench`)."""
    con = console(stderr=True)
    default_output(args, con)
    if args.ray:
        check_ray(args)
        note_offline(args, con)
        return ray_cmd.run_on_ray(args, con, make_judge)
    if getattr(args, "output_is_directory", False):
        raise ConfigError(f"-o {args.output}{os.sep} names a directory, and a local run writes one "
                          f"results file: give a file path, e.g. -o {args.output / 'results.jsonl'} "
                          "(a directory of shards is --ray's output)")
    check_output(args.output, args.input, store=args.store)
    args.fmt = output_format(args.output, args.format)  # before judging: parquet needs pyarrow
    if args.batch:
        from ..runs.batch import check_batch_input

        check_batch_input(args.input)
    ensemble.check(args)
    settings = to_spec(args)
    budget = spend_cap(settings)
    judge = make_judge(args, budget, settings)
    exporter = otel_args.exporter_of(args)  # before judging: OTel export needs the otel extra
    with spool(args.input) as (source, sha), RunStore(settings.store) as store:  # stdin once
        run = Run.open(store, settings, judging=judge, command=resume_command(settings),
                       source=source, sha=sha, resume=args.resume,
                       say=lambda note: con.print(note, soft_wrap=True, markup=False))
        if command is not None:
            run.store.update_run(run.run_id, settings=run.info.settings,
                                 command=command(run.command))
            run.info = run.store.get_run(run.run_id)
        note_offline(args, con)  # said only once the inputs are known to be fine
        note_aliases(run.aliases, con)
        if settings.batch:
            from .batch_cmd import submit

            return submit(run, con=con, max_unscored=settings.max_unscored,
                          base_url=args.base_url)
        return _judge_run(run, judge, settings, con, resume=args.resume,
                          progress=not args.no_progress, as_json=args.json, budget=budget,
                          exporter=exporter, base_url=args.base_url)


def _judge_run(run: Run, judge: Judging, settings: RunSpec, con: Console, *, resume: bool,
               progress: bool, as_json: bool, budget: Any = None, exporter: Any = None,
               base_url: str | None = None) -> int:
    """Judge the run's rows with progress, then finish it; exceptions become exit codes."""
    already = run.finished()
    if already or resume:
        again = run.store.count(run.run_id) - already
        con.print(f"resuming run {run.run_id}: {already} of {run.total} rows already done"
                  + (f"; {again} unscored rows are judged again" if again else ""))
    if resume:  # only a resumed run can have batches (a new run id has none): loaded only then
        from .batch_cmd import open_batches_note

        if note := open_batches_note(run.store, run.run_id, con, base_url):
            con.print(note, soft_wrap=True, markup=False)
    session = Session(exporter)
    output = Path(settings.output or "-")
    try:
        with tuned_gc():
            interrupts.run(_judge_all(run, judge, settings, con, session, already, progress))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM, once the judging task has been cancelled
        n = run.stop("interrupted", output)
        con.print("[yellow]interrupted:[/yellow] " + escape(
            f"{n} of {run.total} rows are saved (in {settings.store} and {output}). Resume with:\n"
            f"  {run.command}"), soft_wrap=True)
        return 130
    except StoreError as e:  # a failed commit stopped the run: nothing more was sent
        with contextlib.suppress(StoreError, OutputError):
            run.stop("interrupted")
        con.print("[red]error:[/red] " + escape(f"{e}. Resume with:\n  {run.command}"),
                  soft_wrap=True)
        return 2
    except ProviderUnavailable as e:
        n = run.stop("stopped", output)
        con.print("[red]error:[/red] " + escape(f"{e}. {n} of {run.total} rows saved; after "
                                                f"fixing it, continue with: {run.command}"),
                  soft_wrap=True)
        return 3
    finally:
        if exporter is not None:  # the spans of whatever was judged, also when stopped
            exporter.close()
    tally = run.finish(output)
    if exporter is not None:
        con.print("  " + otel_args.describe(exporter), markup=False, soft_wrap=True)
    return report(run, judge, settings, tally, session, con, resume=resume, as_json=as_json,
                  budget=budget)


async def _judge_all(run: Run, judge: Judging, settings: RunSpec, con: Console, session: Session,
                     already: int, progress: bool) -> None:
    with progress_bar(con, total=run.total or 0, completed=already, disable=not progress) as advance:
        try:
            async for j in run.judge(judge, concurrency=settings.judging.concurrency,
                                     cache=not settings.no_cache):
                session.add(j)
                advance(**session.fields())
        finally:
            await judge.aclose()  # connections close in the loop that opened them


