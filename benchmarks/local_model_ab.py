"""The source study's A/B against a real local model: strict reference criterion vs factual correctness.

    python benchmarks/local_model_ab.py --data ../shared/data/factual_qa.jsonl \
        --base-url http://127.0.0.1:8798/v1 --model openai/qwen2.5-coder-1.5b -n 40 --out ab-local

Takes a sample of labelled open-QA answers stratified by dataset and human label (seed 0), judges
each item under `reference_faithfulness` (the study's strict p1: everything must be supported by the
reference) and `factual_correctness` (p2: wrong only if it contradicts the reference or states a
false concrete fact), one item at a time, the two criteria interleaved, with `--strategy single`
(one call an item) at concurrency 1 and the local endpoint's deadline. Prints, on the items both
arms scored: Cohen's kappa with its 95% bootstrap interval for each, the direction of the errors
(false alarms / misses), the exact McNemar test between the arms, wall-clock seconds per call and
the calls made (every request sent counts).

Resumable: each judged row is appended to OUT/<criterion>.jsonl with its seconds as it finishes, so
the same command after a kill (or a deadline) continues with the items not judged yet; `--report`
prints the figures of what is there without judging more. A local 1.5B model on 2 shared CPUs
takes 15-160 s a call: 40 items x 2 criteria is about 1-2 hours.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from external import pace_line

from judgeflow import Judge, Judgment, compare, load_items
from judgeflow.calibration.agreement import agreement
from judgeflow.calibration.sampling import sample_file

CRITERIA = ("reference_faithfulness", "factual_correctness")


def done_rows(path: Path) -> dict[str, dict]:
    if not path.is_file():
        return {}
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows[row["id"]] = row
    return rows


def judge_all(args: argparse.Namespace, items: list, out: Path) -> None:
    judges = {c: Judge(args.model, criterion=c, strategy="single", concurrency=1, base_url=args.base_url,
                       **({"timeout": args.timeout} if args.timeout else {})) for c in CRITERIA}
    judge_arms(judges, items, out, args.max_minutes, width=22)


def judge_arms(judges: dict, items: list, out: Path, max_minutes: float | None, *, width: int) -> None:
    """Each item by each arm's judge in turn, one row a line in OUT/ARM.jsonl; resumable (rows already
    there are skipped) and stopped between items after `max_minutes`. Shared with knowledge_ab.py."""
    done = {a: done_rows(out / f"{a}.jsonl") for a in judges}
    stop_at = time.time() + max_minutes * 60 if max_minutes else None
    for n, item in enumerate(items, 1):
        for a, judge in judges.items():
            if item.id in done[a]:
                continue
            if stop_at is not None and time.time() > stop_at:
                print(f"stopped at --max-minutes {max_minutes}: run the same command again to continue", flush=True)
                return
            t0 = time.perf_counter()
            j = judge.judge(item)
            row = {**j.to_row(), "seconds": round(time.perf_counter() - t0, 2)}
            row.pop("trace", None)
            with (out / f"{a}.jsonl").open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
            print(f"[{n}/{len(items)}] {a:<{width}} {item.id:<28} human {item.label} judge {j.label} "
                  f"({j.status}, {row['seconds']:.0f} s, {j.usage.calls} call(s)){' ' + j.error[:120] if j.error else ''}",
                  flush=True)


def report(out: Path, labels: dict[str, int]) -> None:
    rows = {c: done_rows(out / f"{c}.jsonl") for c in CRITERIA}
    both = [i for i in labels if all(i in rows[c] for c in CRITERIA)]
    print(f"\n{len(both)} of {len(labels)} sampled items judged under both criteria")
    for c in CRITERIA:
        r = [rows[c][i] for i in both]
        scored = [x for x in r if x["label"] is not None]
        a = agreement([labels[x["id"]] for x in scored], [int(x["label"]) for x in scored])
        secs = [x["seconds"] for x in r]
        calls = sum((x.get("usage") or {}).get("calls", 0) for x in r)
        ci = f" [{a.kappa_ci[0]:.2f}, {a.kappa_ci[1]:.2f}]" if a.kappa_ci else ""
        kappa = "undefined" if a.kappa is None else f"{a.kappa:.2f}{ci}"
        print(f"{c}: kappa {kappa} on {a.n} scored; {a.false_alarms} false alarms (judge 1, human 0), "
              f"{a.misses} misses (judge 0, human 1); {len(r) - len(scored)} unscored; {calls} calls; "
              f"{sum(secs):.0f} s in all, {sum(secs) / max(calls, 1):.0f} s a call "
              f"(min {min(secs, default=0):.0f}, max {max(secs, default=0):.0f} s an item)")
    if both:
        a = [Judgment.model_validate(rows[CRITERIA[0]][i]) for i in both]
        b = [Judgment.model_validate(rows[CRITERIA[1]][i]) for i in both]
        c = compare(a, b, {i: labels[i] for i in both}, names=CRITERIA)
        print(f"McNemar exact (paired, {c.n} items both scored): {CRITERIA[0]} right and {CRITERIA[1]} wrong on "
              f"{c.a_right_b_wrong}, the reverse on {c.b_right_a_wrong}: p = {c.mcnemar_p:.3g}")
        diff = "n/a" if c.kappa_diff is None else f"{c.kappa_diff:+.2f}"
        ci = f" [{c.kappa_diff_ci[0]:+.2f}, {c.kappa_diff_ci[1]:+.2f}]" if c.kappa_diff_ci else ""
        print(f"kappa difference ({CRITERIA[1]} - {CRITERIA[0]}): {diff}{ci}")
        print(f"A/B: {c.verdict}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="labelled open-QA items with a dataset field "
                                                            "(e.g. ../shared/data/factual_qa.jsonl)")
    p.add_argument("--base-url", default="http://127.0.0.1:8798/v1", help="the local OpenAI-compatible server")
    p.add_argument("--model", default="openai/qwen2.5-coder-1.5b")
    p.add_argument("-n", type=int, default=40, help="sample size (default 40)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, help="seconds per request (default: the local endpoint's deadline)")
    p.add_argument("--out", type=Path, default=Path("ab-local"), help="directory for the sample and rows (resumable)")
    p.add_argument("--max-minutes", type=float, help="stop starting new items after this long (resume later)")
    p.add_argument("--report", action="store_true", help="print the figures of the rows there, judge nothing")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    sample = args.out / "sample.jsonl"
    if not sample.is_file():
        sample_file(args.data, args.n, sample, stratify_by=["dataset", "label"], seed=args.seed, keep_labels=True)
    items = list(load_items(sample))
    labels = {it.id: it.label for it in items if it.label is not None}
    print(f"sample: {len(items)} items from {args.data} (stratified by dataset and label, seed {args.seed}); "
          f"judge {args.model} at {args.base_url}, --strategy single, concurrency 1 "
          f"({pace_line(base_url=args.base_url or '', timeout=args.timeout)})", flush=True)
    if not args.report:
        t0 = time.perf_counter()
        judge_all(args, items, args.out)
        print(f"judging took {time.perf_counter() - t0:.0f} s this time", flush=True)
    report(args.out, labels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
