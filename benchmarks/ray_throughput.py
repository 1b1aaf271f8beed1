"""Items/s of `judge_dataset` on a local Ray (1 and 2 actors) beside the single-process CLI.

    python benchmarks/ray_throughput.py                    # 2,000 items, 200 ms latency, 16 per actor
    python benchmarks/ray_throughput.py --items 500 --latency-ms 100 --concurrency 8

The provider is ../shared/tools/fake_llm.py in its own process (`--latency-ms`, `--array-len 0`:
each reply is a valid empty claim list, so every item is judged in exactly one call with
`--strategy single`, no re-asks). The real openai SDK, Instructor and the LangGraph workflow run
in every path. For each configuration, at total concurrency C (actors x per-actor concurrency for
Ray, `--concurrency C` for the CLI):

- wall: the whole job, end to end (Ray: actor start, read, judge, write shards; CLI: interpreter
  start, read, judge with its SQLite store, write the output file);
- provider: first to last model call as the fake saw them (the steady-state rate);
- ideal: C / (calls per item x latency), the latency-bound rate; ratio = provider rate / ideal;
- overhead/item: C / provider rate - calls per item x latency: the time an item spends in flight
  beyond waiting on the provider (client, workflow, Ray batching and transfer).

Ray's own start (`ray.init`) is printed apart: it is paid once per job or cluster, not per item.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from external import say_pace  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAKE_LLM = next((p / "shared" / "tools" / "fake_llm.py" for p in ROOT.parents
                 if (p / "shared" / "tools" / "fake_llm.py").exists()), None)


class Fake:
    def __init__(self, log: Path, latency_ms: float) -> None:
        if FAKE_LLM is None:
            raise SystemExit("shared/tools/fake_llm.py not found beside the project")
        self.log = log
        self.proc = subprocess.Popen([sys.executable, str(FAKE_LLM), "--port", "0", "--latency-ms", str(latency_ms),
                                      "--array-len", "0", "--log", str(log)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline().strip().split("=")[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def mark(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0

    def calls_since(self, mark: int) -> list[float]:
        lines = self.log.read_text().splitlines()[mark:]
        return sorted(e["ts"] for e in map(json.loads, lines) if e.get("llm"))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def make_items(path: Path, n: int) -> None:
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"q{i}", "question": f"What is {i} + 1?", "answer": f"It is {i + 1}.",
                                "reference": str(i + 1)}) + "\n")


def row(name: str, c: int, n: int, wall: float, calls: list[float], latency: float) -> dict[str, Any]:
    span = calls[-1] - calls[0] if len(calls) > 1 else wall
    per_item = len(calls) / n
    rate = n / span
    ideal = c / (per_item * latency)
    return {"path": name, "C": c, "items": n, "calls/item": per_item, "wall s": wall, "wall items/s": n / wall,
            "provider items/s": rate, "ideal items/s": ideal, "ratio": rate / ideal,
            "overhead ms/item": (c / rate - per_item * latency) * 1000}


def run_cli(fake: Fake, items: Path, tmp: Path, c: int, n: int, latency: float) -> dict[str, Any]:
    mark = fake.mark()
    cmd = [sys.executable, "-m", "judgeflow", "run", str(items), "-o", str(tmp / f"cli{c}.jsonl"),
           "--store", str(tmp / f"cli{c}.sqlite"), "--model", "openai/fake", "--base-url", fake.base_url,
           "--strategy", "single", "--reasks", "0", "--retries", "0", "--concurrency", str(c), "--no-progress"]
    start = time.monotonic()
    say_pace(cmd)
    subprocess.run(cmd, check=True, capture_output=True, env={**_env(), "OPENAI_API_KEY": "sk-fake"})
    return row("CLI (one process)", c, n, time.monotonic() - start, fake.calls_since(mark), latency)


def run_ray(ray: Any, fake: Fake, items: Path, tmp: Path, actors: int, per_actor: int, n: int,
            latency: float) -> dict[str, Any]:
    from judgeflow.integrations.ray import judge_dataset, write_judgments

    mark = fake.mark()
    start = time.monotonic()
    ds = ray.data.read_text(str(items))
    out = judge_dataset(ds, model="openai/fake", base_url=fake.base_url, api_key="sk-fake", strategy="single",
                        max_retries=0, provider_retries=0, concurrency=per_actor, num_actors=actors,
                        json_column="text")
    write_judgments(out, tmp / f"ray{actors}", fmt="parquet")
    wall = time.monotonic() - start
    return row(f"Ray, {actors} actor(s) x {per_actor}", actors * per_actor, n, wall, fake.calls_since(mark), latency)


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("JUDGEFLOW_MODEL", "JUDGEFLOW_BASE_URL")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--latency-ms", type=float, default=200.0)
    ap.add_argument("--concurrency", type=int, default=16, help="items in flight per actor (default 16)")
    ap.add_argument("--num-cpus", type=int, default=2, help="CPUs for the local Ray (default 2)")
    args = ap.parse_args()
    import ray

    latency = args.latency_ms / 1000
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        items = tmp / "items.jsonl"
        make_items(items, args.items)
        fake = Fake(tmp / "fake.jsonl", args.latency_ms)
        rows = []
        try:
            c = args.concurrency
            rows.append(run_cli(fake, items, tmp, c, args.items, latency))
            rows.append(run_cli(fake, items, tmp, 2 * c, args.items, latency))
            start = time.monotonic()
            ray.init(num_cpus=args.num_cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
            ray.data.DataContext.get_current().enable_progress_bars = False
            ray_start = time.monotonic() - start
            rows.append(run_ray(ray, fake, items, tmp, 1, c, args.items, latency))
            rows.append(run_ray(ray, fake, items, tmp, 2, c, args.items, latency))
        finally:
            fake.stop()
            ray.shutdown()
    print(f"{args.items} items, {args.latency_ms:.0f} ms fake latency, strategy single (1 call an item); "
          f"local Ray with {args.num_cpus} CPUs; ray.init took {ray_start:.1f}s (not in the rows)")
    cols = list(rows[0])
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in r.values()))
    cli = {r["C"]: r for r in rows if r["path"].startswith("CLI")}
    for r in rows:
        if r["path"].startswith("Ray") and r["C"] in cli:
            base = cli[r["C"]]
            print(f"{r['path']} vs CLI at C={r['C']}: provider rate x{r['provider items/s'] / base['provider items/s']:.2f}, "
                  f"wall x{r['wall items/s'] / base['wall items/s']:.2f}; Ray adds "
                  f"{r['overhead ms/item'] - base['overhead ms/item']:+.1f} ms per item in flight, "
                  f"{(r['wall s'] - base['wall s']) / r['items'] * 1000:+.2f} ms of wall time per item")


if __name__ == "__main__":
    main()
