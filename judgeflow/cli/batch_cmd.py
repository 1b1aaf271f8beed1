"""`judgeflow run --batch` submits; `judgeflow batch status|collect RUN_ID` follows the job.

A batch run goes in rounds: the first holds every item's first call (decompose, or the single
call), the next the check calls, plus any line of an earlier batch that failed or expired (sent
again, up to `MAX_ATTEMPTS` times). A round above the provider's limits is split into several
batches. `collect` stores each ended batch's completed lines, whatever the batch's final state,
deletes its files at the provider (unless --keep-batch-files), judges as far as the replies
allow, and submits the next round; after the last one the output is written from the store.
`collect --wait N` polls every N seconds until the run is done.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from collections.abc import Iterable, Iterator
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..backends.llm.failures import classify, is_provider_error
from ..errors import ProviderUnavailable
from ..results import Usage
from ..runs.batch import lifecycle
from ..runs.batch.events import (
    Abandoned,
    Adopted,
    Busy,
    Collected,
    Event,
    FilesDeleted,
    Finished,
    Polled,
    RunState,
    StillOpen,
    Submitted,
)
from ..runs.batch.lifecycle import cost_line
from ..runs.pricing import load_prices
from ..runs.run import Run
from ..runs.store import DEFAULT_STORE, RunInfo, RunStore
from ..runs.summary import DEFAULT_MAX_UNSCORED, summarize
from . import SUMMARIES
from .argtypes import Subparsers, positive_seconds, share
from .render import console

__all__ = [
    "cmd_collect",
    "cmd_status",
    "cost_line",
    "open_batches_note",
    "register",
    "settle_intents",
    "submit",
]


def register(sub: Subparsers) -> None:
    p = sub.add_parser("batch", help=SUMMARIES["batch"])
    bsub = p.add_subparsers(dest="batch_command", required=True, metavar="ACTION")
    sp = bsub.add_parser("status", help="where a batch run is")
    cp = bsub.add_parser(
        "collect", help="collect finished batches, submit the next stage, write the output"
    )
    for q in (sp, cp):
        q.add_argument("run_id", help="the run id printed by `judgeflow run --batch`")
        q.add_argument(
            "--store", default=DEFAULT_STORE, help=f"the run store (default {DEFAULT_STORE})"
        )
        q.add_argument(
            "--base-url",
            help="the run's --base-url again, when it has credentials (the store keeps "
            "it without them; also $JUDGEFLOW_BASE_URL)",
        )
    cp.add_argument(
        "--wait",
        type=positive_seconds,
        metavar="SECONDS",
        help="poll every SECONDS until the run is done",
    )
    cp.add_argument(
        "--online",
        action="store_true",
        help="re-judge online the items whose batch reply was invalid or failed (also once the run is done)",
    )
    cp.add_argument(
        "--max-unscored",
        type=share,
        default=DEFAULT_MAX_UNSCORED,
        metavar="SHARE",
        help=f"exit 1 when the run is done and more than this share of its rows is unscored "
        f"(default {DEFAULT_MAX_UNSCORED})",
    )
    cp.add_argument(
        "--keep-batch-files",
        action="store_true",
        help="keep the batch input/output files at the provider (default: deleted once the replies "
        "are stored; they hold every prompt)",
    )
    sp.set_defaults(func=cmd_status)
    cp.set_defaults(func=cmd_collect)


def submit(
    run: Run,
    *,
    con: Console,
    http_client: Any = None,
    max_unscored: float = DEFAULT_MAX_UNSCORED,
    base_url: str | None = None,
) -> int:
    """Record what needs no model call and submit the first batch (called by `judgeflow run --batch`)."""
    return show(
        lifecycle.submit(
            run, http_client=http_client, base_url=base_url, max_unscored=max_unscored
        ),
        run.store,
        con,
    )


def settle_intents(
    store: RunStore,
    run: RunInfo,
    con: Console,
    http_client: Any = None,
    base_url: str | None = None,
) -> None:
    """Resolve the run's interrupted submissions (`lifecycle.settle`), saying what was done."""
    show(lifecycle.settle(store, run, http_client=http_client, base_url=base_url), store, con)


def open_batches_note(
    store: RunStore, run_id: str, con: Console | None = None, base_url: str | None = None
) -> str | None:
    """A warning for a batch run resumed online while some of its batches are still at the provider
    (its interrupted submissions resolved first: a batch found is followed, an orphan upload deleted)."""
    if con is not None:
        settle_intents(store, store.get_run(run_id), con, base_url=base_url)
    open_ = lifecycle.open_batches(store, run_id)
    if not open_:
        return None
    return (
        f"[yellow]note:[/yellow] batch {', '.join(open_)} of run {run_id} is still at the provider and "
        f"its lines are billed; judging the rest online pays for them again. Stop here (Ctrl-C) and run "
        f"`judgeflow batch collect {run_id}{_store_opt(store)} --wait 60` to use them, or cancel the batch."
    )


def _store_opt(store: RunStore) -> str:
    return "" if str(store.path) == str(DEFAULT_STORE) else f" --store {store.path}"


def show(events: Iterable[Event], store: RunStore, con: Console) -> int:
    """Print a lifecycle's events as they come; the exit code: 1 when the run finished as a failure."""
    code = 0
    try:
        for event in events:
            say(event, store, con)
            if isinstance(event, Finished) and event.failure:
                code = 1
    except (
        Exception
    ) as e:  # the batch API's own calls: a refused connection says its fix, not a traceback
        found = classify(e) if is_provider_error(e) else None
        if found is None:
            raise
        raise ProviderUnavailable(f"the batch API failed ({found[0]}): {found[1]} ({e})") from e
    return code


