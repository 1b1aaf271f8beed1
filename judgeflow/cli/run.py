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
import asyncio
import contextlib
import json
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..backends.llm_judge import DEFAULT_MODEL_ENV, OFFLINE_MODEL, default_model
from ..errors import OVER_BUDGET, ConfigError, ProviderUnavailable
from .._judge import Judge
from ..judging import Judging
from ..results import Judgment, Usage
from ..runs.gc_tuning import tuned_gc
from ..files import STDIO
from ..runs.output import OutputError, check_output, output_format, spool
from ..runs.pricing import estimate_cost, load_prices, price_for
from ..runs.run import Run
from ..runs.budget import spend_cap
from ..build import build
from ..config.judging import RepeatsSpec
from ..config.run import RunSpec
from .flags import add_run_flags, resume_command, to_spec
from ..runs.store import RunStore, StoreError
from ..knowledge import shares
from ..runs.summary import (
    Tally,
    answer_line,
    citation_line,
    decided_line,
    run_failure,
    summarize,
)
from . import ensemble, otel_args, ray_cmd
from .argtypes import Subparsers
from .render import console
from . import SUMMARIES


EXIT_CODES = """exit codes: 0 done; 1 done, but nothing was judged or the unscored share is above --max-unscored, or stopped at
--budget (rows unscored 'budget: ...'; --resume continues them); 2 bad input or
configuration; 3 stopped on a systemic provider error (authentication, refused connection, unknown
model or path, rejected request shape: fix it, then --resume); 130 interrupted (--resume continues)"""


def register(sub: Subparsers) -> None:
    p = sub.add_parser("run", help=SUMMARIES["run"], epilog=EXIT_CODES)
    add_run_flags(p)  # every spec field's flag (cli/flags.py)
    p.add_argument("--resume", action="store_true",
                   help="continue the last run that wrote OUTPUT: finished items are not judged again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true",
                   help="print the end-of-run summary as one JSON object on stdout (counts, tokens, cost)")
    otel_args.add_arguments(p)
    ray_cmd.add_arguments(p)
    ensemble.add_args(p)
    p.set_defaults(func=cmd_run)


def make_judge(args: argparse.Namespace, budget: Any = None, spec: RunSpec | None = None) -> Judging:
    """The Judge, Panel, Cascade or repeated Judge the flags ask for, built from the run's spec; every
    member's client shares `budget` (the run's one spend cap) when given."""
    ensemble.check(args)
    check_ray(args)
    spec = spec or to_spec(args)
    return build(spec.judging, **({"budget": budget} if budget is not None else {}))


def check_ray(args: argparse.Namespace) -> None:
    """What `--ray` (not a spec field: where a run is spread) does not combine with yet."""
    if not getattr(args, "ray", False):
        return
    if getattr(args, "repeats", 1) > 1:
        raise ConfigError("--repeats does not combine with --ray yet: run locally (drop --ray)")
    if args.budget:
        raise ConfigError("--budget does not combine with --ray yet: each Ray worker would hold its own cap; "
                          "run locally (drop --ray) or cap the rows with --limit N")


def note_offline(args: argparse.Namespace, con: Console) -> None:
    if not args.model and not ensemble.active(args) and default_model() == OFFLINE_MODEL:
        con.print(f"[yellow]note:[/yellow] no model configured: judging offline with {OFFLINE_MODEL} "
                  f"(a lexical floor, not an LLM judge). Use --model openai/gpt-4o-mini (with OPENAI_API_KEY), "
                  f"--model anthropic/<model>, --model ollama/<model>, or set {DEFAULT_MODEL_ENV}.")


def default_output(args: argparse.Namespace, con: Console) -> None:
    """No -o: ITEMS.results.jsonl beside the input (said in one line); stdin or --ray need an -o."""
    if args.output is not None:
        return
    if str(args.input) == STDIO or getattr(args, "ray", False):
        raise ConfigError("give the results file with -o, e.g. -o results.jsonl (-o - writes to stdout)")
    args.output = args.input.with_name(f"{args.input.stem}.results.jsonl")
    con.print(f"note: no -o given: writing the results to {args.output}", markup=False, soft_wrap=True)


