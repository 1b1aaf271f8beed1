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
import asyncio
import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from .render import console

from ..errors import ConfigError
from ..files import STDIO
from ..judging import judge_stream
from ..redact import MASK, redact
from ..results import Usage
from ..runs.batch import ReplayTransport, advance, batch_tag, make_provider, paid, replay_judge, split
from ..runs.batch.ledger import BatchLedger
from ..runs.batch.types import failure_text
from ..runs.cache import cached
from ..runs.output import file_sha
from ..runs.pricing import estimate_cost, load_prices
from ..runs.run import Run
from ..runs.settings import RunSettings
from ..runs.store import DEFAULT_STORE, RunBusy, RunInfo, RunStore
from ..runs.summary import DEFAULT_MAX_UNSCORED, run_failure, summarize
from .argtypes import positive_seconds, share
from . import SUMMARIES


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("batch", help=SUMMARIES["batch"])
    bsub = p.add_subparsers(dest="batch_command", required=True, metavar="ACTION")
    sp = bsub.add_parser("status", help="where a batch run is")
    cp = bsub.add_parser("collect", help="collect finished batches, submit the next stage, write the output")
    for q in (sp, cp):
        q.add_argument("run_id", help="the run id printed by `judgeflow run --batch`")
        q.add_argument("--store", default=DEFAULT_STORE, help=f"the run store (default {DEFAULT_STORE})")
        q.add_argument("--base-url", help="the run's --base-url again, when it has credentials (the store keeps "
                                          "it without them; also $JUDGEFLOW_BASE_URL)")
    cp.add_argument("--wait", type=positive_seconds, metavar="SECONDS", help="poll every SECONDS until the run is done")
    cp.add_argument("--online", action="store_true",
                    help="re-judge online the items whose batch reply was invalid or failed (also once the run is done)")
    cp.add_argument("--max-unscored", type=share, default=DEFAULT_MAX_UNSCORED, metavar="SHARE",
                    help=f"exit 1 when the run is done and more than this share of its rows is unscored "
                         f"(default {DEFAULT_MAX_UNSCORED})")
    cp.add_argument("--keep-batch-files", action="store_true",
                    help="keep the batch input/output files at the provider (default: deleted once the replies "
                         "are stored; they hold every prompt)")
    sp.set_defaults(func=cmd_status)
    cp.set_defaults(func=cmd_collect)


def _run(store: RunStore, run_id: str, base_url: str | None) -> RunInfo:
    """The run, with the base URL its requests go to (see `_live`)."""
    return _live(store.get_run(run_id), base_url)


def _live(run: RunInfo, base_url: str | None) -> RunInfo:
    """`run` with the base URL its requests go to: the store keeps it with its credentials masked
    (***), so they come from `base_url` (--base-url) or $JUDGEFLOW_BASE_URL, never from the mask."""
    recorded = run.settings.get("base_url")
    if not recorded or MASK not in recorded:
        return run
    live = next((u for u in (base_url, os.environ.get("JUDGEFLOW_BASE_URL")) if u and redact(u) == recorded), None)
    if live is None:
        raise ConfigError(f"run {run.run_id} was submitted to {recorded}, with credentials the store does not keep: "
                          f"give the same URL again with --base-url (or set JUDGEFLOW_BASE_URL)")
    return run.model_copy(update={"settings": {**run.settings, "base_url": live}})


def _provider(run: RunInfo, http_client: Any = None, base_url: str | None = None) -> Any:
    run = _live(run, base_url)
    return make_provider(run.settings["model"], base_url=run.settings.get("base_url"), http_client=http_client)


def _rows(run: Run) -> list[Any]:
    """The run's input rows, if its input file is unchanged since it was submitted."""
    info = run.info
    if info.input_path is None:
        raise ConfigError(f"run {run.run_id} has no input file recorded")
    if info.input_path == STDIO:  # submitted before `run - --batch` was refused: its rows were never kept
        raise ConfigError(f"run {run.run_id} read its items from stdin, which cannot be read again to collect its "
                          "batches; cancel its batch at the provider and submit the items from a file: "
                          "`judgeflow run items.jsonl --batch ...`")
    path = Path(info.input_path)
    if file_sha(path) != info.input_sha:
        raise ConfigError(f"{path} changed since run {run.run_id} was submitted; its batch replies may not match "
                          "the rows any more: restore the file, or start a new run")
    return list(run.rows())


def submit(run: Run, *, con: Console, http_client: Any = None, max_unscored: float = DEFAULT_MAX_UNSCORED,
           base_url: str | None = None) -> int:
    """Record what needs no model call and submit the first batch (called by `judgeflow run --batch`)."""
    provider = _provider(run.info, http_client, base_url)
    return asyncio.run(_step(run, list(run.rows()), provider, con, max_unscored=max_unscored))


def _reconcile(store: RunStore, run: RunInfo, provider: Any, con: Console) -> None:
    """Resolve batches recorded as intents (a kill between recording and submitting, or after submitting).

    A batch the provider has under the intent's tag is adopted; one it has not heard of is abandoned
    (its requests are still pending and go into the next submission).
    """
    ledger = BatchLedger(store)
    for job in ledger.jobs(run.run_id):
        if job.status != "intent":
            continue
        found = provider.find(job.tag, len(job.keys), job.created, ledger.known_batch_ids())
        if found:
            ledger.set_submitted(run.run_id, job.tag, found)
            con.print(f"run {run.run_id}: found batch {found} submitted before an interruption; following it")
            continue
        left = provider.discard(job.tag, job.created)  # an upload the interruption left without a batch
        if left:
            con.print(f"[yellow]note:[/yellow] could not delete {', '.join(left)} at {provider.name}, uploaded "
                      "before an interruption; delete it yourself (it holds the prompts)", soft_wrap=True)
        ledger.mark_job(run.run_id, job.tag, "abandoned")


def settle_intents(store: RunStore, run: RunInfo, con: Console, http_client: Any = None,
                   base_url: str | None = None) -> None:
    """Resolve the run's batch intents (see `_reconcile`) if this process may write the run: it holds the run's
    lock or can take it (a writer still uploading holds it, and its upload is no orphan). `base_url`: the
    run's --base-url with its credentials, when the store keeps it masked (see `_run`)."""
    if not any(j.status == "intent" for j in BatchLedger(store).jobs(run.run_id)):
        return
    try:
        store.claim(run.run_id)
    except RunBusy:
        con.print(f"run {run.run_id}: another judgeflow process is submitting a batch of it right now", soft_wrap=True)
        return
    _reconcile(store, run, _provider(_run(store, run.run_id, base_url), http_client), con)


async def _step(run: Run, rows: list[Any], provider: Any, con: Console,
                *, online: bool = False, max_unscored: float = DEFAULT_MAX_UNSCORED) -> int:
    """Judge as far as the replies allow, then submit the next round, or finish the run."""
    store = run.store
    ledger = BatchLedger(store)
    _reconcile(store, run.info, provider, con)
    open_ = [j.batch_id for j in ledger.jobs(run.run_id) if j.open]
    if open_:
        con.print(f"run {run.run_id}: batch {', '.join(map(str, open_))} is still at the provider; collect it with: "
                  f"judgeflow batch collect {run.run_id}{_store_opt(store)}", soft_wrap=True, markup=False)
        return 0
    transport = ReplayTransport(ledger, run.run_id)
    pending = await advance(run, replay_judge(run.info.settings, transport), transport, rows,
                            cache=not run.info.settings.get("no_cache"))
    if pending:
        round_ = max((j.round for j in ledger.jobs(run.run_id)), default=0) + 1
        parts = split(pending, provider)
        ids = []
        for part, requests in enumerate(parts, 1):
            tag = batch_tag(run.run_id, list(requests))
            ledger.add_intent(run.run_id, tag, round_, part, provider.name, list(requests))
            batch_id = provider.submit(requests, tag)
            ledger.set_submitted(run.run_id, tag, batch_id)
            ids.append(batch_id)
        run.submitted()
        con.print(f"run {run.run_id}: round {round_}: submitted {len(pending)} requests as {len(ids)} {provider.name} "
                  f"batch{'es' if len(ids) > 1 else ''} {', '.join(ids)}; {store.count(run.run_id)} of {len(rows)} "
                  f"rows done so far.\n"
                  f"  follow it with: judgeflow batch status {run.run_id}{_store_opt(store)}\n"
                  f"  collect it with: judgeflow batch collect {run.run_id}{_store_opt(store)} [--wait 60]",
                  soft_wrap=True, markup=False)
        return 0
    if online:
        await _rejudge_online(run, rows)
    return _finish(run, con, max_unscored)


