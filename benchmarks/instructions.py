"""Instructions per graph item, counted by callgrind: a client-cost figure that does not move with a
shared machine's speed.

    python benchmarks/instructions.py                        # this checkout: factual, faithfulness
    python benchmarks/instructions.py --baseline ../old-checkout --jobs 2

On a shared VM the client's CPU time per item (`cpu.py`) swings by up to 2x from one minute to
the next; the number of instructions the client executes does not (CodSpeed measures Python
benchmarks the same way). This runs the client `cpu.py` times (graph strategy, concurrency 16,
OpenAI wire, the collector as `judgeflow run` sets it, no latency, against
tests/fakes/provider.py --asyncio in its own process, not counted) under
`valgrind --tool=callgrind`, once with `--small` and once with `--large` items after the same
warm-up, and prints (instructions of large - small) / (large - small): start-up, imports and
warm-up cancel out. With `--baseline DIR` the same harness runs that checkout too (through
`PYTHONPATH`) and the ratio is printed. Instructions are not time (a cache miss costs more than
an add), so quote them beside `cpu.py`'s times, not instead of them. Needs valgrind
(`apt-get install valgrind`); about 2 and 5 minutes per case and size on one core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODES = ("factual", "faithfulness")


def child(mode: str, items: int) -> None:
    """The measured client: warm up, then judge `items` items (run under callgrind)."""
    sys.path.insert(0, str(HERE))
    import cpu

    filename = dict(cpu.CASES)[mode]
    proc, url = cpu.start_async_fake(0)

    async def judge() -> int:
        j = cpu.make_judge(url, "graph", mode, 16)
        await cpu.judge_all(j, cpu.load(filename, 32, "warm"), 16)
        judged = (await cpu.judge_all(j, cpu.load(filename, items, "r"), 16))[2]
        await cpu.close(j)
        return judged

    try:
        with cpu.run_gc(True):
            judged = asyncio.run(judge())
    finally:
        cpu.stop_async_fake(proc)
    print(f"judged {judged}")


def count(checkout: Path, mode: str, items: int) -> int:
    """Instructions callgrind counted for one child run of `items` items with `checkout`'s judgeflow."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, str(Path(__file__)),
           "--child", mode, "--items", str(items)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    found = re.search(r"Collected\s*:\s*(\d+)", done.stderr)
    if done.returncode != 0 or not found or f"judged {items}" not in done.stdout:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise SystemExit(f"{checkout} {mode} {items} items: the run failed or judged fewer items:\n  " + "\n  ".join(tail))
    return int(found.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", type=Path, help="another checkout to count with the same harness (ratio printed)")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument("--small", type=int, default=40)
    ap.add_argument("--large", type=int, default=140)
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (counts do not depend on load)")
    ap.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    ap.add_argument("--items", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.items)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: apt-get install valgrind", file=sys.stderr)
        return 2
    checkouts = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    runs = [(name, mode, n) for name in checkouts for mode in args.modes for n in (args.small, args.large)]
    with ThreadPoolExecutor(max(args.jobs, 1)) as pool:
        counted = dict(zip(runs, pool.map(lambda r: count(checkouts[r[0]], r[1], r[2]), runs)))
    print(f"client instructions per graph item (callgrind; ({args.large} - {args.small} items) / "
          f"{args.large - args.small}; OpenAI wire, concurrency 16):")
    for mode in args.modes:
        per = {name: (counted[(name, mode, args.large)] - counted[(name, mode, args.small)]) / (args.large - args.small)
               for name in checkouts}
        line = f"  {mode:13} this {per['this'] / 1e6:6.2f} M"
        if "baseline" in per:
            line += f"   baseline {per['baseline'] / 1e6:6.2f} M   this / baseline {per['this'] / per['baseline']:.3f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
