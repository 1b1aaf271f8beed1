"""A run against a provider's rate limit: items scored, 429 share, and wall time against the ideal.

    python benchmarks/quotas.py                  # both wires, 100 + 60 items, concurrency 16
    python benchmarks/quotas.py --wire openai --items 200

Each case starts ../shared/tools/fake_llm.py with a provider-like limiter (token buckets refilled
continuously, the provider's headers on every reply, 429 with retry-after over the limit) and runs
`judgeflow run` in a subprocess, as a user would (fresh store, no cache, `--concurrency 16`):
- openai: requests-bound (`--rpm 12 --ratelimit-window-s 2`: 6 requests/s), factual QA items;
- anthropic: tokens-bound (`--tpm 12000 --ratelimit-window-s 4`: 3,000 input tokens/s),
  faithfulness items (sources of 0.1-5k characters).

Printed per case: items scored, the share of requests answered 429, the wall time (first request
to last reply, from the fake's log) and its ratio to the limit-bound ideal (the admitted requests'
cost divided by the allowed rate; the buckets start full, so a short run can beat it a little),
and the limiter tokens per item (what the provider's limiter charged: body bytes / 4, plus
max_tokens on the OpenAI wire, as fake_llm.py counts).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from external import say_pace  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: ../shared (beside the checkout, or beside the folder of worktrees); $JUDGEFLOW_SHARED overrides
SHARED = Path(os.environ.get("JUDGEFLOW_SHARED") or next(
    (p / "shared" for p in ROOT.parents if (p / "shared" / "tools" / "fake_llm.py").exists()), ROOT.parent / "shared"))

#: wire -> (data file, model, fake_llm.py limiter flags, the bound: requests or tokens)
CASES: dict[str, tuple[str, str, list[str], str]] = {
    "openai": ("factual_qa.jsonl", "openai/gpt-4o-mini", ["--rpm", "12", "--ratelimit-window-s", "2"], "requests"),
    "anthropic": ("faithfulness.jsonl", "anthropic/claude-haiku-4-5",
                  ["--tpm", "12000", "--ratelimit-window-s", "4"], "tokens"),
}


def start_fake(flags: list[str], log: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, str(SHARED / "tools" / "fake_llm.py"), "--port", "0", "--log", str(log),
                             "--log-bodies", *flags], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT="):
        proc.kill()
        raise SystemExit(f"fake_llm.py did not start: {line!r}")
    return proc, int(line.strip().split("=", 1)[1])


def limiter_cost(entry: dict[str, Any]) -> int:
    """What fake_llm.py's limiter charges a request (its body re-serialised: an estimate)."""
    req = entry.get("request") or {}
    tokens = math.ceil(len(json.dumps(req, separators=(",", ":"))) / 4)
    if entry.get("api") == "openai":
        budget = req.get("max_completion_tokens", req.get("max_tokens"))
        tokens += budget if isinstance(budget, int) else 0
    return tokens


def read_log(log: Path) -> dict[str, Any]:
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    llm = [e for e in entries if e.get("llm") or e.get("status") == 429]
    ok = [e for e in llm if e.get("status") == 200]
    start = min(e["ts"] for e in llm)
    end = max(e["ts"] + e.get("elapsed_ms", 0) / 1000 for e in llm)
    return {"requests": len(llm), "ok": len(ok), "429": sum(e.get("status") == 429 for e in llm),
            "cost": sum(limiter_cost(e) for e in ok), "wall": end - start}


def run_case(wire: str, items: int, concurrency: int, extra: list[str], *, unlimited: bool = False) -> dict[str, Any]:
    data, model, flags, bound = CASES[wire]
    limit = float(flags[1])
    window = float(flags[3])
    with tempfile.TemporaryDirectory() as tmp:
        log, out = Path(tmp) / "fake.jsonl", Path(tmp) / "out.jsonl"
        proc, port = start_fake([] if unlimited else flags, log)
        try:
            base = f"http://127.0.0.1:{port}" + ("/v1" if wire == "openai" else "")
            cmd = [sys.executable, "-m", "judgeflow", "run", str(SHARED / "data" / data), "-o", str(out),
                   "--model", model, "--base-url", base, "--limit", str(items), "--concurrency", str(concurrency),
                   "--no-cache", "--store", str(Path(tmp) / "store.db"), "--no-progress", *extra]
            t0 = time.monotonic()
            say_pace(cmd)
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
            elapsed = time.monotonic() - t0
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        stats = read_log(log)
    scored = sum(r.get("label") is not None for r in rows)
    reasons: dict[str, int] = {}
    for r in rows:
        if r.get("label") is None:
            reason = (r.get("error") or r.get("reason") or "?")[:70]
            reasons[reason] = reasons.get(reason, 0) + 1
    rate = limit / window
    units = stats["ok"] if bound == "requests" else stats["cost"]
    ideal = units / rate
    return {"wire": wire, "bound": bound, "items": len(rows), "scored": scored, **stats,
            "share_429": stats["429"] / max(stats["requests"], 1), "ideal": ideal,
            "ratio": ideal / stats["wall"] if stats["wall"] else 0.0, "cost_per_item": stats["cost"] / max(scored, 1),
            "exit": done.returncode, "elapsed": elapsed, "reasons": reasons,
            "tail": done.stderr.strip().splitlines()[-6:]}


