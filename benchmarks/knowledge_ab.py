"""The knowledge step's A/B (#52): today's knowledge step (`--knowledge default`) vs commit-first, on any endpoint.

    python benchmarks/knowledge_ab.py --fake                                  # the schema fake, in-process
    python benchmarks/knowledge_ab.py --base-url http://127.0.0.1:8798/v1 \\
        --model openai/qwen2.5-coder-1.5b --limit 12 --out ab-knowledge       # a local model (slow: resumable)

Judges a sample of labelled open-QA items (default: the repository's examples/data/factual_qa_sample.jsonl;
`--data` another file with `label`), stratified by dataset and human label (seed 0), under
factual_correctness with both knowledge strategies, item by item, the two arms interleaved, one
request at a time. Prints per arm, on the items both arms scored: Cohen's kappa with its 95%
bootstrap interval, false alarms (judge 1, human 0) and misses (judge 0, human 1), the unverifiable
share of claims and the decided-by shares, unscored rows, calls and tokens per item (input + output),
seconds; then the exact McNemar test between the arms and the kappa difference with its interval.

Resumable: each judged row is appended to OUT/<arm>.jsonl as it finishes; the same command continues
with the items not judged yet, `--report` prints the figures without judging more.

What it can show: whether commit-first moves the judge's errors (false alarms vs misses), how many
verdicts it leaves unverifiable, and what it costs in tokens, on these items with this judge. What it
cannot: with the schema fake the verdicts are random (it shows only that the pipeline runs and what
the extra call costs); with a few items the intervals are wide; a 1.5B model is not the judge anyone
should deploy, and the sample's knowledge claims are few (most claims are settled by the reference).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from local_model_ab import done_rows, judge_arms

from judgeflow import Judge, Judgment, compare, load_items
from judgeflow.calibration.agreement import agreement
from judgeflow.calibration.sampling import sample_file
from judgeflow.knowledge import decided_by, shares

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "examples" / "data" / "factual_qa_sample.jsonl"
ARMS = ("default", "commit-first")


@contextlib.contextmanager
def endpoint(args: argparse.Namespace) -> Any:
    """(base_url, model): the schema fake started here, or the endpoint given."""
    if not args.fake:
        yield args.base_url, args.model
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from fakes.schema_provider import SchemaProvider

    with SchemaProvider(seed=args.seed) as fake:
        yield fake.base_url + "/v1", "openai/schema-fake"


def judge_all(args: argparse.Namespace, items: list[Any], out: Path, base_url: str, model: str) -> None:
    options: dict[str, Any] = {"timeout": args.timeout} if args.timeout else {}
    if args.fake:
        options["api_key"] = "fake"
    judges = {a: Judge(model, criterion="factual_correctness", knowledge=a, strategy=args.strategy, concurrency=1,
                       base_url=base_url, **options) for a in ARMS}
    judge_arms(judges, items, out, args.max_minutes, width=13)


def arm_line(arm: str, rows: list[dict[str, Any]], labels: dict[str, int]) -> str:
    scored = [r for r in rows if r["label"] is not None]
    a = agreement([labels[r["id"]] for r in scored], [int(r["label"]) for r in scored])
    ci = f" [{a.kappa_ci[0]:.2f}, {a.kappa_ci[1]:.2f}]" if a.kappa_ci else ""
    kappa = "undefined" if a.kappa is None else f"{a.kappa:.2f}{ci}"
    claims = [Judgment.model_validate(r).claims for r in rows]
    counts: Counter[str] = Counter()
    for c in claims:
        counts.update(decided_by(c))
    usage = [r.get("usage") or {} for r in rows]
    tokens = sum(u.get("input_tokens", 0) + u.get("output_tokens", 0) for u in usage)
    calls = sum(u.get("calls", 0) for u in usage)
    secs = sum(r["seconds"] for r in rows)
    share = shares(counts)
    return (f"{arm:<13} kappa {kappa} on {a.n} scored; {a.false_alarms} false alarms, {a.misses} misses; "
            f"{len(rows) - len(scored)} unscored; unverifiable {share['unverifiable']:.0%} of "
            f"{sum(counts.values())} claims; decided by {json.dumps(share)}; "
            f"{tokens / max(len(rows), 1):,.0f} tokens an item ({calls} calls, {secs:.0f} s)")


def report(out: Path, labels: dict[str, int]) -> None:
    rows = {a: done_rows(out / f"{a}.jsonl") for a in ARMS}
    both = [i for i in labels if all(i in rows[a] for a in ARMS)]
    print(f"\n{len(both)} of {len(labels)} sampled items judged by both arms")
    for a in ARMS:
        print(arm_line(a, [rows[a][i] for i in both], labels))
    if both:
        x = [Judgment.model_validate(rows[ARMS[0]][i]) for i in both]
        y = [Judgment.model_validate(rows[ARMS[1]][i]) for i in both]
        c = compare(x, y, {i: labels[i] for i in both}, names=ARMS)
        print(f"McNemar exact (paired, {c.n} items both scored): {ARMS[0]} right and {ARMS[1]} wrong on "
              f"{c.a_right_b_wrong}, the reverse on {c.b_right_a_wrong}: p = {c.mcnemar_p:.3g}")
        diff = "n/a" if c.kappa_diff is None else f"{c.kappa_diff:+.2f}"
        ci = f" [{c.kappa_diff_ci[0]:+.2f}, {c.kappa_diff_ci[1]:+.2f}]" if c.kappa_diff_ci else ""
        print(f"kappa difference ({ARMS[1]} - {ARMS[0]}): {diff}{ci}; A/B: {c.verdict}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA, help="labelled open-QA items (question, reference, answer, "
                                                             "label, dataset)")
    p.add_argument("--fake", action="store_true", help="judge with the in-repository schema fake (random verdicts)")
    p.add_argument("--base-url", default="http://127.0.0.1:8798/v1", help="an OpenAI-compatible endpoint")
    p.add_argument("--model", default="openai/qwen2.5-coder-1.5b")
    p.add_argument("--strategy", choices=("graph", "single"), default="single",
                   help="single (default: one call, plus the commit call) or graph (decompose, check)")
    p.add_argument("--limit", type=int, default=12, help="sample size (default 12)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, help="seconds per request (default: the endpoint's deadline)")
    p.add_argument("--out", type=Path, default=Path("ab-knowledge"), help="directory for the sample and rows")
    p.add_argument("--max-minutes", type=float, help="stop starting new items after this long (resume later)")
    p.add_argument("--report", action="store_true", help="print the figures of the rows there, judge nothing")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    sample = args.out / "sample.jsonl"
    if not sample.is_file():
        sample_file(args.data, args.limit, sample, stratify_by=["dataset", "label"], seed=args.seed, keep_labels=True)
    items = list(load_items(sample))
    labels = {it.id: it.label for it in items if it.label is not None}
    if not args.report:
        with endpoint(args) as (base_url, model):
            print(f"sample: {len(items)} items from {args.data.name} (stratified, seed {args.seed}); judge {model} "
                  f"at {base_url}, --strategy {args.strategy}, concurrency 1", flush=True)
            t0 = time.perf_counter()
            judge_all(args, items, args.out, base_url, model)
            print(f"judging took {time.perf_counter() - t0:.0f} s this time", flush=True)
    report(args.out, labels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
