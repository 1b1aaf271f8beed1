"""A batch run's lifecycle as a library: submit, settle interruptions, poll, collect, finish.

Each step is a generator of typed events (`events.py`); nothing here prints. The CLI's
`judgeflow run --batch` and `judgeflow batch status|collect` print what these yield, and a Python
caller drives the same run without it:

    run = Run.open(store, RunSpec(judging=JudgeSpec(model="openai/gpt-4o-mini"), input="items.jsonl",
                                  output="out.jsonl", batch=True))
    for event in lifecycle.submit(run):
        print(event)
    for event in lifecycle.collect(store, run.run_id, wait=60):   # until the run is done
        if isinstance(event, Finished):
            print(event.tally.judged, event.failure)

A round goes: judge as far as the stored replies allow (`advance`), submit the pending requests as
one or more batches (each recorded as an intent first), collect each ended batch's lines, and judge
again; after the last round the output is written from the store (`Finished`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ... import interrupts
from ...config.judging import JudgeSpec
from ...config.run import RunSpec
from ...errors import ConfigError
from ...files import STDIO
from ...judging import judge_stream
from ...redact import MASK, redact
from ..cache import cached
from ..output import file_sha
from ..pricing import estimate_cost
from ..run import Run
from ..store import RunBusy, RunInfo, RunStore
from ..summary import DEFAULT_MAX_UNSCORED, run_failure
from . import (
    BatchProvider,
    ReplayTransport,
    advance,
    batch_judge,
    batch_tag,
    make_provider,
    paid,
    replay_judge,
    split,
)
from .events import (
    Abandoned,
    Adopted,
    Busy,
    Collected,
    Event,
    FilesDeleted,
    Finished,
    Polled,
    Rejudged,
    RunState,
    StillOpen,
    Submitted,
    Waiting,
)
from .ledger import BatchLedger
from .types import failure_text


def live(run: RunInfo, base_url: str | None = None) -> RunInfo:
    """`run` with the base URL its requests go to: the store keeps it with its credentials masked
    (***), so they come from `base_url` (--base-url) or $JUDGEFLOW_BASE_URL, never from the mask."""
    recorded = run.base_url
    if not recorded or MASK not in recorded:
        return run
    found = next(
        (
            u
            for u in (base_url, os.environ.get("JUDGEFLOW_BASE_URL"))
            if u and redact(u) == recorded
        ),
        None,
    )
    if found is None:
        raise ConfigError(
            f"run {run.run_id} was submitted to {recorded}, with credentials the store does not keep: "
            f"give the same URL again with --base-url (or set JUDGEFLOW_BASE_URL)"
        )
    spec = run.spec
    assert spec is not None  # a recorded base URL is in a spec
    one = batch_judge_spec(spec)
    judging = one.model_copy(update={"client": one.client.model_copy(update={"base_url": found})})
    spec = {**run.settings["spec"], "judging": judging.model_dump(mode="json")}
    return run.model_copy(update={"settings": {**run.settings, "spec": spec}})


def batch_judge_spec(spec: RunSpec | None) -> JudgeSpec:
    """The one judge of a batch run (a batch judges with one model)."""
    if spec is None:
        raise ConfigError("this run has no recorded spec: it was not submitted as a batch")
    return spec.judging.judges()[0]


def provider_for(
    run: RunInfo, *, http_client: Any = None, base_url: str | None = None
) -> BatchProvider:
    """The batch API the run was submitted to (`base_url`: its credentialed URL, see `live`)."""
    run = live(run, base_url)
    return make_provider(
        batch_judge_spec(run.spec).model, base_url=run.base_url, http_client=http_client
    )


def input_rows(run: Run) -> list[Any]:
    """The run's input rows, if its input file is unchanged since it was submitted."""
    info = run.info
    if info.input_path is None:
        raise ConfigError(f"run {run.run_id} has no input file recorded")
    if (
        info.input_path == STDIO
    ):  # submitted before `run - --batch` was refused: its rows were never kept
        raise ConfigError(
            f"run {run.run_id} read its items from stdin, which cannot be read again to collect its "
            "batches; cancel its batch at the provider and submit the items from a file: "
            "`judgeflow run items.jsonl --batch ...`"
        )
    path = Path(info.input_path)
    if file_sha(path) != info.input_sha:
        raise ConfigError(
            f"{path} changed since run {run.run_id} was submitted; its batch replies may not match "
            "the rows any more: restore the file, or start a new run"
        )
    return list(run.rows())


def open_batches(store: RunStore, run_id: str) -> list[str]:
    """The ids of the run's batches still at the provider."""
    return [str(j.batch_id) for j in BatchLedger(store).jobs(run_id) if j.open]


