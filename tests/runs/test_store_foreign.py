"""Read commands never write to a store that is not theirs (issue 46, F25)."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from judgeflow.cli import main
from judgeflow.errors import StoreError
from judgeflow.runs.store import RunStore


def _foreign(path):
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO customers VALUES (1, 'Ada')")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_runs_list_refuses_another_applications_sqlite_file_and_leaves_it_untouched(tmp_path, capsys):
    app = tmp_path / "app.sqlite"
    before = _foreign(app)
    assert main(["runs", "list", "--store", str(app)]) == 2
    assert "not a judgeflow run store" in capsys.readouterr().err
    assert hashlib.sha256(app.read_bytes()).hexdigest() == before
    with sqlite3.connect(app) as db:
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["customers"]


def test_a_writer_refuses_a_foreign_sqlite_file_too(tmp_path):
    app = tmp_path / "app.sqlite"
    before = _foreign(app)
    with pytest.raises(StoreError, match="not a judgeflow run store"):
        RunStore(app)
    assert hashlib.sha256(app.read_bytes()).hexdigest() == before


def test_a_read_only_store_reads_and_never_writes(tmp_path):
    path = tmp_path / "s.sqlite"
    RunStore(path).close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    with RunStore(path, readonly=True) as store:
        assert store.runs() == []
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    with pytest.raises(StoreError, match="no run store"):
        RunStore(tmp_path / "none.sqlite", readonly=True)
    assert not (tmp_path / "none.sqlite").exists()