def cmd_run(args: argparse.Namespace, *, command: Callable[[str], str] | None = None) -> int:
    """`judgeflow run`; `command` turns the run's resume command into the caller's (`judgeflow bench`)."""
    con = console(stderr=True)
    default_output(args, con)
    if args.ray:
        check_ray(args)
        note_offline(args, con)
        return ray_cmd.run_on_ray(args, con, make_judge)
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
    with spool(args.input) as (source, sha), RunStore(settings.store) as store:  # stdin is copied once
        run = Run.open(store, settings, judging=judge, command=resume_command(settings), source=source, sha=sha,
                       resume=args.resume, say=lambda note: con.print(note, soft_wrap=True, markup=False))
        if command is not None:
            run.store.update_run(run.run_id, settings=run.info.settings, command=command(run.command))
            run.info = run.store.get_run(run.run_id)
        note_offline(args, con)  # said only once the inputs are known to be fine
        note_aliases(run.aliases, con)
        if settings.batch:
            from .batch_cmd import submit

            return submit(run, con=con, max_unscored=settings.max_unscored, base_url=args.base_url)
        return _judge_run(run, judge, settings, con, resume=args.resume, progress=not args.no_progress,
                          as_json=args.json, budget=budget, exporter=exporter, base_url=args.base_url)


