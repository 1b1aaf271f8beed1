"""`judgeflow run INPUT -o OUTPUT.jsonl`: judge every row of a JSONL/CSV file.

Every input row ends as exactly one output row: judged (label 1/0), unscored (label null,
the judge could not decide) or invalid (label null, the input row is unusable).

Each judged item is committed to the run store (`--store`, SQLite) at once (rows served from the
cache in batches: `runs.runner` says what a kill may lose, nothing paid for); the output file
is (re)written from the store at the end, or when the run is interrupted, through a temporary
file and an atomic rename, so it never holds a duplicate or a torn row. `--resume` continues the
last run that wrote OUTPUT; the store's response cache makes an unchanged item free on any re-run.

Memory does not grow with the input: a JSONL input is read twice, streamed (a first pass checks
ids and counts rows before anything is judged; stdin is copied to a temporary file for it), the
output is streamed from the store, and the summary is tallied on the way.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..backends.limits import DEFAULT_MAX_WAIT
from ..backends.llm_judge import DEFAULT_MODEL_ENV, OFFLINE_MODEL, default_model
from ..errors import ConfigError, InvalidItemError, ProviderUnavailable
from ..files import STDIO
from ..items import Item, read_items
from ..judge import DEFAULT_CONCURRENCY, Judge
from ..results import Judgment, Usage
from ..runs import runner
from ..runs.gc_tuning import tuned_gc
from ..runs.output import (  # noqa: F401 (old paths)
    FORMATS,
    OutputError,
    check_output,
    check_output_writable,
    file_sha,
    output_format,
    spool,
    write_output,
)
from ..runs.pricing import estimate_cost, load_prices, price_for
from ..runs.settings import DEFAULT_MAX_INPUT_CHARS, ENDPOINT, RESULT_SETTINGS, RunSettings  # noqa: F401
from ..runs.inputs import check_input, raise_if_all_invalid
from ..runs.store import DEFAULT_STORE, RunStore, StoreError
from ..runs.summary import DEFAULT_MAX_UNSCORED, Tally, run_failure, summarize
from . import ensemble, ray_cmd
from .argtypes import (
    non_negative_int,
    positive_float,
    positive_int,
    positive_seconds,
    share,
    temperature,
)
from .render import console
from . import SUMMARIES

EXIT_CODES = """exit codes: 0 done; 1 done, but nothing was judged or the unscored share is above --max-unscored; 2 bad input or
configuration; 3 stopped on a systemic provider error (authentication, refused connection, unknown
model or path, rejected request shape: fix it, then --resume); 130 interrupted (--resume continues)"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help=SUMMARIES["run"], epilog=EXIT_CODES)
    p.add_argument("input", type=Path, help="items: .jsonl (one JSON object a line), .csv or .json; - reads stdin")
    p.add_argument("-o", "--output", type=Path,
                   help="results file (.jsonl, one judgment a line; .csv or .parquet: see --format); - writes to "
                        "stdout (default: ITEMS.results.jsonl beside the input)")
    p.add_argument("--format", choices=FORMATS, dest="format",
                   help="the results file's format (default: from the -o suffix, .csv or .parquet, else jsonl; "
                        "parquet needs pyarrow)")
    p.add_argument("--model", help=f"provider/model (default ${DEFAULT_MODEL_ENV}, else {OFFLINE_MODEL}, offline)")
    p.add_argument("--base-url", help="an OpenAI- or Anthropic-compatible endpoint (vLLM, llama.cpp, LM Studio)")
    p.add_argument("--map", action="append", metavar="FIELD=COLUMN",
                   help="read an item field from a column of another name, e.g. --map reference=gold_text "
                        "(repeatable; fields: id, question, answer, reference, source, spec, label, ...)")
    p.add_argument("--mode", default="auto", choices=["auto", "factual", "faithfulness", "spec"],
                   help="route by fields (auto) or force a mode")
    p.add_argument("--criterion", help="a criterion name or .toml path for every item (overrides --mode)")
    p.add_argument("--requirements", action=argparse.BooleanOptionalAction, default=None,
                   help="spec items: also check each requirement of the spec as met / not_met / "
                        "not_applicable (default: on with --mode spec)")
    p.add_argument("--max-source-chars", type=non_negative_int, metavar="N",
                   help="cut sources longer than this to the passages relevant to the claims, and cite passages "
                        "(default for model judges: 16000; 0 sends sources whole)")
    p.add_argument("--strategy", default="graph", choices=["graph", "single"],
                   help="graph: decompose then check (2 calls); single: one call")
    p.add_argument("--limit", type=positive_int, help="judge only the first N rows")
    p.add_argument("--concurrency", type=positive_int, default=DEFAULT_CONCURRENCY,
                   help=f"items judged at once (default {DEFAULT_CONCURRENCY})")
    p.add_argument("--temperature", type=temperature, default=0.0,
                   help="sampling temperature of the judge model (default 0: the same item gets the same "
                        "verdict; above 0 with --samples for self-consistency)")
    p.add_argument("--threshold", type=float,
                   help="offline judges only: baseline/lexical content-overlap or baseline/rouge-l F-measure threshold")
    p.add_argument("--trace", action="store_true", help="write prompts and raw replies into each row")
    p.add_argument("--store", type=Path, default=DEFAULT_STORE,
                   help=f"the run store, a SQLite file (default {DEFAULT_STORE})")
    p.add_argument("--resume", action="store_true",
                   help="continue the last run that wrote OUTPUT: finished items are not judged again")
    p.add_argument("--no-cache", action="store_true",
                   help="do not serve results from the store's response cache (new results are still cached)")
    p.add_argument("--retries", type=non_negative_int, default=4,
                   help="provider retries on 5xx/timeouts, with backoff and jitter (default 4); 429s are waited out "
                        "up to --max-wait instead")
    p.add_argument("--rpm", type=positive_float, metavar="N",
                   help="requests per minute the endpoint allows, for one that sends no rate-limit headers "
                        "(default: learned from the replies' headers)")
    p.add_argument("--tpm", type=positive_float, metavar="N",
                   help="tokens per minute the endpoint allows (input tokens on the Anthropic wire), for one that "
                        "sends no rate-limit headers (default: learned from the replies' headers)")
    p.add_argument("--max-wait", type=positive_seconds, default=DEFAULT_MAX_WAIT, metavar="SECONDS",
                   help="the longest an item waits on the rate limit before it is unscored as rate limited "
                        f"(default {DEFAULT_MAX_WAIT:g}; a 429 is waited out, not counted against --retries)")
    p.add_argument("--reasks", type=non_negative_int, default=2,
                   help="re-asks after an invalid structured reply (default 2)")
    p.add_argument("--timeout", type=positive_seconds, default=120.0, help="seconds per request, in all: connect, headers and the whole reply (default 120)")
    p.add_argument("--http-transport", default="auto", choices=["auto", "aiohttp", "httpx"],
                   help="the provider SDK's HTTP stack (default auto: aiohttp when installed, which spends less "
                        "client CPU per request; httpx is the SDKs' default)")
    p.add_argument("--structured", default="auto", choices=["auto", "tools", "tools_strict", "json_schema", "json"],
                   help="how the model is asked for structured output (default auto: OpenAI tools_strict, "
                        "Anthropic tools, Ollama json_schema, other --base-url servers tools; falls back once "
                        "if the endpoint rejects the request shape)")
    p.add_argument("--max-tokens", type=positive_int,
                   help="max_tokens for every call (default: sized to each step, e.g. a budget per claim)")
    p.add_argument("--max-input-chars", type=positive_int, default=DEFAULT_MAX_INPUT_CHARS,
                   help=f"an item whose texts together are longer is an invalid row (default {DEFAULT_MAX_INPUT_CHARS:,})")
    p.add_argument("--max-unscored", type=share, default=DEFAULT_MAX_UNSCORED,
                   help=f"exit 1 when more than this share of rows is unscored (default {DEFAULT_MAX_UNSCORED})")
    p.add_argument("--prices", type=Path, help="a TOML/JSON price table to override the built-in one (or $JUDGEFLOW_PRICES)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true",
                   help="print the end-of-run summary as one JSON object on stdout (counts, tokens, cost)")
    p.add_argument("--batch", action="store_true",
                   help="submit through the provider's batch API (about half the price; collect later "
                        "with `judgeflow batch collect RUN_ID`)")
    ray_cmd.add_arguments(p)
    ensemble.add_args(p)
    p.set_defaults(func=cmd_run)


