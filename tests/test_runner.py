"""The store- and cache-aware loop lives in runs/runner.py; the Judge knows no store; one cache key."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from judgeflow import Judge, RunStore
from judgeflow.items import Item
from judgeflow.runs import runner
from judgeflow.runs.cache import FileCache, cache_key
from judgeflow.testing import JudgmentCache

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


def test_runner_resumes_and_serves_cache_hits(tmp_path):
    judge = Judge("baseline/lexical")
    with RunStore(tmp_path / "s.db") as store:
        run = store.start_run(settings={})

        async def go(run_id: str | None) -> list[tuple[int, object]]:
            return [(n, j) async for n, j in runner.judge_indexed(judge, ITEMS, store=store, run=run_id)]

        first = asyncio.run(go(run))
        assert sorted(n for n, _ in first) == [0, 1, 2]
        assert [j.id for j in store.results(run)] == ["a", "b", "bad"]
        assert asyncio.run(go(run)) == []  # everything done: resume skips all
        other = store.start_run(settings={})
        again = dict(asyncio.run(go(other)))
        assert [again[0].cached, again[1].cached, again[2].cached] == [True, True, False]  # invalid rows never cached
        assert again[2].status == "invalid"


def test_runner_needs_a_store_for_a_run():
    with pytest.raises(Exception, match="store"):
        asyncio.run(anext(runner.judge_indexed(Judge("baseline/lexical"), ITEMS, run="x")))


def test_the_old_store_argument_still_works_with_a_deprecation_warning(tmp_path):
    with RunStore(tmp_path / "s.db") as store, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = Judge("baseline/lexical").judge_many(ITEMS[:2], store=store)
        assert [j.id for j in out] == ["a", "b"]
        assert any(issubclass(w.category, DeprecationWarning) for w in caught)
        assert [j.cached for j in runner.judge_many(Judge("baseline/lexical"), ITEMS[:2], store=store)] == [True, True]


def test_one_cache_key_for_the_store_and_the_pytest_file_cache(tmp_path):
    judge = Judge("baseline/lexical")
    item = Item.from_record(ITEMS[0])
    assert JudgmentCache is FileCache
    assert FileCache(tmp_path).key(judge, item) == cache_key(judge, item)
    # only the judged content matters, not the id or extra fields
    assert cache_key(judge, item) == cache_key(judge, item.model_copy(update={"id": "z", "extra": {"k": 1}}))
    assert cache_key(judge, item) != cache_key(Judge("baseline/lexical", strategy="single"), item)
    assert cache_key(judge, Item(id="x", answer="a")) is None  # cannot be routed
