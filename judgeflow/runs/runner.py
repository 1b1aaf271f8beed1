"""The store- and cache-aware judging loop: a run over many items, resumable and cached.

    async for seq, j in judge_indexed(judge, items, store=store, run=run_id): ...
    results = judge_many(judge, items, store=RunStore(...))      # sync, in input order

Items already recorded under `run` are skipped (resume); cache hits are served from the store
without calls (`cached=True`); the misses go to the pure `Judge.ajudge_indexed`, and each
result is committed to the store as soon as it is done. The Judge itself knows no store.

Commits under a run (the contract resume and the CLI rely on):
* every result is committed before it is yielded: whatever the caller has seen (a progress
  count, a summary) is durably in the store;
* a judged result (paid for) is committed the moment it arrives (with any cache hits waiting);
* results served from the cache are committed in batches of up to `HIT_BATCH` in one transaction
  (one commit per row made a cached re-run of 1,000 items 0.1-0.2 s slower; an async iterable of
  items may wait between items, so its hits are committed one by one); a batch is committed
  when it is full, together with the next judged result, when the input ends, and, on a way out
  (Ctrl-C, SIGTERM, an error elsewhere), when the iterator is closed. So a hard kill (SIGKILL, a
  power loss) loses at most the last `HIT_BATCH` rows served from the cache, never yielded yet,
  and a resume serves them from the cache again (their cache entries were committed when they
  were judged): no judged result is lost and nothing is judged, or paid for, twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import TYPE_CHECKING

from ..errors import ConfigError, InvalidItemError, StoreError
from ..items import Item
from ..judge import ItemLike, Judge, _aenumerate, _run, as_item, invalid_judgment
from ..results import Judgment
from .cache import cache_key, from_cache

if TYPE_CHECKING:  # store.py imports this module
    from .store import RunStore

#: finished results waiting for the consumer at most (cache hits are produced faster than they are written)
OUT_QUEUE = 256
#: results served from the cache committed in one transaction at most (see the module docstring)
HIT_BATCH = 256


async def judge_indexed(
    judge: Judge,
    items: Iterable[ItemLike] | AsyncIterable[ItemLike],
    *,
    store: RunStore | None = None,
    run: str | None = None,
    cache: bool = True,
    concurrency: int | None = None,
) -> AsyncIterator[tuple[int, Judgment]]:
    """Judge many items, yielding (input position, result) as each completes.

    Args:
        judge: the Judge.
        items: Items, dicts, or InvalidItemErrors (from `read_items`), sync or async iterable.
        store: a RunStore: judged results are cached there, and served from it (`cached=True`,
            no calls) when everything that determines the answer is unchanged.
        run: a run id in `store`: each result is committed under it as soon as it is done, and
            items already judged (or invalid) under it are skipped (not judged, not yielded):
            resume. Unscored items (judge failures, e.g. an outage) are judged again.
        cache: read the store's cache (results are written to it either way).
        concurrency: items in flight at once (default: the judge's `concurrency`).
    """
    if run is not None and store is None:
        raise ConfigError("judging with run=... needs store=RunStore(...)")
    if store is None:
        async for r in judge.ajudge_indexed(items, concurrency=concurrency):
            yield r
        return
    if run is not None:
        store.claim(run)  # one writer per run (a no-op when the caller holds it already)
    bind = getattr(judge, "with_store", None)
    if bind is not None:  # a panel or cascade: each member's result is cached too (resume repeats no member's call)
        judge = bind(store, cache=cache, key=cache_key, from_cache=from_cache)
    done = store.finished_ids(run) if run is not None else set()  # unscored items are judged again
    # bounded: a run served from the cache must not queue every result ahead of the consumer
    out: asyncio.Queue[tuple[int, Judgment] | None] = asyncio.Queue(maxsize=OUT_QUEUE)
    pending: dict[int, tuple[int, str | None]] = {}  # miss number -> (input position, cache key)
    hits: list[tuple[int, Judgment, str | None]] = []  # served from the cache, not committed (nor yielded) yet
    # an async input may wait between items (a queue, a socket): its hits are not held back
    batch = 1 if isinstance(items, AsyncIterable) else HIT_BATCH

    def commit(also: list[tuple[int, Judgment, str | None]]) -> list[tuple[int, Judgment, str | None]]:
        """Commit the waiting cache hits and `also` in one transaction; returns what was committed."""
        rows = [*hits, *also]
        hits.clear()
        if rows and run is not None:
            store.record_many(run, rows)
        return rows

    async def publish(rows: list[tuple[int, Judgment, str | None]]) -> None:
        for seq, j, _ in rows:
            await out.put((seq, j))

    async def finish(seq: int, j: Judgment, key: str | None) -> None:
        if run is None and key is not None and j.status == "judged" and not j.cached:
            store.put_cache(key, j)
        await publish(commit([(seq, j, key)]))

    async def served(seq: int, j: Judgment, key: str | None) -> None:
        if run is None:  # nothing to commit
            await out.put((seq, j))
            return
        hits.append((seq, j, key))
        if len(hits) >= batch:
            await publish(commit([]))

    async def misses() -> AsyncIterator[Item | InvalidItemError]:
        n = 0
        async for seq, obj in _aenumerate(items):
            it = as_item(obj, getattr(judge, "column_map", None))
            item_id = it.id if isinstance(it, Item) else invalid_judgment(it).id
            if item_id in done:
                continue
            key = cache_key(judge, it) if isinstance(it, Item) else None
            hit = store.cached(key) if cache and key is not None else None
            if hit is not None and isinstance(it, Item):
                await served(seq, from_cache(hit, it, model=judge.model, strategy=judge.strategy,
                                             keep_trace=judge.keep_trace), key)
                continue
            pending[n] = (seq, key)
            n += 1
            yield it
        await publish(commit([]))  # the input ended: the last cache hits

    async def drive() -> None:
        # The first failed commit (e.g. a full disk) ends the run: closing `judged` stops the feed,
        # so at most the calls already in flight are spent; the error reaches the caller once.
        # The end mark is put only for a consumer still waiting: when the consumer stopped (it
        # cancels this task), the bounded queue may be full and nobody would ever take it.
        try:
            judged = judge.ajudge_indexed(misses(), concurrency=concurrency)
            async with contextlib.aclosing(judged):
                async for n, j in judged:
                    seq, key = pending.pop(n)
                    await finish(seq, j, key)
        except asyncio.CancelledError:
            raise
        except BaseException:
            await out.put(None)
            raise
        await out.put(None)

    driver = asyncio.create_task(drive())
    try:
        while (result := await out.get()) is not None:
            yield result
        await driver  # surface errors from the judging or the store
    finally:
        if not driver.done():
            driver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await driver
        if hits:  # stopped early (Ctrl-C, SIGTERM, the caller broke off, an error): keep the hits served
            with contextlib.suppress(StoreError):  # the store failing already is the error being raised
                commit([])


async def ajudge_many(
    judge: Judge,
    items: Iterable[ItemLike] | AsyncIterable[ItemLike],
    *,
    store: RunStore | None = None,
    run: str | None = None,
    cache: bool = True,
    concurrency: int | None = None,
) -> AsyncIterator[Judgment]:
    """As `judge_indexed`, without the input positions."""
    indexed = judge_indexed(judge, items, store=store, run=run, cache=cache, concurrency=concurrency)
    async with contextlib.aclosing(indexed):  # stopping early stops the judging too
        async for _, j in indexed:
            yield j


def judge_many(
    judge: Judge, items: Iterable[ItemLike], *, store: RunStore | None = None, concurrency: int | None = None
) -> list[Judgment]:
    """Sync: judge all items concurrently (served from `store`'s cache where possible), in input order."""
    items = list(items)

    async def collect() -> list[tuple[int, Judgment]]:
        return [r async for r in judge_indexed(judge, items, store=store, concurrency=concurrency)]

    return [j for _, j in sorted(_run(collect()), key=lambda r: r[0])]  # input order, even for repeated ids