def submit(
    run: Run,
    *,
    http_client: Any = None,
    base_url: str | None = None,
    max_unscored: float = DEFAULT_MAX_UNSCORED,
) -> Iterator[Event]:
    """Record what needs no model call and submit the first round (`Submitted`), or finish a run that needs
    no batch at all (`Finished`). `run`: opened with `batch=True` settings (`Run.open`)."""
    provider = provider_for(run.info, http_client=http_client, base_url=base_url)
    yield from step(run, list(run.rows()), provider, max_unscored=max_unscored)


def reconcile(store: RunStore, run: RunInfo, provider: BatchProvider) -> Iterator[Event]:
    """Resolve batches recorded as intents (a kill between recording and submitting, or after submitting).

    A batch the provider has under the intent's tag is adopted; one it has not heard of is abandoned
    (its requests are still pending and go into the next submission), its upload deleted.
    """
    ledger = BatchLedger(store)
    for job in ledger.jobs(run.run_id):
        if job.status != "intent":
            continue
        found = provider.find(job.tag, len(job.keys), job.created, ledger.known_batch_ids())
        if found:
            ledger.set_submitted(run.run_id, job.tag, found)
            yield Adopted(run.run_id, found)
            continue
        left = provider.discard(
            job.tag, job.created
        )  # an upload the interruption left without a batch
        ledger.mark_job(run.run_id, job.tag, "abandoned")
        yield Abandoned(run.run_id, provider.name, job.tag, tuple(left))


def settle(
    store: RunStore, run: RunInfo, *, http_client: Any = None, base_url: str | None = None
) -> Iterator[Event]:
    """Resolve the run's batch intents (see `reconcile`) if this process may write the run: it holds the run's
    lock or can take it (a writer still uploading holds it, and its upload is no orphan: `Busy`)."""
    if not any(j.status == "intent" for j in BatchLedger(store).jobs(run.run_id)):
        return
    try:
        store.claim(run.run_id)
    except RunBusy:
        yield Busy(run.run_id)
        return
    yield from reconcile(
        store,
        run,
        provider_for(store.get_run(run.run_id), http_client=http_client, base_url=base_url),
    )


def status(
    store: RunStore, run_id: str, *, http_client: Any = None, base_url: str | None = None
) -> Iterator[Event]:
    """Where a batch run is: its interruptions settled, then `RunState`, then a `Polled` for each of its
    batches (the provider asked about the open ones)."""
    run = live(store.get_run(run_id), base_url)
    yield from settle(store, run, http_client=http_client, base_url=base_url)
    jobs = BatchLedger(store).jobs(run.run_id)
    yield RunState(run.run_id, run.status, store.count(run.run_id), run.total, len(jobs))
    if not jobs:
        return
    provider = provider_for(run, http_client=http_client)
    for job in jobs:
        st = provider.status(job.batch_id) if job.open and job.batch_id else None
        yield Polled(
            run.run_id,
            job.round,
            job.part,
            job.provider,
            job.batch_id,
            job.status,
            len(job.keys),
            st.state if st else None,
            bool(st and st.done),
            dict(st.counts) if st else {},
        )


def step(
    run: Run,
    rows: Sequence[Any],
    provider: BatchProvider,
    *,
    online: bool = False,
    max_unscored: float = DEFAULT_MAX_UNSCORED,
) -> Iterator[Event]:
    """Judge as far as the replies allow, then submit the next round (`Submitted`), or finish the run
    (`Finished`); `StillOpen` when a batch of the run is still at the provider."""
    store = run.store
    ledger = BatchLedger(store)
    yield from reconcile(store, run.info, provider)
    if still := open_batches(store, run.run_id):
        yield StillOpen(run.run_id, tuple(still))
        return
    transport = ReplayTransport(ledger, run.run_id)
    spec = run.info.spec
    assert spec is not None  # provider_for checked it
    pending = interrupts.run(
        advance(run, replay_judge(spec, transport), transport, rows, cache=not spec.no_cache)
    )
    if pending:
        round_ = max((j.round for j in ledger.jobs(run.run_id)), default=0) + 1
        ids = []
        for part, requests in enumerate(split(pending, provider), 1):
            tag = batch_tag(run.run_id, list(requests))
            ledger.add_intent(run.run_id, tag, round_, part, provider.name, list(requests))
            batch_id = provider.submit(requests, tag)
            ledger.set_submitted(run.run_id, tag, batch_id)
            ids.append(batch_id)
        run.submitted()
        yield Submitted(
            run.run_id,
            round_,
            provider.name,
            tuple(ids),
            len(pending),
            store.count(run.run_id),
            len(rows),
        )
        return
    if online:
        yield Rejudged(run.run_id, interrupts.run(rejudge_online(run, rows)))
    yield finish(run, max_unscored)


