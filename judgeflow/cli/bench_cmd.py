"""`judgeflow bench NAME`: reproduce a public benchmark with one command.

Gets the benchmark's files (the cache, `--data DIR`, or a download at the pinned commit, hash-checked,
its licence shown first), converts them to an items file (`--limit N`: a seeded sample stratified by
label), judges it as a normal `judgeflow run` (the run store, `--resume`, `--concurrency`, every run
flag), then prints the benchmark's own metric with intervals beside the published figures. `--ab`
judges the same items under the study's two criteria and compares them (kappa each, the direction of
the errors, exact McNemar).
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from ..backends.llm_judge import default_model
from ..bench import BENCHMARKS, Benchmark, benchmark
from ..bench.fetch import DEFAULT_BASE, ensure, from_data
from ..bench.prepare import label_counts, records_of, stratified, write_items
from ..bench.report import ab_lines, figures_of, lines, published_of
from ..errors import ConfigError
from . import SUMMARIES
from . import run as run_cmd
from .argtypes import positive_int
from .render import console

#: run flags `bench` does not take: its own input and output, its own --limit, and the batch/Ray paths
NOT_FROM_RUN = {"help", "input", "output", "limit", "batch"}
DEFAULT_WORKDIR = Path(".judgeflow/bench")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("bench", help=SUMMARIES["bench"], description=__doc__.split("\n\n")[0],
                       epilog=run_cmd.EXIT_CODES)
    p.add_argument("name", choices=sorted(BENCHMARKS), help="the benchmark")
    p.add_argument("--data", type=Path, help="a copy already on disk: its files at their repository paths (or "
                   "by name) under DIR; nothing is downloaded")
    p.add_argument("--accept-licence", action="store_true",
                   help="accept a restrictive licence (FaithBench: CC BY-NC-SA 4.0) without being asked")
    p.add_argument("--limit", type=positive_int, metavar="N",
                   help="judge a sample of N items, stratified by label and drawn with --seed (a cheap first look)")
    p.add_argument("--seed", type=int, default=0, help="the sample's and the intervals' seed (default 0)")
    p.add_argument("--ab", action="store_true",
                   help="also the source study's A/B: the same items under reference_faithfulness and "
                        "factual_correctness, compared (kappa each, direction of errors, exact McNemar)")
    p.add_argument("-o", "--output", type=Path,
                   help="results file (default under --workdir, named by model, criterion and sample)")
    p.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR,
                   help=f"where the items and results files go (default {DEFAULT_WORKDIR})")
    p.add_argument("--download-from", default=DEFAULT_BASE, metavar="URL",
                   help="a mirror laid out as raw.githubusercontent.com (URL/owner/name/commit/path)")
    for action in run_flags():
        p._add_action(action)
    p.set_defaults(func=cmd_bench)


def run_flags() -> list[argparse.Action]:
    """`judgeflow run`'s flags (model, criterion, store, resume, concurrency, ...), declared once there."""
    tmp = argparse.ArgumentParser(add_help=False)
    run_cmd.register(tmp.add_subparsers())
    parser = next(a for a in tmp._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    return [a for a in parser._actions if a.dest not in NOT_FROM_RUN and not a.dest.startswith("ray")]


def cmd_bench(args: argparse.Namespace) -> int:
    con = console(stderr=True)
    bench = benchmark(args.name)
    if args.ab and bench.ab is None:
        raise ConfigError(f"--ab: {bench.title} has no reference answers, and the study's A/B compares two "
                          "reference criteria; run it on halueval_qa or truthfulqa")
    if args.ab and args.criterion:
        raise ConfigError("--ab judges under its own two criteria: drop --criterion")

    def say(text: str) -> None:
        con.print(text, markup=False, soft_wrap=True)

    data = from_data(bench, args.data, say) if args.data else ensure(
        bench, base=args.download_from, accept=args.accept_licence, say=say)
    records = records_of(bench, data)
    if args.limit:
        records = stratified(records, args.limit, seed=args.seed)
    say(f"{bench.title}: {label_counts(records)}" + (f", a sample stratified by label (seed {args.seed})"
                                                      if args.limit else ""))
    items = write_items(records, args.workdir / bench.name / f"items{_sample_tag(args)}.jsonl")
    criteria = list(bench.ab) if args.ab else [args.criterion]
    outputs = [_output(args, bench, c, ab=args.ab) for c in criteria]
    code = 0
    for criterion, output in zip(criteria, outputs):
        code = max(code, _judge(args, items, output, criterion))
        if code not in (0, 1):
            return code
    model = args.model or default_model()
    for criterion, output in zip(criteria, outputs):
        figures, rows, scored = figures_of(bench, output, args.seed)
        judge = f"{model}, {Path(criterion).stem}" if criterion else model
        for line in lines(bench, figures, published_of(bench, records, args.seed), model=judge, rows=rows,
                          scored=scored):
            print(line)
    if args.ab:
        for line in ab_lines(outputs[0], outputs[1], (criteria[0], criteria[1]), args.seed)[1]:
            print(line)
    return code


def _sample_tag(args: argparse.Namespace) -> str:
    return f".limit{args.limit}.seed{args.seed}" if args.limit else ""


def _output(args: argparse.Namespace, bench: Benchmark, criterion: str | None, *, ab: bool) -> Path:
    if args.output is not None:
        return args.output.with_suffix(f".{criterion}{args.output.suffix}") if ab else args.output
    model = (args.model or default_model()).replace("/", "_").replace(":", "_")
    crit = f".{Path(criterion).stem}" if criterion else ""
    return args.workdir / bench.name / f"{model}{crit}{_sample_tag(args)}.results.jsonl"


def _judge(args: argparse.Namespace, items: Path, output: Path, criterion: str | None) -> int:
    """One `judgeflow run` of the items (its machinery whole), whose resume command is this bench's."""
    run_args = argparse.Namespace(**{**vars(args), "input": items, "output": output, "criterion": criterion,
                                     "limit": None, "batch": False, "ray": False, "format": args.format})
    return run_cmd.cmd_run(run_args, command=lambda run_command: bench_command(args, run_command))


def bench_command(args: argparse.Namespace, run_command: str) -> str:
    """The run's resume command (`judgeflow run ITEMS -o OUT ... --resume`) as this bench's."""
    parts = shlex.split(run_command.split("   #", 1)[0])
    flags = parts[3:]  # after `judgeflow run ITEMS`
    if args.output is None or args.ab:  # the default output (or the A/B's two) follows from the bench flags
        flags = _without(flags, "-o")
    if args.ab:
        flags = _without(flags, "--criterion")
    own: list[Any] = [args.name]
    for flag, value in (("--data", args.data), ("--limit", args.limit), ("--workdir", _not_default(args.workdir)),
                        ("--download-from", None if args.download_from == DEFAULT_BASE else args.download_from),
                        ("-o", args.output if args.ab else None)):
        if value is not None:
            own += [flag, str(value)]
    own += ["--seed", str(args.seed)] if args.seed else []
    own += ["--ab"] if args.ab else []
    return shlex.join(["judgeflow", "bench", *map(str, own), *flags])


def _not_default(workdir: Path) -> Path | None:
    return None if workdir == DEFAULT_WORKDIR else workdir


def _without(flags: list[str], flag: str) -> list[str]:
    out, skip = [], False
    for f in flags:
        if skip:
            skip = False
        elif f == flag:
            skip = True
        else:
            out.append(f)
    return out
