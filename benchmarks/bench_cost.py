"""What a `judgeflow bench` costs with a model: time and calls for N items through the in-repo schema fake.

    python benchmarks/bench_cost.py                                  # 200 generated FaithBench-format items
    python benchmarks/bench_cost.py --data DIR --limit 200           # 200 of a FaithBench release copy on disk

Starts `tests/fakes/schema_provider.py` (a real HTTP server answering every request with a value of
the request's JSON schema) at --latency-ms per request, runs `judgeflow bench faithbench --data DIR
--limit N --model openai/gpt-4o-mini --base-url <the fake>` in a subprocess, and prints the whole
command's time, the requests the fake received, the calls the rows recorded, and the ratio of the
latency-bound ideal (requests x latency / concurrency) to the time taken. Then runs the same command
again (the response cache answers it: 0 requests) and a plain `judgeflow run` of the same items file
into another store (what bench adds to a run). Nothing is downloaded; no key is needed.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.bench_files import faithbench_batch  # noqa: E402
from fakes.schema_provider import SchemaProvider  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from external import say_pace  # noqa: E402

SENTENCES = ["The film grossed $181 million at the worldwide box office.", "Its budget was $160 million.",
             "It opened in May 2006 in the United States.", "Critics praised the visual effects.",
             "The director had made two earlier disaster films."]


def generated(root: Path, n: int) -> Path:
    """A FaithBench-format copy with n summaries of 2-5 sentences over the batch files."""
    from judgeflow.bench.faithbench import BATCHES

    samples = []
    for i in range(n):
        summary = " ".join(SENTENCES[: 2 + i % 4])
        spans = [(["Unwanted", "Unwanted.Intrinsic"], 0, 8)] if i % 3 == 0 else []
        samples.append((summary, spans))
    for b in BATCHES:
        path = root / "data_for_release" / f"batch_{b}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(faithbench_batch(samples if b == 1 else []))
    return root


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    return time.monotonic() - t0, done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, help="a FaithBench release copy (default: generated items)")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--latency-ms", type=float, default=800.0)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, SchemaProvider(seed=1, latency=args.latency_ms / 1000) as fake:
        data = args.data or generated(Path(tmp) / "release", args.limit)
        out = Path(tmp) / "results.jsonl"
        cmd = [sys.executable, "-m", "judgeflow", "bench", "faithbench", "--data", str(data), "--limit",
               str(args.limit), "--model", "openai/gpt-4o-mini", "--base-url", fake.base_url + "/v1", "--concurrency",
               str(args.concurrency), "--store", str(Path(tmp) / "runs.sqlite"), "-o", str(out), "--no-progress",
               "--workdir", str(Path(tmp) / "wd")]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "sk-fake",
               "JUDGEFLOW_CACHE_DIR": str(Path(tmp) / "cache")}
        say_pace(cmd)
        seconds, done = run(cmd, env)
        requests = len(fake.requests)
        rows = [json.loads(x) for x in out.read_text().splitlines()] if out.exists() else []
        calls = sum((r.get("usage") or {}).get("calls", 0) for r in rows)
        again, done2 = run(cmd, env)
        before = len(fake.requests)
        again_requests = before - requests
        items = Path(tmp) / "wd" / "faithbench" / f"items.limit{args.limit}.seed0.jsonl"
        plain, done3 = run([sys.executable, "-m", "judgeflow", "run", str(items), "-o", str(Path(tmp) / "plain.jsonl"),
                            "--model", "openai/gpt-4o-mini", "--base-url", fake.base_url + "/v1", "--concurrency",
                            str(args.concurrency), "--store", str(Path(tmp) / "plain.sqlite"), "--no-progress"], env)
        ideal = requests * args.latency_ms / 1000 / args.concurrency
        print(f"{len(rows)} items, {sum(r.get('label') is not None for r in rows)} scored, exit {done.returncode}: "
              f"{seconds:.1f} s, {requests} requests ({requests / max(len(rows), 1):.2f} a item), {calls} calls "
              f"recorded; latency-bound ideal {ideal:.1f} s at {args.latency_ms:g} ms and concurrency "
              f"{args.concurrency}: ratio {ideal / seconds:.2f}")
        print(f"the same bench again: {again:.1f} s, {again_requests} requests (exit {done2.returncode})")
        print(f"`judgeflow run` of the same items file (another store): {plain:.1f} s, {len(fake.requests) - before} "
              f"requests (exit {done3.returncode}); bench / run time: {seconds / plain:.2f}")
        if done.returncode not in (0, 1):
            print(done.stderr[-2000:], file=sys.stderr)


if __name__ == "__main__":
    main()
