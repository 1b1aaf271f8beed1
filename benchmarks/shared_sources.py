"""Rows that share a source against rows whose sources are unique: the ratio to the latency-bound ideal.

    python benchmarks/shared_sources.py                       # 320 rows, 500 ms, concurrency 16
    python benchmarks/shared_sources.py --baseline /tmp/base  # the same, on another checkout too

The first `--rows` rows of ../shared/data/faithfulness.jsonl (95 sources, up to 7 answers each, at
320) are judged by `judgeflow run` (graph strategy, OpenAI wire, no cache, fresh store) against
../shared/tools/fake_llm.py answering each request after `--latency-ms`; then the same rows with
each source made unique (a line naming the row appended), so no row waits for another. Printed per
case: the whole command's wall time, the provider's wall time (first request to last reply, from
the fake's log), the latency-bound ideal (`requests x latency / concurrency`), their ratio, and the
shared rows' speed as a share of the unique rows'. With `--baseline DIR` each case is also run on
the checkout at DIR (interleaved: base, this, base, this), so both are measured in one sitting.
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
from external import ROOT, need_shared, say_pace  # noqa: E402


def start_fake(shared: Path, log: Path, latency_ms: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, str(shared / "tools" / "fake_llm.py"), "--port", "0", "--log", str(log),
                             "--latency-ms", str(latency_ms)], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT="):
        proc.kill()
        raise SystemExit(f"fake_llm.py did not start: {line!r}")
    return proc, int(line.strip().split("=", 1)[1])


def rows(shared: Path, n: int, unique: bool) -> list[dict[str, Any]]:
    out = []
    with open(shared / "data" / "faithfulness.jsonl", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i >= n:
                break
            row = json.loads(line)
            if unique:
                row["source"] = f"{row['source']}\n(row {i})"
            out.append(row)
    return out


def run_case(root: Path, shared: Path, data: list[dict[str, Any]], latency_ms: int, concurrency: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        src, log, out = Path(tmp) / "in.jsonl", Path(tmp) / "fake.jsonl", Path(tmp) / "out.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
        proc, port = start_fake(shared, log, latency_ms)
        try:
            cmd = [sys.executable, "-m", "judgeflow", "run", str(src), "-o", str(out), "--model", "openai/gpt-4o-mini",
                   "--base-url", f"http://127.0.0.1:{port}/v1", "--concurrency", str(concurrency), "--no-cache",
                   "--store", str(Path(tmp) / "store.db"), "--no-progress"]
            t0 = time.monotonic()
            say_pace(cmd)
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=root, check=False,
                                  env={**os.environ, "PYTHONPATH": str(root), "OPENAI_API_KEY": "sk-fake"})
            elapsed = time.monotonic() - t0
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        entries = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
        results = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
    llm = [e for e in entries if e.get("llm")]
    if not llm:
        raise SystemExit(f"no model request reached the fake: {done.stderr.strip()[-400:]}")
    wall = max(e["ts"] + e.get("elapsed_ms", 0) / 1000 for e in llm) - min(e["ts"] for e in llm)
    ideal = len(llm) * latency_ms / 1000 / concurrency
    return {"scored": sum(r.get("label") is not None for r in results), "rows": len(results), "requests": len(llm),
            "wall": wall, "command": elapsed, "ideal": ideal, "ratio": ideal / wall, "exit": done.returncode}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=320)
    ap.add_argument("--latency-ms", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--baseline", type=Path, help="another checkout to measure in the same sitting")
    args = ap.parse_args()
    shared = need_shared()
    roots = ([("base", args.baseline.resolve())] if args.baseline else []) + [("this", ROOT)]
    for name, root in roots:
        got = {}
        for unique in (False, True):
            r = got[unique] = run_case(root, shared, rows(shared, args.rows, unique), args.latency_ms,
                                       args.concurrency)
            print(f"{name:4} {'unique sources' if unique else 'shared sources':14}: scored {r['scored']}/{r['rows']}  "
                  f"requests {r['requests']}  provider wall {r['wall']:.1f}s vs ideal {r['ideal']:.1f}s: ratio "
                  f"{r['ratio']:.2f}  whole command {r['command']:.1f}s  exit {r['exit']}", flush=True)
        print(f"{name:4} shared / unique speed: {got[False]['ratio'] / got[True]['ratio']:.2f} (provider wall), "
              f"{got[True]['command'] / got[False]['command']:.2f} (whole command)", flush=True)


if __name__ == "__main__":
    main()
