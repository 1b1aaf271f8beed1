"""`runs.run.Run` judges a run's rows through the one cache (`runs.cache.Cached`), commits each, resumes;
the Judge knows no store; one cache key (the judging's fingerprint)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator

import pytest

from judgeflow import Judge, RunStore, judge_many
from judgeflow.items import Item
from judgeflow.runs import run as run_module
from judgeflow.runs.cache import Cached, FileCache
from judgeflow.runs.run import Run

ITEMS = [
    {"id": "a", "question": "Capital of France?", "answer": "Paris is the capital of France.",
     "reference": "Paris is the capital of France."},
    {"id": "b", "question": "Capital of Russia?", "answer": "The capital of Russia is Saint Petersburg.",
     "reference": "Moscow is the capital of Russia."},
    {"id": "bad", "answer": "no reference"},
]


def test_the_judge_holds_no_store_or_cache():
    assert not hasattr(Judge, "cache_key") and not hasattr(Judge, "_from_cache")
    judge = Judge("baseline/lexical")
    assert not any("store" in k or "cache" in k for k in vars(judge))


def test_a_run_resumes_and_serves_cache_hits(tmp_path):
    judge = Judge("baseline/lexical")
    with RunStore(tmp_path / "s.db") as store:
        run = store.start_run(settings={})

        async def go(run_id: str) -> dict[str, object]:
            return {j.id: j async for j in Run.attach(store, run_id).judge(judge, ITEMS)}

        first = asyncio.run(go(run))
        assert sorted(first) == ["a", "b", "bad"]
        assert [j.id for j in store.results(run)] == ["a", "b", "bad"]
        assert asyncio.run(go(run)) == {}  # everything done: resume skips all
        other = store.start_run(settings={})
        again = asyncio.run(go(other))
        assert [again["a"].cached, again["b"].cached, again["bad"].cached] == [True, True, False]  # invalid: never cached
        assert again["bad"].status == "invalid"


def test_the_cache_is_one_wrapper_for_the_store_and_the_pytest_file_cache(tmp_path):
    judge = Judge("baseline/lexical")
    with RunStore(tmp_path / "s.db") as store:
        for where in (store, FileCache(tmp_path / "files")):
            first = judge_many(Cached(judge, where), ITEMS[:2])
            again = judge_many(Cached(judge, where), ITEMS[:2])
            assert [j.cached for j in first] == [False, False] and [j.cached for j in again] == [True, True]
            assert [j.label for j in again] == [j.label for j in first]
            assert [j.cached for j in judge_many(Cached(judge, where, read=False), ITEMS[:2])] == [False, False]


def test_one_cache_key_the_judges_fingerprint():
    judge = Judge("baseline/lexical")
    item = Item.from_record(ITEMS[0])
    # only the judged content matters, not the id or extra fields
    assert judge.fingerprint(item) == judge.fingerprint(item.model_copy(update={"id": "z", "extra": {"k": 1}}))
    assert judge.fingerprint(item) != Judge("baseline/lexical", strategy="single").fingerprint(item)
    assert judge.fingerprint(Item(id="x", answer="a")) is None  # cannot be routed
    # how the criterion was chosen is not in the key: routed, or given, the same criterion shares it
    # (`tune` and `run --criterion` reuse what `run` paid for); another criterion does not
    assert judge.fingerprint(item) == Judge("baseline/lexical", criterion="factual_correctness").fingerprint(item)
    assert judge.fingerprint(item) != Judge("baseline/lexical", criterion="reference_faithfulness").fingerprint(item)


def _factual(n: int, start: int = 0) -> list[dict[str, str]]:
    return [{"id": f"i{k}", "question": f"Capital number {k}?", "answer": f"The capital is city {k}.",
             "reference": f"City {k} is the capital."} for k in range(start, start + n)]


def _committed(store: RunStore, run: str) -> set[str]:
    return {j.id for j in store.results(run)}


def test_cache_hits_are_committed_in_batches_and_before_they_are_yielded(tmp_path, monkeypatch):
    """A re-run served from the cache commits its rows HIT_BATCH at a time (not one transaction per
    row), and every row the caller sees is already in the store; a judged row is committed at once,
    with the hits waiting before it."""
    judge = Judge("baseline/lexical")
    monkeypatch.setattr(run_module, "HIT_BATCH", 4)
    items = _factual(10)
    with RunStore(tmp_path / "s.db") as store:
        first = store.start_run(settings={})
        judge_many(Cached(judge, store), items)  # fills the cache (no run)
        commits: list[list[str]] = []
        record_many = store.record_many

        def counted(run_id, rows):
            commits.append([j.id for _, j, _ in rows])
            record_many(run_id, rows)

        monkeypatch.setattr(store, "record_many", counted)

        async def go(run_id: str, its: list[dict[str, str]]) -> list[str]:
            seen = []
            async for j in Run.attach(store, run_id).judge(judge, its):
                assert j.id in _committed(store, run_id), f"{j.id} yielded before it was committed"
                seen.append(j.id)
            return seen

        assert sorted(asyncio.run(go(first, items))) == sorted(it["id"] for it in items)
        assert [len(c) for c in commits] == [4, 4, 2]  # full batches, then the rest when the input ended
        commits.clear()
        second = store.start_run(settings={})
        mixed = [*items[:3], *_factual(1, start=50), *items[3:5]]  # i50 is not in the cache: judged
        asyncio.run(go(second, mixed))
        # the judged row is committed as soon as it is done, with the hits waiting then: 2 or 3 commits, not 6
        assert sorted(sum(commits, [])) == sorted(it["id"] for it in mixed)
        assert all(len(c) <= 4 for c in commits) and len(commits) <= 3
        assert _committed(store, second) == {it["id"] for it in mixed}


def test_hits_served_but_not_yet_committed_are_kept_when_the_run_stops(tmp_path):
    """A run that stops with cache hits waiting for their batch (here the input fails to read; Ctrl-C
    and SIGTERM leave through the same `finally`) commits them; a resume then judges nothing twice."""
    judge = Judge("baseline/lexical")
    items = _factual(20)

    def failing() -> Iterator[dict[str, str]]:
        yield from items[:5]
        raise OSError("the input broke off")

    with RunStore(tmp_path / "s.db") as store:
        judge_many(Cached(judge, store), items)
        run = store.start_run(settings={})

        async def collect(its: Iterable[dict[str, str]]) -> list[object]:
            return [j async for j in Run.attach(store, run).judge(judge, its)]

        with pytest.raises(OSError, match="broke off"):
            asyncio.run(collect(failing()))
        assert _committed(store, run) == {f"i{k}" for k in range(5)}  # fewer than HIT_BATCH: kept all the same
        again = asyncio.run(collect(items))
        assert {j.id for j in again} == {f"i{k}" for k in range(5, 20)}  # resume: only what was left
        assert all(j.cached for j in again)
