"""`judgeflow run INPUT -o OUTPUT.jsonl`: judge every row of a JSONL/CSV file.

Every input row ends as exactly one output row: judged (label 1/0), unscored (label null,
the judge could not decide) or invalid (label null, the input row is unusable).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console

from ..backends import DEFAULT_MODEL_ENV, OFFLINE_MODEL, default_model
from ..errors import ConfigError
from ..items import read_items
from ..judge import Judge


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help="judge a JSONL or CSV file of items")
    p.add_argument("input", type=Path, help="items: .jsonl (one JSON object a line) or .csv")
    p.add_argument("-o", "--output", type=Path, required=True, help="results .jsonl (one judgment a line)")
    p.add_argument("--model", help=f"provider/model (default ${DEFAULT_MODEL_ENV}, else {OFFLINE_MODEL}, offline)")
    p.add_argument("--base-url", help="an OpenAI- or Anthropic-compatible endpoint (vLLM, llama.cpp, LM Studio)")
    p.add_argument("--mode", default="auto", choices=["auto", "factual", "faithfulness", "spec"],
                   help="route by fields (auto) or force a mode")
    p.add_argument("--criterion", help="a criterion name or .toml path for every item (overrides --mode)")
    p.add_argument("--strategy", default="graph", choices=["graph", "single"],
                   help="graph: decompose then check (2 calls); single: one call")
    p.add_argument("--limit", type=int, help="judge only the first N rows")
    p.add_argument("--concurrency", type=int, default=8, help="items judged at once (default 8)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--trace", action="store_true", help="write prompts and raw replies into each row")
    p.set_defaults(func=cmd_run)


def make_judge(args: argparse.Namespace) -> Judge:
    kwargs = {}
    if args.base_url:
        kwargs["base_url"] = args.base_url
    if args.temperature:
        kwargs["temperature"] = args.temperature
    return Judge(
        args.model or default_model(), mode=args.mode, criterion=args.criterion,
        strategy=args.strategy, concurrency=args.concurrency, **kwargs,
    )


def cmd_run(args: argparse.Namespace) -> int:
    con = Console(stderr=True, highlight=False)
    if args.limit is not None and args.limit < 1:
        raise ConfigError("--limit must be a positive number of rows")
    if not args.model and default_model() == OFFLINE_MODEL:
        con.print(f"[yellow]note:[/yellow] no model configured: judging offline with {OFFLINE_MODEL} "
                  f"(a lexical floor, not an LLM judge). Use --model openai/gpt-4o-mini (with OPENAI_API_KEY), "
                  f"--model anthropic/<model>, --model ollama/<model>, or set {DEFAULT_MODEL_ENV}.")
    judge = make_judge(args)
    rows = read_items(args.input)
    if args.limit:
        rows = itertools.islice(rows, args.limit)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()

    async def go() -> None:
        with args.output.open("w", encoding="utf-8") as out:
            async for j in judge.ajudge_many(rows):
                out.write(json.dumps(j.to_row(trace=args.trace), ensure_ascii=False) + "\n")
                out.flush()
                counts[j.status if j.status != "judged" else f"label {j.label}"] += 1

    asyncio.run(go())
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    con.print(f"judged {sum(counts.values())} rows with {judge.model} -> {args.output} ({summary})")
    return 0


