"""What a batch run sent and got back, kept in the run store and scoped to the run.

* jobs: one row per provider batch. The row is written (status `intent`, with a deterministic
  tag and the request keys) *before* the batch is submitted, and gets its batch id after; a kill
  in between leaves an intent, which the next `collect` resolves by looking the tag up at the
  provider instead of submitting (and paying for) the same requests again.
* replies: one row per request key. A successful reply is kept for good (it was paid for). A
  failed line (provider error, expired, cancelled) is kept as a failure with an attempt count:
  the request is sent again in the next batch until `MAX_ATTEMPTS`, and a cancelled line is
  final. Replies are served only to the run that collected them, never to a later run: a
  failure never becomes a result anywhere else, and a new run asks again.
* items: the items whose result came from batch replies, so the cost summary can price
  each call by how it was made.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from ...results import Usage
from ..store import RunStore

MAX_ATTEMPTS = 3
"""Times a request is sent in a batch before its failure is final (the item is then unscored)."""

@dataclass
class Job:
    """One provider batch of a run (or the intent to submit one)."""

    tag: str
    round: int
    part: int
    provider: str
    batch_id: str | None
    status: str
    """intent (recorded, not known to be submitted), submitted, abandoned (never reached the
    provider), or the provider's final word once collected (completed, ended, expired, ...)."""
    created: float
    keys: list[str]

    @property
    def open(self) -> bool:
        return self.status == "submitted"


@dataclass
class Reply:
    reply: str
    ok: bool
    attempts: int
    final: bool


class BatchLedger:
    """The batch tables of a RunStore."""

    def __init__(self, store: RunStore) -> None:
        self.store = store  # its tables: the store's schema (runs/migrations.py, step 2)

    # jobs -----------------------------------------------------------------------------------

    def add_intent(self, run_id: str, tag: str, round_: int, part: int, provider: str, keys: list[str]) -> None:
        """Record a batch about to be submitted (before the provider hears of it)."""
        self.store._write("record a batch in", "INSERT OR REPLACE INTO batch_jobs VALUES (?, ?, ?, ?, ?, NULL, 'intent', ?, ?)",
                          (run_id, tag, round_, part, provider, time.time(), json.dumps(keys)))

    def set_submitted(self, run_id: str, tag: str, batch_id: str) -> None:
        self.store._write("record a batch in", "UPDATE batch_jobs SET batch_id=?, status='submitted' WHERE run_id=? AND tag=?",
                          (batch_id, run_id, tag))

    def mark_job(self, run_id: str, tag: str, status: str) -> None:
        self.store._write("update", "UPDATE batch_jobs SET status=? WHERE run_id=? AND tag=?", (status, run_id, tag))

    def jobs(self, run_id: str) -> list[Job]:
        rows = self.store._read("SELECT tag, round, part, provider, batch_id, status, created, keys FROM batch_jobs "
                                "WHERE run_id=? ORDER BY round, part, created", (run_id,))
        return [Job(tag, rnd, part, prov, bid, status, created, json.loads(keys))
                for tag, rnd, part, prov, bid, status, created, keys in rows]

    def known_batch_ids(self) -> set[str]:
        return {r[0] for r in self.store._read("SELECT batch_id FROM batch_jobs WHERE batch_id IS NOT NULL")}

    # replies --------------------------------------------------------------------------------

    def add_results(self, run_id: str, ok: dict[str, str], failed: dict[str, tuple[str, bool]]) -> None:
        """Store a collected batch in one transaction: `ok` {key: reply}, `failed` {key: (reply, final)}.

        A failure never replaces a successful reply; it counts one more attempt at that request.
        """
        try:
            with self.store._lock, self.store._db:
                self.store._db.execute("BEGIN")
                self.store._db.executemany("INSERT OR REPLACE INTO batch_replies VALUES (?, ?, ?, 1, 1, 1)",
                                           [(run_id, k, v) for k, v in ok.items()])
                self.store._db.executemany(
                    "INSERT INTO batch_replies VALUES (?, ?, ?, 0, 1, ?) ON CONFLICT (run_id, key) DO UPDATE SET "
                    "reply=excluded.reply, attempts=attempts + 1, final=excluded.final WHERE ok=0",
                    [(run_id, k, v, int(final)) for k, (v, final) in failed.items()])
        except sqlite3.Error as e:
            raise self.store._error(e, "save batch replies in") from None

    def reply(self, run_id: str, key: str) -> Reply | None:
        rows = self.store._read("SELECT reply, ok, attempts, final FROM batch_replies WHERE run_id=? AND key=?",
                                (run_id, key))
        return Reply(rows[0][0], bool(rows[0][1]), rows[0][2], bool(rows[0][3])) if rows else None

    def billed(self, run_id: str) -> Usage:
        """Calls and tokens of the run's successful batch lines (what the provider bills at batch prices)."""
        total = Usage()
        for (raw,) in self.store._read("SELECT reply FROM batch_replies WHERE run_id=? AND ok=1", (run_id,)):
            total.add(reply_usage(json.loads(raw).get("body")))
        return total

    # items ----------------------------------------------------------------------------------

    def mark_items(self, run_id: str, item_ids: list[str], *, batch: bool) -> None:
        """Mark items as judged from batch replies (batch=True) or online (batch=False)."""
        sql = ("INSERT OR IGNORE INTO batch_items VALUES (?, ?)" if batch
               else "DELETE FROM batch_items WHERE run_id=? AND item_id=?")
        try:
            with self.store._lock, self.store._db:
                self.store._db.execute("BEGIN")
                self.store._db.executemany(sql, [(run_id, i) for i in item_ids])
        except sqlite3.Error as e:
            raise self.store._error(e, "update") from None

    def batch_items(self, run_id: str) -> set[str]:
        return {r[0] for r in self.store._read("SELECT item_id FROM batch_items WHERE run_id=?", (run_id,))}


def reply_usage(body: Any) -> Usage:
    """The usage of one chat-completions or Messages reply body."""
    u = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(u, dict):
        return Usage()
    return Usage(calls=1, input_tokens=int(u.get("prompt_tokens", u.get("input_tokens", 0)) or 0),
                 output_tokens=int(u.get("completion_tokens", u.get("output_tokens", 0)) or 0))
