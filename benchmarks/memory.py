"""Peak memory of `judgeflow run` at 1k/10k/100k items, and the wall time of a cached re-run.

    python benchmarks/memory.py                          # offline + fake LLM, factual and faithfulness
    python benchmarks/memory.py --sizes 1000 10000 --llm-sizes 1000 --cached 1000
    python benchmarks/memory.py --sizes 100000 --llm-sizes 10000 --cached 0 --fake in-repo [--root /tmp/base]

Each measurement is one `judgeflow run IN -o OUT` in its own process (interpreter start and imports
included); peak RSS is that process's `ru_maxrss` (os.wait4). Items are synthetic: the rows of
../shared/data/factual_qa.jsonl and faithfulness.jsonl cycled to the size with unique ids (or
generated, when the data is not there), written to a temporary directory with a fresh store.
Judges: the offline `baseline/lexical`, and `openai/gpt-4o-mini --base-url` against
../shared/tools/fake_llm.py or, without it, tests/fakes/schema_provider.py (a schema-following fake
server; the real openai SDK, Instructor and the LangGraph graph strategy all run), with --no-cache
so that every item is judged (the cycled rows repeat). Growth is bytes per item between the two largest sizes.
The cached re-run judges 1,000 items once, then times the same command again (a new run, every
item served from the store's response cache). Aims (issue 12): 100,000 items < 300 MB; the cached
re-run of 1,000 items < 1.5 s.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import external
from external import shared_dir

ROOT = Path(__file__).resolve().parents[1]
SHARED = shared_dir()  # the labelled data and the schema-following fake (--shared DIR elsewhere; see external.py)
CASES = {"factual": "factual_qa.jsonl", "faithfulness": "faithfulness.jsonl"}
AIM_MB, AIM_ITEMS, AIM_CACHED_S = 300.0, 100_000, 1.5
MODEL = "openai/gpt-4o-mini"


def base_rows(case: str) -> list[dict[str, Any]]:
    path = SHARED / "data" / CASES[case]
    if path.exists():
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if case == "factual":
        return [{"id": str(i), "question": f"Question {i}?", "reference": f"Answer {i}.",
                 "answer": f"The answer is {i}. It was well known."} for i in range(200)]
    return [{"id": str(i), "source": f"Document {i} says the sky is blue. " * 60,
             "answer": "The sky is blue. The document says so."} for i in range(200)]


def write_items(path: Path, case: str, n: int) -> int:
    """n rows of `case` cycled with unique ids; returns the file's size in bytes."""
    with path.open("w", encoding="utf-8") as f:
        for k, row in zip(range(n), itertools.cycle(base_rows(case))):
            f.write(json.dumps({**row, "id": f"{row.get('id')}#{k}"}, ensure_ascii=False) + "\n")
    return path.stat().st_size


def run(args: list[str], env: dict[str, str]) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS in MB) of one `judgeflow run` process (in the checkout
    measured: `-m` puts the working directory first on the import path)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "judgeflow", *args], env=env, cwd=env["PYTHONPATH"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"judgeflow {' '.join(args)} exited {proc.returncode}:\n{err[-2000:]}")
    return proc.returncode, wall, usage.ru_maxrss / 1024  # Linux: kilobytes


def start_fake(which: str) -> tuple[subprocess.Popen[str], str]:
    # a folder without tools/fake_llm.py: external.start_fake takes tests/fakes/schema_provider.py
    proc, root = external.start_fake(shared=ROOT / "tests" if which == "in-repo" else SHARED)
    return proc, root + "/v1"


