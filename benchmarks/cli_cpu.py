"""Client CPU per item through the CLI, judgeflow beside RAGAS, on one schema-following fake.

    python benchmarks/cli_cpu.py --ragas-python /work/venv-ragas/bin/python    # ~3-6 min
    python benchmarks/cli_cpu.py --ragas-python PY --small 10 --big 110 --rounds 2

RAGAS lives in its own venv (`python3 -m venv /work/venv-ragas && /work/venv-ragas/bin/pip
install ragas==0.4.3 "langchain-community<0.4"`: 0.4.3 imports a module that langchain-community
0.4 removed); without `--ragas-python` only judgeflow is measured.

Both run as a fresh process against ../shared/tools/fake_llm.py (no latency; its CPU is another
process and not counted) on the first N rows of faithfulness.jsonl:
- judgeflow: `python -m judgeflow run FILE --mode faithfulness --strategy graph --model
  openai/fake-judge --base-url URL --no-cache --no-progress --timeout 60 --concurrency 16` (a
  given --timeout turns the local pace off: the pace waits, it spends no CPU);
- RAGAS 0.4.3: `evaluate()` of `Faithfulness` (LangchainLLMWrapper over ChatOpenAI, the same URL,
  RunConfig max_workers 16, no progress bar) on the same rows (user_input = task, response =
  answer, retrieved_contexts = [source]).
CPU = user + sys of the child process (`os.wait4`). Per item = (CPU at --big rows - CPU at
--small rows) / (big - small): start-up (imports) cancels out. `--rounds` alternating rounds;
the least per-item figure of each is printed beside the median (a busy machine only adds CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from external import need_shared, say_pace

ROOT = Path(__file__).resolve().parents[1]

RAGAS_WORKER = r'''
import json, sys
from langchain_openai import ChatOpenAI
from ragas import EvaluationDataset, evaluate
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import Faithfulness
from ragas.run_config import RunConfig

path, url = sys.argv[1], sys.argv[2]
rows = [json.loads(line) for line in open(path, encoding="utf-8")]
data = EvaluationDataset.from_list([{"user_input": r.get("task") or "", "response": r["answer"],
                                     "retrieved_contexts": [r["source"]]} for r in rows])
llm = LangchainLLMWrapper(ChatOpenAI(model="gpt-4o-mini", base_url=url, api_key="bench", max_retries=0))
result = evaluate(data, metrics=[Faithfulness(llm=llm)], run_config=RunConfig(max_workers=16, timeout=60),
                  show_progress=False, raise_exceptions=False)
scores = [s.get("faithfulness") for s in result.scores]
print(json.dumps({"scored": sum(1 for s in scores if s == s and s is not None), "rows": len(rows)}))
'''


def start_fake(shared: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(shared / "tools" / "fake_llm.py"), "--port", "0",
                             "--sniff-text"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT="):
        proc.kill()
        raise SystemExit(f"fake_llm.py did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.strip().split('=')[1])}/v1"


def cpu_of(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    """user + sys CPU seconds of the child process, and its stdout."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env, cwd=cwd, text=True)
        err = proc.stderr.read() if proc.stderr else ""
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if proc.returncode:
        raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {err[-1500:]}")
    return usage.ru_utime + usage.ru_stime, text


def judgeflow_cmd(rows: Path, url: str, work: Path) -> list[str]:
    return [sys.executable, "-m", "judgeflow", "run", str(rows), "--mode", "faithfulness", "--strategy", "graph",
            "--model", "openai/fake-judge", "--base-url", url, "--no-cache", "--no-progress", "--timeout", "60",
            "--concurrency", "16", "--store", str(work / "store.sqlite")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ragas-python", type=Path, help="python of a venv with ragas 0.4.3 installed")
    ap.add_argument("--small", type=int, default=10)
    ap.add_argument("--big", type=int, default=110)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    shared = need_shared()
    say_pace(["judgeflow", "run", "--base-url", "http://127.0.0.1/v1", "--timeout", "60"])
    lines = (shared / "data" / "faithfulness.jsonl").read_text(encoding="utf-8").splitlines()
    if len(lines) < args.big:
        raise SystemExit(f"faithfulness.jsonl has {len(lines)} rows; --big {args.big} needs more")
    proc, url = start_fake(shared)
    per: dict[str, list[float]] = {"judgeflow": []}
    if args.ragas_python:
        per["RAGAS"] = []
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "bench"}
    ragas_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"OPENAI_API_KEY": "bench",
                                                                              "RAGAS_DO_NOT_TRACK": "true"}
    try:
        with tempfile.TemporaryDirectory() as d:
            work = Path(d)
            files = {}
            for n in (args.small, args.big):
                files[n] = work / f"rows{n}.jsonl"
                files[n].write_text("\n".join(lines[:n]) + "\n", encoding="utf-8")
            worker = work / "ragas_worker.py"
            worker.write_text(RAGAS_WORKER, encoding="utf-8")
            for r in range(args.rounds):
                for name in per:
                    cpu = {}
                    for n in (args.small, args.big):
                        if name == "judgeflow":
                            (work / "store.sqlite").unlink(missing_ok=True)
                            cpu[n], _ = cpu_of(judgeflow_cmd(files[n], url, work), env, work)
                        else:
                            cpu[n], out = cpu_of([str(args.ragas_python), str(worker), str(files[n]), url],
                                                 ragas_env, work)
                            got = json.loads(out.strip().splitlines()[-1])
                            if got["scored"] < n:
                                print(f"   note: RAGAS scored {got['scored']} of {n} rows")
                    ms = (cpu[args.big] - cpu[args.small]) / (args.big - args.small) * 1000
                    per[name].append(ms)
                    print(f"   round {r + 1} {name:9} CPU {cpu[args.small]:.2f} s at {args.small} rows, "
                          f"{cpu[args.big]:.2f} s at {args.big}: {ms:.2f} ms a marginal item", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"client CPU per faithfulness item through the CLI (graph; {args.rounds} rounds, "
          f"{args.big - args.small} marginal items):")
    for name, v in per.items():
        print(f"   {name:9} median {statistics.median(v):6.2f} ms, least {min(v):6.2f} ms")
    if "RAGAS" in per:
        print(f"   judgeflow / RAGAS: median {statistics.median(per['judgeflow']) / statistics.median(per['RAGAS']):.2f}x,"
              f" least {min(per['judgeflow']) / min(per['RAGAS']):.2f}x (aim <= 0.5x, #50)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
