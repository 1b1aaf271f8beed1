"""What "a judge" is: the `Judging` protocol, THE concurrency loop over it, and the sync facade.

    async for seq, j in judge_stream(judging, items, concurrency=16): ...   # as each completes
    results = judge_many(judging, items)                                    # sync, in input order

`Judge`, `Panel`, `Cascade` and `runs.cache.Cached` implement `Judging`; panels and cascades are
also `Ensemble`s, which expose their members (`members()`, `with_members(fn)`) so a wrapper (the
response cache) can be put around each one. Nothing else judges many items: the CLI's run, the
batch replay, Ray, the pytest helpers and the integrations all call `judge_stream` (or the facade).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import threading
from collections.abc import AsyncIterable, AsyncIterator, Callable, Coroutine, Iterable, Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

from .errors import ConfigError, InvalidItemError
from .items import DEFAULT_MAX_INPUT_CHARS, ColumnMap, Item, checked_item, passthrough
from .results import Judgment
from .scheduling import WINDOW, FirstOfSource, Slots, by_evidence

ItemLike = Item | Mapping[str, Any] | InvalidItemError
DEFAULT_CONCURRENCY = 16
#: bump when a change in judgeflow itself makes earlier cached results stale
CACHE_VERSION = 2  # 2: the verdict guide shows the fact kinds and not_errors

J = TypeVar("J", bound="Judging")
T = TypeVar("T")


@runtime_checkable
class Judging(Protocol):
    """Anything that judges one item: a Judge, a Panel, a Cascade, or a wrapper around one."""

    @property
    def model(self) -> str:
        """What judged: "provider/model", or a panel's or cascade's description of its members."""
        ...

    def fingerprint(self, item: Item) -> str | None:
        """Everything that determines this judging's answer for `item`, as one hash (the response
        cache's key); None when the item cannot be routed (it is not cached)."""
        ...

    async def ajudge(self, item: ItemLike) -> Judgment:
        """One item's result: judged, unscored (the judge failed, with why) or invalid (bad input)."""
        ...

    async def aclose(self) -> None:
        """Close provider connections before the event loop that opened them ends."""
        ...


@runtime_checkable
class Ensemble(Judging, Protocol):
    """A Judging built from member Judgings (a panel, a cascade)."""

    def members(self) -> list[Judging]:
        """The member Judgings, each judged (and cached) on its own."""
        ...

    def with_members(self: J, fn: Callable[[Judging], Judging]) -> J:
        """A copy of this ensemble whose every member `m` is replaced by `fn(m)`."""
        ...


def as_item(obj: ItemLike, column_map: ColumnMap | None = None, *,
            max_input_chars: int = DEFAULT_MAX_INPUT_CHARS) -> Item | InvalidItemError:
    """An Item from an Item, a dict (aliases, and `column_map`'s columns, accepted), or pass an
    InvalidItemError through; checked as every input path checks it (`items.checked_item`)."""
    if isinstance(obj, InvalidItemError):
        return obj
    if isinstance(obj, Item):  # read and checked once (under the run's limit), or built in code
        return obj if obj.checked else checked_item(obj, max_input_chars)
    try:
        return checked_item(Item.from_record(obj, column_map=column_map), max_input_chars)
    except InvalidItemError as e:
        return e


def invalid_judgment(err: InvalidItemError, *, model: str | None = None) -> Judgment:
    """The error row for an unusable input row: label None, status invalid, the message kept."""
    item_id = err.item_id or (f"line-{err.line}" if err.line else _content_id(err))
    human, extra = passthrough(err.record) if err.record is not None else (None, {})
    if err.line:
        extra.setdefault("line", err.line)
    return Judgment.invalid(item_id, str(err), model=model, extra=extra, human_label=human)


def row_id(obj: Item | InvalidItemError) -> str:
    """The id an input row's result will have: its id; for an invalid row its given id, else `line-N`,
    else `invalid-<hash of the row>` (a row read without a line number, e.g. a Ray shard's: stable across runs)."""
    if isinstance(obj, Item):
        return obj.id
    return obj.item_id or (f"line-{obj.line}" if obj.line else _content_id(obj))


def _content_id(err: InvalidItemError) -> str:
    raw = json.dumps(err.record, sort_keys=True, default=str) if err.record is not None else str(err)
    return "invalid-" + hashlib.sha256(raw.encode()).hexdigest()[:16]


def combined_key(kind: str, keys: list[str | None], **settings: Any) -> str | None:
    """The fingerprint of an ensemble: its members' fingerprints and its own settings."""
    if any(k is None for k in keys):
        return None
    data = {"v": CACHE_VERSION, kind: list(keys), **settings}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


