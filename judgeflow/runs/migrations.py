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

import json
import sqlite3
from collections.abc import Callable
from typing import Any

__all__ = ["STEPS", "SCHEMA_VERSION", "current_record", "migrate", "schema_of"]


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


#: a run's own fields in a flat record (0.1.0, 0.2.0), as `RunSpec` names them
_RUN_FIELDS = (
    "input",
    "output",
    "format",
    "limit",
    "trace",
    "max_input_chars",
    "column_map",
    "delimiter",
    "turns",
    "system_prompt",
    "batch",
    "with_inputs",
    "no_cache",
    "store",
    "prices",
    "max_unscored",
    "budget",
)
#: a flat record's client options -> their `ClientConfig` names (0.1.0 records hold no judging spec)
_CLIENT = {
    "base_url": "base_url",
    "temperature": "temperature",
    "retries": "provider_retries",
    "reasks": "max_retries",
    "timeout": "timeout",
    "http_transport": "http_transport",
    "rpm": "rpm",
    "tpm": "tpm",
    "max_wait": "max_wait",
    "structured": "structured",
    "max_tokens": "max_tokens",
    "reasoning_effort": "reasoning_effort",
    "profile": "profile",
    "threshold": "threshold",
    "max_source_chars": "max_source_chars",
}


def current_record(
    record: dict[str, Any], input_path: str | None = None, output_path: str | None = None
) -> dict[str, Any]:
    """A run's record as this judgeflow keeps it: `{"spec": RunSpec JSON, "model": what judged, as
    shown, "criterion": "name@fingerprint" or None}`. A flat record (0.1.0, 0.2.0: the command
    line's settings, with the judging spec since 0.2.0) is brought forward; a current one is as it
    is. Step 3 writes this into the store; a read-only open of an older store reads through it.
    `input_path`, `output_path`: the run's (a flat record did not keep them)."""
    if "spec" in record or not (
        record.get("judging") or (record.get("model") and "strategy" in record)
    ):
        return record  # current, or no run's record (left as it is: its run cannot be resumed)
    try:
        judging = record.get("judging") or _judging_of(record)
    except (KeyError, TypeError, ValueError, AttributeError):
        return record
    spec = {
        "input": input_path,
        "output": output_path,
        **{k: record[k] for k in _RUN_FIELDS if record.get(k) is not None},
    }
    return {
        "spec": {"judging": judging, **spec},
        "model": record.get("model"),
        "criterion": record.get("criterion"),
    }


def _judging_of(flat: dict[str, Any]) -> dict[str, Any]:
    """The judging spec (JSON) a 0.1.0 record's flat settings describe."""
    client = {name: flat[k] for k, name in _CLIENT.items() if flat.get(k) is not None}
    concurrency = flat.get("concurrency") or 16

    def judge(ref: str, trace: bool = True) -> dict[str, Any]:
        model, _, url = ref.partition("@")
        return {
            "kind": "judge",
            "model": model,
            "mode": None if flat.get("mode") in (None, "auto") else flat["mode"],
            "criterion": flat.get("criterion_arg"),
            "strategy": flat.get("strategy") or "graph",
            "coverage": bool(flat.get("coverage")),
            "check_dropped": flat.get("check_dropped", True) is not False,
            "keep_trace": trace,
            "concurrency": concurrency,
            "client": {**client, **({"base_url": url} if url else {})},
        }

    e = flat.get("ensemble")
    if not e:
        one = judge(str(flat["model"]))
        k = int(flat.get("repeats") or 1)
        return one if k < 2 else {"kind": "repeats", "judging": one, "k": k, "concurrency": concurrency}
    return dict(e["judging"]) if "judging" in e else _ensemble_of(e, flat, judge, concurrency)


def _ensemble_of(e: dict[str, Any], flat: dict[str, Any], judge: Callable[..., dict[str, Any]],
                 concurrency: int) -> dict[str, Any]:
    """The panel or cascade (JSON) a 0.1.0 record's `ensemble` flags describe."""
    trace = bool(flat.get("trace"))
    common = {"keep_trace": trace, "concurrency": concurrency}
    samples, tie = int(e.get("samples") or 1), 1 if str(e.get("panel_tie", "1")) == "1" else None

    def panel(default: str | None) -> dict[str, Any] | None:
        refs = [m.strip() for m in str(e.get("panel") or "").split(",") if m.strip()]
        if not refs and samples > 1 and default:
            refs = [default]
        if not refs:
            return None
        return {
            "kind": "panel",
            "members": [judge(m, trace) for m in refs],
            "rule": e.get("panel_rule") or "majority",
            "samples": samples,
            "tie": tie,
            **common,
        }

    if not e.get("cascade"):
        return panel(flat.get("model")) or {}
    cheap_ref, _, strong_ref = str(e["cascade"]).partition(",")
    cheap = (
        panel(None)
        if cheap_ref.strip() == "panel"
        else panel(cheap_ref.strip()) or judge(cheap_ref.strip(), trace)
    )
    return {
        "kind": "cascade",
        "cheap": cheap,
        "strong": judge(strong_ref.strip(), trace),
        "escalate_on": e.get("escalate_on") or "label1,unscored",
        "audit_rate": e.get("audit_rate") or 0.0,
        "seed": e.get("audit_seed") or 0,
        **common,
    }


def _003_runspec_record(db: sqlite3.Connection) -> None:
    """Each run's record becomes the typed `RunSpec` it ran with (`current_record`): the flat
    settings of 0.1.0 and 0.2.0 are read here, and nowhere else."""
    rows = db.execute("SELECT run_id, settings, input_path, output_path FROM runs").fetchall()
    for run_id, settings, input_path, output_path in rows:
        try:
            old = json.loads(settings)
        except ValueError:
            continue  # an unreadable record stays as it is (its run cannot be resumed either way)
        if isinstance(old, dict) and "spec" not in old:
            db.execute(
                "UPDATE runs SET settings=? WHERE run_id=?",
                (json.dumps(current_record(old, input_path, output_path), sort_keys=True), run_id),
            )


#: every step, in order: step n is STEPS[n - 1]
STEPS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _001_runs_results_cache,
    _002_batch_ledger,
    _003_runspec_record,
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
