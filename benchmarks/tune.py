"""`judgeflow tune`: calls, tokens and time of one tune, against the formula, and what it accepts.

    python benchmarks/tune.py                 # both parts; --items 60 --folds 5 --candidates 3

1. A judge whose verdicts read the criterion (tests/fakes/tuning.py, in-process at the HTTP
   boundary; ships with the repository): 40 labelled items, 14 of them false alarms on correct
   extra details. Tune should accept the edit that says such details are not errors.
2. A judge whose verdicts are noise: fake_llm.py (a schema-filling fake server, beside the
   project, not shipped; skipped without it) on the first N labelled factual-QA items. Tune
   should accept nothing.

Each part prints the calls made beside the bound labels x calls-per-item x (1 + candidates) + folds
(the bound: edits that cannot be applied are not judged), then runs again to show a resumed tune
makes no calls.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "data").is_dir()), ROOT.parent / "shared")


def show(name: str, result: object, seconds: float, n: int, folds: int, candidates: int) -> None:
    r = result.report  # type: ignore[attr-defined]
    bound = n * 2 * (1 + candidates) + folds
    print(f"{name}: {r.calls} calls ({r.judge_usage.calls} judging + {r.editor_usage.calls} proposing; bound "
          f"{n} x 2 x (1 + {candidates}) + {folds} = {bound}), {r.judge_usage.input_tokens + r.editor_usage.input_tokens} "
          f"input tokens, {seconds:.1f} s")
    print(f"  {r.verdict}")


def reading(tmp: Path, folds: int, candidates: int) -> None:
    from fakes.tuning import ReadingFake, capital_items

    from judgeflow import RunStore, load_criterion, tune

    strict = load_criterion("factual_correctness").model_copy(update={"not_errors": [], "path": ""})
    store = RunStore(tmp / "reading.sqlite")
    for attempt in ("first", "again"):
        t = time.perf_counter()
        result = tune(capital_items(), strict, backend=ReadingFake().backend(), folds=folds,
                      candidates=candidates, store=store)
        show(f"criterion-reading judge, {attempt}", result, time.perf_counter() - t, 40, folds, candidates)


def noise(tmp: Path, n: int, folds: int, candidates: int) -> None:
    fake = SHARED / "tools" / "fake_llm.py"
    data = SHARED / "data" / "factual_qa.jsonl"
    if not (fake.exists() and data.exists()):
        print("random judge: skipped (fake_llm.py and the factual QA set are not beside the project)")
        return
    from judgeflow import load_items, tune

    items = load_items(data)[:n]
    proc = subprocess.Popen([sys.executable, str(fake), "--port", "0", "--host", "127.0.0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int((proc.stdout.readline() if proc.stdout else "PORT=0").strip().split("=")[1])
        for attempt in ("first", "again"):
            t = time.perf_counter()
            result = tune(items, "factual_correctness", "openai/fake-judge", base_url=f"http://127.0.0.1:{port}/v1",
                          folds=folds, candidates=candidates, store=tmp / "noise.sqlite")
            show(f"random judge ({n} items), {attempt}", result, time.perf_counter() - t, n, folds, candidates)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=60)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--candidates", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        reading(Path(d), 4, args.candidates)
        noise(Path(d), args.items, args.folds, args.candidates)


if __name__ == "__main__":
    main()