def say(event: Event, store: RunStore, con: Console) -> None:
    """One event of a batch run, as the CLI prints it."""
    run_id, opt = event.run_id, _store_opt(store)
    if isinstance(event, Adopted):
        con.print(
            f"run {run_id}: found batch {event.batch_id} submitted before an interruption; following it"
        )
    elif isinstance(event, Abandoned) and event.left:
        con.print(
            f"[yellow]note:[/yellow] could not delete {', '.join(event.left)} at {event.provider}, uploaded "
            "before an interruption; delete it yourself (it holds the prompts)",
            soft_wrap=True,
        )
    elif isinstance(event, Busy):
        con.print(
            f"run {run_id}: another judgeflow process is submitting a batch of it right now",
            soft_wrap=True,
        )
    elif isinstance(event, StillOpen):
        con.print(
            f"run {run_id}: batch {', '.join(event.batch_ids)} is still at the provider; collect it with: "
            f"judgeflow batch collect {run_id}{opt}",
            soft_wrap=True,
            markup=False,
        )
    elif isinstance(event, Submitted):
        n = len(event.batch_ids)
        con.print(
            f"run {run_id}: round {event.round}: submitted {event.requests} requests as {n} {event.provider} "
            f"batch{'es' if n > 1 else ''} {', '.join(event.batch_ids)}; {event.done} of {event.total} "
            f"rows done so far.\n"
            f"  follow it with: judgeflow batch status {run_id}{opt}\n"
            f"  collect it with: judgeflow batch collect {run_id}{opt} [--wait 60]",
            soft_wrap=True,
            markup=False,
        )
    elif isinstance(event, Collected) and event.partial:
        con.print(
            f"run {run_id}: batch {event.batch_id} {event.state}: kept {event.ok} completed lines; "
            f"{event.failed} failed or missing"
            + (f" ({event.cancelled} cancelled: not sent again)" if event.cancelled else ""),
            markup=False,
            soft_wrap=True,
        )
        for line in event.problems:
            con.print(f"  {line}", markup=False, soft_wrap=True)
    elif isinstance(event, FilesDeleted) and event.left:
        con.print(
            f"[yellow]note:[/yellow] could not delete {', '.join(event.left)} at {event.provider}; "
            "delete them yourself (they hold the prompts)"
        )
    elif isinstance(event, Polled) and event.state is not None and not event.done:
        con.print(
            f"run {run_id}: round {event.round} batch {event.batch_id} is {event.state} {event.counts}",
            markup=False,
            soft_wrap=True,
        )
    elif isinstance(event, Finished):
        _finished(event, store, con)


def _finished(event: Finished, store: RunStore, con: Console) -> None:
    """The output written, the summary, and why the run failed if it did."""
    con.print(f"run {event.run_id}: done -> {event.output}", markup=False, soft_wrap=True)
    prices = load_prices()
    lines = summarize(
        event.tally, model=event.model, prices=prices, elapsed=0, session=Usage(), session_items=0
    )
    lines[-1] = cost_line(store, event.run_id, event.model, prices) or lines[-1]
    for line in lines:
        con.print("  " + line, markup=False, soft_wrap=True)
    if event.unreadable:
        con.print(f"[yellow]note:[/yellow] {escape(event.unreadable)}", soft_wrap=True)
    if event.failure:
        con.print(
            f"[red]{escape(event.failure)}[/red]; see each row's error. Re-judge them online with: "
            f"judgeflow batch collect {event.run_id}{_store_opt(store)} --online",
            soft_wrap=True,
        )


def cmd_status(args: argparse.Namespace) -> int:
    con = console()  # never wrapped in a file or a pipe
    with RunStore(args.store) as store:
        for event in lifecycle.status(store, args.run_id, base_url=args.base_url):
            if isinstance(event, RunState):
                con.print(
                    f"run {event.run_id}: {event.status}, {event.done} of {event.total} rows done",
                    markup=False,
                )
                if not event.batches:
                    con.print("  no batches (not a --batch run)")
            elif isinstance(event, Polled):
                line = (
                    f"  round {event.round} part {event.part}: {event.provider} batch "
                    f"{event.batch_id or '(not known yet)'}: {event.status}, {event.requests} requests"
                )
                if event.state is not None:
                    line += f" (provider: {event.state}{', ready to collect' if event.done else ''}; {event.counts})"
                con.print(line, markup=False, soft_wrap=True)
            else:
                say(event, store, con)
    return 0


def cmd_collect(args: argparse.Namespace, *, http_client: Any = None) -> int:
    con = console(stderr=True)
    with RunStore(args.store) as store, sigterm_interrupts():
        try:
            return _collect(args, store, con, http_client)
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM
            con.print(
                "[yellow]interrupted:[/yellow] "
                + escape(
                    f"every batch reply collected so far is kept in {store.path}. Continue with:\n  judgeflow batch "
                    f"collect {args.run_id}{_store_opt(store)}"
                    + (" --online" if args.online else "")
                ),
                soft_wrap=True,
            )
            return 130


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (a container stop, `kill`) interrupts as Ctrl-C does, in the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _collect(args: argparse.Namespace, store: RunStore, con: Console, http_client: Any) -> int:
    return show(
        lifecycle.collect(
            store,
            args.run_id,
            wait=args.wait,
            online=args.online,
            keep_files=args.keep_batch_files,
            max_unscored=args.max_unscored,
            http_client=http_client,
            base_url=args.base_url,
        ),
        store,
        con,
    )
