"""Tokens the limiter charges against the tokens the replies use, under a token limit (learned reply budgets).

    python benchmarks/reply_budgets.py                   # this checkout: single and graph
    python benchmarks/reply_budgets.py --baseline DIR    # DIR (the code before) and this one, same sitting

Each case starts ../shared/tools/fake_llm.py with a tokens-per-minute limit on the OpenAI wire
(`--tpm 40000 --ratelimit-window-s 4`: 10,000 tokens/s; OpenAI, like the fake, charges a request's
body / 4 plus its `max_tokens` when it admits it) and runs `judgeflow run` on `--items` rows of
`--data` (faithfulness items by default) at `--concurrency 16` for each strategy. From the fake's log, per admitted request:
- charged: body bytes / 4 + max_tokens (what the limiter, and the provider, counted);
- used: body bytes / 4 + the completion tokens the reply reports (the input as the limiter counts it,
  and the reply as it was);
- reported: prompt + completion tokens of the reply's usage (the fake counts messages' text only, not
  the tool schema, so this is below what a real provider would report);
- over budget: replies whose completion tokens exceeded the `max_tokens` sent (the fake never cuts a
  reply off; a provider would have cut these, and judgeflow would have asked again).
Printed: charged / used, charged / reported, over-budget replies, the 429 share, and items per second.
`--array-len N` has the fake list N entries in every array (N claims an item: `--array-len 28`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quotas import ROOT, SHARED, limiter_cost, say_pace, start_fake  # noqa: E402

FLAGS = ["--tpm", "40000", "--ratelimit-window-s", "4"]


def run_case(root: Path, strategy: str, items: int, concurrency: int, data: str,
             array_len: int | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        log, out = Path(tmp) / "fake.jsonl", Path(tmp) / "out.jsonl"
        proc, port = start_fake(FLAGS + (["--array-len", str(array_len)] if array_len else []), log)
        try:
            cmd = [sys.executable, "-m", "judgeflow", "run", str(SHARED / "data" / data), "-o", str(out),
                   "--model", "openai/gpt-4o-mini", "--base-url", f"http://127.0.0.1:{port}/v1", "--limit", str(items),
                   "--concurrency", str(concurrency), "--strategy", strategy, "--no-cache", "--no-progress",
                   "--store", str(Path(tmp) / "store.db")]
            env = {**os.environ, "PYTHONPATH": str(root), "JUDGEFLOW_LIMITS_DIR": str(Path(tmp) / "limits")}
            say_pace(cmd)
            done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    llm = [e for e in entries if e.get("llm") or e.get("status") == 429]
    ok = [e for e in llm if e.get("status") == 200]
    body = [math.ceil(len(json.dumps(e["request"], separators=(",", ":"))) / 4) for e in ok]
    charged = sum(limiter_cost(e) for e in ok)
    used = sum(b + e.get("completion_tokens", 0) for b, e in zip(body, ok))
    reported = sum(e.get("prompt_tokens", 0) + e.get("completion_tokens", 0) for e in ok)
    start = min(e["ts"] for e in llm)
    wall = max(e["ts"] + e.get("elapsed_ms", 0) / 1000 for e in llm) - start
    sent = [e["request"].get("max_completion_tokens") or e["request"].get("max_tokens") for e in ok]
    budgets = sorted(set(sent))
    over = sum(isinstance(b, int) and e.get("completion_tokens", 0) > b for b, e in zip(sent, ok))
    return {"strategy": strategy, "scored": sum(r.get("label") is not None for r in rows), "items": len(rows),
            "exit": done.returncode, "requests": len(llm), "share_429": (len(llm) - len(ok)) / max(len(llm), 1),
            "charged_used": charged / max(used, 1), "charged_reported": charged / max(reported, 1),
            "per_item": charged / max(len(rows), 1), "items_s": len(rows) / wall if wall else 0.0,
            "budgets": budgets, "over": over, "used_per_item": used / max(len(rows), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=96)
    ap.add_argument("--data", default="faithfulness.jsonl", help="a file of ../shared/data (default faithfulness.jsonl)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--array-len", type=int, help="entries in every array of the fake's replies (claims an item)")
    ap.add_argument("--strategies", nargs="+", default=["single", "graph"])
    ap.add_argument("--baseline", type=Path, help="a checkout of the code before (run first, same sitting)")
    args = ap.parse_args()
    if not (SHARED / "tools" / "fake_llm.py").exists():
        raise SystemExit(f"needs {SHARED}/tools/fake_llm.py and {SHARED}/data")
    versions = ([("before", args.baseline.resolve())] if args.baseline else []) + [("after", ROOT)]
    for strategy in args.strategies:
        for name, root in versions:
            r = run_case(root, strategy, args.items, args.concurrency, args.data, args.array_len)
            shown = r["budgets"] if len(r["budgets"]) <= 6 else [*r["budgets"][:3], "...", *r["budgets"][-2:]]
            print(f"{strategy:6} {name:6}: scored {r['scored']}/{r['items']}  exit {r['exit']}  charged/used "
                  f"{r['charged_used']:.2f}x  charged/reported {r['charged_reported']:.2f}x  limiter tokens/item "
                  f"{r['per_item']:,.0f} (used {r['used_per_item']:,.0f})  over budget {r['over']}/{r['requests']}"
                  f"  429 {r['share_429']:.1%}  items/s {r['items_s']:.2f}  max_tokens sent {shown}",
                  flush=True)


if __name__ == "__main__":
    main()
