"""Throughput of `Judge.ajudge_many` against a local fake provider with a fixed latency.

    python benchmarks/throughput.py                       # latency 50 ms, concurrency 16, 100 and 1000 items
    python benchmarks/throughput.py --latency 0.1 --concurrency 32 --sizes 500

The fake (tests/fakes/provider.py) is a real HTTP server on 127.0.0.1 in its own process,
speaking the OpenAI chat-completions wire format with tool calls, so the real openai SDK,
Instructor's parsing, the LangGraph workflow and the SQLite run store (one commit per item) all
run. Each configuration first judges `concurrency` items untimed, so the client's connections
are open and the timing is the steady state. With a provider that answers in a fixed time, the best possible rate is
concurrency / (calls per item x latency) items per second; the table prints the measured rate
as a ratio of that. Items come from ../shared/data when it is there (factual_qa.jsonl,
faithfulness.jsonl, cycled to the size), else they are generated.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from judgeflow import Judge, Usage, read_items
from judgeflow.items import Item
from judgeflow.runs import runner
from judgeflow.runs.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
CASES = (("factual_correctness", "factual_qa.jsonl"), ("source_faithfulness", "faithfulness.jsonl"))


def load(criterion: str, filename: str, n: int) -> list[Item]:
    path = DATA / filename
    if path.exists():
        base = [it for it in read_items(path) if isinstance(it, Item)]
    elif criterion == "factual_correctness":
        base = [Item(id=str(i), question=f"Question {i}?", reference=f"Answer {i}.",
                     answer=f"The answer is {i}. It was well known. Nothing else to add.") for i in range(200)]
    else:
        base = [Item(id=str(i), source=[f"Document {i} says the sky is blue. " * 20],
                     answer="The sky is blue. The document says so.") for i in range(200)]
    return [it.model_copy(update={"id": f"{it.id}#{k}"}) for k, it in zip(range(n), itertools.cycle(base))]


def start_fake(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parents[1] / "tests" / "fakes" / "provider.py"),
                             "--latency", str(latency), "--asyncio"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY "):
        proc.kill()
        raise SystemExit(f"fake provider did not start: {line!r}")
    return proc, line.split()[1]


async def measure(judge: Judge, items: list[Item], store: RunStore | None, run: str | None) -> tuple[float, float, Usage, int]:
    """(wall seconds, judge-process CPU seconds, usage, judged items) for one pass over `items`."""
    usage = Usage()
    n = 0
    start, cpu = time.perf_counter(), time.process_time()
    async for j in runner.ajudge_many(judge, items, store=store, run=run, cache=False):
        usage.add(j.usage)
        n += j.status == "judged"
    return time.perf_counter() - start, time.process_time() - cpu, usage, n


async def bench(args: argparse.Namespace, url: str, store: RunStore | None) -> list[dict[str, Any]]:
    header = (f"{'criterion':<20} {'strategy':<8} {'items':>6} {'judged':>6} {'s':>6} {'items/s':>8} "
              f"{'ideal':>7} {'ratio':>6} {'calls/it':>8} {'in tok/it':>9} {'out tok/it':>10} {'cpu ms/call':>11}")
    print(header)
    print("-" * len(header))
    rows = []
    for (criterion, filename), strategy, n in itertools.product(CASES, ("graph", "single"), args.sizes):
        judge = Judge("openai/fake-judge", base_url=url + "/v1", api_key="bench", criterion=criterion,
                      strategy=strategy, concurrency=args.concurrency, keep_trace=False)
        items = load(criterion, filename, n)
        warm = [it.model_copy(update={"id": f"warm-{it.id}"}) for it in items[: args.concurrency]]
        await measure(judge, warm, None, None)  # open the connections first: steady state is timed
        run = store.start_run(settings={"bench": True}) if store is not None else None
        elapsed, cpu, usage, judged = await measure(judge, items, store, run)
        calls = usage.calls / n
        rate = n / elapsed
        ideal = args.concurrency / (calls * args.latency)
        rows.append({"criterion": criterion, "strategy": strategy, "items": n, "ratio": rate / ideal})
        print(f"{criterion:<20} {strategy:<8} {n:>6} {judged:>6} {elapsed:>6.2f} {rate:>8.1f} {ideal:>7.1f} "
              f"{rate / ideal:>6.2f} {calls:>8.2f} {usage.input_tokens / n:>9.0f} {usage.output_tokens / n:>10.0f} "
              f"{cpu * 1000 / max(usage.calls, 1):>11.1f}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="judgeflow throughput against a fixed-latency fake provider")
    p.add_argument("--latency", type=float, default=0.05, help="seconds per provider call (default 0.05)")
    p.add_argument("--concurrency", type=int, default=16, help="items in flight (default 16)")
    p.add_argument("--sizes", type=int, nargs="+", default=[100, 1000], help="item counts (default 100 1000)")
    p.add_argument("--no-store", action="store_true", help="do not record results in a SQLite run store")
    args = p.parse_args(argv)
    proc, url = start_fake(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = None if args.no_store else RunStore(Path(tmp) / "bench.sqlite")
            print(f"fake provider at {url}, latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, "
                  f"store {'off' if store is None else 'on (one SQLite commit per item)'}")
            rows = asyncio.run(bench(args, url, store))
            if store is not None:
                store.close()
    finally:
        proc.terminate()
        proc.wait()
    worst = min(r["ratio"] for r in rows)
    print(f"lowest ratio to the ideal: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
