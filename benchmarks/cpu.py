"""Client CPU per item, where it goes, and the ratio to the latency-bound ideal.

    python benchmarks/cpu.py                 # 2-6 min on 2 shared cores
    python benchmarks/cpu.py --items 100 --passes 3 --ideal-passes 1

Against ../shared/tools/fake_llm.py (or, without it, tests/fakes/schema_provider.py: a
schema-following fake OpenAI/Anthropic server, started here as a subprocess on a free port), with
the real openai SDK, Instructor, the LangGraph workflow
and judgeflow's own code, all in this process. CPU is this process's `time.process_time()`: the
fake server's CPU (another process) is not counted.

1. CPU ms per item: graph and single strategies, factual_qa.jsonl and faithfulness.jsonl rows,
   OpenAI wire, concurrency 16, no provider latency; `--passes` (5) timed passes of `--items`
   items each, printed as the median pass and the quietest one (a shared VM only ever adds CPU
   time: the least a pass took is what the code needs, the median what a run sees on this
   machine). The first `concurrency` items of each case are judged untimed (connections open,
   schemas built), as in any run of more than a few items.
   Each case runs twice: with the garbage collector as `judgeflow run` sets it for a run
   (`judgeflow.runs.gc_tuning.tuned_gc`), and with Python's defaults (the Python API leaves the
   collector alone). `--http-transport httpx` measures the SDKs' default HTTP stack instead of
   aiohttp (`auto`).
2. Where it goes: cProfile of the graph runs, own time grouped by package.
3. Ratio to the ideal: `--ideal-items` (480) factual items, graph strategy, at C=16 and C=64 and
   50 ms and 200 ms provider latency; ideal seconds = items / C * latency * calls per item;
   `--ideal-passes` (3) passes each, printed as the median pass and the best one. This
   part uses tests/fakes/provider.py --asyncio (fixed replies, one asyncio loop): fake_llm.py
   spends far more CPU per request than the client (printed in part 1), so against it the rate
   measures the fake, not judgeflow. No client reaches the ideal: `python benchmarks/floor.py`
   measures this ratio beside what the HTTP stack alone, and LangGraph with it, reach here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import importlib
import importlib.util
import itertools
import json
import os
import pstats
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import external
from external import need_data, shared_dir

ROOT = Path(__file__).resolve().parents[1]


def _fakes() -> Any:
    """The tests' fakes package (tests/fakes/), loaded from its path: its provider module starts
    the --asyncio fake server (`start_async_fake`)."""
    if "fakes" not in sys.modules:
        init = ROOT / "tests" / "fakes" / "__init__.py"
        spec = importlib.util.spec_from_file_location("fakes", init, submodule_search_locations=[str(init.parent)])
        assert spec is not None and spec.loader is not None
        sys.modules["fakes"] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return importlib.import_module("fakes.provider")


def start_async_fake(latency: float) -> tuple[subprocess.Popen[str], str]:
    """tests/fakes/provider.py --asyncio in its own process (little CPU per request): (process, URL)."""
    return _fakes().start_async_fake(latency)  # type: ignore[no-any-return]


def stop_async_fake(proc: subprocess.Popen[str]) -> None:
    _fakes().stop_async_fake(proc)


SHARED = shared_dir()  # the labelled data and the schema-following fake (see external.py)
REPEAT = 5
IDEAL_PASSES = 3
CASES = (("factual", "factual_qa.jsonl"), ("faithfulness", "faithfulness.jsonl"))
#: package buckets for the profile, in the order a file path is tested (first match wins)
BUCKETS = (("http (httpx, httpcore, h11, anyio, aiohttp)", ("/httpx", "/httpcore", "/h11/", "/anyio/", "/sniffio/",
                                                              "/aiohttp/", "/multidict/", "/yarl/", "/propcache/")),
           ("instructor", "/instructor/"), ("openai", "/openai/"), ("anthropic", "/anthropic/"),
           ("langgraph/langchain", ("/langgraph/", "/langchain_core/", "/langsmith/")),
           ("pydantic", ("/pydantic/", "/pydantic_core/")), ("judgeflow", "/judgeflow/"),
           ("asyncio/ssl/socket (stdlib)", ("/asyncio/", "selectors", "socket", "ssl")), ("json (stdlib)", "/json/"))


def start_fake(latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    """The schema-following fake on a free port; returns (process, base URL without /v1)."""
    return external.start_fake("--latency-ms", str(latency_ms), shared=SHARED)


def load(filename: str, n: int, tag: str) -> list[Any]:
    from judgeflow import read_items
    from judgeflow.items import Item

    base = [it for it in read_items(need_data(SHARED) / "data" / filename) if isinstance(it, Item)]
    return [it.model_copy(update={"id": f"{tag}{k}:{it.id}"}) for k, it in zip(range(n), itertools.cycle(base))]


async def judge_all(judge: Any, items: list[Any], concurrency: int) -> tuple[float, float, int, int]:
    """(wall s, CPU s, judged, calls) for one pass."""
    judged = calls = 0
    start, cpu = time.perf_counter(), time.process_time()
    from judgeflow import judge_stream

    async for _, j in judge_stream(judge, items, concurrency=concurrency):
        judged += j.status == "judged"
        calls += j.usage.calls
    return time.perf_counter() - start, time.process_time() - cpu, judged, calls


TRANSPORT = "auto"


def make_judge(url: str, strategy: str, mode: str, concurrency: int) -> Any:
    from judgeflow import Judge

    # only a non-default transport is passed: a judgeflow from before the option (a before/after
    # figure measured with PYTHONPATH) does not know it
    extra = {"http_transport": TRANSPORT} if TRANSPORT != "auto" else {}
    return Judge("openai/fake-judge", base_url=url + "/v1", api_key="bench", mode=mode, strategy=strategy,
                 concurrency=concurrency, keep_trace=False, **extra)


def run_gc(tuned: bool) -> Any:
    """The collector as `judgeflow run` sets it (tuned), or Python's defaults; a judgeflow from
    before gc_tuning has only the defaults."""
    if tuned:
        with contextlib.suppress(ImportError):
            from judgeflow.runs.gc_tuning import tuned_gc

            return tuned_gc()
    return contextlib.nullcontext()


async def close(judge: Any) -> None:
    """Close the judge's connections in this event loop (they belong to it); a judgeflow from
    before Judge.aclose (measured for a before/after figure with PYTHONPATH) has none to call."""
    aclose = getattr(judge, "aclose", None)
    if aclose is not None:
        await aclose()


def bucket(filename: str) -> str:
    for name, marks in BUCKETS:
        if any(m in filename for m in ((marks,) if isinstance(marks, str) else marks)):
            return name
    return "other (stdlib, C builtins)"


async def case(url: str, strategy: str, mode: str, filename: str, n: int,
               profile: cProfile.Profile | None) -> tuple[tuple[float, float, int, int], float]:
    """Warm up, time, then (graph only) a separate profiled pass; one event loop (the SDK's
    connections belong to the loop that opened them). (the median pass, the least CPU of a pass)."""
    judge = make_judge(url, strategy, mode, 16)
    await judge_all(judge, load(filename, 16, "warm"), 16)
    runs = []
    for k in range(REPEAT):  # the machine is shared: the median pass, and the quietest
        items = load(filename, n, f"r{k}-")
        runs.append(await judge_all(judge, items, 16))
    if strategy == "graph" and profile is not None:  # profiling slows the code it watches: not a timed pass
        items = load(filename, n // 2, "prof")
        profile.enable()
        await judge_all(judge, items, 16)
        profile.disable()
    await close(judge)
    return sorted(runs, key=lambda r: r[1])[len(runs) // 2], min(r[1] for r in runs)


def cpu_per_item(url: str, n: int, profile: cProfile.Profile) -> list[dict[str, Any]]:
    rows = []
    for (mode, filename), strategy, tuned in itertools.product(CASES, ("graph", "single"), (True, False)):
        with run_gc(tuned):
            (wall, cpu, judged, calls), least = asyncio.run(
                case(url, strategy, mode, filename, n, profile if tuned else None))
        gc_name = "run" if tuned else "default"
        rows.append({"mode": mode, "strategy": strategy, "gc": gc_name, "items": n, "judged": judged,
                     "calls": calls / n, "cpu_ms": cpu * 1000 / n, "min_cpu_ms": least * 1000 / n, "wall_s": wall})
        print(f"  {mode:13} {strategy:6} gc {gc_name:7}  judged {judged}/{n}  calls/item {calls / n:.2f}  "
              f"CPU {cpu * 1000 / n:6.2f} ms/item, quietest pass {least * 1000 / n:5.2f}  "
              f"({cpu * 1000 / max(calls, 1):.2f} ms/call)", flush=True)
    return rows


def where(profile: cProfile.Profile) -> None:
    """Own time by package; a C builtin's own time goes to the packages that called it."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tottime, _, callers) in stats.items():
        if filename != "~" or not callers:
            total[bucket(filename)] += tottime
            continue
        weights = {caller: c[3] for caller, c in callers.items()}
        whole = sum(weights.values()) or 1.0
        for (caller_file, _, _), w in weights.items():
            total[bucket(caller_file)] += tottime * w / whole
    grand = sum(total.values()) or 1.0
    for name, t in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"  {name:36} {t / grand:6.1%}")