async def rejudge_online(run: Run, rows: Sequence[Any]) -> int:
    """Judge online the run's unscored rows (a batch reply invalid or failed); the number judged again."""
    store = run.store
    failed = {j.id for j in store.results(run.run_id) if j.status == "unscored"}
    todo = [
        (n, it) for n, it in enumerate(rows) if not isinstance(it, Exception) and it.id in failed
    ]
    spec = run.info.spec
    if spec is None:
        raise ConfigError(f"run {run.run_id} has no recorded spec to judge it again with")
    judge = batch_judge(spec)
    async for n, j in judge_stream(cached(judge, store), [it for _, it in todo]):
        run.record(todo[n][0], j)
        BatchLedger(store).mark_items(run.run_id, [j.id], batch=False)
    return len(todo)


def finish(run: Run, max_unscored: float = DEFAULT_MAX_UNSCORED) -> Finished:
    """Mark the run done and write its output from the store."""
    tally = run.finish()
    return Finished(
        run.run_id,
        run.info.output_path,
        run.info.model,
        tally,
        run_failure(tally, max_unscored),
        run.store.unreadable_note(),
    )


def collect_ended(
    store: RunStore, run: RunInfo, provider: BatchProvider, *, keep_files: bool = False
) -> Iterator[Event]:
    """Store the replies of every ended batch of the run (`Collected`), deleting its files at the provider
    unless `keep_files` (`FilesDeleted`); a `Polled` for every open batch, ended or not."""
    ledger = BatchLedger(store)
    for job in ledger.jobs(run.run_id):
        if not job.open or job.batch_id is None:
            continue
        st = provider.status(job.batch_id)
        yield Polled(
            run.run_id,
            job.round,
            job.part,
            job.provider,
            job.batch_id,
            job.status,
            len(job.keys),
            st.state,
            st.done,
            dict(st.counts),
        )
        if not st.done:
            continue
        ok, failed = provider.results(job.batch_id, set(job.keys))
        ledger.add_results(run.run_id, ok, failed)
        ledger.mark_job(run.run_id, job.tag, st.state)
        lines = {failure_text(v) for v, _ in failed.values() if " line " in failure_text(v)}
        yield Collected(
            run.run_id,
            job.batch_id,
            st.state,
            len(ok),
            len(failed),
            sum(final for _, final in failed.values()),
            tuple(sorted(lines)[:3]),
        )
        if not keep_files:
            yield FilesDeleted(
                run.run_id, job.batch_id, provider.name, tuple(provider.delete(job.batch_id))
            )


def collect(
    store: RunStore,
    run_id: str,
    *,
    wait: float | None = None,
    online: bool = False,
    keep_files: bool = False,
    max_unscored: float = DEFAULT_MAX_UNSCORED,
    http_client: Any = None,
    base_url: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Event]:
    """Collect the run's ended batches, judge as far as their replies allow, submit the next round; with
    `wait`, poll every `wait` seconds until the run is `Finished`. Holds the run's lock (one writer per run).

    Raises:
        ConfigError: the run has no batches, its input changed, or its masked base URL is not given.
        RunBusy: another process writes the run.
    """
    store.claim(store.get_run(run_id).run_id)  # one writer per run: a second collect is refused
    while True:
        run = Run.attach(store, run_id)
        if not BatchLedger(store).jobs(run.run_id):
            raise ConfigError(
                f"run {run.run_id} has no batches; submit one with `judgeflow run ... --batch`"
            )
        if run.info.status == "done":
            if online:
                yield Rejudged(run.run_id, interrupts.run(rejudge_online(run, input_rows(run))))
            yield finish(run, max_unscored)
            return
        provider = provider_for(run.info, http_client=http_client, base_url=base_url)
        yield from reconcile(store, run.info, provider)
        polled = list(collect_ended(store, run.info, provider, keep_files=keep_files))
        yield from polled
        if all(p.done for p in polled if isinstance(p, Polled)):
            yield from step(
                run, input_rows(run), provider, online=online, max_unscored=max_unscored
            )
            if store.get_run(run.run_id).status == "done" or not wait:
                return
            continue
        yield Waiting(run.run_id, wait)
        if not wait:
            return
        sleep(wait)


def cost_line(store: RunStore, run_id: str, model: str, prices: Any) -> str | None:
    """The cost of a run that used batches, each call priced by how it was made (None if not a batch run)."""
    if not BatchLedger(store).jobs(run_id):
        return None
    batch, online = paid(store, run_id)
    cost_b = estimate_cost(model, batch, prices=prices, batch=True)
    cost_o = estimate_cost(model, online, prices=prices)
    if cost_b is None or cost_o is None:
        return f"estimated cost: unknown (no price for {model}; add it with --prices FILE)"
    return (
        f"estimated cost: ${cost_b + cost_o:,.4f} for {model}: ${cost_b:,.4f} for {batch.calls:,} batch calls "
        f"at batch prices (half of list), ${cost_o:,.4f} for {online.calls:,} online calls at list prices"
    )
