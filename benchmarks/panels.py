"""Panels and cascades against one strong judge: calls, cost and wall time on the same items.

    python benchmarks/panels.py                      # 200 items, concurrency 16
    python benchmarks/panels.py --items 500 --audit-rate 0.2

Each model is its own local fake provider (tests/fakes/provider.py, a real HTTP server in its
own process) with a set latency, priced from a set table (the list prices of the models named,
USD per 1M tokens). The real openai SDK, Instructor, the LangGraph workflow and the SQLite store
run; the strategy is `single` (one call an item a judge), the cache is off.

The fakes all judge alike (a claim is an error when it holds a digit), so this measures calls,
cost and time only: whether a panel or cascade agrees better with people must be measured on
your own labelled sample (`judgeflow calibrate RESULTS --by judge`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu import start_async_fake as start_fake  # noqa: E402
from external import pace_line  # noqa: E402

from judgeflow import Judge  # noqa: E402
from judgeflow.ensembles import Cascade, Panel, cascade_estimate  # noqa: E402
from judgeflow.items import Item  # noqa: E402
from judgeflow.results import Judgment, Usage  # noqa: E402
from judgeflow.runs.pricing import Price, estimate_cost  # noqa: E402
from judgeflow.runs.run import Run  # noqa: E402
from judgeflow.runs.store import RunStore  # noqa: E402

#: name -> (latency s, price): three small models and one large one (all on the OpenAI wire: each fake is
#: its own server process, so the names only set the price and the latency)
MODELS: dict[str, tuple[float, Price]] = {
    "openai/gpt-4.1-nano": (0.4, Price(input=0.10, output=0.40)),
    "openai/gpt-4o-mini": (0.5, Price(input=0.15, output=0.60)),
    "openai/gpt-5-nano": (0.6, Price(input=0.05, output=0.40)),
    "openai/gpt-4.1": (1.5, Price(input=2.00, output=8.00)),
}
STRONG = "openai/gpt-4.1"
PANEL = ["openai/gpt-4.1-nano", "openai/gpt-4o-mini", "openai/gpt-5-nano"]
CHEAP = "openai/gpt-4o-mini"
PRICES = {m: p for m, (_, p) in MODELS.items()}


def make_items(n: int) -> list[Item]:
    """QA items; one in four answers states a number, which the fakes judge an error (label 1)."""
    return [Item(id=f"q{i}", question=f"Who wrote book {chr(65 + i % 26)}?", reference="Jane Austen",
                 answer=f"It was written in {1800 + i}." if i % 4 == 0 else "Jane Austen wrote it.")
            for i in range(n)]


def cost(results: list[Judgment]) -> float:
    """Each member's usage at its own price (a single judge's row at its model's price)."""
    total = 0.0
    for j in results:
        for model, usage in ([(v.model, v.usage) for v in j.judges] if j.judges else [(j.model, j.usage)]):
            total += estimate_cost(model or "", usage, prices=PRICES) or 0.0
    return total


async def timed(judge: Any, items: list[Any], store: RunStore, concurrency: int) -> tuple[float, list[Judgment]]:
    start = time.perf_counter()
    run = Run.attach(store, store.start_run(settings={}))
    out = [j async for j in run.judge(judge, items, cache=False, concurrency=concurrency)]
    return time.perf_counter() - start, out


async def run_all(makers: list[Any], items: list[Any], store: RunStore, concurrency: int) -> list[tuple[float, list[Judgment]]]:
    """Each setup in turn, in one event loop (the SDK clients are bound to it)."""
    return [await timed(make(), items, store, concurrency) for make in makers]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--audit-rate", type=float, default=0.1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every latency (e.g. 0.2 for a quick run)")
    args = ap.parse_args()
    procs, urls = [], {}
    try:
        for model, (latency, _) in MODELS.items():
            proc, url = start_fake(latency * args.scale)
            procs.append(proc)
            urls[model] = url

        def judge(model: str) -> Judge:
            base = urls[model] + ("/v1" if model.startswith("openai/") else "")
            return Judge(model, base_url=base, api_key="bench", strategy="single", criterion="factual_correctness",
                         provider_retries=0)

        items = make_items(args.items)
        setups = [
            ("strong judge alone", STRONG, lambda: judge(STRONG)),
            ("panel of 3 small (majority)", ",".join(PANEL), lambda: Panel([judge(m) for m in PANEL])),
            (f"cascade, audit {args.audit_rate:.0%}", f"{CHEAP} > {STRONG}",
             lambda: Cascade(judge(CHEAP), judge(STRONG), escalate_on="label1,unscored", audit_rate=args.audit_rate)),
        ]
        lat = ", ".join(f"{m.split('/')[1]} {lt * args.scale:.2f}s" for m, (lt, _) in MODELS.items())
        print(f"{len(items)} items, concurrency {args.concurrency}, latency per call: {lat}")
        print(f"({pace_line(base_url=urls[STRONG])}; every member's fake alike)\n")
        head = f"{'setup':<28} {'models':<52} {'calls':>6} {'cost $':>9} {'x strong':>8} {'wall s':>7} {'x strong':>8}"
        print(head)
        print("-" * len(head))
        base: tuple[float, float] | None = None
        notes = []
        with tempfile.TemporaryDirectory() as tmp, RunStore(Path(tmp) / "bench.sqlite") as store:
            runs = asyncio.run(run_all([make for _, _, make in setups], items, store, args.concurrency))
            for (name, models, _), (wall, results) in zip(setups, runs):
                usage = Usage()
                for j in results:
                    usage.add(j.usage)
                c = cost(results)
                base = base or (c, wall)
                print(f"{name:<28} {models:<52} {usage.calls:>6} {c:>9.4f} {c / base[0]:>8.2f} {wall:>7.1f} "
                      f"{wall / base[1]:>8.2f}")
                unscored = sum(j.label is None for j in results)
                if unscored:
                    notes.append(f"{name}: {unscored} unscored")
                if isinstance(results[0].cascade, dict):
                    est = cascade_estimate(results)
                    notes.append(f"cascade: {est.escalated} escalated, {est.audited} audited of {est.n}; "
                                 f"estimated agreement with the strong judge alone {est.agreement:.1%}"
                                 if est.agreement is not None else "cascade: no audited item")
        for n in notes:
            print("  " + n)
    finally:
        for p in procs:
            p.kill()


if __name__ == "__main__":
    main()
