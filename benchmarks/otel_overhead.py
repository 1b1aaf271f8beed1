"""What OpenTelemetry export adds per verdict (#37): `judgeflow run --otel-endpoint` against the same run without it.

    python benchmarks/otel_overhead.py              # 2,000 traces, 5 alternating runs of each (needs judgeflow[otel])
    python benchmarks/otel_overhead.py --traces 500 --runs 3

The input is an OTLP JSON file of RAG traces (tests/fakes/otel_traces.py); the judge is the offline
baseline (no model call: about a millisecond an item, so the ratio is the worst case; behind an LLM
judge, seconds an item, the same microseconds are lost in the noise). Each run judges every item
(`--no-cache`, a fresh store) in its own process; the exported runs send each verdict span through the
real OTLP/HTTP exporter (batched, protobuf) to judgeflow's own receiver on 127.0.0.1, which checks that
every span arrived. Prints the median wall seconds of both, the ratio, and the overhead per verdict in
µs; then the in-process cost of `VerdictExporter.export` alone (what a judging task waits for; the
batch is sent from the exporter's thread).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _write(path: Path, n: int) -> None:
    from tests.fakes.otel_traces import rag_trace, request, write_jsonl

    write_jsonl(path, [request([s for k in range(i, min(i + 50, n)) for s in rag_trace(k, wrong=k % 5 == 0)])
                       for i in range(0, n, 50)])


def _run(items: Path, tmp: Path, tag: str, endpoint: str | None) -> float:
    store = tmp / f"{tag}.sqlite"
    store.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "judgeflow", "run", str(items), "-o", str(tmp / f"{tag}.jsonl"), "--model",
           "baseline/lexical", "--no-progress", "--no-cache", "--store", str(store)]
    if endpoint:
        cmd += ["--otel-endpoint", endpoint]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=tmp, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return took


def _in_process(n: int) -> float:
    """µs per `export()` call, the spans going to an exporter that drops them (the batching thread idle)."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    from judgeflow.integrations.otel import VerdictExporter
    from judgeflow.results import ClaimResult, Judgment

    class Drop(SpanExporter):
        def export(self, spans):  # noqa: ANN001
            return SpanExportResult.SUCCESS

    claims = [ClaimResult(id=f"c{i}", text=f"claim {i}", verdict="supported") for i in range(4)]
    rows = [Judgment(id=f"q{i}", label=i % 2, criterion="source_faithfulness", reason="r", claims=claims,
                     extra={"trace_id": f"{i + 1:032x}", "span_id": f"{i + 1:016x}"}) for i in range(n)]
    exporter = VerdictExporter(span_exporter=Drop())
    start = time.perf_counter()
    for j in rows:
        exporter.export(j)
    took = time.perf_counter() - start
    exporter.close()
    return took / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    from judgeflow.io.receiver import Receiver

    with tempfile.TemporaryDirectory() as d, Receiver() as rx:
        tmp = Path(d)
        items = tmp / "traces.jsonl"
        _write(items, args.traces)
        plain, exported = [], []
        for _ in range(args.runs):  # alternating, so drift on a shared machine hits both alike
            plain.append(_run(items, tmp, "plain", None))
            rx.take()
            exported.append(_run(items, tmp, "otel", rx.url))
            got = len(rx.take())
            if got != args.traces:
                raise SystemExit(f"the receiver got {got} spans for {args.traces} verdicts")
    a, b = statistics.median(plain), statistics.median(exported)
    print(f"{args.traces} traces, median of {args.runs} runs each (offline judge, --no-cache)")
    print(f"  without export: {a:.3f} s   with --otel-endpoint: {b:.3f} s   ratio {b / a:.3f}")
    print(f"  overhead per verdict: {(b - a) / args.traces * 1e6:.0f} µs (the whole process: exporter start, "
          "export, the last batch's flush)")
    print(f"  VerdictExporter.export alone: {_in_process(args.traces):.1f} µs per verdict (in process)")


if __name__ == "__main__":
    main()
