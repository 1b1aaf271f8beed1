"""The response cache: `Cached(judging, store)`, the ONE read-through, itself a `Judging`.

    judging = cached(Judge(...), store)          # each member of a panel or cascade cached too
    async for seq, j in judge_stream(judging, items): ...

The key is the judging's `fingerprint(item)` (for a Judge: backend, routed criterion, strategy,
routing settings, coverage checker and the item's judged content; for a panel or cascade: its
members' keys and its rule). A hit is served without a call (`cached=True`, no usage); a judged
result is written as soon as it is in; an unscored one is never cached. The store is a `RunStore`
(SQLite, shared by every run in it) or a `FileCache` (one JSON file a key: the pytest helpers).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ..errors import InvalidItemError
from ..io.atomic import atomic_file
from ..items import Item
from ..judging import Ensemble, ItemLike, Judging, SyncFacade, as_item
from ..results import Judgment, TraceEntry, Usage
from ..spans import with_spans


class CacheStore(Protocol):
    """Where cached results live: `runs.store.RunStore` or `FileCache`."""

    def cached(self, key: str) -> Judgment | None: ...

    def put_cache(self, key: str, judgment: Judgment) -> None: ...


class Cached(SyncFacade):
    """`judging` read through `store`: a hit is served from it, a miss judged and then stored."""

    def __init__(self, judging: Judging, store: CacheStore, *, read: bool = True, keep_trace: bool = True) -> None:
        """
        Args:
            judging: what judges a miss.
            store: where results are looked up and kept.
            read: serve hits (False: judge everything again; judged results are still stored).
            keep_trace: a hit keeps its trace (or says why it has none); False drops it.
        """
        self.inner, self.store, self.read, self.keep_trace = judging, store, read, keep_trace

    @property
    def model(self) -> str:
        return self.inner.model

    def fingerprint(self, item: Item) -> str | None:
        return self.inner.fingerprint(item)

    async def ajudge(self, item: ItemLike) -> Judgment:
        it = as_item(item)
        if isinstance(it, InvalidItemError):
            return await self.inner.ajudge(it)
        key = self.inner.fingerprint(it)
        if key is not None and self.read and (hit := self.store.cached(key)) is not None:
            served = from_cache(hit, it, model=self.inner.model, keep_trace=self.keep_trace)
            routed = getattr(self.inner, "routed_by", None)  # the key leaves out how the criterion was chosen
            why = routed(it) if callable(routed) else None
            return served.model_copy(update={"routed_by": why}) if why and hit.routed_by else served
        j = await self.inner.ajudge(it)
        if key is not None and j.status == "judged" and not j.cached:
            self.store.put_cache(key, j)
        return j

    async def aclose(self) -> None:
        await self.inner.aclose()


def cached(judging: Judging, store: CacheStore, *, read: bool = True, keep_trace: bool = True) -> Judging:
    """`judging` behind the cache, and each member of an ensemble too (so a resumed run repeats no
    member's call: every member's result is stored as soon as it is in, before the row is complete)."""
    if isinstance(judging, Ensemble):
        judging = judging.with_members(lambda m: cached(m, store, read=read, keep_trace=keep_trace))
    return Cached(judging, store, read=read, keep_trace=keep_trace)


def from_cache(hit: Judgment, item: Item, *, model: str, keep_trace: bool = True) -> Judgment:
    """A cached judgment served for `item`: its id, label and extra fields, no usage, `cached=True`."""
    trace = hit.trace if keep_trace else []
    if keep_trace and not trace:  # cached by a judge that kept no trace: say so, never an empty audit
        trace = [TraceEntry(step="cache", reply={
            "note": "served from the response cache; the run that judged it kept no trace "
                    "(judge again without the cache, e.g. --no-cache, to record one)"})]
    return with_spans(hit, item.answer).model_copy(update={
        "id": item.id, "human_label": item.label, "extra": item.extra, "cached": True, "usage": Usage(),
        "model": model, "trace": trace,
        "judges": [v.model_copy(update={"usage": Usage(), "cached": True}) for v in hit.judges] if hit.judges else None,
        "repeats": [v.model_copy(update={"usage": Usage(), "cached": True}) for v in hit.repeats] if hit.repeats else None,
    })


class FileCache:
    """Judged results as one JSON file per key in a directory (safe for parallel writers)."""

    def __init__(self, directory: str | Path) -> None:
        self.dir = Path(directory)

    def cached(self, key: str) -> Judgment | None:
        path = self.dir / f"{key}.json"
        try:
            return Judgment.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError:  # a torn or stale file: judge again and overwrite it
            return None

    def put_cache(self, key: str, judgment: Judgment) -> None:
        if judgment.status != "judged":
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        data = judgment.model_copy(update={"trace": [], "cached": False}).model_dump_json()
        with atomic_file(self.dir / f"{key}.json", durable=False) as f:
            f.write(data)
