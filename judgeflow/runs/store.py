"""The run store: one SQLite file (WAL) holding runs, their per-item results, and a response cache.

    store = RunStore(".judgeflow/runs.sqlite")
    run_id = store.start_run(settings=record, input_path="items.jsonl", input_sha=..., output_path=...)
    store.get_run(run_id).spec                           # the RunSpec it was recorded with, typed
    store.record(run_id, seq, judgment, cache_key=key)   # one atomic commit per judged item
    store.results(run_id)                                # in input order, for writing the output

Each judged item is committed on its own, so a kill, a crash or a power loss loses at most the
items in flight, never a finished one, and never leaves a half-written row. (Results served from
the cache are committed in batches, `record_many`; see `runs.run` for what that may lose.) The cache maps a key
(a judging's `fingerprint(item)`, see `runs.cache`) to a judged result; it is shared by every run in the file. API keys are
never written here: a run's record is its `RunSpec` (which serialises no key), redacted again on the way in.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..errors import StoreError
from ..redact import redact
from ..results import Judgment
from .lock import RunBusy, RunLock
from .migrations import SCHEMA_VERSION, NewerSchema, current_record, migrate, schema_of

if TYPE_CHECKING:
    from ..config.run import RunSpec

__all__ = ["DEFAULT_STORE", "RunBusy", "RunInfo", "RunStore", "StoreError"]

DEFAULT_STORE = Path(".judgeflow") / "runs.sqlite"


class RunInfo(BaseModel):
    """One run as recorded in the store."""

    run_id: str
    created: float
    status: str
    """running, done, interrupted, or batch (submitted to a provider batch API)."""
    input_path: str | None = None
    input_sha: str | None = None
    """sha256 of the input file when the run started (resume refuses a changed file)."""
    output_path: str | None = None
    total: int | None = None
    """Input rows in the run."""
    settings: dict[str, Any]
    """The run's record: `{"spec": the RunSpec as JSON, "model": what judged, as shown,
    "criterion": "name@fingerprint" or None}` (`migrations.current_record`; never an API key)."""
    command: str | None = None
    """The command line that resumes this run."""

    @property
    def spec(self) -> RunSpec | None:
        """The `RunSpec` the run was recorded with, read back typed (None: a run started with no
        spec, `start_run(settings={})`, which nothing can resume)."""
        from ..config.run import RunSpec

        return RunSpec.model_validate(self.settings["spec"]) if "spec" in self.settings else None

    @property
    def model(self) -> str:
        """What judged, as shown (a panel's or cascade's description)."""
        return str(self.settings.get("model") or "")

    @property
    def base_url(self) -> str | None:
        """The endpoint the run's (first) judge calls, as recorded (credentials masked)."""
        spec = self.spec
        return spec.judging.judges()[0].client.base_url if spec is not None else None


class RunStore:
    """A SQLite run store. Opening it creates the file and its tables if needed; `readonly=True`
    (the read commands: `runs list`, `runs show`, a comparison's run id) opens an existing store
    without writing to it. Either way a SQLite file that is not a run store (tables of its own and
    no judgeflow schema mark) is refused, never written into."""

    def __init__(self, path: str | Path = DEFAULT_STORE, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._lock = threading.RLock()
        self._claims: dict[str, RunLock] = {}
        self.unreadable: Counter[str] = Counter()
        """Rows that no longer validate, by table ("cache": served as misses, "results": as unscored)."""
        if readonly:
            self._open_readonly()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # the sync facade runs the judging on a background loop thread: the connection may be
            # used from there, one statement (or transaction) at a time under self._lock
            self._db = sqlite3.connect(
                str(self.path), timeout=30, isolation_level=None, check_same_thread=False
            )
            self._refuse_foreign()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                migrate(self._db)  # an older store is brought up to date (runs/migrations.py)
            except NewerSchema as e:
                self._db.close()
                raise StoreError(
                    f"{self.path}: run store schema {str(e)!r} is newer than this judgeflow's {SCHEMA_VERSION} "
                    "(written by a newer judgeflow version, or damaged); upgrade judgeflow, move the file "
                    "aside or pass a new --store PATH"
                ) from None
        except sqlite3.DatabaseError as e:
            raise self._error(e, "open") from None
        except OSError as e:
            raise StoreError(
                f"{self.path}: cannot create the run store ({e.strerror}); "
                "pass --store PATH in a writable directory"
            ) from None

    def _refuse_foreign(self) -> None:
        """Refuse (closing it) a SQLite file with tables of its own and no run store schema mark."""
        tables = {
            r[0] for r in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        marked = (
            "meta" in tables
            and self._db.execute("SELECT 1 FROM meta WHERE key='schema'").fetchone() is not None
        )
        if tables and not marked:
            self._db.close()
            raise StoreError(
                f"{self.path}: a SQLite file that is not a judgeflow run store (its tables: "
                f"{', '.join(sorted(tables)[:5])}); nothing was written to it: pass --store PATH "
                "naming a run store, or a new file"
            )

    def _open_readonly(self) -> None:
        if not self.path.is_file():
            raise StoreError(
                f"no run store at {self.path}: `judgeflow run` makes one (or pass --store FILE)"
            )
        try:
            self._db = sqlite3.connect(
                f"{self.path.resolve().as_uri()}?mode=ro",
                uri=True,
                timeout=30,
                isolation_level=None,
                check_same_thread=False,
            )
            self._refuse_foreign()
            try:
                schema_of(
                    self._db
                )  # an older one reads as it is (steps only add); a newer one is refused
            except NewerSchema as e:
                self._db.close()
                raise StoreError(
                    f"{self.path}: run store schema {str(e)!r} is newer than this judgeflow's "
                    f"{SCHEMA_VERSION}; read it with the judgeflow version that wrote it"
                ) from None
        except sqlite3.DatabaseError as e:
            raise self._error(e, "read") from None

    def _error(self, e: sqlite3.Error, doing: str) -> StoreError:
        msg = str(e)
        if "not a database" in msg or "malformed" in msg or "file is encrypted" in msg:
            return StoreError(
                f"{self.path}: the run store is corrupted ({msg}); move it aside and start over "
                "with a new --store path (finished results in it cannot be read)"
            )
        if "full" in msg:
            return StoreError(
                f"{self.path}: disk full while trying to {doing} ({msg}); every finished item up to now is "
                "saved: free some space and run the same command with --resume"
            )
        if "readonly" in msg or "read-only" in msg or "unable to open" in msg:
            return StoreError(
                f"{self.path}: cannot {doing} the run store ({msg}); pass --store PATH "
                "in a writable directory"
            )
        return StoreError(f"{self.path}: cannot {doing} the run store: {msg}")

    def close(self) -> None:
        for lock in self._claims.values():
            lock.release()
        self._claims.clear()
        self._db.close()

    def claim(self, run_id: str) -> None:
        """Become the one writer of `run_id` until `close()` (see `runs.lock`); a no-op if held already.

        Raises:
            RunBusy: another process (or another RunStore) is writing the run.
        """
        if run_id not in self._claims:
            self._claims[run_id] = RunLock.acquire(self.path, run_id)

    def holds(self, run_id: str) -> bool:
        return run_id in self._claims

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, doing: str, sql: str, params: tuple[Any, ...] = ()) -> None:
        try:
            with self._lock:
                self._db.execute(sql, params)
        except sqlite3.Error as e:
            raise self._error(e, doing) from None

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._lock:
                return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as e:
            raise self._error(e, "read") from None

    # runs -----------------------------------------------------------------------------------

    def start_run(
        self,
        *,
        settings: dict[str, Any],
        input_path: str | None = None,
        input_sha: str | None = None,
        output_path: str | None = None,
        total: int | None = None,
        command: str | None = None,
        run_id: str | None = None,
    ) -> str:
        """Record a new run and return its id; this store is its one writer (`claim`) from now on."""
        run_id = run_id or time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self.claim(run_id)
        self._write(
            "start a run in",
            "INSERT INTO runs VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                time.time(),
                input_path,
                input_sha,
                output_path,
                total,
                redact(json.dumps(settings, sort_keys=True)),
                redact(command) if command else command,
            ),
        )
        return run_id

    def update_run(self, run_id: str, *, settings: dict[str, Any], command: str) -> None:
        """Record a run's settings and resume command anew (a resume with another endpoint)."""
        self._write(
            "update",
            "UPDATE runs SET settings=?, command=? WHERE run_id=?",
            (redact(json.dumps(settings, sort_keys=True)), redact(command), run_id),
        )

    def set_status(self, run_id: str, status: str) -> None:
        self._write("update", "UPDATE runs SET status=? WHERE run_id=?", (status, run_id))

    def get_state(self, key: str) -> Any:
        """A small JSON value kept under `key` (a watch's period budget), or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM meta WHERE key=?", ("state:" + key,)
            ).fetchone()
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except ValueError:
            return None

    def set_state(self, key: str, value: Any) -> None:
        """Keep a small JSON value under `key` (committed at once)."""
        with self._lock:
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO meta VALUES (?, ?)", ("state:" + key, json.dumps(value))
                )
            except sqlite3.DatabaseError as e:
                raise self._error(e, "write") from None

    def get_run(self, run_id: str) -> RunInfo:
        rows = self._read("SELECT * FROM runs WHERE run_id=?", (run_id,))
        if not rows:
            known = ", ".join(r.run_id for r in self.runs()[:5]) or "none"
            raise StoreError(f"{self.path}: no run {run_id!r} in the store (latest runs: {known})")
        return _run_info(rows[0])

    def runs(self) -> list[RunInfo]:
        """All runs, newest first."""
        return [_run_info(r) for r in self._read("SELECT * FROM runs ORDER BY created DESC")]

    def latest_run(self, *, output_path: str) -> RunInfo | None:
        """The newest run that wrote to `output_path`, if any."""
        rows = self._read(
            "SELECT * FROM runs WHERE output_path=? ORDER BY created DESC LIMIT 1", (output_path,)
        )
        return _run_info(rows[0]) if rows else None

    # results --------------------------------------------------------------------------------

    def record(
        self, run_id: str, seq: int, judgment: Judgment, *, cache_key: str | None = None
    ) -> None:
        """Commit one item's result (and its cache entry, if judged) in one transaction.

        Credentials (a key echoed in a provider error, a URL with a password) are redacted first.
        """
        self.record_many(run_id, [(seq, judgment, cache_key)])

    def record_many(self, run_id: str, rows: list[tuple[int, Judgment, str | None]]) -> None:
        """Commit several items' results, each (seq, judgment, cache key), in ONE transaction:
        all of them or none (a crash during the commit leaves none of them half-written)."""
        data = [(seq, j, key, _redacted(j)) for seq, j, key in rows]
        try:
            with self._lock, self._db:  # BEGIN ... COMMIT, or ROLLBACK on error
                self._db.execute("BEGIN")
                for seq, judgment, key, text in data:
                    self._db.execute(
                        "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)",
                        (run_id, judgment.id, seq, judgment.status, text),
                    )
                    if key is not None and judgment.status == "judged" and not judgment.cached:
                        self._db.execute(
                            "INSERT OR REPLACE INTO cache VALUES (?, ?, ?)",
                            (key, text, time.time()),
                        )
        except sqlite3.Error as e:
            raise self._error(e, "save a result in") from None

    def done_ids(self, run_id: str) -> set[str]:
        return {r[0] for r in self._read("SELECT item_id FROM results WHERE run_id=?", (run_id,))}

    def finished_ids(self, run_id: str) -> set[str]:
        """Ids with a final result (judged or invalid): what a resume skips. Unscored items (the
        judge failed, e.g. during a provider outage) are judged again, and so are rows that no longer
        validate (another judgeflow version wrote them, or they were damaged): one pass, reading only."""
        rows = self._read(
            "SELECT item_id, judgment FROM results WHERE run_id=? AND status != 'unscored'",
            (run_id,),
        )
        return {item_id for item_id, data in rows if _readable(data)}

    def count(self, run_id: str) -> int:
        return int(self._read("SELECT COUNT(*) FROM results WHERE run_id=?", (run_id,))[0][0])

    def results(self, run_id: str, *, page: int = 500) -> Iterator[Judgment]:
        """The run's results in input order, read `page` rows at a time (memory does not grow with the run)."""
        seq, item_id = -1, ""
        while True:
            rows = self._read(
                "SELECT seq, item_id, judgment FROM results WHERE run_id=? AND "
                "(seq > ? OR (seq = ? AND item_id > ?)) ORDER BY seq, item_id LIMIT ?",
                (run_id, seq, seq, item_id, page),
            )
            for _, item_id, data in rows:
                yield self._result(item_id, data)
            if len(rows) < page:
                return
            seq, item_id = rows[-1][0], rows[-1][1]

    def _result(self, item_id: str, data: str) -> Judgment:
        """A stored result; one that no longer validates (another judgeflow version wrote it, or it was
        damaged) is unscored, with the reason (a resume judges it again, see `finished_ids`). Reading
        never writes: the stored row is left as it is."""
        try:
            return Judgment.model_validate_json(data)
        except ValueError as e:
            self.unreadable["results"] += 1
            return Judgment.unscored(
                item_id,
                f"the stored result could not be read ({_first_line(e)}); it is judged "
                "again when the run is resumed (--resume)",
            )

    # cache ----------------------------------------------------------------------------------

    def put_cache(self, key: str, judgment: Judgment) -> None:
        """Cache a judged result outside any run (the Python API without `run=`); anything else is not cached."""
        if judgment.status != "judged":
            return
        self._write(
            "cache a result in",
            "INSERT OR REPLACE INTO cache VALUES (?, ?, ?)",
            (key, _redacted(judgment), time.time()),
        )

    def cached(self, key: str) -> Judgment | None:
        """The cached judged result for `key`; never an unscored one (a failure is not an answer)."""
        rows = self._read("SELECT judgment FROM cache WHERE key=?", (key,))
        try:
            hit = Judgment.model_validate_json(rows[0][0]) if rows else None
        except (
            ValueError
        ):  # written by another judgeflow version, or damaged: a miss (judged again, replaced)
            self.unreadable["cache"] += 1
            return None
        return hit if hit is not None and hit.status == "judged" else None

    def unreadable_note(self) -> str | None:
        """What the summary says about stored rows that could not be read (None if there were none)."""
        cache, results = self.unreadable["cache"], self.unreadable["results"]
        said = [
            f"{cache} cache entr{'y' if cache == 1 else 'ies'} (judged again)" if cache else "",
            f"{results} stored result{'s' if results != 1 else ''} (unscored; --resume judges them again)"
            if results
            else "",
        ]
        if not cache and not results:
            return None
        return (
            f"could not read {' and '.join(x for x in said if x)} in {self.path}: written by another judgeflow "
            "version, or damaged"
        )


def _first_line(e: Exception) -> str:
    """The first problem pydantic found (field: message), or the error's text."""
    errors = getattr(e, "errors", None)
    if callable(errors) and errors():
        first = errors()[0]
        return f"{'.'.join(map(str, first['loc'])) or 'the row'}: {first['msg']}"[:200]
    return str(e)[:200]


def _readable(data: str) -> bool:
    try:
        Judgment.model_validate_json(data)
    except ValueError:
        return False
    return True


def _redacted(judgment: Judgment) -> str:
    """The judgment as JSON with credentials redacted everywhere but in its id (the store's key)."""
    data = judgment.model_dump_json()
    clean = redact(data)
    if clean == data:
        return data
    return (
        Judgment.model_validate_json(clean).model_copy(update={"id": judgment.id}).model_dump_json()
    )


def _run_info(row: tuple[Any, ...]) -> RunInfo:
    run_id, created, status, input_path, input_sha, output_path, total, settings, command = row
    return RunInfo(
        run_id=run_id,
        created=created,
        status=status,
        input_path=input_path,
        input_sha=input_sha,
        output_path=output_path,
        total=total,
        settings=current_record(json.loads(settings), input_path, output_path),
        command=command,
    )
