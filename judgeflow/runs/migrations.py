"""The run store's schema as numbered steps, applied in order when a store is opened for writing
(simonw/llm's `migrations.py` pattern).

    version = migrate(db)   # every step after the store's own (meta.schema); returns the new one

A store records the last step it ran as `meta.schema`. Each step runs once, in its own write
transaction together with the new number (a crash leaves the store at the step before, never half
way; two processes opening one old store migrate it once: the number is read again under the lock).
A store from a newer judgeflow (a number past the last step) is refused, never written into.
Steps only add: an older store is readable as it is (`runs list`, `runs show` open it read-only).

A new step: a function `_NNN_what(db)` appended to STEPS (never edit or reorder a released one).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

__all__ = ["STEPS", "SCHEMA_VERSION", "migrate", "schema_of"]


def _001_runs_results_cache(db: sqlite3.Connection) -> None:
    """judgeflow 0.2.0's store: runs, their per-item results, the response cache."""
    for sql in (
        """CREATE TABLE IF NOT EXISTS runs (
            run_id TEXT PRIMARY KEY, created REAL NOT NULL, status TEXT NOT NULL, input_path TEXT,
            input_sha TEXT, output_path TEXT, total INTEGER, settings TEXT NOT NULL,
            command TEXT)""",
        """CREATE TABLE IF NOT EXISTS results (
            run_id TEXT NOT NULL, item_id TEXT NOT NULL, seq INTEGER NOT NULL, status TEXT NOT NULL,
            judgment TEXT NOT NULL, PRIMARY KEY (run_id, item_id))""",
        "CREATE INDEX IF NOT EXISTS results_seq ON results (run_id, seq)",
        "CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, judgment TEXT NOT NULL, "
        "created REAL NOT NULL)",
    ):
        db.execute(sql)


def _002_batch_ledger(db: sqlite3.Connection) -> None:
    """The batch ledger's tables (0.2.0 made them when a batch first ran, and carried the tables of
    older stores over each time it opened): made here once, the older `batches` and `replies` rows
    carried over into them (jobs per stage; replies per run, ok when the HTTP status was 2xx)."""
    for sql in (
        """CREATE TABLE IF NOT EXISTS batch_jobs (
            run_id TEXT NOT NULL, tag TEXT NOT NULL, round INTEGER NOT NULL, part INTEGER NOT NULL,
            provider TEXT NOT NULL, batch_id TEXT, status TEXT NOT NULL, created REAL NOT NULL,
            keys TEXT NOT NULL,
            PRIMARY KEY (run_id, tag))""",
        """CREATE TABLE IF NOT EXISTS batch_replies (
            run_id TEXT NOT NULL, key TEXT NOT NULL, reply TEXT NOT NULL, ok INTEGER NOT NULL,
            attempts INTEGER NOT NULL, final INTEGER NOT NULL, PRIMARY KEY (run_id, key))""",
        "CREATE TABLE IF NOT EXISTS batch_items (run_id TEXT NOT NULL, item_id TEXT NOT NULL, "
        "PRIMARY KEY (run_id, item_id))",
    ):
        db.execute(sql)
    old = {
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name IN ('batches', 'replies')"
        )
    }
    if "batches" in old:
        db.execute(
            "INSERT OR IGNORE INTO batch_jobs SELECT run_id, 'stage-' || stage, stage, 1, "
            "provider, batch_id, status, created, '[]' FROM batches"
        )
        db.execute("DELETE FROM batches")
    if "replies" in old:
        db.execute(
            "INSERT OR IGNORE INTO batch_replies SELECT run_id, key, reply, "
            "CAST(json_extract(reply, '$.status') BETWEEN 200 AND 299 AS INTEGER), 1, 0 "
            "FROM replies"
        )
        db.execute("DELETE FROM replies")


#: every step, in order: step n is STEPS[n - 1]
STEPS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _001_runs_results_cache,
    _002_batch_ledger,
)
#: the schema a store has once every step ran
SCHEMA_VERSION = len(STEPS)


class NewerSchema(Exception):
    """The store was written by a newer judgeflow (its schema number is past the last step)."""


def schema_of(db: sqlite3.Connection) -> int | None:
    """The store's schema number (None: a new file, no mark yet).

    Raises:
        NewerSchema: a number past SCHEMA_VERSION, or not a number (the text, cut, is its message).
    """
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "meta" not in tables:
        return None
    row = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if row is None:
        return None
    text = str(row[0]).strip()
    if not text.isdigit() or int(text) > SCHEMA_VERSION or int(text) < 1:
        raise NewerSchema(text[:40])
    return int(text)


def migrate(db: sqlite3.Connection) -> int:
    """Run every step after the store's own, each in one write transaction with its number.
    `db` is in autocommit mode (isolation_level=None). Returns the store's schema (SCHEMA_VERSION).

    Raises:
        NewerSchema: the store is from a newer judgeflow.
        sqlite3.Error: a step failed (rolled back).
    """
    with_mark = schema_of(db)
    if with_mark == SCHEMA_VERSION:  # the common case: no write lock taken
        return with_mark
    while True:
        db.execute(
            "BEGIN IMMEDIATE"
        )  # one writer: another process migrating waits here, then sees its work
        try:
            db.execute(
                "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            done = schema_of(db) or 0
            if done >= SCHEMA_VERSION:
                db.execute("COMMIT")
                return done
            STEPS[done](db)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(done + 1),))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
