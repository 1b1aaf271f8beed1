"""The Python API: `Judge(model=...)` with an async core and a thin sync facade.

    judge = Judge(model="openai/gpt-4o-mini")          # or "baseline/lexical" offline
    result = judge.judge({"id": "q1", "question": q, "answer": a, "reference": r})
    async for result in judge.ajudge_many(items, concurrency=16): ...
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import warnings
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .registry import Backend, make_backend
from .coverage import Coverage, requirement_checker
from .criteria import Criterion, load_criterion
from .errors import ConfigError, InvalidItemError
from .items import MODES, ColumnMap, Item, check_column_map, passthrough
from .languages import item_language
from .results import Judgment
from .scheduling import FirstOfSource, by_evidence

if TYPE_CHECKING:  # types only: the store is passed in, never imported at run time
    from .runs.store import RunStore
    from .workflow import JudgeContext, Strategy

ItemLike = Item | Mapping[str, Any] | InvalidItemError
DEFAULT_CONCURRENCY = 16


def as_item(obj: ItemLike, column_map: ColumnMap | None = None) -> Item | InvalidItemError:
    """An Item from an Item, a dict (aliases, and `column_map`'s columns, accepted), or pass an
    InvalidItemError through."""
    if isinstance(obj, (Item, InvalidItemError)):
        return obj
    try:
        return Item.from_record(obj, column_map=column_map)
    except InvalidItemError as e:
        return e


def invalid_judgment(err: InvalidItemError, *, model: str | None = None) -> Judgment:
    """The error row for an unusable input row: label None, status invalid, the message kept."""
    item_id = err.item_id or (f"line-{err.line}" if err.line else "unknown")
    human, extra = passthrough(err.record) if err.record is not None else (None, {})
    if err.line:
        extra.setdefault("line", err.line)
    return Judgment.invalid(item_id, str(err), model=model, extra=extra, human_label=human)


class Judge:
    """A configured judge: a backend (model), a routing mode or fixed criterion, and a strategy."""

    def __init__(
        self,
        model: str | None = None,
        *,
        backend: Backend | None = None,
        mode: str | None = None,
        criterion: str | Path | Criterion | None = None,
        strategy: Strategy = "graph",
        concurrency: int = DEFAULT_CONCURRENCY,
        keep_trace: bool = True,
        coverage: bool = False,
        column_map: ColumnMap | None = None,
        **client_kwargs: Any,
    ) -> None:
        """
        Args:
            model: "provider/model" (openai/..., anthropic/..., ollama/..., baseline/lexical);
                defaults to $JUDGEFLOW_MODEL, else the offline baseline/lexical judge.
            backend: a ready backend instead of `model`.
            mode: "auto" (route by fields), "factual", "faithfulness" or "spec".
            criterion: a shipped criterion name, a path to a .toml file, or a Criterion.
            strategy: "graph" (decompose, then check all claims in one call) or "single" (one call).
            concurrency: items judged at once by `ajudge_many`.
            keep_trace: keep rendered prompts and raw replies on each Judgment.
            coverage: requirement coverage for items judged by a spec criterion: the spec is
                split into requirements (once per spec) and each is marked against the output;
                an unmet requirement makes the label 1 (`Judgment.requirements`).
            column_map: item field -> the column of a dict item holding it, for your own names
                (`{"reference": "gold_text"}`); a misspelt field is refused with the nearest one.
            **client_kwargs: passed to `llm.make_client` (base_url, api_key, temperature, ...).
        """
        if mode not in (None, "auto", *MODES):
            raise ConfigError(f"mode {mode!r} is not one of: auto, {', '.join(MODES)}")
        if strategy not in ("graph", "single"):
            raise ConfigError(f"strategy {strategy!r} is not one of: graph, single")
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        self.backend = backend or make_backend(model, **client_kwargs)
        self.criterion = criterion if criterion is None or isinstance(criterion, Criterion) else load_criterion(criterion)
        self.mode = None if mode == "auto" else mode
        self.strategy: Strategy = strategy
        self.concurrency = concurrency
        self.keep_trace = keep_trace
        self.coverage = Coverage(requirement_checker(self.backend)) if coverage else None
        self.column_map = check_column_map(column_map)
        self._compiled: Any = None

    @property
    def _graph(self) -> Any:
        """The compiled workflow, built on the first item judged: LangGraph takes about a second to
        import, and a run served entirely from the response cache never needs it."""
        if self._compiled is None:
            from .workflow import build_graph

            self._compiled = build_graph()
        return self._compiled

    @property
    def model(self) -> str:
        return self.backend.model

    def context(self) -> JudgeContext:
        from .workflow import JudgeContext

        return JudgeContext(backend=self.backend, strategy=self.strategy, criterion=self.criterion, mode=self.mode,
                            coverage=self.coverage)

    async def aclose(self) -> None:
        """Close the provider's HTTP connections before the event loop that judged ends (they
        belong to it); the Judge stays usable and reconnects on its next call. `async with
        Judge(...) as judge:` does this on exit. The offline judges hold nothing to close."""
        backend, seen = self.backend, set()
        while backend is not None and id(backend) not in seen:  # through wrappers (passages) to the model
            seen.add(id(backend))
            close = getattr(backend, "aclose", None)
            if close is not None:
                await close()
                return
            backend = getattr(backend, "inner", None)

    async def __aenter__(self) -> Judge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def ajudge(self, item: ItemLike) -> Judgment:
        """Judge one item. Bad input gives an `invalid` judgment; judge failures an `unscored` one."""
        it = as_item(item, self.column_map)
        if isinstance(it, InvalidItemError):
            return invalid_judgment(it, model=self.model)
        from .workflow import JudgeState

        out = await self._graph.ainvoke(JudgeState(item=it), context=self.context())
        state = JudgeState.model_validate(out)
        extra = it.extra
        if state.status == "invalid" and it.where:  # a routing error: name the row, as read errors do
            state.error = f"{it.where}: {state.error}"
            if it.line is not None:
                extra = {**extra, "line": it.line}
        return Judgment(
            id=it.id,
            label=state.label,
            status=state.status,
            criterion=state.criterion.name if state.criterion else None,
            routed_by=state.routed_by,
            reason=state.reason,
            claims=state.results,
            requirements=state.requirements,
            error=state.error,
            usage=state.usage,
            model=self.model,
            structured=getattr(self.backend, "structured", None),
            strategy=self.strategy,
            language=_language(it),
            human_label=it.label,
            extra=extra,
            trace=state.trace if self.keep_trace else [],
        )

    async def ajudge_many(
        self,
        items: Iterable[ItemLike] | AsyncIterable[ItemLike],
        *,
        concurrency: int | None = None,
        store: RunStore | None = None,
        run: str | None = None,
        cache: bool = True,
    ) -> AsyncIterator[Judgment]:
        """Judge many items with bounded concurrency, yielding each result as it completes.

        `store=`/`run=`/`cache=` (deprecated here, kept for one release) hand the run to
        `judgeflow.runs.runner.ajudge_many(judge, items, store=..., run=...)`, which owns the
        resume and the cache.
        """
        indexed = self.ajudge_indexed(items, concurrency=concurrency, store=store, run=run, cache=cache)
        async with contextlib.aclosing(indexed):  # stopping early stops the judging too
            async for _, j in indexed:
                yield j

    async def ajudge_indexed(
        self,
        items: Iterable[ItemLike] | AsyncIterable[ItemLike],
        *,
        concurrency: int | None = None,
        store: RunStore | None = None,
        run: str | None = None,
        cache: bool = True,
    ) -> AsyncIterator[tuple[int, Judgment]]:
        """Judge many items with bounded concurrency, yielding (input position, result) as each completes.

        Args:
            items: Items, dicts, or InvalidItemErrors (from `read_items`), sync or async iterable.
            concurrency: items in flight at once (default: the judge's `concurrency`).
            store, run, cache: deprecated here: see `judgeflow.runs.runner.judge_indexed`.
        """
        limit = concurrency or self.concurrency
        if limit < 1:
            raise ConfigError(f"concurrency must be at least 1, got {limit}")
        if store is not None or run is not None:
            if store is None:
                raise ConfigError("ajudge_many(run=...) needs store=RunStore(...)")
            _deprecated_store()
            delegated = store.judge_indexed(self, items, run=run, cache=cache, concurrency=limit)
            async with contextlib.aclosing(delegated):
                async for r in delegated:
                    yield r
            return
        queue: asyncio.Queue[tuple[int, Judgment] | Exception | None] = asyncio.Queue()
        sem = asyncio.Semaphore(limit)
        failed: list[BaseException] = []  # the first unexpected failure stops the feed; raised once, below

        firsts = FirstOfSource()

        async def one(seq: int, it: ItemLike) -> None:
            try:
                async with firsts.turn(it):  # a source's later items wait for its first (the provider's cache)
                    judged = await self.ajudge(it)
                await queue.put((seq, judged))
            except Exception as e:  # noqa: BLE001 - e.g. ProviderUnavailable or a failed commit: ends the run at once
                failed.append(e)  # stops the feed
                await queue.put(e)
            finally:
                sem.release()

        async def feed() -> None:
            tasks: set[asyncio.Task[None]] = set()
            try:
                async for seq, obj in by_evidence(_as_items(_aenumerate(items), getattr(self, "column_map", None))):  # shared sources adjacent
                    if failed:
                        break
                    await sem.acquire()
                    if failed:  # failed while waiting for a slot: send nothing more
                        sem.release()
                        break
                    t = asyncio.create_task(one(seq, obj))
                    tasks.add(t)
                    t.add_done_callback(tasks.discard)
                if tasks:
                    await asyncio.gather(*tasks)
            finally:
                for t in tasks:
                    t.cancel()
                await queue.put(None)

        feeder = asyncio.create_task(feed())
        try:
            while (result := await queue.get()) is not None:
                if isinstance(result, Exception):
                    raise result
                yield result
            await feeder  # surface unexpected errors from the feeder or a task
            if failed:
                raise failed[0]
        finally:
            if not feeder.done():
                feeder.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await feeder

    def judge(self, item: ItemLike) -> Judgment:
        """Sync facade over `ajudge`."""
        return _run(self.ajudge(item))

    def judge_many(
        self, items: Iterable[ItemLike], *, concurrency: int | None = None, store: RunStore | None = None
    ) -> list[Judgment]:
        """Sync facade: judge all items concurrently, in input order.

        `store=` (deprecated here, kept for one release) is `judgeflow.runs.runner.judge_many(judge,
        items, store=...)`: results served from and written to the store's cache.
        """
        items = list(items)

        async def collect() -> list[tuple[int, Judgment]]:
            return [r async for r in self.ajudge_indexed(items, concurrency=concurrency, store=store)]

        return [j for _, j in sorted(_run(collect()), key=lambda r: r[0])]  # input order, even for repeated ids


def _deprecated_store() -> None:
    warnings.warn("Judge.ajudge_many/judge_many(store=..., run=...) is deprecated; use "
                  "judgeflow.runs.runner.ajudge_many/judge_many(judge, items, store=..., run=...)",
                  DeprecationWarning, stacklevel=4)


async def _as_items(pairs: AsyncIterator[tuple[int, ItemLike]],
                    column_map: ColumnMap | None = None) -> AsyncIterator[tuple[int, ItemLike]]:
    async for seq, obj in pairs:
        yield seq, as_item(obj, column_map)


async def _aenumerate(items: Iterable[ItemLike] | AsyncIterable[ItemLike]) -> AsyncIterator[tuple[int, ItemLike]]:
    if isinstance(items, AsyncIterable):
        n = 0
        async for obj in items:
            yield n, obj
            n += 1
    else:
        for n, obj in enumerate(items):
            yield n, obj


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


def _language(item: Item) -> str | None:
    given = item.extra.get("language")
    return given if isinstance(given, str) and given else item_language(item)


def _run(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, on the shared background loop."""
    future = asyncio.run_coroutine_threadsafe(coro, _background_loop())
    try:
        return future.result()
    except KeyboardInterrupt:
        future.cancel()
        raise


def judge(item: ItemLike, *, model: str | None = None, **kwargs: Any) -> Judgment:
    """Judge one item with a one-off `Judge(model=..., **kwargs)`."""
    return Judge(model, **kwargs).judge(item)
