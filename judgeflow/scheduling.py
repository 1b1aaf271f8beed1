"""The order items are sent in: items that share evidence go one after another.

A provider caches the common prefix of requests (static instructions and schema, then the
evidence); the cache only helps when requests sharing a source arrive close together. FaithBench
has several summaries per article and a RAG evaluation asks many questions of one document, but
input files rarely keep them adjacent. `by_evidence` regroups (position, item) pairs within a
bounded window: the first item of each source keeps its place, later items with the same source
move up behind it, everything else keeps its order. Positions travel with the items, so results
can still be put back in input order; memory stays bounded by the window.

Adjacent items would otherwise be in flight together, and a request sent while the first one with
that prefix is still in flight misses the provider's cache: `FirstOfSource` holds a source's later
items until its first item is judged (one item's latency per source; the later ones then run
concurrently).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

#: items read ahead to find ones that share a source
WINDOW = 512


def evidence_key(obj: Any) -> str | None:
    """A key shared by items with the same source or spec; None if there is none (judged in place)."""
    texts = getattr(obj, "source", None) or getattr(obj, "spec", None)
    if not texts:
        return None
    joined = "\x00".join(texts) if isinstance(texts, list) else str(texts)
    return hashlib.blake2b(joined.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


async def by_evidence(pairs: AsyncIterator[tuple[int, Any]], window: int = WINDOW) -> AsyncIterator[tuple[int, Any]]:
    """`pairs` regrouped so that items sharing evidence are adjacent (stable, within `window` items)."""
    buffer: list[tuple[int, Any]] = []
    try:
        async for pair in pairs:
            buffer.append(pair)
            if len(buffer) >= window:
                for p in _grouped(buffer):
                    yield p
                buffer = []
    except Exception:  # the input broke off: what was read is still judged, then the error is raised
        for p in _grouped(buffer):
            yield p
        raise
    for p in _grouped(buffer):
        yield p


def _grouped(pairs: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    groups: dict[Any, list[tuple[int, Any]]] = {}
    for n, (seq, obj) in enumerate(pairs):
        key = evidence_key(obj)
        groups.setdefault(("own", n) if key is None else key, []).append((seq, obj))
    return [p for group in groups.values() for p in group]


class FirstOfSource:
    """Later items of a source wait until the first item of that source has been judged.

    `claim(obj)` is called in feed order: it returns (the event to set when this item, a source's
    first, is judged, or None; the event this item, a later one, must wait for, or None). The wait
    is spent outside the concurrency slots (`Slots`, see `judging._feed`): a slot held while
    waiting is a slot the provider is not answering in.
    """

    def __init__(self, keep: int = 4 * WINDOW) -> None:
        self._done: dict[str, asyncio.Event] = {}
        self._keep = keep

    def claim(self, obj: Any) -> tuple[asyncio.Event | None, asyncio.Event | None]:
        key = evidence_key(obj)
        if key is None:
            return None, None
        event = self._done.get(key)
        if event is not None:
            return None, (None if event.is_set() else event)
        if len(self._done) >= self._keep:  # bounded memory: forget finished sources
            self._done = {k: e for k, e in self._done.items() if not e.is_set()}
        event = self._done[key] = asyncio.Event()
        return event, None


class Slots:
    """`limit` concurrency slots, handed out in order, urgent waiters first (a source's later items,
    once their first is judged, go before new sources: they follow it while its prefix is cached).
    A waiter is a future that is resolved when it has been given a slot."""

    def __init__(self, limit: int) -> None:
        self.free = limit
        self.urgent: deque[asyncio.Future[None]] = deque()
        self.normal: deque[asyncio.Future[None]] = deque()

    def _dispatch(self) -> None:
        while self.free > 0 and (queue := self.urgent or self.normal):
            fut = queue.popleft()
            if not fut.done():
                self.free -= 1
                fut.set_result(None)

    def waiter(self) -> asyncio.Future[None]:
        """A future to hand to `wake` later and to `wait` for."""
        return asyncio.get_running_loop().create_future()

    def wake(self, futures: list[asyncio.Future[None]]) -> None:
        """These waiters now want a slot, before any normal waiter."""
        self.urgent.extend(futures)
        self._dispatch()

    async def acquire(self) -> None:
        fut = self.waiter()
        self.normal.append(fut)
        self._dispatch()
        await self.wait(fut)

    async def wait(self, fut: asyncio.Future[None]) -> None:
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # given a slot, then cancelled: give it back
                self.release()
            raise

    def release(self) -> None:
        self.free += 1
        self._dispatch()
