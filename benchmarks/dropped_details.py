"""What `check_dropped` (on by default) costs: the answer's numbers, dates and names that no claim
of the decomposition carries are judged as added claims.

    python benchmarks/dropped_details.py            # the 48 labelled answers in examples/data/
    python benchmarks/dropped_details.py --data ../shared/data/factual_qa.jsonl -n 200

Judges the labelled items twice through tests/fakes/schema_provider.py (the in-repository
schema-following fake, a real HTTP server on 127.0.0.1; the real openai SDK and Instructor), with
check_dropped on and off, and prints the rows that gained added claims, the claims judged, the
requests and the input tokens of each. The fake's claims are random words that never carry the
answer's details, so this is the worst case (a decomposer that drops every detail): a model that
keeps the details adds fewer. Added claims go into the same check call, so requests do not change.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fakes"))

from schema_provider import SchemaProvider  # noqa: E402

from judgeflow import Judge  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=ROOT / "examples" / "data" / "factual_qa_sample.jsonl")
    p.add_argument("-n", type=int, default=0, help="the first N items (default: all)")
    args = p.parse_args(argv)
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [{k: r[k] for k in ("id", "question", "answer", "reference", "label") if k in r}
            for r in rows[: args.n or None]]
    print(f"{len(rows)} labelled items from {args.data.name}, graph strategy, the schema fake")
    figures = {}
    for on in (False, True):
        with SchemaProvider(seed=0) as fake:
            judge = Judge("openai/fake", base_url=f"{fake.base_url}/v1", api_key="k", check_dropped=on)
            got = judge.judge_many(rows)
            sent = fake.received
        figures[on] = {
            "rows with details no claim carried": sum(1 for r in got if r.dropped),
            "rows that gained added claims": sum(1 for r in got if r.dropped and on),
            "claims judged": sum(len(r.claims) for r in got),
            "requests": sent,
            "input tokens": sum(r.usage.input_tokens for r in got),
            "label 1": sum(1 for r in got if r.label == 1),
            "unscored": sum(1 for r in got if r.label is None),
        }
    print(f"{'':<38}{'off':>10}{'on (default)':>14}{'on/off':>9}")
    for key in figures[True]:
        off, on_ = figures[False][key], figures[True][key]
        ratio = f"{on_ / off:.2f}x" if off else "-"
        print(f"{key:<38}{off:>10,}{on_:>14,}{ratio:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
