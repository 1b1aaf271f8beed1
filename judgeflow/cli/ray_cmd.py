"""`judgeflow run PATH -o OUTDIR --ray`: judge a dataset on Ray Data, writing shards to OUTDIR.

PATH is anything Ray Data reads (a file, a directory or a glob; local, s3://, gs://, ...):
Parquet, JSON lines or CSV. OUTDIR receives Parquet (default, or -o ending in .parquet) or
JSON-lines shards (-o ending in .jsonl, or --ray-format jsonl), under fresh names. A rerun skips
every id already in OUTDIR's shards, so a job that failed or was killed resumes without paying
twice for a finished item (a shard cut off mid-write is moved to OUTDIR/_torn/ and its items
judged again). With an explicit --store PATH that every worker can open, its response cache
serves unchanged items without calls.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import json
import posixpath
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..errors import ConfigError, InvalidItemError
from ..results import Usage
from ..runs.pricing import estimate_cost, load_prices
from ..runs.store import DEFAULT_STORE

INPUT_FORMATS = {".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("Ray Data (pip install 'judgeflow[ray]')")
    g.add_argument("--ray", action="store_true",
                   help="judge on Ray Data: INPUT is any Parquet/JSONL/CSV path Ray reads (s3://, globs); "
                        "-o is a directory of shards; a rerun skips ids already in it")
    g.add_argument("--ray-address", help="the Ray cluster to join ('auto', or ray://host:10001); default: a local Ray")
    g.add_argument("--ray-actors", type=int, default=1,
                   help="judge actors (each with --concurrency items in flight; default 1)")
    g.add_argument("--ray-cpus-per-actor", type=float, default=0.5, help="CPUs reserved per actor (default 0.5)")
    g.add_argument("--ray-rows-per-shard", type=int, default=1000,
                   help="rows per output shard: each is written as soon as it is judged, so a killed job "
                        "loses at most the shards in flight (default 1000)")
    g.add_argument("--ray-format", choices=["parquet", "jsonl"],
                   help="shard format (default: by the -o suffix, .jsonl -> jsonl, else parquet)")


def uri(path: Path | str) -> str:
    """The path as typed: argparse's Path turned s3://b/k into s3:/b/k; put the // back."""
    return re.sub(r"^([A-Za-z][A-Za-z0-9+.-]+):/(?!/)", r"\1://", str(path))


def output_format(args: argparse.Namespace) -> str:
    if args.ray_format:
        return str(args.ray_format)
    return "jsonl" if uri(args.output).rstrip("/").endswith((".jsonl", ".json")) else "parquet"


def input_files(path: str) -> tuple[list[str], str]:
    """(paths for Ray to read, format): a glob is expanded, a directory read by its files' suffix."""
    from pyarrow import fs as pafs

    from ..integrations.ray import filesystem

    parent, pattern = posixpath.split(path)
    fs, root = filesystem((parent or ".") if "*" in path else path)
    if "*" in path:
        infos = fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
        paths = sorted(i.path for i in infos if fnmatch.fnmatch(i.base_name, pattern))
    else:
        info = fs.get_file_info(root)
        if info.type == pafs.FileType.NotFound:
            raise InvalidItemError("no such file or directory; give a Parquet, JSONL or CSV path", path=path)
        if info.type == pafs.FileType.File:
            paths = [root]
        else:
            infos = fs.get_file_info(pafs.FileSelector(root, recursive=True))
            paths = sorted(i.path for i in infos if i.type == pafs.FileType.File
                           and not i.base_name.startswith((".", "_")))
    formats = {INPUT_FORMATS.get(Path(p).suffix.lower(), "") for p in paths}
    if not paths or "" in formats or len(formats) != 1:
        suffixes = sorted({Path(p).suffix or "(none)" for p in paths}) or ["no files"]
        raise InvalidItemError(f"--ray reads one format at a time: .parquet, .jsonl or .csv files; found "
                               f"{', '.join(suffixes)}", path=path)
    if "://" in path:  # keep the scheme for Ray (s3://bucket/key)
        scheme = path.split("://", 1)[0]
        paths = [p if "://" in p else f"{scheme}://{p}" for p in paths]
    return paths, formats.pop()