async def judge_stream(
    judging: Judging, items: Iterable[ItemLike] | AsyncIterable[ItemLike], *, concurrency: int = DEFAULT_CONCURRENCY,
    column_map: ColumnMap | None = None,
) -> AsyncIterator[tuple[int, Judgment]]:
    """Judge many items with bounded concurrency, yielding (input position, result) as each completes.

    Items that share a source are sent one after another (the provider's prompt cache); the first
    unexpected failure (e.g. `ProviderUnavailable`, a failed commit in a wrapper) stops the feed
    and is raised once. Closing the iterator early stops the judging. `column_map`: item field -> the
    column of a dict item holding it.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    queue: asyncio.Queue[tuple[int, Judgment] | BaseException | None] = asyncio.Queue()
    feeder = asyncio.create_task(_feed(judging, items, concurrency, queue, column_map))
    try:
        while (result := await queue.get()) is not None:
            if isinstance(result, BaseException):
                raise result
            yield result
        await feeder  # surface unexpected errors from the feeder itself
    finally:
        if not feeder.done():
            feeder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await feeder


async def _feed(judging: Judging, items: Iterable[ItemLike] | AsyncIterable[ItemLike], limit: int,
                queue: asyncio.Queue[Any], column_map: ColumnMap | None) -> None:
    """Start one task per item, at most `limit` judging at once; put each result (or the first
    failure) on `queue`. A source's later items wait for its first outside the slots (WINDOW at most
    parked): the wait for the prompt cache never idles a slot; then they get the next free ones."""
    slots, parked = Slots(limit), asyncio.Semaphore(WINDOW)
    failed: list[BaseException] = []
    firsts = FirstOfSource()
    waiting: dict[asyncio.Event, list[asyncio.Future[None]]] = {}  # a first's event -> its later items
    tasks: set[asyncio.Task[None]] = set()

    async def one(seq: int, it: Item | InvalidItemError, first: asyncio.Event | None) -> None:
        try:
            judged = await judging.ajudge(it)
            await queue.put((seq, judged))
        except Exception as e:  # noqa: BLE001 - e.g. ProviderUnavailable: ends the stream at once
            failed.append(e)
            await queue.put(e)
        finally:
            if first is not None:
                first.set()
                slots.wake(waiting.pop(first, []))
            slots.release()

    async def later(seq: int, it: Item | InvalidItemError, slot: asyncio.Future[None]) -> None:
        try:
            await slots.wait(slot)  # given once the source's first is judged (its prefix cached)
        finally:
            parked.release()
        if failed:
            slots.release()
            return
        await one(seq, it, None)

    try:
        try:
            async for seq, obj in by_evidence(_as_items(items, column_map)):  # shared sources adjacent
                first, wait = firsts.claim(obj)
                await (parked.acquire() if wait is not None else slots.acquire())
                if failed:  # failed while waiting for a slot: send nothing more
                    break
                if wait is None:
                    _spawn(tasks, one(seq, obj, first))
                    continue
                slot = slots.waiter()
                slots.wake([slot]) if wait.is_set() else waiting.setdefault(wait, []).append(slot)
                _spawn(tasks, later(seq, obj, slot))
        except Exception:  # the input broke off: the items in flight are finished (paid for), then it is raised
            await asyncio.gather(*tasks)
            raise
        await asyncio.gather(*tasks)
    finally:  # cancelled (the consumer stopped, Ctrl-C): nothing more is waited for
        for t in tasks:
            t.cancel()
        await queue.put(None)


def _spawn(tasks: set[asyncio.Task[None]], coro: Any) -> None:
    t = asyncio.create_task(coro)
    tasks.add(t)
    t.add_done_callback(tasks.discard)


async def _as_items(items: Iterable[ItemLike] | AsyncIterable[ItemLike],
                    column_map: ColumnMap | None = None) -> AsyncIterator[tuple[int, Item | InvalidItemError]]:
    if isinstance(items, AsyncIterable):
        n = 0
        async for obj in items:
            yield n, as_item(obj, column_map)
            n += 1
    else:
        for n, obj in enumerate(items):
            yield n, as_item(obj, column_map)


def judge_many(judging: Judging, items: Iterable[ItemLike], *, concurrency: int = DEFAULT_CONCURRENCY,
               column_map: ColumnMap | None = None) -> list[Judgment]:
    """Sync facade: judge all items concurrently; the results in input order."""

    async def collect() -> list[tuple[int, Judgment]]:
        stream = judge_stream(judging, list(items), concurrency=concurrency, column_map=column_map)
        async with contextlib.aclosing(stream):
            return [r async for r in stream]

    return [j for _, j in sorted(run_sync(collect()), key=lambda r: r[0])]  # input order, even for repeated ids


class SyncFacade:
    """`judge(item)` and `judge_many(items)` on any Judging, derived once from `ajudge`."""

    concurrency: int = DEFAULT_CONCURRENCY
    #: item field -> the column of a dict item holding it (a Judge's `column_map=`)
    column_map: ColumnMap | None = None

    def judge(self: Judging, item: ItemLike) -> Judgment:
        """Sync facade over `ajudge`."""
        return run_sync(self.ajudge(item))

    def judge_many(self: Any, items: Iterable[ItemLike], *, concurrency: int | None = None) -> list[Judgment]:
        """Sync facade over `judge_stream`: all items, concurrently, in input order."""
        return judge_many(self, items, concurrency=concurrency or self.concurrency, column_map=self.column_map)

    async def __aenter__(self: J) -> J:
        return self

    async def __aexit__(self: Judging, *exc: object) -> None:
        await self.aclose()


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    """One long-lived event loop in a daemon thread, shared by every sync call.

    Async SDK clients keep connections bound to the loop that opened them; running each sync
    call in a fresh `asyncio.run` loop would leave them tied to a closed loop ("Event loop is
    closed" on the second call). It also lets the sync facade work where a loop is already
    running in the caller's thread (e.g. Jupyter).
    """
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="judgeflow-sync", daemon=True).start()
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, on the shared background loop."""
    future = asyncio.run_coroutine_threadsafe(coro, _background_loop())
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise
