"""`judgeflow run --batch` submits; `judgeflow batch status|collect RUN_ID` follows the job.

A batch run goes in stages: the first batch holds every item's first call (decompose, or the
single call), the second the check calls. `collect` stores a finished batch's replies, judges
as far as they allow, and submits the next stage; after the last one the output is written
from the store. `collect --wait N` polls every N seconds until the run is done.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from rich.console import Console

from ..runs.batch import ReplayTransport, advance, make_provider, replay_judge
from ..errors import ConfigError
from ..items import read_items
from ..judge import Judge
from ..runs.pricing import estimate_cost, load_prices
from ..results import Usage
from ..runs.store import DEFAULT_STORE, RunInfo, RunStore


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("batch", help="follow runs submitted with `judgeflow run --batch`")
    bsub = p.add_subparsers(dest="batch_command", required=True, metavar="ACTION")
    sp = bsub.add_parser("status", help="where a batch run is")
    cp = bsub.add_parser("collect", help="collect finished batches, submit the next stage, write the output")
    for q in (sp, cp):
        q.add_argument("run_id", help="the run id printed by `judgeflow run --batch`")
        q.add_argument("--store", default=DEFAULT_STORE, help=f"the run store (default {DEFAULT_STORE})")
    cp.add_argument("--wait", type=float, metavar="SECONDS", help="poll every SECONDS until the run is done")
    cp.add_argument("--online", action="store_true",
                    help="re-judge online the items whose batch reply was invalid or failed")
    sp.set_defaults(func=cmd_status)
    cp.set_defaults(func=cmd_collect)


def _provider(run: RunInfo, http_client: Any = None) -> Any:
    return make_provider(run.settings["model"], base_url=run.settings.get("base_url"), http_client=http_client)


def _rows(run: RunInfo) -> list[Any]:
    from .run import file_sha

    if run.input_path is None:
        raise ConfigError(f"run {run.run_id} has no input file recorded")
    from pathlib import Path

    path = Path(run.input_path)
    if file_sha(path) != run.input_sha:
        raise ConfigError(f"{path} changed since run {run.run_id} was submitted; its batch replies may not match "
                          "the rows any more: restore the file, or start a new run")
    rows = list(read_items(path))
    limit = run.settings.get("limit")
    return rows[:limit] if limit else rows


def submit(store: RunStore, run_id: str, rows: list[Any], *, con: Console, http_client: Any = None) -> int:
    """Record what needs no model call and submit the first batch (called by `judgeflow run --batch`)."""
    run = store.get_run(run_id)
    return asyncio.run(_step(store, run, rows, _provider(run, http_client), con))


async def _step(store: RunStore, run: RunInfo, rows: list[Any], provider: Any, con: Console,
                *, online: bool = False) -> int:
    transport = ReplayTransport(store)
    pending = await advance(store, run.run_id, replay_judge(run.settings, transport), transport, rows)
    if pending:
        stage = len(store.batches(run.run_id)) + 1
        batch_id = provider.submit(pending)
        store.add_batch(run.run_id, stage, provider.name, batch_id)
        store.set_status(run.run_id, "batch")
        con.print(f"run {run.run_id}: stage {stage}: submitted {len(pending)} requests as {provider.name} batch "
                  f"{batch_id}; {store.count(run.run_id)} of {len(rows)} rows done so far.\n"
                  f"  follow it with: judgeflow batch status {run.run_id}{_store_opt(store)}\n"
                  f"  collect it with: judgeflow batch collect {run.run_id}{_store_opt(store)} [--wait 60]",
                  soft_wrap=True)
        return 0
    if online:
        await _rejudge_online(store, run, rows)
    store.set_status(run.run_id, "done")
    _finish(store, run, con)
    return 0


def _store_opt(store: RunStore) -> str:
    return "" if str(store.path) == str(DEFAULT_STORE) else f" --store {store.path}"


async def _rejudge_online(store: RunStore, run: RunInfo, rows: list[Any]) -> None:
    s = run.settings
    failed = {j.id for j in store.results(run.run_id) if j.status == "unscored"}
    seq_of = {it.id: n for n, it in enumerate(rows) if not isinstance(it, Exception)}
    kwargs = {"base_url": s["base_url"]} if s.get("base_url") else {}
    judge = Judge(s["model"], mode=s.get("mode"), criterion=s.get("criterion_arg"), strategy=s.get("strategy", "graph"),
                  keep_trace=bool(s.get("trace")), temperature=s.get("temperature") or 0.0, **kwargs)
    todo = [it for it in rows if not isinstance(it, Exception) and it.id in failed]
    async for j in judge.ajudge_many(todo, store=store):
        store.record(run.run_id, seq_of[j.id], j)


def _finish(store: RunStore, run: RunInfo, con: Console) -> None:
    from pathlib import Path

    from .run import summarize, write_output

    results = list(store.results(run.run_id))
    if run.output_path:
        write_output(store, run.run_id, Path(run.output_path), trace=bool(run.settings.get("trace")))
    con.print(f"run {run.run_id}: done -> {run.output_path}")
    prices = load_prices()
    lines = summarize(results, model=run.settings["model"], prices=prices, elapsed=0, session=Usage(),
                      session_items=0)
    total = Usage()
    for j in results:
        total.add(j.usage)
    cost = estimate_cost(run.settings["model"], total, prices=prices, batch=True)
    if cost is not None:
        lines[-1] = f"estimated cost: ${cost:,.4f} at batch prices (half of list) for {run.settings['model']}"
    for line in lines:
        con.print("  " + line)


def cmd_status(args: argparse.Namespace) -> int:
    con = Console(highlight=False)
    with RunStore(args.store) as store:
        run = store.get_run(args.run_id)
        batches = store.batches(run.run_id)
        con.print(f"run {run.run_id}: {run.status}, {store.count(run.run_id)} of {run.total} rows done")
        if not batches:
            con.print("  no batches (not a --batch run)")
            return 0
        provider = _provider(run)
        for b in batches:
            line = f"  stage {b['stage']}: {b['provider']} batch {b['batch_id']}: {b['status']}"
            if b["status"] == "submitted":
                st = provider.status(b["batch_id"])
                line += f" (provider: {st.state}{', ready to collect' if st.done else ''}; {st.counts})"
            con.print(line)
    return 0


def cmd_collect(args: argparse.Namespace, *, http_client: Any = None) -> int:
    con = Console(stderr=True, highlight=False)
    with RunStore(args.store) as store:
        while True:
            run = store.get_run(args.run_id)
            batches = store.batches(run.run_id)
            if not batches:
                raise ConfigError(f"run {run.run_id} has no batches; submit one with `judgeflow run ... --batch`")
            if run.status == "done":
                _finish(store, run, con)
                return 0
            last = batches[-1]
            provider = _provider(run, http_client)
            st = provider.status(last["batch_id"])
            if st.failed:
                store.set_batch_status(run.run_id, last["stage"], st.state)
                raise ConfigError(f"batch {last['batch_id']} of run {run.run_id} {st.state}; judge the rest online "
                                  f"with: {run.command}")
            if st.done:
                store.add_replies(run.run_id, provider.results(last["batch_id"]))
                store.set_batch_status(run.run_id, last["stage"], "collected")
                asyncio.run(_step(store, run, _rows(run), provider, con, online=args.online))
                if store.get_run(run.run_id).status == "done" or not args.wait:
                    return 0
                continue
            con.print(f"run {run.run_id}: stage {last['stage']} batch {last['batch_id']} is {st.state} {st.counts}")
            if not args.wait:
                return 0
            time.sleep(args.wait)
