"""The study's experiment on the project's own data: does the criterion matter?

Take a stratified sample (by dataset and human label) of labelled open-QA answers (by default
the 48 TruthfulQA and HaluEval answers in `examples/data/`, or your own with `--data`), judge the
same items under `reference_faithfulness` ("everything must be supported by the reference",
the study's p1) and `factual_correctness` ("wrong only if it contradicts the reference or
states a false concrete fact", p2), then compare both with the human labels: kappa each, the
paired difference, McNemar, and the direction of the errors. The study's ROUGE-L baseline is
scored on the same items as a floor.

    python examples/criterion_ab.py                        # offline: the lexical baseline judge
    python examples/criterion_ab.py --model openai/gpt-4o-mini -n 50
    JUDGEFLOW_MODEL=anthropic/claude-sonnet-4-5 python examples/criterion_ab.py --html ab.html

What the offline run can and cannot show: the lexical judge reads words, not meaning. It cannot
tell a correct extra detail (the study's point: reference_faithfulness calls it an error,
factual_correctness does not) from a wrong one, so offline the difference between the criteria
says nothing about the study's question, and the strict one may even come out ahead. The
offline run shows the workflow (the sample, the paired comparison, the direction of the errors,
the floor); it cannot show the study's effect. With an LLM judge the study expects
reference_faithfulness to make mostly false alarms and factual_correctness to agree better: run
it on a model (`--model provider/model`), or the same A/B on a benchmark's items:
`judgeflow bench halueval_qa --ab --limit 200 --model provider/model`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from judgeflow import ConfigError, Judge, Judgment, calibrate, compare, load_items
from judgeflow.calibration.report_html import write_comparison_html
from judgeflow.calibration.sampling import sample_file

#: 48 labelled answers from TruthfulQA and HaluEval QA, shipped with the example (see data/README.md)
DATA = Path(__file__).resolve().parent / "data" / "factual_qa_sample.jsonl"
CRITERIA = ("reference_faithfulness", "factual_correctness")


def judge_to_file(model: str, criterion: str, items_path: Path, out: Path) -> list[Judgment]:
    results = Judge(model, criterion=criterion).judge_many(load_items(items_path))
    out.write_text("".join(json.dumps(j.to_row(), ensure_ascii=False) + "\n" for j in results), encoding="utf-8")
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=DATA,
                   help="labelled open-QA items with a dataset field (default: the 48 shipped in examples/data/)")
    p.add_argument("--model", default=os.environ.get("JUDGEFLOW_MODEL") or "baseline/lexical",
                   help="judge model (default $JUDGEFLOW_MODEL, else baseline/lexical, offline)")
    p.add_argument("-n", type=int, default=48, help="sample size (default 48)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, help="directory for the sample and results (default: a temporary one)")
    p.add_argument("--html", type=Path, help="write the comparison as an HTML report")
    args = p.parse_args()

    out = args.out or Path(tempfile.mkdtemp(prefix="criterion_ab_"))
    out.mkdir(parents=True, exist_ok=True)
    sample = sample_file(args.data, args.n, out / "sample.jsonl", stratify_by=["dataset", "label"],
                         seed=args.seed, keep_labels=True)
    print(f"sample: {sample.n} of {sample.pool} items, stratified by dataset and human label (seed {args.seed}):")
    for st in sample.strata:
        print(f"  {st.key:<18} {st.sampled:>3} of {st.size}")
    print(f"judge: {args.model}\n")
    offline = args.model.startswith("baseline/")
    if offline:
        print("offline: the lexical judge reads words, not meaning, so it cannot tell a correct extra detail from a\n"
              "wrong one; the difference between the two kappas below is not evidence either way: it cannot show\n"
              "the study's effect (which criterion agrees better with people). This run shows the workflow. To see\n"
              "the effect, judge with a model: --model openai/gpt-4o-mini, or\n"
              "`judgeflow bench halueval_qa --ab --limit 200 --model M` (the same A/B on a benchmark's items).\n")

    paths = {}
    for criterion in CRITERIA:
        paths[criterion] = out / f"{criterion}.jsonl"
        judge_to_file(args.model, criterion, out / "sample.jsonl", paths[criterion])
        r = calibrate(paths[criterion], by="dataset")
        ci = f" [{r.kappa_ci[0]:.2f}, {r.kappa_ci[1]:.2f}]" if r.kappa_ci else ""
        kappa = f"{r.kappa:.2f}{ci}" if r.kappa is not None else "undefined"
        print(f"{criterion}: kappa {kappa}; {r.false_alarms} false alarms, {r.misses} misses; "
              f"{r.unscored} unscored")
        for g in r.groups:
            print(f"  {g.group:<12} n={g.n:<3} kappa {'-' if g.kappa is None else f'{g.kappa:.2f}'}, "
                  f"{g.false_alarms} false alarms, {g.misses} misses")
        print(f"  {r.diagnosis}\n")

    rouge = calibrate(Judge("baseline/rouge-l", criterion="factual_correctness").judge_many(
        load_items(out / "sample.jsonl")))
    print(f"floor, the study's ROUGE-L baseline (threshold 0.3): kappa "
          f"{'-' if rouge.kappa is None else f'{rouge.kappa:.2f}'}; {rouge.false_alarms} false alarms, "
          f"{rouge.misses} misses\n")

    c = compare(paths[CRITERIA[0]], paths[CRITERIA[1]])
    print("A/B:", c.verdict + (" (offline: the lexical floor, not the study's test; see above)" if offline else ""))
    for w in c.warnings:
        print("warning:", w)
    shown = [d for d in c.disagreements if d.right == "b"][:3]
    if shown:
        print("\nitems factual_correctness gets right and reference_faithfulness wrong, with the deciding claim:")
    for d in shown:
        why = f"{d.a.claim.verdict}: {d.a.claim.text}" if d.a.claim else d.a.reason
        print(f"  {d.id} (human {d.human}): reference_faithfulness said {d.a.label} ({why}); "
              f"factual_correctness said {d.b.label}")
    if args.html:
        write_comparison_html(c, args.html, title="reference_faithfulness vs factual_correctness")
        print(f"\nHTML report -> {args.html}")
    print(f"\nfiles: {out}  (try: judgeflow compare {paths[CRITERIA[0]]} {paths[CRITERIA[1]]})")


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:  # e.g. --model without its key: the fix, not a traceback
        raise SystemExit(f"error: {e}") from None