def settings_of(args: argparse.Namespace) -> RunSettings:
    """The run's settings from the command line (one model, or a panel/cascade named by its flags)."""
    ens = ensemble.settings(args)
    return RunSettings.from_args(args, ensemble=ens, ensemble_flags=ensemble.resume_flags(args) if ens else None)


def make_judge(args: argparse.Namespace) -> Judge:
    settings = settings_of(args)
    if ensemble.active(args) and settings.requirements:
        raise ConfigError("requirement coverage (--mode spec / --requirements) does not run in panels or cascades "
                          "yet: add --no-requirements, or judge with one --model")
    panel_or_cascade = ensemble.make(args, settings.judge_kwargs)
    if panel_or_cascade is not None:
        return panel_or_cascade  # type: ignore[return-value]  # the same interface as Judge
    return settings.judge(keep_trace=True)  # the store keeps traces: a --trace re-run from the cache has them


def judge_kwargs(args: argparse.Namespace, model: str) -> dict[str, Any]:
    """The Judge keyword arguments for `model` from the command line (retries, temperature, ...)."""
    return settings_of(args).judge_kwargs(model)


def requirements_on(args: argparse.Namespace) -> bool:
    """--requirements / --no-requirements, else on exactly when --mode spec."""
    return settings_of(args).requirements


