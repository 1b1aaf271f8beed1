"""Judge a Ray Dataset: `judge_dataset(ds, model=...)` -> a Dataset of judgment rows.

    import ray
    from judgeflow.integrations.ray import judge_dataset

    ds = ray.data.read_parquet("s3://bucket/answers/")
    out = judge_dataset(ds, model="openai/gpt-4o-mini", num_actors=4, concurrency=32)
    out.write_parquet("s3://bucket/judged/")

`map_batches` runs an actor pool (`ActorPoolStrategy(size=num_actors)`); each actor builds one
`Judge` (client and criteria once) and judges `concurrency` items at a time on its own event loop
(an async `__call__`, so several batches overlap inside one actor). Every input row becomes
exactly one output row: judged, unscored (the judge failed; `error` says why) or invalid (the
row is unusable; `error` names the field and the fix). Rows whose id is in `skip_ids` are left
out (resume: see `existing_ids`).

Rate limits: a provider's limit is per key, not per actor, so each actor paces itself to
1/`num_actors` of every limit, set (`rpm=`, `tpm=`) or learned from the reply headers
(`backends.limits.split`), and still re-syncs to the provider's `remaining`, which counts every
actor's requests. This was chosen over one limiter actor that every request would ask first: that
adds a remote call per request and one place whose failure or backlog stalls every actor, while
the split needs no coordination and the provider's own counter corrects any drift.

Output schema (one row per item; the same fields as the CLI's `Judgment.to_row`, flattened):

    id str, label int64|null, status str, criterion str, routed_by str, reason str,
    claims str (JSON list), error str, usage str (JSON {calls, input_tokens, output_tokens}),
    model str, strategy str, language str, human_label int64|null,
    requirements str|null (JSON list), trace str (JSON list; only with keep_trace=True),
    then the input's other fields: scalars as they were, lists/dicts as JSON strings.

A row without an `id` (or an alias) gets the id a local run gives it, `line-N` (N its line in a
JSONL/CSV file, its row number in a Parquet file), when it was read with its line number:
`judgeflow run --ray` reads each input file whole with judgeflow's own readers (`numbered_rows`:
`read_binary_files`, then one row per line, `json_column="text"` with `path`, `line`, `error`
columns), so the ids, aliases and messages are those of `judgeflow run`. Several input files:
`<file name>:line-N`, so rows of two files never share an id. A dataset made without line numbers
(`read_parquet` by hand) needs ids: such a row is invalid, `invalid-<hash of the row>`.

Ray is imported here only, never by `import judgeflow` (`pip install "judgeflow[ray]"`).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._judge import Judge
from ..errors import ConfigError, InvalidItemError
from ..items import Item
from ..judging import DEFAULT_CONCURRENCY, Judging, judge_stream, row_id
from ..results import JSON_FIELDS, Judgment, flat_row
from ..runs.cache import cached

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow as pa
    import ray.data

#: the fixed result columns and their Arrow types (input fields follow them)
_STR, _INT = "string", "int64"
SCHEMA_FIELDS: tuple[tuple[str, str], ...] = (
    ("id", _STR), ("label", _INT), ("status", _STR), ("criterion", _STR), ("routed_by", _STR),
    ("reason", _STR), ("claims", _STR), ("error", _STR), ("usage", _STR), ("model", _STR),
    ("strategy", _STR), ("language", _STR), ("human_label", _INT), ("requirements", _STR),
)


def judge_dataset(
    ds: ray.data.Dataset,
    *,
    model: str | None = None,
    criterion: str | Path | None = None,
    mode: str | None = None,
    strategy: str = "graph",
    concurrency: int = DEFAULT_CONCURRENCY,
    num_actors: int = 1,
    num_cpus: float = 0.5,
    batch_size: int | None = None,
    rows_per_shard: int | None = 1000,
    keep_trace: bool = False,
    skip_ids: Iterable[str] = (),
    store: str | Path | None = None,
    json_column: str | None = None,
    judge_factory: Callable[[], Judging] | None = None,
    **client_kwargs: Any,
) -> ray.data.Dataset:
    """A lazy Dataset with one judgment row per input row (see the module docstring for the schema).

    Args:
        ds: rows of items (the fields and aliases of `Item.from_record`).
        model, criterion, mode, strategy, **client_kwargs: as `Judge(...)`; built once in the driver
            (a bad setting fails here) and once in each actor.
        concurrency: items in flight per actor (in all: `num_actors * concurrency`).
        num_actors, num_cpus, batch_size: the actor pool, the CPUs reserved per actor (below 1 leaves
            cores for reading and writing) and the rows per batch sent to one (default: `concurrency`).
        rows_per_shard: cut the input into blocks of at most this many rows, each written as one shard
            as soon as it is judged (a killed job loses at most the blocks in flight); None: Ray's blocks.
        keep_trace: add a `trace` column (rendered prompts and raw replies).
        skip_ids, store: ids to leave out (see `existing_ids`); a RunStore every actor can open (its cache).
        json_column: a column holding one JSON object a row (a JSONL line); non-JSON is an invalid row.
        judge_factory: a picklable callable returning a ready Judging, instead of the settings above.
    """
    import ray
    from ray.data import ActorPoolStrategy

    if num_actors < 1 or concurrency < 1:
        raise ConfigError(f"num_actors and concurrency must be at least 1, got {num_actors} and {concurrency}")
    if judge_factory is None:
        judge_factory = functools.partial(Judge, model, criterion=criterion, mode=mode, strategy=strategy,
                                          keep_trace=keep_trace, **client_kwargs)
    judge_factory()  # fail in the driver on a bad model, criterion or option, not in every actor
    skip = frozenset(skip_ids)
    if rows_per_shard is not None:
        ds = ds.repartition(target_num_rows_per_block=rows_per_shard)
    actor = {"judge_factory": judge_factory, "concurrency": concurrency, "keep_trace": keep_trace,
             "skip_ids": ray.put(skip) if skip else skip, "store": str(store) if store else None,
             "json_column": json_column, "actors": num_actors}
    return ds.map_batches(JudgeBatches, batch_size=batch_size or concurrency, batch_format="pyarrow",
                          compute=ActorPoolStrategy(size=num_actors), num_cpus=num_cpus, fn_constructor_kwargs=actor)


class JudgeBatches:
    """The map_batches actor: one Judge, async concurrency across every batch it is given."""

    def __init__(self, *, judge_factory: Callable[[], Judging], concurrency: int, keep_trace: bool,
                 skip_ids: Any, store: str | None, json_column: str | None, actors: int = 1) -> None:
        import ray

        from ..backends.limits import split

        split(actors)  # a provider's limit is per key, not per actor: each actor paces to its part
        self.judge = judge_factory()
        self.concurrency = concurrency
        self.keep_trace = keep_trace
        self.skip = ray.get(skip_ids) if isinstance(skip_ids, ray.ObjectRef) else skip_ids
        self.store_path = store
        self.json_column = json_column
        self._judging: Guarded | None = None

    async def __call__(self, batch: pa.Table) -> pa.Table:
        if self._judging is None:  # built on the actor's event loop, shared by overlapping batches
            judging = self.judge
            if self.store_path:  # sqlite: opened on the loop's thread, which runs every batch
                from ..runs.store import RunStore

                judging = cached(self.judge, RunStore(self.store_path), keep_trace=self.keep_trace)
            self._judging = Guarded(judging, self.concurrency)
        items = [self._item(rec) for rec in batch.to_pylist()]
        todo = [(rid, it) for rid, it in items if rid not in self.skip]
        results: list[Judgment | None] = [None] * len(todo)
        async for n, j in judge_stream(self._judging, [it for _, it in todo], concurrency=self.concurrency):
            rid = todo[n][0]
            results[n] = j if j.id == rid else j.model_copy(update={"id": rid})
        return rows_table([judgment_row(j, trace=self.keep_trace) for j in results if j is not None],
                          trace=self.keep_trace)

    def _item(self, rec: dict[str, Any]) -> tuple[str, Item | InvalidItemError]:
        path, line, prefix = None, None, None
        if self.json_column is not None:
            raw = rec.get(self.json_column)
            path, line, prefix = rec.get("path"), rec.get("line"), rec.get("id_prefix")
            if rec.get("error"):  # `numbered_rows`: the reader could not read this row
                err = InvalidItemError(str(rec["error"]), path=path, line=line)
                return _prefixed(row_id(err), err, line, prefix)
            try:
                rec = json.loads(raw)
            except (TypeError, json.JSONDecodeError) as e:
                err = InvalidItemError(f"not valid JSON ({e}); each line must be one JSON object", path=path)
                err.record = {"line_text": raw}
                return row_id(err), err
        if not isinstance(rec, Mapping):
            err = InvalidItemError(f"expected a JSON object per line, got {type(rec).__name__}", path=path)
            err.record = {"line_text": json.dumps(rec)}
            return row_id(err), err
        try:
            it: Item | InvalidItemError = Item.from_record(rec, path=path, line=line)
        except InvalidItemError as e:
            it = e
        return _prefixed(row_id(it), it, line, prefix)


def _prefixed(rid: str, it: Item | InvalidItemError, line: int | None, prefix: str | None,
              ) -> tuple[str, Item | InvalidItemError]:
    """A `line-N` id of one of several input files, named by its file (`a.jsonl:line-3`)."""
    if not prefix or line is None or rid != f"line-{line}":
        return rid, it
    rid = prefix + rid
    if isinstance(it, Item):
        return rid, it.model_copy(update={"id": rid})
    it.item_id = rid
    return rid, it


class Guarded:
    """The actor's judging: at most `limit` items in flight across overlapping batches, and a crash
    is an unscored row with why, not the end of the batch (the worker keeps going)."""

    def __init__(self, judging: Judging, limit: int) -> None:
        self.inner = judging
        self._sem = asyncio.Semaphore(limit)

    @property
    def model(self) -> str:
        return self.inner.model

    def fingerprint(self, item: Item) -> str | None:
        return self.inner.fingerprint(item)

    async def ajudge(self, item: Any) -> Judgment:
        try:
            async with self._sem:
                return await self.inner.ajudge(item)
        except Exception as e:  # noqa: BLE001 - a crash is not a verdict: unscored, with why
            rid = row_id(item)
            return Judgment.unscored(rid, f"{type(e).__name__}: {e}", model=self.inner.model,
                                     extra=item.extra if isinstance(item, Item) else {})

    async def aclose(self) -> None:
        await self.inner.aclose()


def numbered_rows(file: Mapping[str, Any], *, prefix: bool = False) -> list[dict[str, Any]]:
    """One input file (a `read_binary_files(..., include_paths=True)` row: `bytes`, `path`) -> its rows as a
    local run reads them: `text` (the row as JSON), `path`, `line` (what `line-N` ids count), `error` (a row
    that could not be read: the reader's message), and `id_prefix` (the file's name) when `prefix`."""
    from ..io.results import read_rows

    data, path = file["bytes"], str(file["path"])
    name = Path(path).name
    rows = _parquet_rows(data) if data[:4] == b"PAR1" else read_rows(path, data=data, name=path)
    out: list[dict[str, Any]] = []
    try:
        for line, rec in rows:
            error = rec.bare_message if isinstance(rec, InvalidItemError) else None
            out.append({"text": None if error else json.dumps(rec, default=str, ensure_ascii=False), "path": path,
                        "line": line, "error": error, "id_prefix": f"{name}:" if prefix else None})
    except InvalidItemError as e:  # the whole file is unreadable: one invalid row that says why
        out.append({"text": None, "path": path, "line": None, "error": e.bare_message,
                    "id_prefix": f"{name}:" if prefix else None})
    return out


def _parquet_rows(data: bytes) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = pq.ParquetFile(pa.BufferReader(data))
    n = 0
    for group in range(f.num_row_groups):
        for row in f.read_row_group(group).to_pylist():
            n += 1
            yield n, row


def judgment_row(j: Judgment, *, trace: bool = False) -> dict[str, Any]:
    """`Judgment.to_row` flattened for Parquet: lists and objects as JSON strings."""
    return flat_row(j.to_row(trace=trace))


def rows_table(rows: list[dict[str, Any]], *, trace: bool = False) -> pa.Table:
    """An Arrow table with the fixed result columns typed (so every shard has one schema)."""
    import pyarrow as pa

    fixed = [*SCHEMA_FIELDS, *((("trace", _STR),) if trace else ())]
    names = [n for n, _ in fixed]
    extra: list[str] = []
    for r in rows:
        extra.extend(k for k in r if k not in names and k not in extra)
    columns = {n: pa.array([r.get(n) for r in rows], type=pa.type_for_alias(t)) for n, t in fixed}
    for name in extra:
        values = [r.get(name) for r in rows]
        try:
            arr = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types in one column: keep them as text
            arr = pa.array([None if v is None else str(v) for v in values], type=pa.string())
        columns[name] = arr.cast(pa.string()) if pa.types.is_null(arr.type) else arr
    return pa.table(columns)


#: output shard suffixes by format (Ray's write_json writes JSON lines with a .json suffix)
SHARD_SUFFIXES = {"parquet": (".parquet",), "jsonl": (".json", ".jsonl")}


def filesystem(uri: str | Path) -> tuple[Any, str]:
    """(pyarrow FileSystem, path in it) for a local path or a URI (s3://, gs://, ...)."""
    from pyarrow import fs

    text = str(uri)
    if "://" not in text:
        text = str(Path(text).resolve())
    return fs.FileSystem.from_uri(text)


def existing_ids(output: str | Path, *, torn: list[str] | None = None) -> set[str]:
    """The ids in the Parquet/JSON-lines shards already in an output directory (resume).

    A shard that cannot be read to its end (a job killed while writing it) is moved to
    `OUTPUT/_torn/` and its name appended to `torn`: its items are judged again, never twice in
    the output.
    """
    import pyarrow.parquet as pq
    from pyarrow import fs as pafs

    fs, root = filesystem(output)
    infos = fs.get_file_info(pafs.FileSelector(root, recursive=False, allow_not_found=True))
    ids: set[str] = set()
    for info in sorted(infos, key=lambda i: i.path):
        name = info.base_name
        if info.type != pafs.FileType.File or name.startswith((".", "_")):
            continue
        try:
            if name.endswith(SHARD_SUFFIXES["parquet"]):
                found = pq.read_table(info.path, columns=["id"], filesystem=fs).column("id").to_pylist()
            elif name.endswith(SHARD_SUFFIXES["jsonl"]):
                with fs.open_input_stream(info.path) as f:
                    data = f.read().decode("utf-8")
                if data and not data.endswith("\n"):
                    raise ValueError("no newline at the end")
                found = [json.loads(line)["id"] for line in data.splitlines() if line.strip()]
            else:
                continue
        except Exception:  # noqa: BLE001 - torn or foreign: set aside, its items are judged again
            fs.create_dir(f"{root}/_torn", recursive=True)
            fs.move(info.path, f"{root}/_torn/{name}")
            if torn is not None:
                torn.append(name)
            continue
        ids.update(str(i) for i in found)
    return ids


def write_judgments(ds: ray.data.Dataset, output: str | Path, *, fmt: str = "parquet") -> None:
    """Write judgment rows as shards with fresh names (never over an existing shard).

    parquet: the flattened rows as they are. jsonl: one CLI output row per line (claims, usage,
    requirements and trace as nested JSON again), `.jsonl` shards.
    """
    text = str(output) if "://" in str(output) else str(Path(output).resolve())
    if fmt == "parquet":
        ds.write_parquet(text)
    elif fmt == "jsonl":
        ds.write_datasink(_jsonl_datasink(text))
    else:
        raise ConfigError(f"output format {fmt!r} is not one of: parquet, jsonl")


def _jsonl_datasink(path: str) -> Any:
    from ray.data.datasource.file_datasink import BlockBasedFileDatasink

    class JsonLinesDatasink(BlockBasedFileDatasink):
        def __init__(self, path: str) -> None:
            super().__init__(path, file_format="jsonl")

        def write_block_to_file(self, block: Any, file: Any) -> None:
            lines = []
            fixed = {n for n, _ in SCHEMA_FIELDS}
            for row in block.to_arrow().to_pylist():
                for k in JSON_FIELDS:
                    if isinstance(row.get(k), str):
                        row[k] = json.loads(row[k])
                # a column another row of the batch brought in: absent from this row, as in the CLI
                row = {k: v for k, v in row.items() if v is not None or k in fixed}
                lines.append(json.dumps(row, ensure_ascii=False) + "\n")
            file.write("".join(lines).encode("utf-8"))

    return JsonLinesDatasink(path)