def overhead(requests: int = 3000, passes: int = 5) -> tuple[float, float]:
    """CPU per request (microseconds) of an httpx2 client over a MockTransport, without and with the
    limiter under it, on the unlimited path (no headers, no flags): (plain, added by the limiter).
    The two run interleaved, `passes` times each; the least CPU a pass took is taken."""
    import asyncio

    import httpx2

    from judgeflow.backends.limits import CALL, Call, Limiter
    from judgeflow.backends.paced import Paced, RateLimited

    body = json.dumps({"id": "x", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).encode()
    payload = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 2000}], "max_tokens": 256})

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body, headers={"content-type": "application/json", "x-request-id": "r"})

    async def one_pass(paced: bool) -> float:
        transport = httpx2.MockTransport(handler)
        if paced:
            transport = Paced(transport, Limiter(name="bench"), "openai", RateLimited)  # type: ignore[assignment]
        async with httpx2.AsyncClient(transport=transport, base_url="http://bench.test/v1") as client:
            start = time.process_time()
            for _ in range(requests):
                token = CALL.set(Call(max_tokens=256)) if paced else None
                await client.post("/chat/completions", content=payload)
                if token is not None:
                    CALL.reset(token)
            return (time.process_time() - start) / requests * 1e6

    best = {False: float("inf"), True: float("inf")}
    for _ in range(passes):
        for paced in (False, True):
            best[paced] = min(best[paced], asyncio.run(one_pass(paced)))
    return best[False], best[True] - best[False]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wire", choices=["openai", "anthropic", "both"], default="both")
    ap.add_argument("--items", type=int, help="items per case (default 100 on openai, 60 on anthropic)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--json", action="store_true", help="print each case as one JSON line too")
    ap.add_argument("--unlimited", action="store_true",
                    help="the same cases with no limit on the fake: the limiter tokens per item alone")
    ap.add_argument("--overhead", action="store_true",
                    help="only measure the limiter's CPU per request on the unlimited path (no server)")
    ap.add_argument("extra", nargs="*", help="more `judgeflow run` flags (after --)")
    args = ap.parse_args()
    if args.overhead:
        plain, added = overhead()
        print(f"unlimited path: an httpx2 request over a MockTransport costs {plain:.1f} us CPU; the limiter under it "
              f"adds {added:.1f} us ({added / plain:.1%} of that; the client spends ~2,500 us a call in all, "
              "benchmarks/cpu.py)")
        return
    if not (SHARED / "tools" / "fake_llm.py").exists():
        raise SystemExit(f"needs {SHARED}/tools/fake_llm.py and {SHARED}/data")
    for wire in (["openai", "anthropic"] if args.wire == "both" else [args.wire]):
        r = run_case(wire, args.items or (100 if wire == "openai" else 60), args.concurrency, args.extra,
                     unlimited=args.unlimited)
        print(f"{wire:9} ({r['bound']}-bound): scored {r['scored']}/{r['items']}  exit {r['exit']}  "
              f"requests {r['requests']} (429: {r['429']}, {r['share_429']:.0%})  "
              f"wall {r['wall']:.1f}s vs ideal {r['ideal']:.1f}s: ratio {r['ratio']:.2f}  "
              f"limiter tokens/item {r['cost_per_item']:,.0f}")
        for reason, n in sorted(r["reasons"].items(), key=lambda kv: -kv[1])[:3]:
            print(f"    unscored x{n}: {reason}")
        if args.json:
            print(json.dumps({k: v for k, v in r.items() if k != "tail"}))


if __name__ == "__main__":
    main()
