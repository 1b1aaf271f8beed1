"""A localhost endpoint at judgeflow's defaults: paced by what it shows (backends/local_pace.py).

    python benchmarks/local_pace.py                  # about 2 min
    python benchmarks/local_pace.py --items 160 --slow-items 4

Against tests/fakes/provider.py --asyncio on 127.0.0.1 (fixed replies, one asyncio loop, `--slots`
requests computed at once, the rest waiting their turn as in llama.cpp), graph strategy, factual
rows, the real openai SDK and Instructor, `Judge(...)` with no options but the endpoint (the
defaults: concurrency 16, the local deadline, the pace on). Each timed pass is a new `Judge` with no
pace learned (a run's start: its ramp and its first connections included); one untimed pass of 16
items first imports and builds what every run builds once.

1. Many slots: a server that serves `--slots` (16) at once at `--latency` (0.5 s) a call; `--items`
   (480) items at the defaults beside the same items with `timeout=60` (a given --timeout turns the
   pace off: the unpaced speed), passes alternating. Ratio to the latency-bound ideal
   (items / 16 x latency x calls per item), the median of `--passes` (2), and paced / unpaced.
2. One slot: the same server with one slot at `--slow-latency` (2 s) a call; `--slow-items` (6)
   items at the defaults: timeouts, unscored rows, the most requests the pace had in flight, and the
   ratio to that server's ideal (calls x latency: it computes one at a time).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu  # noqa: E402  (benchmarks/ helpers: the fake, the rows, a pass)

CONCURRENCY = 16  # judgeflow's default (Judge(concurrency=16))


def make_judge(url: str, **options: Any) -> Any:
    from judgeflow import Judge

    return Judge("openai/fake-judge", base_url=url + "/v1", api_key="bench", mode="factual", strategy="graph",
                 keep_trace=False, **options)


async def one_pass(url: str, items: list[Any], **options: Any) -> dict[str, Any]:
    from judgeflow.backends import local_pace

    local_pace.forget()  # a run's start: nothing learned about the endpoint
    judge = make_judge(url, **options)
    rows = []
    try:
        from judgeflow import judge_stream

        start = asyncio.get_running_loop().time()
        async for _, j in judge_stream(judge, items, concurrency=CONCURRENCY):
            rows.append(j)
        wall = asyncio.get_running_loop().time() - start
    finally:
        await cpu.close(judge)
    stats = local_pace.stats()
    return {"wall": wall, "calls": sum(r.usage.calls for r in rows), "judged": sum(r.status == "judged" for r in rows),
            "unscored": sum(r.status == "unscored" for r in rows), "items": len(rows),
            "timeouts": sum(s["timeouts"] for s in stats), "peak": max((s["peak"] for s in stats), default=None)}


def many_slots(args: argparse.Namespace) -> dict[str, Any]:
    proc, url = cpu._fakes().start_async_fake(args.latency, args.slots)
    items = cpu.load("factual_qa.jsonl", args.items, "")
    found: dict[str, list[dict[str, Any]]] = {"defaults": [], "timeout=60 (unpaced)": []}
    try:
        with cpu.run_gc(True):
            asyncio.run(one_pass(url, cpu.load("factual_qa.jsonl", CONCURRENCY, "warm"), timeout=60.0))
            for k in range(args.passes):
                for name, options in (("defaults", {}), ("timeout=60 (unpaced)", {"timeout": 60.0})):
                    tagged = [it.model_copy(update={"id": f"p{k}{name[0]}:{it.id}"}) for it in items]
                    r = asyncio.run(one_pass(url, tagged, **options))
                    r["ratio"] = args.items / CONCURRENCY * args.latency * (r["calls"] / args.items) / r["wall"]
                    found[name].append(r)
                    print(f"  pass {k + 1} {name:21} wall {r['wall']:6.2f} s  calls {r['calls']}  judged {r['judged']}"
                          f"  unscored {r['unscored']}  peak in flight {r['peak']}  ratio {r['ratio']:.3f}", flush=True)
    finally:
        cpu.stop_async_fake(proc)
    med = {name: statistics.median(r["ratio"] for r in rs) for name, rs in found.items()}
    print(f"  median ratio to the ideal: defaults {med['defaults']:.3f}, unpaced "
          f"{med['timeout=60 (unpaced)']:.3f}; defaults / unpaced {med['defaults'] / med['timeout=60 (unpaced)']:.3f}")
    return {"ratios": med, "passes": found}


def one_slot(args: argparse.Namespace) -> dict[str, Any]:
    proc, url = cpu._fakes().start_async_fake(args.slow_latency, 1)
    try:
        r = asyncio.run(one_pass(url, cpu.load("factual_qa.jsonl", args.slow_items, "slow")))
    finally:
        cpu.stop_async_fake(proc)
    r["ratio"] = r["calls"] * args.slow_latency / r["wall"]
    print(f"  {r['items']} items  wall {r['wall']:6.2f} s  calls {r['calls']}  judged {r['judged']}  unscored "
          f"{r['unscored']}  timeouts {r['timeouts']}  peak in flight {r['peak']}  ratio to one slot's ideal "
          f"{r['ratio']:.3f}")
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=480)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--slots", type=int, default=16)
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--slow-items", type=int, default=6)
    ap.add_argument("--slow-latency", type=float, default=2.0)
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = ap.parse_args()
    print("(pace: each pass says its own: the defaults are the local pace, timeout=60 turns it off)")
    print(f"1. a localhost server serving {args.slots} at once at {args.latency:g} s a call; {args.items} graph "
          f"factual items, concurrency {CONCURRENCY} (the default):", flush=True)
    many = many_slots(args)
    print(f"2. a one-slot localhost server at {args.slow_latency:g} s a call, at the defaults:", flush=True)
    slow = one_slot(args)
    if args.json:
        print(json.dumps({"many": many["ratios"], "one_slot": slow}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
