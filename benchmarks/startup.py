"""Start-up, measured: whole processes as a user starts them (interpreter, imports, work, exit).

    python benchmarks/startup.py                    # this checkout, 7 runs of each command
    python benchmarks/startup.py --baseline DIR     # also a checkout in DIR (e.g. `git worktree add
                                                    # DIR main`), run alternately, with the ratios

Commands: `judgeflow --version`, `judgeflow --help`, an offline run of `examples/qa_items.jsonl`
(9 items, `--no-cache`, so every item is judged), the same run through the OpenAI SDK against a
local OpenAI-compatible server (tests/fakes/provider.py --asyncio, fixed replies, started once;
its CPU is not counted), and `calibrate` on its 9 result rows. Each is
`python -m judgeflow ...` with PYTHONPATH set to the checkout, each checkout's judgeflow compiled
to bytecode first (as after a user's first run: a checkout with bytecode and one without are not
comparable, compiling costs about a third of a second a start); prints
the median wall and CPU seconds (children included), and which heavy packages each one imported
(from `python -X importtime`). Runs in a plain clone: no key, no network, nothing outside it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu  # noqa: E402  (benchmarks/ helpers: the local OpenAI-compatible fake)

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pydantic", "rich", "langgraph", "langchain_core", "langsmith", "openai", "anthropic", "instructor",
         "numpy", "sklearn", "scipy", "pandas")


def commands(work: Path, server: str) -> dict[str, list[str]]:
    """label -> the judgeflow arguments; `server`: the local OpenAI-compatible server's URL."""
    items = str(ROOT / "examples" / "qa_items.jsonl")
    results = str(work / "results.jsonl")
    return {
        "--version": ["--version"],
        "--help": ["--help"],
        "run, 9 items offline": ["run", items, "-o", results, "--no-cache", "--no-progress",
                                 "--store", str(work / "runs.sqlite")],
        "run, 9 items via OpenAI": ["run", items, "-o", str(work / "online.jsonl"), "--no-cache", "--no-progress",
                                    "--store", str(work / "online.sqlite"), "--model", "openai/fake-judge",
                                    "--base-url", f"{server}/v1"],
        "calibrate, 9 rows": ["calibrate", results],
    }


def env_for(checkout: Path, work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUDGEFLOW_", "OPENAI_", "ANTHROPIC_"))}
    return {**env, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(work),
            "OPENAI_API_KEY": "bench"}


def once(checkout: Path, args: list[str], work: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one `python -m judgeflow ARGS` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "judgeflow", *args], cwd=work, env=env_for(checkout, work),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def heavy_imports(checkout: Path, args: list[str], work: Path) -> list[str]:
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "judgeflow", *args], cwd=work,
                         env=env_for(checkout, work), capture_output=True, text=True, check=False)
    seen = {line.split("|")[-1].strip().split(".")[0] for line in out.stderr.splitlines() if "import time:" in line}
    return [m for m in HEAVY if m in seen]


def measure(checkouts: dict[str, Path], runs: int, server: str) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """name -> command -> [(wall, cpu)], the checkouts alternating run by run."""
    out: dict[str, dict[str, list[tuple[float, float]]]] = {n: {} for n in checkouts}
    for checkout in checkouts.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "judgeflow")], check=True,
                       stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    for name, checkout in checkouts.items():  # warm-up, and the results file calibrate reads
        with tempfile.TemporaryDirectory() as d:
            for args in commands(Path(d), server).values():
                once(checkout, args, Path(d))
    for _ in range(runs):
        for name, checkout in checkouts.items():
            with tempfile.TemporaryDirectory() as d:
                for label, args in commands(Path(d), server).items():
                    out[name].setdefault(label, []).append(once(checkout, args, Path(d)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, help="another checkout to compare with (run alternately)")
    ap.add_argument("-n", type=int, default=7, help="runs of each command (default 7; the median is printed)")
    a = ap.parse_args()
    checkouts = {"this": ROOT, **({"baseline": a.baseline.resolve()} if a.baseline else {})}
    proc, server = cpu.start_async_fake(0.0)
    try:
        report(checkouts, measure(checkouts, a.n, server), a, server)
    finally:
        cpu.stop_async_fake(proc)


def report(checkouts: dict[str, Path], got: dict[str, dict[str, list[tuple[float, float]]]],
           a: argparse.Namespace, server: str) -> None:
    print(f"median of {a.n} runs, whole process, seconds (wall / CPU incl. children)")
    with tempfile.TemporaryDirectory() as d:
        labels = commands(Path(d), server)
        for label, args in labels.items():
            cells = []
            for name in checkouts:
                runs = got[name][label]
                wall, used = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
                cells.append(f"{name} {wall:.3f} / {used:.3f}")
            if a.baseline:
                ratios = [statistics.median(r[k] for r in got["this"][label])
                          / statistics.median(r[k] for r in got["baseline"][label]) for k in (0, 1)]
                cells.append(f"ratio {ratios[0]:.2f} / {ratios[1]:.2f}")
            print(f"  {label:<22} " + "; ".join(cells))
        print("heavy packages imported:")
        for label, args in labels.items():
            if label.startswith("calibrate"):
                once(ROOT, labels["run, 9 items offline"], Path(d))
            for name, checkout in checkouts.items():
                print(f"  {label:<22} {name}: {', '.join(heavy_imports(checkout, args, Path(d))) or 'none'}")


if __name__ == "__main__":
    main()
