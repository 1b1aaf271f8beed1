"""The SQLite run store: atomic per-item records, input order, cache, and clear errors."""

from __future__ import annotations

import sqlite3

import pytest

from judgeflow import Judgment
from judgeflow.cli import main
from judgeflow.runs.store import RunStore, StoreError


def test_results_come_back_in_input_order_after_reopening(tmp_path) -> None:
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run = store.start_run(settings={"model": "m"}, total=3)
        for seq, item_id in [(2, "c"), (0, "a"), (1, "b")]:
            store.record(run, seq, Judgment(id=item_id, label=0))
    with RunStore(path) as store:
        assert [j.id for j in store.results(run)] == ["a", "b", "c"]
        assert store.done_ids(run) == {"a", "b", "c"}
        assert store.get_run(run).status == "running"


def test_recording_an_item_twice_keeps_one_row(tmp_path) -> None:
    with RunStore(tmp_path / "s.sqlite") as store:
        run = store.start_run(settings={})
        store.record(run, 0, Judgment(id="a", label=None, status="unscored"))
        store.record(run, 0, Judgment(id="a", label=1))
        assert [(j.id, j.label) for j in store.results(run)] == [("a", 1)]


def test_only_judged_results_enter_the_cache(tmp_path) -> None:
    with RunStore(tmp_path / "s.sqlite") as store:
        run = store.start_run(settings={})
        store.record(run, 0, Judgment(id="a", label=1), cache_key="k1")
        store.record(run, 1, Judgment(id="b", label=None, status="unscored", error="503"), cache_key="k2")
        assert store.cached("k1") is not None and store.cached("k1").label == 1
        assert store.cached("k2") is None


def test_corrupted_store_file_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "runs.sqlite"
    path.write_bytes(b"this is not a sqlite database at all" * 100)
    with pytest.raises(StoreError, match="corrupted.*new --store path"):
        RunStore(path)


def test_cli_reports_a_corrupted_store_in_one_line(tmp_path, capsys) -> None:
    store = tmp_path / "runs.sqlite"
    store.write_bytes(b"\x00garbage" * 500)
    items = tmp_path / "in.jsonl"
    items.write_text('{"id": "a", "answer": "x", "reference": "x"}\n')
    code = main(["run", str(items), "-o", str(tmp_path / "out.jsonl"), "--store", str(store), "--no-progress"])
    assert code == 2
    err = capsys.readouterr().err
    assert "corrupted" in err and str(store.name) in err and "Traceback" not in err


def test_unknown_run_id_names_the_latest_runs(tmp_path) -> None:
    with RunStore(tmp_path / "s.sqlite") as store:
        run = store.start_run(settings={})
        with pytest.raises(StoreError, match=run):
            store.get_run("nope")


def test_a_killed_writer_leaves_no_torn_row(tmp_path) -> None:
    """A transaction that never commits (a kill mid-write) leaves the earlier rows intact."""
    path = tmp_path / "s.sqlite"
    with RunStore(path) as store:
        run = store.start_run(settings={})
        store.record(run, 0, Judgment(id="a", label=0))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.execute("INSERT INTO results VALUES (?, 'b', 1, 'judged', '{\"id\": \"b\", \"lab')", (run,))
    db.close()  # closed without COMMIT: as if killed here
    with RunStore(path) as store:
        assert [j.id for j in store.results(run)] == ["a"]


def test_a_full_disk_is_a_clear_error_and_keeps_what_was_saved(tmp_path) -> None:
    path = tmp_path / "runs.sqlite"
    with RunStore(path) as store:
        run = store.start_run(settings={})
        store.record(run, 0, Judgment(id="a", label=0))
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages}")  # SQLite now answers SQLITE_FULL
        with pytest.raises(StoreError, match="disk full.*saved.*--resume"):
            for n in range(1, 200):
                store.record(run, n, Judgment(id=f"b{n}", label=1, reason="x" * 2000))
    with RunStore(path) as store:
        ids = [j.id for j in store.results(run)]
        assert ids[0] == "a" and len(ids) == len(set(ids))


def test_duplicate_ids_in_the_input_are_refused(tmp_path, capsys) -> None:
    items = tmp_path / "in.jsonl"
    items.write_text('{"id": "a", "answer": "x", "reference": "x"}\n{"id": "a", "answer": "y", "reference": "y"}\n')
    code = main(["run", str(items), "-o", str(tmp_path / "out.jsonl"), "--store", str(tmp_path / "s.sqlite"),
                 "--no-progress"])
    assert code == 2
    assert "item id 'a' is used on line 1 and line 2" in capsys.readouterr().err