def run_settings(args: argparse.Namespace, judge: Judge) -> dict[str, Any]:
    """What the results depend on (never an API key), as the store records it."""
    return settings_of(args).model_copy(update={"model": judge.model}).record()


def resume_command(args: argparse.Namespace, model: str) -> str:
    """The command line that resumes this run."""
    settings = settings_of(args)
    if not ensemble.active(args):
        settings = settings.model_copy(update={"model": model})
    return settings.resume_command()


def open_run(store: RunStore, args: argparse.Namespace, judge: Judge, sha: str, total: int, command: str,
             con: Console | None = None) -> str:
    """The run id to record into: the last run for OUTPUT (--resume), else a new run."""
    settings = run_settings(args, judge)
    out = STDIO if str(args.output) == STDIO else str(args.output.resolve())
    if not args.resume:
        return store.start_run(settings=settings, input_path=STDIO if str(args.input) == STDIO else
                               str(args.input.resolve()), input_sha=sha,
                               output_path=out, total=total, command=command)
    run = store.latest_run(output_path=out)
    if run is None:
        raise ConfigError(f"nothing to resume: no run in {store.path} wrote {args.output}; run without --resume "
                          "(results already judged are served from the cache)")
    store.claim(run.run_id)  # one writer per run: a second resume of it is refused here
    if run.input_sha != sha:
        raise ConfigError(
            f"{args.input} changed since run {run.run_id} started (its content hash differs), so its finished "
            "results may not match the rows any more; run without --resume to start a new run (unchanged "
            "items are served from the cache at no cost)"
        )
    diff = RunSettings.from_record(settings).diff(RunSettings.from_record(run.settings))
    if diff:
        raise ConfigError(f"run {run.run_id} used other settings ({'; '.join(diff)}); resume with "
                          f"`{run.command}`, or run without --resume to start a new run")
    if settings.get(ENDPOINT) != run.settings.get(ENDPOINT):  # the endpoint is not a judging setting
        store.update_run(run.run_id, settings={**run.settings, ENDPOINT: settings.get(ENDPOINT)}, command=command)
        if con is not None:
            con.print(f"note: the endpoint changed since run {run.run_id} stopped "
                      f"({run.settings.get(ENDPOINT) or 'the default'} then, {settings.get(ENDPOINT) or 'the default'} now); "
                      "the run goes on there and records it", soft_wrap=True, markup=False)
    store.set_status(run.run_id, "running")
    return run.run_id


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


