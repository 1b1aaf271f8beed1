"""#49: the run store migrates an older schema (numbered steps, runs/migrations.py), never
refuses it.

`data/store-0.2.0.sql` is a store written by judgeflow 0.2.0 (commit 76804db): `judgeflow run
in.jsonl -o out.jsonl --model baseline/lexical` over the four items below, then cut to two results
and marked interrupted (as a kill leaves it), its cache emptied, dumped with sqlite3's iterdump;
{DIR} stands for the directory it ran in.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from judgeflow.cli import main
from judgeflow.errors import StoreError
from judgeflow.runs import migrations
from judgeflow.runs.migrations import SCHEMA_VERSION, migrate, schema_of
from judgeflow.runs.store import RunStore

DUMP = Path(__file__).parent / "data" / "store-0.2.0.sql"
ITEMS = "".join(
    json.dumps(
        {
            "id": f"q{n}",
            "question": "Capital of France?",
            "answer": f"Paris is the capital of France, founded {n} BC.",
            "source": "Paris is the capital of France.",
        },
        separators=(",", ":"),
    )
    + "\n"
    for n in range(1, 5)
)


def old_store(tmp_path: Path) -> Path:
    (tmp_path / "in.jsonl").write_text(ITEMS, encoding="utf-8")
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)
    db.executescript(DUMP.read_text(encoding="utf-8").replace("{DIR}", str(tmp_path)))
    db.close()
    return path


def tables(path: Path) -> set[str]:
    return {
        r[0]
        for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")
    }


def test_a_store_written_by_0_2_0_migrates_and_resumes(tmp_path: Path, capsys) -> None:
    path = old_store(tmp_path)
    assert hashlib.sha256(ITEMS.encode()).hexdigest() in DUMP.read_text(
        encoding="utf-8"
    )  # the same input
    assert schema_of(sqlite3.connect(path)) == 1 and "batch_jobs" not in tables(path)
    with RunStore(path, readonly=True) as store:  # read as it is, not migrated
        (run,) = store.runs()
        assert run.status == "interrupted" and [j.id for j in store.results(run.run_id)] == [
            "q1",
            "q2",
        ]
    assert schema_of(sqlite3.connect(path)) == 1
    out = tmp_path / "out.jsonl"
    argv = [
        "run",
        str(tmp_path / "in.jsonl"),
        "-o",
        str(out),
        "--model",
        "baseline/lexical",
        "--store",
        str(path),
        "--no-progress",
        "--resume",
    ]
    assert main(argv) == 0
    assert f"resuming run {run.run_id}: 2 of 4 rows already done" in capsys.readouterr().err
    assert [json.loads(line)["status"] for line in out.read_text().splitlines()] == ["judged"] * 4
    assert schema_of(sqlite3.connect(path)) == SCHEMA_VERSION and {
        "batch_jobs",
        "batch_replies",
    } <= tables(path)
    with RunStore(path) as store:
        (again,) = store.runs()
        assert (
            again.run_id == run.run_id and again.status == "done" and store.count(run.run_id) == 4
        )


def test_each_step_runs_once_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    steps = tuple(lambda db, s=s: (ran.append(s.__name__), s(db))[1] for s in migrations.STEPS)
    monkeypatch.setattr(migrations, "STEPS", steps)
    db = sqlite3.connect(old_store(tmp_path), isolation_level=None)
    assert migrate(db) == SCHEMA_VERSION == len(migrations.STEPS) == 2
    assert migrate(db) == SCHEMA_VERSION
    assert ran == [
        "_002_batch_ledger"
    ]  # the store had step 1 (0.2.0's schema); each later step once
    new = sqlite3.connect(tmp_path / "new.sqlite", isolation_level=None)
    assert migrate(new) == SCHEMA_VERSION and ran == [
        "_002_batch_ledger",
        "_001_runs_results_cache",
        "_002_batch_ledger",
    ]


def test_a_failing_step_leaves_the_store_at_the_step_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(migrations, "STEPS", (migrations.STEPS[0], broken))
    path = old_store(tmp_path)
    with pytest.raises(StoreError, match="disk I/O error"):
        RunStore(path)
    assert schema_of(sqlite3.connect(path)) == 1 and "half_done" not in tables(path)


@pytest.mark.parametrize("mark", ["3", "99", "x"])
def test_a_store_from_a_newer_judgeflow_is_refused_and_left_alone(
    tmp_path: Path, mark: str
) -> None:
    path = old_store(tmp_path)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value=? WHERE key='schema'", (mark,))
    db.commit()
    before = tables(path)
    for readonly in (False, True):
        with pytest.raises(
            StoreError, match=f"{path}: run store schema '{mark}' is newer than this judgeflow's 2"
        ):
            RunStore(path, readonly=readonly)
    assert tables(path) == before