def run_on_ray(args: argparse.Namespace, con: Console, make_judge: Any) -> int:
    """`judgeflow run ... --ray`: read, skip finished ids, judge on an actor pool, write shards, sum up.

    `make_judge(args) -> Judge` is run.make_judge, passed in so this module never imports run.
    """
    try:
        import ray
    except ImportError:
        raise ConfigError('--ray needs Ray Data: pip install "judgeflow[ray]"') from None
    from ..integrations.ray import existing_ids, judge_dataset, write_judgments

    if args.batch:
        raise ConfigError("--ray and --batch are two ways to run at scale; choose one")
    if getattr(args, "map", None):
        raise ConfigError("--map does not apply to --ray yet: rename the columns in the dataset "
                          "(ds.rename_columns) or judge in one process")
    if args.ray_actors < 1 or args.ray_rows_per_shard < 1:
        raise ConfigError("--ray-actors and --ray-rows-per-shard must be at least 1")
    fmt = output_format(args)
    source, output = uri(args.input), uri(args.output)
    prices = load_prices(args.prices)
    judge = make_judge(args)  # a bad model, criterion or option fails here, before Ray starts
    paths, _ = input_files(source)
    torn: list[str] = []
    done = existing_ids(output, torn=torn)
    if torn:
        con.print(f"[yellow]note:[/yellow] {len(torn)} shard(s) in {escape(str(output))} were cut off mid-write; "
                  f"moved to {escape(str(output))}/_torn/ and their items will be judged again: "
                  f"{escape(', '.join(torn))}", soft_wrap=True)
    if done:
        con.print(f"{len(done)} ids already in {output}: skipped (not judged, not written again)", markup=False)
    store = args.store if args.store != DEFAULT_STORE and not args.no_cache else None

    ray.init(address=args.ray_address, ignore_reinit_error=True, logging_level="WARNING",
             log_to_driver=False)
    from ray.data import DataContext

    DataContext.get_current().enable_progress_bars = not args.no_progress
    ds = _read(ray, paths, args.limit)
    before = _shards(output)
    start = time.monotonic()
    out = judge_dataset(
        ds, judge_factory=functools.partial(make_judge, args), concurrency=args.concurrency,
        num_actors=args.ray_actors, num_cpus=args.ray_cpus_per_actor, rows_per_shard=args.ray_rows_per_shard,
        keep_trace=args.trace, skip_ids=done,
        store=store, json_column="text",
    )
    write_judgments(out, output, fmt=fmt)
    elapsed = time.monotonic() - start
    new = sorted(set(_shards(output)) - set(before))
    _report(args, con, judge.model, output, fmt, new, len(done), elapsed, prices)
    return 0


def _read(ray: Any, paths: list[str], limit: int | None) -> Any:
    """The input files as one Dataset of numbered rows, read by judgeflow's own readers in the workers
    (`integrations.ray.numbered_rows`: a row without an id gets `line-N`, as in a local run)."""
    from ..integrations.ray import numbered_rows

    ds = ray.data.read_binary_files(paths, include_paths=True)
    ds = ds.flat_map(functools.partial(numbered_rows, prefix=len(paths) > 1))
    return ds.limit(limit) if limit else ds


def _report(args: argparse.Namespace, con: Console, model: str, output: str, fmt: str, new: list[str],
            skipped: int, elapsed: float, prices: Any) -> None:
    """The summary of a Ray run, read back from the shards it wrote."""
    from ..integrations.ray import filesystem

    counts, usage = _tally(filesystem(output)[0], new)
    n = sum(counts.values())
    labels = ", ".join(f"{k}: {counts[k]}" for k in ("label 1", "label 0") if counts[k]) or "no labels"
    con.print(f"judged with {model} on Ray ({args.ray_actors} actor(s) x {args.concurrency}) -> "
              f"{output} ({len(new)} new {fmt} shard(s))", markup=False)
    con.print(f"  {n} new rows: {labels}; unscored: {counts['unscored']}; invalid: {counts['invalid']}; "
              f"{skipped} skipped as already done")
    con.print(f"  tokens in {usage.input_tokens:,}, out {usage.output_tokens:,} in {usage.calls:,} calls, "
              f"{elapsed:.1f}s" + (f", {n / elapsed:.1f} items/s" if n and elapsed > 0 else ""))
    cost = estimate_cost(model, usage, prices=prices)
    if not model.startswith("baseline/"):
        con.print(f"  estimated cost: ${cost:,.4f} at list prices" if cost is not None
                  else f"  estimated cost: unknown (no price for {model}; add it with --prices FILE)")

def _shards(output: str) -> list[str]:
    from pyarrow import fs as pafs

    from ..integrations.ray import SHARD_SUFFIXES, filesystem

    fs, root = filesystem(output)
    suffixes = SHARD_SUFFIXES["parquet"] + SHARD_SUFFIXES["jsonl"]
    return [i.path for i in fs.get_file_info(pafs.FileSelector(root, allow_not_found=True))
            if i.type == pafs.FileType.File and i.base_name.endswith(suffixes) and not i.base_name.startswith((".", "_"))]


def _tally(fs: Any, shards: list[str]) -> tuple[Counter[str], Usage]:
    """Row counts by outcome and total usage of the given shards, read column by column."""
    import pyarrow.parquet as pq

    counts: Counter[str] = Counter()
    total = Usage()
    for path in shards:
        if path.endswith(".parquet"):
            rows = pq.read_table(path, columns=["status", "label", "usage"], filesystem=fs).to_pylist()
        else:
            with fs.open_input_stream(path) as f:
                rows = [json.loads(line) for line in f.read().decode("utf-8").splitlines() if line.strip()]
        for r in rows:
            counts[r["status"] if r["status"] != "judged" else f"label {r['label']}"] += 1
            u = r["usage"]
            total.add(Usage.model_validate(json.loads(u) if isinstance(u, str) else u))
    return counts, total
