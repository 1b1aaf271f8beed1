"""`--budget`: what the cap costs and how much of it a run uses, at 16 items in flight.

    python benchmarks/budget.py                  # 200 items, concurrency 16
    python benchmarks/budget.py --items 400 --cap 150 --usd 0.05

Against the in-repository schema fake (tests/fakes/schema_provider.py: a real HTTP server; the real
openai SDK, Instructor and the LangGraph workflow run), one judge, `Judge.judge_many`:

1. client CPU seconds per item without a budget, and with one too large to be reached (the cost of
   reserving and settling every request), as a ratio;
2. a calls cap: replies sent vs the cap (never above it), rows judged and rows left "budget";
3. a dollar cap (a set price): estimated dollars spent vs the cap, the same counts.

Each request holds its attempts (1 + re-asks) while in flight, so near the cap a run waits for
settles rather than overspend: "used" says how much of the cap became replies.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fakes import SchemaProvider  # noqa: E402
from fakes.generated import generated_items  # noqa: E402

from judgeflow import Budget, Judge  # noqa: E402
from judgeflow.runs.pricing import Price  # noqa: E402

PRICES = {"openai/bench": Price(input=0.15, output=0.60)}


def judge_all(url: str, items: list[dict[str, Any]], concurrency: int, budget: Budget | None) -> tuple[float, list[Any]]:
    judge = Judge("openai/bench", base_url=url + "/v1", api_key="sk-bench", budget=budget, keep_trace=False)
    cpu = time.process_time()
    results = judge.judge_many(items, concurrency=concurrency)
    return time.process_time() - cpu, results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", type=int, default=200)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--cap", type=int, default=150, help="the calls cap of part 2")
    p.add_argument("--usd", type=float, default=0.02, help="the dollar cap of part 3")
    p.add_argument("--repeat", type=int, default=3, help="runs per CPU figure (median)")
    args = p.parse_args(argv)
    items = generated_items(args.items)
    with SchemaProvider(seed=1, latency=0.02) as fake:
        judge_all(fake.base_url, items[:16], args.concurrency, None)  # warm up imports and connections
        plain = [judge_all(fake.base_url, items, args.concurrency, None)[0] for _ in range(args.repeat)]
        capped = [judge_all(fake.base_url, items, args.concurrency, Budget(calls=10**9))[0] for _ in range(args.repeat)]
        a, b = statistics.median(plain), statistics.median(capped)
        print(f"client CPU per item: {1000 * a / args.items:.2f} ms without a budget, {1000 * b / args.items:.2f} ms "
              f"with one never reached (ratio {b / a:.2f}; medians of {args.repeat})")
        for budget, unit in ((Budget(calls=args.cap), "calls"), (Budget(usd=args.usd, prices=PRICES), "usd")):
            before = len(fake.requests)
            _, results = judge_all(fake.base_url, items, args.concurrency, budget)
            sent = len(fake.requests) - before
            judged = sum(r.status == "judged" for r in results)
            cut = sum((r.error or "").startswith("budget") for r in results)
            if unit == "calls":
                print(f"calls cap {args.cap}: {sent} replies sent (used {sent / args.cap:.2f} of the cap, never above); "
                      f"{judged} rows judged, {cut} left 'budget' of {args.items}")
            else:
                spent = budget.spent.usd
                print(f"dollar cap ${args.usd:g}: ${spent:.5f} spent (used {spent / args.usd:.2f} of the cap, never "
                      f"above); {sent} replies; {judged} rows judged, {cut} left 'budget' of {args.items}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
