"""Processes sharing one rate-limited key: items scored, 429 share, and the ratio to the limit-bound ideal.

    python benchmarks/shared_key.py                       # this checkout, both cases, 2 processes
    python benchmarks/shared_key.py --baseline DIR        # DIR (the code before) and this one, alternately
    python benchmarks/shared_key.py --overhead            # CPU per request of the shared state file

Each case starts ../shared/tools/fake_llm.py with a provider-like limiter (as benchmarks/quotas.py:
token buckets refilled continuously, the provider's headers on every reply, 429 + retry-after over
the limit) and runs `--processes` `judgeflow run` commands at once against it, as two terminals or
two CI jobs would: the same endpoint, the same key, each with its own store and output, no cache,
`--concurrency 16`, each judging the same `--items` rows:
- requests: OpenAI wire, `--rpm 12 --ratelimit-window-s 2` (6 requests/s), factual QA items;
- tokens: Anthropic wire, `--tpm 12000 --ratelimit-window-s 4` (3,000 input tokens/s), faithfulness items.

Printed per case and version: items scored (all processes), the share of requests answered 429, the
wall time (first request to last reply, from the fake's log) and its ratio to the limit-bound ideal
(the admitted requests' cost less the one full bucket the fake starts with, divided by the allowed
rate: 1.0 is the limit used to the full, with no 429 wasted). With --baseline both versions run in
the same sitting, each on a fresh fake and a fresh folder of shared limit state.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quotas import ROOT, SHARED, read_log, say_pace, start_fake  # noqa: E402

#: case -> (wire, data file, model, fake_llm.py limiter flags)
CASES: dict[str, tuple[str, str, str, list[str]]] = {
    "requests": ("openai", "factual_qa.jsonl", "openai/gpt-4o-mini", ["--rpm", "12", "--ratelimit-window-s", "2"]),
    "tokens": ("anthropic", "faithfulness.jsonl", "anthropic/claude-haiku-4-5",
               ["--tpm", "12000", "--ratelimit-window-s", "4"]),
}


def run_case(root: Path, case: str, items: int, processes: int, concurrency: int) -> dict[str, Any]:
    wire, data, model, flags = CASES[case]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "fake.jsonl"
        proc, port = start_fake(flags, log)
        try:
            base = f"http://127.0.0.1:{port}" + ("/v1" if wire == "openai" else "")
            env = {**os.environ, "PYTHONPATH": str(root), "JUDGEFLOW_LIMITS_DIR": str(Path(tmp) / "limits"),
                   "OPENAI_API_KEY": "sk-shared-key-bench", "ANTHROPIC_API_KEY": "sk-ant-shared-key-bench"}
            runs = []
            for k in range(processes):
                out = Path(tmp) / f"out{k}.jsonl"
                cmd = [sys.executable, "-m", "judgeflow", "run", str(SHARED / "data" / data), "-o", str(out),
                       "--model", model, "--base-url", base, "--limit", str(items), "--concurrency", str(concurrency),
                       "--no-cache", "--store", str(Path(tmp) / f"store{k}.db"), "--no-progress"]
                say_pace(cmd)
                runs.append((out, subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL,
                                                   stderr=subprocess.PIPE, text=True)))
            exits = []
            for _, p in runs:
                _, err = p.communicate()
                exits.append(p.returncode)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        rows = [json.loads(line) for out, _ in runs if out.exists() for line in out.read_text().splitlines()]
        stats = read_log(log)
    limit, window = float(flags[1]), float(flags[3])
    units = stats["ok"] if case == "requests" else stats["cost"]
    ideal = max(0.0, units - limit) / (limit / window)  # the bucket starts full: its first `limit` units are free
    return {"case": case, "items": len(rows), "expected": items * processes,
            "scored": sum(r.get("label") is not None for r in rows), **stats, "exits": exits,
            "share_429": stats["429"] / max(stats["requests"], 1), "ideal": ideal,
            "ratio": ideal / stats["wall"] if stats["wall"] else 0.0}


def overhead(requests: int = 3000, passes: int = 5) -> tuple[float, float]:
    """CPU per request (us) of the limiter's slow path with a known limit: process-local, and through
    the shared state file (flock, read, write). Least of `passes` interleaved passes."""
    import asyncio

    from judgeflow.backends.limits import Bucket, Limiter
    from judgeflow.backends.shared_limits import SharedState

    async def one_pass(shared: bool, folder: Path) -> float:
        lim = Limiter(name="bench", shared=SharedState(folder / "bench.json") if shared else None)
        now = time.monotonic()
        lim.buckets["requests"] = Bucket(1e12, 1e12, 1e12, now, "set", seen=now)
        lim.set_limits["requests"] = 1e12
        start = time.process_time()
        for _ in range(requests):
            await lim.acquire((1.0, 100.0, 0.0, 0.0), None)
            lim.release(ok=True)
        return (time.process_time() - start) / requests * 1e6

    best = {False: float("inf"), True: float("inf")}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(passes):
            for shared in (False, True):
                best[shared] = min(best[shared], asyncio.run(one_pass(shared, Path(tmp))))
    return best[False], best[True] - best[False]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=[*CASES, "both"], default="both")
    ap.add_argument("--items", type=int, help="items per process (default 40 requests-bound, 30 tokens-bound)")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--baseline", type=Path, help="a checkout of the code before (run first, same sitting)")
    ap.add_argument("--overhead", action="store_true", help="only the CPU per request of the shared state")
    args = ap.parse_args()
    if args.overhead:
        local, added = overhead()
        print(f"a request through the limiter with a known limit costs {local:.1f} us CPU process-locally; "
              f"the shared state file adds {added:.1f} us (the client spends ~2,500 us a call in all, benchmarks/cpu.py)")
        return
    if not (SHARED / "tools" / "fake_llm.py").exists():
        raise SystemExit(f"needs {SHARED}/tools/fake_llm.py and {SHARED}/data")
    versions = ([("before", args.baseline.resolve())] if args.baseline else []) + [("after", ROOT)]
    for case in (list(CASES) if args.case == "both" else [args.case]):
        items = args.items or (40 if case == "requests" else 30)
        for name, root in versions:
            r = run_case(root, case, items, args.processes, args.concurrency)
            print(f"{case:8}-bound, {args.processes} processes, {name:6}: scored {r['scored']}/{r['expected']}  "
                  f"exits {r['exits']}  requests {r['requests']} (429: {r['429']}, {r['share_429']:.1%})  "
                  f"wall {r['wall']:.1f}s vs ideal {r['ideal']:.1f}s: ratio {r['ratio']:.2f}", flush=True)


if __name__ == "__main__":
    main()