def open_batches_note(store: RunStore, run_id: str, con: Console | None = None,
                      base_url: str | None = None) -> str | None:
    """A warning for a batch run resumed online while some of its batches are still at the provider
    (its interrupted submissions resolved first: a batch found is followed, an orphan upload deleted)."""
    if con is not None:
        settle_intents(store, store.get_run(run_id), con, base_url=base_url)
    open_ = [j.batch_id for j in BatchLedger(store).jobs(run_id) if j.open]
    if not open_:
        return None
    return (f"[yellow]note:[/yellow] batch {', '.join(map(str, open_))} of run {run_id} is still at the provider and "
            f"its lines are billed; judging the rest online pays for them again. Stop here (Ctrl-C) and run "
            f"`judgeflow batch collect {run_id}{_store_opt(store)} --wait 60` to use them, or cancel the batch.")


def _store_opt(store: RunStore) -> str:
    return "" if str(store.path) == str(DEFAULT_STORE) else f" --store {store.path}"


async def _rejudge_online(run: Run, rows: list[Any]) -> None:
    store = run.store
    failed = {j.id for j in store.results(run.run_id) if j.status == "unscored"}
    todo = [(n, it) for n, it in enumerate(rows) if not isinstance(it, Exception) and it.id in failed]
    judge = RunSettings.from_record(run.info.settings).judge(keep_trace=bool(run.info.settings.get("trace")))
    async for n, j in judge_stream(cached(judge, store), [it for _, it in todo]):
        run.record(todo[n][0], j)
        BatchLedger(store).mark_items(run.run_id, [j.id], batch=False)


def _finish(run: Run, con: Console, max_unscored: float = DEFAULT_MAX_UNSCORED) -> int:
    """Write the output and the summary; 1 when nothing was judged or too many rows are unscored, like `run`."""
    store = run.store
    results = run.finish()
    con.print(f"run {run.run_id}: done -> {run.info.output_path}", markup=False, soft_wrap=True)
    prices = load_prices()
    model = run.info.settings["model"]
    lines = summarize(results, model=model, prices=prices, elapsed=0, session=Usage(), session_items=0)
    lines[-1] = cost_line(store, run.run_id, model, prices) or lines[-1]
    for line in lines:
        con.print("  " + line, markup=False, soft_wrap=True)
    if note := store.unreadable_note():
        con.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    failed = run_failure(results, max_unscored)
    if failed:
        con.print(f"[red]{escape(failed)}[/red]; see each row's error. Re-judge them online with: "
                  f"judgeflow batch collect {run.run_id}{_store_opt(store)} --online", soft_wrap=True)
        return 1
    return 0


def cost_line(store: RunStore, run_id: str, model: str, prices: Any) -> str | None:
    """The cost of a run that used batches, each call priced by how it was made (None if not a batch run)."""
    if not BatchLedger(store).jobs(run_id):
        return None
    batch, online = paid(store, run_id)
    cost_b = estimate_cost(model, batch, prices=prices, batch=True)
    cost_o = estimate_cost(model, online, prices=prices)
    if cost_b is None or cost_o is None:
        return f"estimated cost: unknown (no price for {model}; add it with --prices FILE)"
    return (f"estimated cost: ${cost_b + cost_o:,.4f} for {model}: ${cost_b:,.4f} for {batch.calls:,} batch calls "
            f"at batch prices (half of list), ${cost_o:,.4f} for {online.calls:,} online calls at list prices")


