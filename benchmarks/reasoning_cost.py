"""Tokens and cost per 1,000 items of reasoning judges at each effort, beside a non-reasoning model (#45).

    python benchmarks/reasoning_cost.py                          # examples/qa_items.jsonl (8 judgeable items)
    python benchmarks/reasoning_cost.py --data FILE --limit 40   # any items file
    python benchmarks/reasoning_cost.py --scale 2                # a hungrier model: first budgets eaten at high

Each case judges the items (--strategy graph, judgeflow's defaults otherwise) through the real openai SDK and
Instructor against the in-repository conformance fake (tests/fakes/model_rules.py: OpenAI's parameter rules,
hidden reasoning tokens per effort spent from max_completion_tokens and billed as output). Per case: items
scored, requests, input / output / reasoning tokens per 1,000 items, and the list-price cost per 1,000 items
(genai-prices), with the ratio to gpt-4o-mini and to the same model at its lowest effort side by side. The
reasoning tokens are the fake's (REASONING per effort x --scale, + prompt tokens / 8), not a provider's: the
ratios say how cost follows effort and budget, not what a real model spends on these items.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from fakes.model_rules import ModelRules  # noqa: E402
from fakes.schema_provider import SchemaProvider  # noqa: E402

from judgeflow import Judge  # noqa: E402
from judgeflow.results import Usage  # noqa: E402
from judgeflow.runs.pricing import estimate_cost  # noqa: E402

#: (model, efforts): None is judgeflow's default for the family
CASES: list[tuple[str, list[str | None]]] = [
    ("openai/gpt-4o-mini", [None]),
    ("openai/gpt-5-mini", ["minimal", "low", "medium", "high"]),
    ("openai/gpt-5.4", ["none", "low", "medium", "high", "xhigh"]),
    ("openai/o4-mini", ["low", "medium", "high"]),
]


def run_case(items: list[dict[str, Any]], model: str, effort: str | None, scale: float) -> dict[str, Any]:
    rules = ModelRules(scale=scale)
    with SchemaProvider(seed=1, model_rules=rules) as fake:
        judge = Judge(model, base_url=fake.base_url + "/v1", api_key="sk-fake", reasoning_effort=effort)
        rows = judge.judge_many(items, concurrency=8)
        requests = len([e for e in fake.log if e.get("llm")])
        refused = len([e for e in fake.log if e.get("llm") and e["status"] != 200])
    usage = Usage()
    for r in rows:
        usage.add(r.usage)
    n = max(sum(r.status != "invalid" for r in rows), 1)  # an invalid row (nothing to judge against) costs nothing
    cost = estimate_cost(model, usage)
    return {"model": model, "effort": effort or "default", "scored": sum(r.label is not None for r in rows),
            "items": n, "requests": requests, "refused": refused,
            "eaten": sum(1 for e in rules.log if e[4]),
            "in_k": usage.input_tokens * 1000 / n, "out_k": usage.output_tokens * 1000 / n,
            "reasoning_k": usage.reasoning_tokens * 1000 / n,
            "usd_k": None if cost is None else cost * 1000 / n}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "examples" / "qa_items.jsonl")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--scale", type=float, default=1.0, help="the fake's reasoning tokens per effort x this")
    args = ap.parse_args()
    lines = args.data.read_text(encoding="utf-8").splitlines()
    items = [json.loads(x) for x in lines if x.strip()][: args.limit]
    results = [run_case(items, model, effort, args.scale) for model, efforts in CASES for effort in efforts]
    base = next(r for r in results if r["model"] == "openai/gpt-4o-mini")["usd_k"]
    print(f"{results[0]['items']} judgeable items of {len(items)} rows of {args.data.name}, fake reasoning "
          f"x{args.scale:g}; per 1,000 items:")
    print(f"{'model':20} {'effort':8} {'scored':>7} {'requests':>8} {'eaten':>5} {'input':>10} {'output':>11} "
          f"{'reasoning':>11} {'USD':>9} {'x 4o-mini':>9} {'x lowest':>8}")
    lowest: dict[str, float] = {}
    for r in results:
        usd = r["usd_k"]
        first = lowest.setdefault(r["model"], usd or 0.0)
        print(f"{r['model']:20} {r['effort']:8} {r['scored']:>3}/{r['items']:<3} {r['requests']:>8} {r['eaten']:>5} "
              f"{r['in_k']:>10,.0f} {r['out_k']:>11,.0f} {r['reasoning_k']:>11,.0f} "
              f"{'-' if usd is None else f'{usd:,.2f}':>9} "
              f"{'-' if usd is None or not base else f'{usd / base:.1f}x':>9} "
              f"{'-' if usd is None or not first else f'{usd / first:.1f}x':>8}"
              + (f"  ({r['refused']} refused)" if r["refused"] else ""), flush=True)


if __name__ == "__main__":
    main()
