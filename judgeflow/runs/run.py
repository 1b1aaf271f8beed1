"""A resumable run into a file: the run's whole lifecycle, as a library call. The CLI only calls it.

    spec = RunSpec(judging=JudgeSpec(model="openai/gpt-4o-mini"), input="items.jsonl", output="results.jsonl")
    with RunStore(".judgeflow/runs.sqlite") as store:
        run = Run.open(store, spec)                                    # or resume=True; the store records the spec
        async for j in run.judge(run.judging(), concurrency=16): ...   # each result once committed
        tally = run.finish()                                           # status done, output written

`Run.open(store, spec, judging=judge)` records what `judge` is (its spec), whatever the
spec assumed; `run.judge(other)` refuses a judging whose spec differs from the record in what
changes results (the record must say what judged).

Every input row ends as exactly one output row: judged, unscored or invalid. `open` reads the
input once before anything is judged (ids unique, rows counted); `judge` reads it again, skips the
rows a resumed run already finished, judges the rest through the response cache
(`runs.cache.cached`) and commits each result before yielding it. A run's status changes only here:
running (`open`), interrupted / stopped (`stop`), batch (`submitted`), done (`finish`).

Commits (the contract resume relies on):
* every result is committed before it is yielded: whatever the caller has seen is in the store;
* a judged result (paid for) is committed the moment it arrives (with any cache hits waiting), and
  its cache entry before that (`Cached`);
* results served from the cache are committed in batches of up to `HIT_BATCH` in one transaction
  (one commit per row made a cached re-run of 1,000 items 0.1-0.2 s slower); a batch is committed
  when it is full, with the next judged result, when the input ends, and on any way out (Ctrl-C,
  SIGTERM, an error). A hard kill loses at most the last `HIT_BATCH` rows served from the cache,
  which a resume serves from the cache again: nothing is judged, or paid for, twice.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..build import build
from ..config.judging_protocol import Specified
from ..config.run import RunSpec, flat_view, results_view
from ..errors import ConfigError, InvalidItemError, StoreError
from ..files import STDIO
from ..items import DEFAULT_MAX_INPUT_CHARS, Item
from ..judging import DEFAULT_CONCURRENCY, ItemLike, Judging, as_item, judge_stream, row_id
from ..redact import redact
from ..results import Judgment
from .cache import cached
from .inputs import check_input, raise_if_all_invalid
from .output import file_sha, output_format, write_output
from .rows import input_rows
from .store import RunInfo, RunStore
from .summary import Tally
from .with_inputs import input_texts

#: results served from the cache committed in one transaction at most (see the module docstring)
HIT_BATCH = 256
Row = tuple[int, Judgment, None]


class Run:
    """One run in a store: its input, its record, its results."""

    def __init__(self, store: RunStore, info: RunInfo, *, source: Path | None = None, name: Path | None = None,
                 total: int | None = None, aliases: Counter[tuple[str, str]] | None = None) -> None:
        self.store, self.info = store, info
        self.source = source or (Path(info.input_path) if info.input_path else None)
        self.name = name or self.source
        self.total = total if total is not None else info.total
        self.aliases = aliases or Counter()

    @property
    def run_id(self) -> str:
        return self.info.run_id

    @property
    def command(self) -> str:
        """The command line that resumes this run."""
        return self.info.command or ""

    @classmethod
    def open(cls, store: RunStore, spec: RunSpec, *, judging: Judging | None = None, command: str | None = None,
             source: Path | None = None, sha: str | None = None, resume: bool = False,
             say: Callable[[str], None] | None = None) -> Run:
        """A new run of `spec` (input, output, ...), or with `resume` the last run that wrote its output.

        Args:
            spec: the run (its judging, input, output, ...): what the store records.
            judging: what will judge (a Judge, Panel, ...): its spec is recorded, over `spec.judging`.
            command: the command line that resumes the run (the CLI's `resume_command(spec)`).
            source: where the input is read from (default `spec.input`; stdin spooled to a file).
            sha: the input's sha256, if known (`runs.output.spool`).
            say: where a note goes (an endpoint changed on resume); None: nowhere.
        Raises:
            InvalidItemError: two rows share an id. ConfigError: nothing to resume, or the input or
            settings changed since the run started.
        """
        if judging is not None and isinstance(judging, Specified):
            spec = spec.model_copy(update={"judging": judging.spec()})
        if spec.input is None or spec.output is None:
            raise ConfigError("a run needs spec.input and spec.output")
        source = source or Path(spec.input)
        sha = sha or file_sha(source)
        name = Path(spec.input)
        first = spec.judging.judges()[0]
        check = check_input(_rows(source, name, spec), name, criterion=_criterion(spec),
                            mode=None if first.mode in (None, "auto") else first.mode)  # fails before judging
        raise_if_all_invalid(check, name)
        total, aliases = check.rows, check.aliases
        record = record_of(spec, judging.model if judging is not None else None)
        output = STDIO if spec.output == STDIO else str(Path(spec.output).resolve())
        if resume:
            info = _resumable(store, spec, record, sha, output)
            then, now = info.base_url, redact(first.client.base_url) if first.client.base_url else None
            if then != now:  # where requests go, not how items are judged: the record follows
                store.update_run(info.run_id, settings=record, command=command or info.command or "")
                if say is not None:
                    say(f"note: the endpoint changed since run {info.run_id} stopped ({then or 'the default'} "
                        f"then, {now or 'the default'} now); the run goes on there and records it")
                info = store.get_run(info.run_id)
            elif command is not None and command != info.command:  # e.g. another --budget
                store.update_run(info.run_id, settings=info.settings, command=command)
                info = store.get_run(info.run_id)
            store.set_status(info.run_id, "running")
        else:
            input_path = STDIO if spec.input == STDIO else str(name.resolve())
            run_id = store.start_run(settings=record, input_path=input_path, input_sha=sha, output_path=output,
                                     total=total, command=command)
            store.claim(run_id)
            info = store.get_run(run_id)
        return cls(store, info, source=source, name=name, total=total, aliases=aliases)

    @classmethod
    def online(cls, store: RunStore, spec: RunSpec, *, judging: Judging, key: str) -> Run:
        """The run of an online source (`judgeflow watch`), named by `key` (e.g. "watch:SOURCE"): the
        last one for that key, running again, else a new one. It has no input file: `judge` is given
        the rows. ConfigError when the key's run was judged by another judging (what changes results)."""
        if isinstance(judging, Specified):
            spec = spec.model_copy(update={"judging": judging.spec()})
        info = store.latest_run(output_path=key)
        if info is None:
            run_id = store.start_run(settings=record_of(spec, judging.model), input_path=key, output_path=key,
                                     total=None, command=f"judgeflow watch {key.removeprefix('watch:')}")
            return cls(store, store.get_run(run_id), name=Path(key))
        store.claim(info.run_id)
        run = cls(store, info, name=Path(key))
        run.check_judging(judging)
        store.set_status(info.run_id, "running")
        return run

    @classmethod
    def attach(cls, store: RunStore, run_id: str) -> Run:
        """A run already in the store (a batch run being collected)."""
        return cls(store, store.get_run(run_id))

    def rows(self) -> Iterator[Item | InvalidItemError]:
        """The run's input rows, read from its source again (memory does not grow with it)."""
        if self.source is None:
            raise ConfigError(f"run {self.run_id} has no input file recorded")
        spec = self.info.spec
        if spec is None:  # a run started with no spec: its input as it is
            return input_rows(self.source, name=str(self.name or self.source))
        return _rows(self.source, self.name or self.source, spec)

    def judging(self, **client: Any) -> Judging:
        """What judged this run, rebuilt from its record alone (a resume, a batch replay: `client`
        replaces client options, e.g. `http_client`)."""
        spec = self.info.spec
        if spec is None:
            raise ConfigError(f"run {self.run_id} has no recorded spec to rebuild its judging from")
        return build(spec.judging, **client)

    def check_judging(self, judging: Judging) -> None:
        """ConfigError if `judging` is not what the run recorded, in what changes results."""
        spec = self.info.spec
        if spec is None or not isinstance(judging, Specified):
            return
        then, now = results_view(spec.judging), results_view(judging.spec())
        if then != now:
            changed = _changed(then, now)
            raise ConfigError(f"run {self.run_id} was opened for another judging ({changed}): pass the judging "
                              "to Run.open(store, spec, judging=...) so the record says what judges")

    def finished(self) -> int:
        """Rows with a final result (judged or invalid): what a resume skips."""
        return len(self.store.finished_ids(self.run_id))

    async def judge(self, judging: Judging, rows: Iterable[ItemLike] | None = None, *,
                    concurrency: int = DEFAULT_CONCURRENCY, cache: bool = True,
                    done: set[str] | None = None) -> AsyncIterator[Judgment]:
        """Judge every row not finished yet, through the response cache; yield each result once committed.

        Args:
            judging: a Judge, Panel or Cascade (each member is cached on its own).
            rows: the rows (Items, dicts); default: the run's input file, read again.
            concurrency: items in flight at once.
            cache: serve hits from the store's cache (judged results are stored either way).
            done: ids to skip, kept by a caller that judges in chunks (`watch`); default: the rows
                with a final result, read from the store (once per call: a chunked caller passing
                its own set keeps the whole linear in rows).
        """
        self.check_judging(judging)
        self.store.claim(self.run_id)  # one writer per run (a no-op when this store holds it already)
        if done is None:
            done = self.store.finished_ids(self.run_id)  # unscored rows are judged again
        # stream position -> input position (the store's seq); entries leave as results come back, so
        # the stream's positions are counted, never taken from the map's size (that reuses keys)
        position: dict[int, int] = {}

        spec = self.info.spec
        limit = spec.max_input_chars if spec is not None else DEFAULT_MAX_INPUT_CHARS

        def todo() -> Iterator[Item | InvalidItemError]:
            n = 0
            for seq, obj in enumerate(self.rows() if rows is None else rows):
                row = as_item(obj, max_input_chars=limit)  # the run's rows pass as read (checked once)
                if row_id(row) not in done:
                    position[n] = seq
                    n += 1
                    yield row

        hits: list[Row] = []  # served from the cache, not committed (nor yielded) yet
        stream = judge_stream(cached(judging, self.store, read=cache), todo(), concurrency=concurrency)
        try:
            async with contextlib.aclosing(stream):
                async for n, j in stream:
                    row = (position.pop(n), j, None)
                    if j.cached:
                        hits.append(row)
                        if len(hits) < HIT_BATCH:
                            continue
                    for committed in self._commit(hits, [] if j.cached else [row]):
                        yield committed
            for committed in self._commit(hits, []):  # the input ended: the last cache hits
                yield committed
        finally:
            if hits:  # stopped early (Ctrl-C, SIGTERM, the caller broke off, an error): keep the hits served
                with contextlib.suppress(StoreError):  # the store failing already is the error being raised
                    self._commit(hits, [])

    def _commit(self, hits: list[Row], also: list[Row]) -> list[Judgment]:
        """Commit the waiting cache hits and `also` in one transaction; returns what was committed."""
        rows = [*hits, *also]
        hits.clear()
        if rows:
            self.store.record_many(self.run_id, rows)
        return [j for _, j, _ in rows]

    def record(self, seq: int, judgment: Judgment) -> None:
        """Commit one result judged outside `judge` (batch replies, online re-judging)."""
        self.store.record(self.run_id, seq, judgment)

    def stop(self, status: str = "interrupted", output: Path | None = None) -> int:
        """The run stopped before its end (interrupted: Ctrl-C/SIGTERM/a failed commit; stopped: a
        systemic provider error): record why and write the output so far; the rows written."""
        if status not in ("interrupted", "stopped"):
            raise ValueError(f"a run stops as interrupted or stopped, not {status!r}")
        self.store.set_status(self.run_id, status)
        return self.write(output) if output is not None else 0

    def submitted(self) -> None:
        """Its requests went to a provider batch API: the run waits for them."""
        self.store.set_status(self.run_id, "batch")

    def finish(self, output: Path | None = None) -> Tally:
        """Mark the run done and (re)write its output from the store; the summary's totals."""
        self.store.set_status(self.run_id, "done")
        tally = Tally()
        self.write(output, tally=tally)
        return tally

    def write(self, output: Path | None = None, *, tally: Tally | None = None) -> int:
        """(Re)write the output (default: the run's own) from the store, atomically; the rows written."""
        path = output or (Path(self.info.output_path) if self.info.output_path else None)
        if path is None:
            return 0
        spec = self.info.spec
        with_inputs = spec is not None and spec.with_inputs and self.source is not None
        return write_output(self.store, self.run_id, path, trace=spec is not None and spec.trace, tally=tally,
                            fmt=output_format(path, spec.format if spec else None),
                            inputs=input_texts(self.rows()) if with_inputs else None)


def _rows(source: Path, name: Path, spec: RunSpec) -> Iterator[Item | InvalidItemError]:
    return input_rows(source, name=str(name), limit=spec.limit, max_input_chars=spec.max_input_chars,
                      column_map=spec.column_map, turns=spec.turns, system=spec.system_prompt,
                      delimiter=spec.delimiter)


def record_of(spec: RunSpec, model: str | None = None) -> dict[str, Any]:
    """What the store keeps of a run (`migrations.current_record`): the spec, what judged as shown
    (`model`: the built judging's name; default: read from the spec, building a panel only to name
    it), and the fixed criterion as "name@fingerprint" (an edited file is another criterion)."""
    one = spec.judging.judges()[0]
    if model is None:
        model = one.model if spec.judging.kind in ("judge", "repeats") else build(spec.judging).model
    crit = _criterion(spec)
    return {"spec": spec.model_dump(mode="json"), "model": model,
            "criterion": f"{crit.name}@{crit.fingerprint}" if crit else None}


def record_diff(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between two records in what changes results, as "name: then-value then,
    now-value now" (a resume must match; `runs diff` shows it)."""
    if "spec" not in then:  # a run started with no spec: nothing to compare
        return []
    a = flat_view(results_view(RunSpec.model_validate(then["spec"])))
    b = flat_view(results_view(RunSpec.model_validate(now["spec"])))
    out = [f"{k}: {a.get(k)!r} then, {b.get(k)!r} now" for k in dict.fromkeys([*a, *b]) if a.get(k) != b.get(k)]
    if not out and then.get("criterion") != now.get("criterion"):  # the same file, edited
        out.append(f"criterion: {then.get('criterion')!r} then, {now.get('criterion')!r} now")
    return out


def _changed(then: Any, now: Any, where: str = "") -> str:
    """The first place two results views differ, as "where: then -> now"."""
    if isinstance(then, dict) and isinstance(now, dict):
        for k in sorted(set(then) | set(now)):
            if then.get(k) != now.get(k):
                return _changed(then.get(k), now.get(k), f"{where}.{k}" if where else k)
    if isinstance(then, list) and isinstance(now, list) and len(then) == len(now):
        for i, (a, b) in enumerate(zip(then, now)):
            if a != b:
                return _changed(a, b, f"{where}[{i}]")
    return f"{where}: {then!r} then, {now!r} now"


def _criterion(spec: RunSpec) -> Any:
    """The run's fixed criterion, if any (the first pass checks each row can be routed)."""
    from ..criteria import load_criterion

    name = spec.judging.judges()[0].criterion
    return load_criterion(name) if name else None


def _resumable(store: RunStore, spec: RunSpec, record: dict[str, Any], sha: str, output: str) -> RunInfo:
    """The last run that wrote `output`, if it can be resumed with these settings and this input (and this
    process becomes its one writer: a second resume of it is refused, `RunBusy`)."""
    run = store.latest_run(output_path=output)
    if run is None:
        raise ConfigError(f"nothing to resume: no run in {store.path} wrote {spec.output}; run without --resume "
                          "(results already judged are served from the cache)")
    store.claim(run.run_id)
    if run.input_sha != sha:
        raise ConfigError(
            f"{spec.input} changed since run {run.run_id} started (its content hash differs), so its finished "
            "results may not match the rows any more; run without --resume to start a new run (unchanged "
            "items are served from the cache at no cost)"
        )
    diff = record_diff(run.settings, record)
    if diff:
        raise ConfigError(f"run {run.run_id} used other settings ({'; '.join(diff)}); resume with "
                          f"`{run.command}`, or run without --resume to start a new run")
    return run
