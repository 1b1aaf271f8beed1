"""Issue 8: judging many items through a RunStore's cache from the sync facade failed with an SQLite
thread error: the store opened in the caller's thread was used from the facade's background loop
thread. Now: `judge_many(Cached(judge, store), items)`."""

from judgeflow import Judge, RunStore, judge_many
from judgeflow.runs.cache import Cached

ITEMS = [
    {"id": "a", "question": "Capital of France?", "answer": "Paris is the capital of France.",
     "reference": "Paris is the capital of France."},
    {"id": "b", "question": "Capital of Russia?", "answer": "The capital of Russia is Saint Petersburg.",
     "reference": "Moscow is the capital of Russia."},
]


def test_judge_many_with_a_store_uses_and_fills_the_cache(tmp_path):
    store = RunStore(tmp_path / "runs.db")
    judge = Judge("baseline/lexical")
    first = judge_many(Cached(judge, store), ITEMS)
    assert [j.id for j in first] == ["a", "b"] and not any(j.cached for j in first)
    second = judge_many(Cached(judge, store), ITEMS)
    assert [j.cached for j in second] == [True, True]
    assert [j.label for j in second] == [j.label for j in first]