def cmd_status(args: argparse.Namespace) -> int:
    con = console()  # never wrapped in a file or a pipe
    with RunStore(args.store) as store:
        run = _run(store, args.run_id, args.base_url)
        settle_intents(store, run, con, base_url=args.base_url)
        jobs = BatchLedger(store).jobs(run.run_id)
        con.print(f"run {run.run_id}: {run.status}, {store.count(run.run_id)} of {run.total} rows done", markup=False)
        if not jobs:
            con.print("  no batches (not a --batch run)")
            return 0
        provider = _provider(run)
        for job in jobs:
            line = (f"  round {job.round} part {job.part}: {job.provider} batch {job.batch_id or '(not known yet)'}: "
                    f"{job.status}, {len(job.keys)} requests")
            if job.open and job.batch_id:
                st = provider.status(job.batch_id)
                line += f" (provider: {st.state}{', ready to collect' if st.done else ''}; {st.counts})"
            con.print(line, markup=False, soft_wrap=True)
    return 0


def _collect_ended(store: RunStore, run: RunInfo, provider: Any, con: Console, *, keep_files: bool) -> list[str]:
    """Store the replies of every ended batch of the run; return how the open ones stand."""
    ledger = BatchLedger(store)
    waiting = []
    for job in ledger.jobs(run.run_id):
        if not job.open or job.batch_id is None:
            continue
        st = provider.status(job.batch_id)
        if not st.done:
            waiting.append(f"round {job.round} batch {job.batch_id} is {st.state} {st.counts}")
            continue
        ok, failed = provider.results(job.batch_id, set(job.keys))
        ledger.add_results(run.run_id, ok, failed)
        ledger.mark_job(run.run_id, job.tag, st.state)
        if failed or st.state not in ("completed", "ended"):
            cancelled = sum(final for _, final in failed.values())
            con.print(f"run {run.run_id}: batch {job.batch_id} {st.state}: kept {len(ok)} completed lines; "
                      f"{len(failed)} failed or missing" + (f" ({cancelled} cancelled: not sent again)" if cancelled
                                                            else ""), markup=False, soft_wrap=True)
            lines = {failure_text(v) for v, _ in failed.values() if " line " in failure_text(v)}
            for line in sorted(lines)[:3]:
                con.print(f"  {line}", markup=False, soft_wrap=True)
        if not keep_files:
            left = provider.delete(job.batch_id)
            if left:
                con.print(f"[yellow]note:[/yellow] could not delete {', '.join(left)} at {provider.name}; "
                          "delete them yourself (they hold the prompts)")
    return waiting


def cmd_collect(args: argparse.Namespace, *, http_client: Any = None) -> int:
    con = console(stderr=True)
    with RunStore(args.store) as store, sigterm_interrupts():
        try:
            return _collect(args, store, con, http_client)
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM
            con.print("[yellow]interrupted:[/yellow] " + escape(
                f"every batch reply collected so far is kept in {store.path}. Continue with:\n  judgeflow batch "
                f"collect {args.run_id}{_store_opt(store)}" + (" --online" if args.online else "")), soft_wrap=True)
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
    store.claim(store.get_run(args.run_id).run_id)  # one writer per run: a second collect is refused
    while True:
        run = Run.attach(store, args.run_id)
        if not BatchLedger(store).jobs(run.run_id):
            raise ConfigError(f"run {run.run_id} has no batches; submit one with `judgeflow run ... --batch`")
        if run.info.status == "done":
            if args.online:
                asyncio.run(_rejudge_online(run, _rows(run)))
            return _finish(run, con, args.max_unscored)
        provider = _provider(run.info, http_client, args.base_url)
        _reconcile(store, run.info, provider, con)
        waiting = _collect_ended(store, run.info, provider, con, keep_files=args.keep_batch_files)
        if not waiting:
            code = asyncio.run(_step(run, _rows(run), provider, con, online=args.online,
                                     max_unscored=args.max_unscored))
            if store.get_run(run.run_id).status == "done" or not args.wait:
                return code
            continue
        for line in waiting:
            con.print(f"run {run.run_id}: {line}", markup=False, soft_wrap=True)
        if not args.wait:
            return 0
        time.sleep(args.wait)