def cmd_run(args: argparse.Namespace) -> int:
    con = console(stderr=True)
    default_output(args, con)
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be a positive number of rows")
    if args.concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {args.concurrency}")
    if getattr(args, "ray", False):
        note_offline(args, con)
        return ray_cmd.run_on_ray(args, con, make_judge)
    check_output(args.output, args.input, store=args.store)
    args.fmt = output_format(args.output, args.format)  # before judging: parquet needs pyarrow
    if args.batch:
        from ..runs.batch import check_batch_input

        check_batch_input(args.input)
    with spool(args.input) as (source, sha):  # stdin is copied once: the input is read twice, streamed
        return _run(args, con, source, sha)


def _run(args: argparse.Namespace, con: Console, source: Path, sha: str) -> int:
    """`cmd_run` once the input can be read (and re-read) from `source`: memory does not grow with it."""
    prices = load_prices(args.prices)
    judge = make_judge(args)
    column_map = settings_of(args).column_map

    def rows() -> Iterator[Any]:
        """One pass over the input rows, read from the file again each time."""
        read = read_items(source, name=str(args.input), column_map=column_map)
        return guard_input_size(itertools.islice(read, args.limit) if args.limit else read,
                                args.max_input_chars, args.input)

    check = check_input(rows(), args.input, criterion=getattr(judge, "criterion", None),
                        mode=getattr(judge, "mode", None))  # the first pass: bad input fails before any judging
    raise_if_all_invalid(check, args.input)
    total = check.rows
    note_offline(args, con)  # said only once the inputs are known to be fine
    note_aliases(check.aliases, con)
    command = resume_command(args, judge.model)
    with RunStore(args.store) as store:
        run_id = open_run(store, args, judge, sha, total, command, con)
        if args.batch:
            from .batch_cmd import submit

            return submit(store, run_id, list(rows()), con=con, max_unscored=args.max_unscored, base_url=args.base_url)
        already = len(store.finished_ids(run_id))
        if already or args.resume:
            again = store.count(run_id) - already
            con.print(f"resuming run {run_id}: {already} of {total} rows already done"
                      + (f"; {again} unscored rows are judged again" if again else ""))
        if args.resume:  # only a resumed run can have batches (a new run id has none): batch code loads only then
            from .batch_cmd import open_batches_note

            if note := open_batches_note(store, run_id, con, args.base_url):
                con.print(note, soft_wrap=True, markup=False)
        session = Usage()
        stats = Counter[str]()
        start = time.monotonic()
        try:
            with tuned_gc():
                asyncio.run(_judge_all(judge, rows(), total, store, run_id, args, con, session, stats, already))
        except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM (it cancels the run's task)
            store.set_status(run_id, "interrupted")
            n = write_output(store, run_id, args.output, fmt=args.fmt, trace=args.trace)
            con.print("[yellow]interrupted:[/yellow] " + escape(f"{n} of {total} rows are saved (in {args.store} and "
                      f"{args.output}). Resume with:\n  {command}"), soft_wrap=True)
            return 130
        except StoreError as e:  # a failed commit stopped the run: nothing more was sent
            with contextlib.suppress(StoreError, OutputError):
                store.set_status(run_id, "interrupted")
            con.print("[red]error:[/red] " + escape(f"{e}. Resume with:\n  {command}"), soft_wrap=True)
            return 2
        except ProviderUnavailable as e:
            store.set_status(run_id, "stopped")
            n = write_output(store, run_id, args.output, fmt=args.fmt, trace=args.trace)
            con.print("[red]error:[/red] " + escape(f"{e}. {n} of {total} rows saved; after fixing it, continue with: "
                                                    f"{command}"), soft_wrap=True)
            return 3
        elapsed = time.monotonic() - start
        store.set_status(run_id, "done")
        results = Tally()  # the summary's running totals, added up while the output is written
        write_output(store, run_id, args.output, fmt=args.fmt, trace=args.trace, tally=results)
        lines = summarize(results, model=judge.model, prices=prices, elapsed=elapsed, session=session,
                          session_items=stats["items"])
        if args.resume:
            from .batch_cmd import (
                cost_line,  # a batch run finished online: price each call by how it was made
            )

            lines[-1] = cost_line(store, run_id, judge.model, prices) or lines[-1]
        unreadable = store.unreadable_note()
    failed = run_failure(results, args.max_unscored)
    if args.json:
        summary = summary_json(results, run_id=run_id, model=judge.model, output=args.output,
                               prices=prices, elapsed=elapsed, session_items=stats["items"])
        # with -o - the results are stdout: the summary goes to stderr, so stdout stays one result a line
        print(json.dumps({**summary, "unreadable": dict(store.unreadable), "failure": failed}),
              file=sys.stderr if str(args.output) == STDIO else sys.stdout)
        return 1 if failed else 0
    con.print(f"run {run_id}: judged with {judge.model} -> {args.output}", markup=False, soft_wrap=True)
    for note in [*client_notes(judge), *([unreadable] if unreadable else [])]:
        con.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    for line in lines + limit_report(elapsed, stats["items"]):
        con.print("  " + line, markup=False, soft_wrap=True)
    if failed:
        again = (f"; re-judge the unscored rows with: {command}" if results.unscored
                 else "; fix the invalid rows (each row's error names the field and the fix) and run again"
                 if results.invalid else f" in {args.input}")
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
        "calls": total.calls, "input_tokens": total.input_tokens, "output_tokens": total.output_tokens,
        "cost_usd": None if model.startswith("baseline/") else estimate_cost(model, total, prices=prices),
        "priced_by": None if model.startswith("baseline/") else getattr(price_for(model, prices), "source", None),
        "seconds": round(elapsed, 3), "items_this_session": session_items,
        "rate_limited": t.rate_limited, "rate_limits": limit_stats(),
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


def client_notes(judge: Judge) -> list[str]:
    """What the model client wants the user to know (e.g. a structured-output fallback taken)."""
    backend = getattr(judge, "backend", None)  # a panel or cascade has members, not one backend
    backend = getattr(backend, "inner", backend)
    return list(getattr(getattr(backend, "client", None), "notes", []) or [])


def guard_input_size(rows: Iterable[Any], limit: int, path: Path) -> Iterator[Any]:
    """Rows whose texts together exceed `limit` characters become invalid rows, not huge requests (lazily)."""
    if limit < 1:
        raise ConfigError(f"--max-input-chars must be positive, got {limit}")
    return _guarded(rows, limit, path)


def _guarded(rows: Iterable[Any], limit: int, path: Path) -> Iterator[Any]:
    for row in rows:
        if isinstance(row, Item):
            size = sum(len(t) for t in (row.answer, row.question or "", row.reference or "", row.spec or "",
                                        *(row.source or [])))
            if size > limit:
                err = InvalidItemError(
                    f"the item's texts are {size:,} characters, more than --max-input-chars {limit:,}; cut the "
                    "source (--max-source-chars keeps only the relevant passages) or raise --max-input-chars",
                    path=str(path), field="answer/source", item_id=row.id)
                err.record = {"id": row.id, "label": row.label, **row.extra}
                row = err
        yield row


async def _judge_all(judge: Judge, rows: Iterable[Any], total: int, store: RunStore, run_id: str,
                     args: argparse.Namespace, con: Console, session: Usage, stats: Counter[str], already: int) -> None:
    start = time.monotonic()
    task = asyncio.current_task()
    assert task is not None
    with sigterm_stops(task), progress_bar(con, total=total, completed=already, disable=args.no_progress) as advance:
        try:
            async for j in runner.ajudge_many(judge, rows, concurrency=args.concurrency, store=store, run=run_id,
                                              cache=not args.no_cache):
                session.add(j.usage)
                stats["items"] += 1
                stats["cached"] += j.cached
                stats["errors"] += j.status == "unscored"
                rate = stats["items"] / max(time.monotonic() - start, 1e-9)
                advance(rate=f"{rate:.1f} items/s", calls=session.calls,
                        tokens=f"{session.input_tokens + session.output_tokens:,}",
                        cached=stats["cached"], errors=stats["errors"])
        finally:
            aclose = getattr(judge, "aclose", None)  # connections close in the loop that opened them
            if aclose is not None:
                await aclose()


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