def _judge_run(run: Run, judge: Judging, settings: RunSpec, con: Console, *, resume: bool, progress: bool,
               as_json: bool, budget: Any = None, exporter: Any = None, base_url: str | None = None) -> int:
    """Judge the run's rows with progress, then finish it; exceptions become exit codes."""
    already = run.finished()
    if already or resume:
        again = run.store.count(run.run_id) - already
        con.print(f"resuming run {run.run_id}: {already} of {run.total} rows already done"
                  + (f"; {again} unscored rows are judged again" if again else ""))
    if resume:  # only a resumed run can have batches (a new run id has none): batch code loads only then
        from .batch_cmd import open_batches_note

        if note := open_batches_note(run.store, run.run_id, con, base_url):
            con.print(note, soft_wrap=True, markup=False)
    session = Session(exporter)
    output = Path(settings.output or "-")
    try:
        with tuned_gc():
            asyncio.run(_judge_all(run, judge, settings, con, session, already, progress))
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM (it cancels the run's task)
        n = run.stop("interrupted", output)
        con.print("[yellow]interrupted:[/yellow] " + escape(f"{n} of {run.total} rows are saved (in {settings.store} "
                  f"and {output}). Resume with:\n  {run.command}"), soft_wrap=True)
        return 130
    except StoreError as e:  # a failed commit stopped the run: nothing more was sent
        with contextlib.suppress(StoreError, OutputError):
            run.stop("interrupted")
        con.print("[red]error:[/red] " + escape(f"{e}. Resume with:\n  {run.command}"), soft_wrap=True)
        return 2
    except ProviderUnavailable as e:
        n = run.stop("stopped", output)
        con.print("[red]error:[/red] " + escape(f"{e}. {n} of {run.total} rows saved; after fixing it, continue "
                                                f"with: {run.command}"), soft_wrap=True)
        return 3
    finally:
        if exporter is not None:  # the spans of whatever was judged, also when stopped
            exporter.close()
    tally = run.finish(output)
    if exporter is not None:
        con.print("  " + otel_args.describe(exporter), markup=False, soft_wrap=True)
    return _report(run, judge, settings, tally, session, con, resume=resume, as_json=as_json, budget=budget)


class Session:
    """What this invocation judged (a resumed run's earlier sessions are not in it); each result is
    also sent to `exporter` (OpenTelemetry), if any."""

    def __init__(self, exporter: Any = None) -> None:
        self.exporter = exporter
        self.usage = Usage()
        self.items = self.cached = self.errors = 0
        self.start = time.monotonic()
        self.elapsed = 0.0

    def add(self, j: Judgment) -> None:
        self.usage.add(j.usage)
        self.items += 1
        self.cached += j.cached
        # a row the spend cap left unsent is not an error: the run stops there and --resume judges it
        self.errors += j.status == "unscored" and not (j.error or "").startswith(OVER_BUDGET)
        self.elapsed = time.monotonic() - self.start
        if self.exporter is not None:
            self.exporter.export(j)

    def fields(self) -> dict[str, Any]:
        """The progress bar's fields."""
        u = self.usage
        return {"rate": f"{self.items / max(self.elapsed, 1e-9):.1f} items/s", "calls": u.calls,
                "tokens": f"{u.input_tokens + u.output_tokens:,}", "cached": self.cached, "errors": self.errors}


def _report(run: Run, judge: Judging, settings: RunSpec, tally: Tally, session: Session, con: Console, *,
            resume: bool, as_json: bool, budget: Any = None) -> int:
    """Print the summary (or its JSON); 1 when nothing was judged or too many rows are unscored."""
    prices = load_prices(Path(settings.prices) if settings.prices else None)
    failed = run_failure(tally, settings.max_unscored)
    output = Path(settings.output or "-")
    if as_json:
        summary = summary_json(tally, run_id=run.run_id, model=judge.model, output=output, prices=prices,
                               elapsed=session.elapsed, session_items=session.items)
        # with -o - the results are stdout: the summary goes to stderr, so stdout stays one result a line
        if budget is not None:
            summary["budget"] = budget.summary()
        print(json.dumps({**summary, "unreadable": dict(run.store.unreadable), "failure": failed}),
              file=sys.stderr if str(output) == STDIO else sys.stdout)
        return 1 if failed else 0
    lines = summarize(tally, model=judge.model, prices=prices, elapsed=session.elapsed, session=session.usage,
                      session_items=session.items)
    if resume:
        from .batch_cmd import cost_line  # a batch run finished online: price each call by how it was made

        lines[-1] = cost_line(run.store, run.run_id, judge.model, prices) or lines[-1]
    if budget is not None:
        lines.append(f"budget: {budget.describe()} spent" + (f"; {budget.denied} call(s) refused at the cap"
                                                             if budget.denied else "")
                     + (f"; {tally.cached} row(s) served from the cache cost nothing" if tally.cached else ""))
    if isinstance(settings.judging, RepeatsSpec):
        lines.append(f"{settings.judging.k} verdicts per item (--repeats), the calls above included: "
                     f"`judgeflow stability {output}` reports the items that flip")
    con.print(f"run {run.run_id}: judged with {judge.model} -> {output}", markup=False, soft_wrap=True)
    unreadable = run.store.unreadable_note()
    for note in [*client_notes(judge), *([unreadable] if unreadable else [])]:
        con.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    from ..calibration.corrected import rate_line  # numpy: loaded once a run has finished

    tail = answer_line(tally) + rate_line(tally) + citation_line(tally) + decided_line(tally)
    for line in lines + tail + limit_report(session.elapsed, session.items):
        con.print("  " + line, markup=False, soft_wrap=True)
    if failed:
        again = (f"; re-judge the unscored rows with: {run.command}" if tally.unscored
                 else "; fix the invalid rows (each row's error names the field and the fix) and run again"
                 if tally.invalid else f" in {settings.input}")
        con.print(f"[red]{escape(failed)}[/red]{escape(again)}", soft_wrap=True)
        return 1
    return 0


def limit_report(elapsed: float, items: int) -> list[str]:
    """The rate limits met this session (no provider SDK is imported for it)."""
    from ..backends.limits import report

    return report(elapsed, items)


def summary_json(results: Tally | Iterable[Judgment], *, run_id: str, model: str, output: Path, prices: Any,
                 elapsed: float, session_items: int) -> dict[str, Any]:
    """The end-of-run summary as data (`run --json`): the same numbers as `summarize`."""
    t = Tally.of(results)
    total = t.usage
    return {
        "run_id": run_id, "model": model, "output": str(output), "rows": t.rows,
        "label_1": t.label_1, "label_0": t.label_0, "unscored": t.unscored, "invalid": t.invalid,
        "cached": t.cached,
        "unscored_reason": t.unscored_reasons.most_common(1)[0][0] if t.unscored_reasons else None,
        "calls": total.calls, "input_tokens": total.input_tokens, "output_tokens": total.output_tokens,
        "reasoning_tokens": total.reasoning_tokens,
        "cost_usd": None if model.startswith("baseline/") else estimate_cost(model, total, prices=prices),
        "priced_by": None if model.startswith("baseline/") else getattr(price_for(model, prices), "source", None),
        "seconds": round(elapsed, 3), "items_this_session": session_items,
        "rate_limited": t.rate_limited, "rate_limits": limit_stats(),
        "citations": t.citations.summary(),
        "decided_by": shares(t.decided), "claims": sum(t.decided.values()),
    }


def limit_stats() -> list[dict[str, Any]]:
    from ..backends.limits import stats

    return stats()


@contextlib.contextmanager
def sigterm_stops(task: asyncio.Task[Any]) -> Any:
    """SIGTERM (a container stop, `kill`) stops the run as Ctrl-C does: the run's task is cancelled,
    results are saved, the resume command printed. It is handled in the event loop itself, not by
    re-raising SIGINT: a process started in the background by a shell ignores SIGINT, and SIGTERM
    must still stop it."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def client_notes(judging: Judging) -> list[str]:
    """What the model client wants the user to know (e.g. a structured-output fallback taken)."""
    return judging.backend.notes if isinstance(judging, Judge) else []  # a panel or cascade: no one backend


async def _judge_all(run: Run, judge: Judging, settings: RunSpec, con: Console, session: Session,
                     already: int, progress: bool) -> None:
    task = asyncio.current_task()
    assert task is not None
    with sigterm_stops(task), progress_bar(con, total=run.total or 0, completed=already,
                                           disable=not progress) as advance:
        try:
            async for j in run.judge(judge, concurrency=settings.judging.concurrency, cache=not settings.no_cache):
                session.add(j)
                advance(**session.fields())
        finally:
            await judge.aclose()  # connections close in the loop that opened them


def progress_bar(con: Console, *, total: int, completed: int, disable: bool) -> contextlib.AbstractContextManager[Any]:
    """The judging progress bar, as a context that gives `advance(**fields)` (one item done).
    With --no-progress it is a no-op, and rich.progress is not even imported."""
    if disable:
        return contextlib.nullcontext(lambda **fields: None)
    return _rich_bar(con, total=total, completed=completed)


@contextlib.contextmanager
def _rich_bar(con: Console, *, total: int, completed: int) -> Iterator[Any]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    from ..backends.limits import progress_note

    class LimitColumn(ProgressColumn):
        """The pace the provider's rate limit allows and the requests waiting on it (read live)."""

        def render(self, task: Any) -> Text:
            return Text(progress_note(), style="yellow")

    columns = (
        TextColumn("[bold]judging[/bold]"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
        TextColumn("calls {task.fields[calls]} · tokens {task.fields[tokens]} · cached {task.fields[cached]} · "
                   "errors {task.fields[errors]}"), LimitColumn(),
    )
    with Progress(*columns, console=con, refresh_per_second=4) as progress:
        task = progress.add_task("judge", total=total, completed=completed, rate="", calls=0, tokens=0,
                                 cached=0, errors=0)
        yield lambda **fields: progress.update(task, advance=1, **fields)


def note_aliases(used: Counter[tuple[str, str]], con: Console) -> None:
    """Say which input fields were read under another name (e.g. 'context' as source, or a --map
    column): counts of (field, alias), as `check_input` returns them."""
    if used:
        said = ", ".join(f"'{alias}' as {field} ({n} rows)" for (field, alias), n in sorted(used.items()))
        con.print(f"fields read by alias: {said}", soft_wrap=True, markup=False, style="dim")