def server_cpu(proc: subprocess.Popen[str]) -> float:
    """CPU seconds the fake server's process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


async def ideal_case(url: str, c: int, n: int) -> tuple[float, float, int, int]:
    judge = make_judge(url, "graph", "factual", c)
    await judge_all(judge, load("factual_qa.jsonl", c, "warm"), c)
    try:
        return await judge_all(judge, load("factual_qa.jsonl", n, ""), c)
    finally:
        await close(judge)


def ideal_ratios(n: int) -> list[dict[str, Any]]:
    rows = []
    for latency_ms in (50, 200):
        proc, url = start_async_fake(latency_ms / 1000)
        try:
            for c in (16, 64):
                passes = []
                for _ in range(IDEAL_PASSES):
                    before = server_cpu(proc)
                    with run_gc(True):
                        wall, cpu, judged, calls = asyncio.run(ideal_case(url, c, n))
                    passes.append((wall, cpu, judged, calls, server_cpu(proc) - before))
                wall, cpu, judged, calls, server = sorted(passes)[len(passes) // 2]  # the median pass
                ideal = n / c * (latency_ms / 1000) * (calls / n)
                best = ideal / min(p[0] for p in passes)
                rows.append({"latency_ms": latency_ms, "concurrency": c, "ratio": ideal / wall, "best_ratio": best,
                             "judged": judged})
                print(f"  latency {latency_ms:3} ms  C={c:<3} {n} items  judged {judged}  calls/item {calls / n:.2f}  "
                      f"wall {wall:6.2f} s  ideal {ideal:6.2f} s  ratio {ideal / wall:.2f} (best pass {best:.2f})  "
                      f"client CPU {cpu * 1000 / n:.2f} ms/item  (server {server * 1000 / n:.2f})", flush=True)
        finally:
            stop_async_fake(proc)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=200, help="items per CPU case (default 200)")
    ap.add_argument("--ideal-items", type=int, default=480, help="items per ratio-to-ideal case (default 480)")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    ap.add_argument("--http-transport", default="auto", choices=["auto", "aiohttp", "httpx"],
                    help="the SDK's HTTP stack (default auto: aiohttp when installed)")
    ap.add_argument("--passes", type=int, default=REPEAT, help=f"timed passes per CPU case (default {REPEAT})")
    ap.add_argument("--ideal-passes", type=int, default=IDEAL_PASSES,
                    help=f"passes per ratio-to-ideal case (default {IDEAL_PASSES})")
    args = ap.parse_args()
    need_data(SHARED)
    globals().update(TRANSPORT=args.http_transport, REPEAT=args.passes, IDEAL_PASSES=args.ideal_passes)
    t0 = time.perf_counter()
    import judgeflow  # noqa: F401 - imports are not part of the per-item figure

    print(f"judgeflow imported in {time.perf_counter() - t0:.2f} s")
    print(f"1. client CPU per item (fake_llm.py, no latency, concurrency 16, OpenAI wire, "
          f"--http-transport {args.http_transport}):")
    profile = cProfile.Profile()
    proc, url = start_fake(0)
    try:
        before = server_cpu(proc)
        cpu_rows = cpu_per_item(url, args.items, profile)
        calls = sum(r["calls"] * (r["items"] * REPEAT + 16) for r in cpu_rows) + sum(
            r["calls"] * (r["items"] // 2) for r in cpu_rows if r["strategy"] == "graph" and r["gc"] == "run")
        print(f"  (fake_llm.py itself: {(server_cpu(proc) - before) * 1000 / calls:.1f} ms CPU per request, "
              "in its own process, not counted above)")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print("2. where the graph runs' CPU goes (cProfile own time, by package; profiling inflates the total):")
    where(profile)
    print("3. ratio to the latency-bound ideal (graph, factual; tests/fakes/provider.py --asyncio; gc as judgeflow run; "
          f"{external.pace_line(base_url='http://127.0.0.1/v1')}):")
    ideal_rows = ideal_ratios(args.ideal_items)
    for gc_name in ("run", "default"):
        graph = [r for r in cpu_rows if r["strategy"] == "graph" and r["gc"] == gc_name]
        median = [r["cpu_ms"] for r in graph]
        quiet = [r["min_cpu_ms"] for r in graph]
        print(f"graph CPU ms/item, gc {gc_name}: median pass {' / '.join(f'{x:.2f}' for x in median)}, quietest pass "
              f"{' / '.join(f'{x:.2f}' for x in quiet)} (factual / faithfulness); aim <= 5: ratio to aim "
              f"{max(median) / 5:.2f} (quietest {max(quiet) / 5:.2f})")
    if args.json:
        print(json.dumps({"cpu": cpu_rows, "ideal": ideal_rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