def check_rows(out: Path, n: int) -> None:
    with out.open(encoding="utf-8") as f:
        got = sum(1 for _ in f)
    if got != n:
        raise SystemExit(f"{out}: {got} rows for {n} items")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000], help="offline judge sizes")
    ap.add_argument("--llm-sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000],
                    help="fake-LLM (graph strategy) sizes; none to skip")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--cached", type=int, default=1_000, help="items in the cached re-run (0 to skip)")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--shared", type=Path, default=SHARED, help="the folder holding data/ and tools/fake_llm.py")
    ap.add_argument("--fake", choices=["auto", "in-repo"], default="auto",
                    help="in-repo: tests/fakes/schema_provider.py even when the shared fake is there")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose judgeflow runs (a baseline)")
    a = ap.parse_args()
    globals()["SHARED"] = a.shared  # optional: without its data/ the rows are generated
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake-benchmark", "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": str(a.root.resolve())}
    env.pop("JUDGEFLOW_MODEL", None)
    env.pop("JUDGEFLOW_BASE_URL", None)
    fake, url = start_fake(a.fake)
    try:
        with tempfile.TemporaryDirectory(prefix="jf-memory-") as tmp:
            t = Path(tmp)
            judges = [("baseline/lexical", a.sizes, [])]
            if a.llm_sizes:
                judges.append((f"{MODEL} (fake, graph)", a.llm_sizes, ["--model", MODEL, "--base-url", url]))
                external.say_pace(["judgeflow", "run", "--base-url", url])  # the wall times' pace
            print(f"{'judge':<32} {'case':<13} {'items':>7} {'input MB':>8} {'s':>7} {'peak MB':>8} "
                  f"{'aim MB':>7} {'ratio':>6}")
            growth: list[str] = []
            for (name, sizes, flags), case in itertools.product(judges, a.cases):
                points = []
                for n in sorted(sizes):
                    items = t / f"{case}-{n}.jsonl"
                    size = write_items(items, case, n) if not items.exists() else items.stat().st_size
                    out, store = t / "out.jsonl", t / f"store-{len(points)}-{case}-{abs(hash(name))}.sqlite"
                    # --no-cache: the cycled rows repeat, and every item is to be judged, not served from the cache
                    _, wall, mb = run(["run", str(items), "-o", str(out), "--store", str(store), "--no-progress",
                                       "--no-cache", "--concurrency", str(a.concurrency), *flags], env)
                    check_rows(out, n)
                    store.unlink()
                    for extra in ("-wal", "-shm"):
                        Path(f"{store}{extra}").unlink(missing_ok=True)
                    points.append((n, mb))
                    print(f"{name:<32} {case:<13} {n:>7,} {size / 1e6:>8.1f} {wall:>7.1f} {mb:>8.1f} "
                          f"{AIM_MB:>7.0f} {mb / AIM_MB:>6.2f}", flush=True)
                if len(points) >= 2:
                    (n0, m0), (n1, m1) = points[-2], points[-1]
                    growth.append(f"{name:<32} {case:<13} {(m1 - m0) * 1024 * 1024 / (n1 - n0):>8,.0f} bytes/item "
                                  f"({n0:,} -> {n1:,} items)")
            if growth:
                print("\ngrowth of peak RSS")
                print("\n".join(growth))
            if a.cached:
                items, out, store = t / "cached.jsonl", t / "cached-out.jsonl", t / "cached.sqlite"
                write_items(items, "factual", a.cached)
                cmd = ["run", str(items), "-o", str(out), "--store", str(store), "--no-progress",
                       "--model", MODEL, "--base-url", url]
                _, first, _ = run(cmd, env)
                check_rows(out, a.cached)
                walls = [run(cmd, env)[1] for _ in range(3)]
                check_rows(out, a.cached)
                best = min(walls)
                print(f"\ncached re-run, {a.cached:,} factual items, {MODEL} (fake, graph): first run {first:.2f} s; "
                      f"re-runs {', '.join(f'{w:.2f}' for w in walls)} s; best {best:.2f} s, aim {AIM_CACHED_S} s, "
                      f"ratio {best / AIM_CACHED_S:.2f}")
    finally:
        fake.terminate()
        fake.wait()
    print(f"\nload average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
