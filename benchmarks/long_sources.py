"""Long sources: evidence recall of passage selection, and the tokens an item costs at 1k-64k characters.

    python benchmarks/long_sources.py

1. Evidence recall (no model, no server): each faithfulness item's source (500+ characters) is
   hidden at a random place among other items' sources until the document is 16k or 64k
   characters. A claim is one sentence of the item's answer; its evidence passage is the passage
   of the item's own source that shares the most content words and numbers with it. Recall is
   the share of claims whose evidence passage passage selection keeps (`select_passages`, the
   claims as queries) at a budget of 4k, 8k, 16k and 24k characters; "none" counts the claims
   sharing no word with any passage (paraphrase, another script): they still get passages, never
   `(none given)`.
2. Tokens per item (graph strategy, OpenAI wire, against tests/fakes/provider.py): what the
   provider's limiter is charged per item (request bytes / 4 + max_tokens, as counted by
   judgeflow's limiter) for faithfulness items whose source is 1k, 4k, 16k and 64k characters,
   with passage selection off (`max_source_chars=0`, sources sent whole, the old default) and as
   the default does now (sources over 16,000 characters cut to that many).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from external import need_data, shared_dir  # noqa: E402 (benchmarks/ is the script's folder)

SHARED = shared_dir()  # the labelled data (see external.py)

from judgeflow.backends.passages import (  # noqa: E402 - after the data check
    DEFAULT_PASSAGE_CHARS,
    _terms,
    select_passages,
    split_documents,
)
from judgeflow.text import SENTENCE  # noqa: E402

SIZES = (16_000, 64_000)
BUDGETS = (4_000, 8_000, 16_000, 24_000)


def load(n: int | None = None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (need_data(SHARED) / "data" / "faithfulness.jsonl").read_text().splitlines()
            if line]
    for r in rows:
        r["source"] = r["source"] if isinstance(r["source"], str) else "\n\n".join(r["source"])
    return rows[:n] if n else rows


def long_source(item: dict[str, Any], others: list[dict[str, Any]], size: int, rng: random.Random) -> tuple[list[str], int]:
    """(documents: the item's source among other items' sources, about `size` characters in all;
    the 1-based number of the item's own)."""
    parts: list[str] = []
    total = len(item["source"])
    pool = [o["source"] for o in others if o is not item]
    rng.shuffle(pool)
    for text in pool:
        if total >= size:
            break
        parts.append(text)
        total += len(text)
    at = rng.randrange(len(parts) + 1)
    return [*parts[:at], item["source"], *parts[at:]], at + 1


def recall(items: list[dict[str, Any]], n: int, seed: int = 7) -> dict[tuple[int, int], tuple[int, int, int]]:
    """{(size, budget): (claims, evidence passage kept, claims sharing no word with their source)}."""
    rng = random.Random(seed)
    out: dict[tuple[int, int], list[int]] = {(s, b): [0, 0, 0] for s in SIZES for b in BUDGETS}
    own = [it for it in items if len(it["source"]) >= 500][:n]
    for size in SIZES:
        for it in own:
            docs, mine = long_source(it, items, size, rng)
            claims = [s.strip() for s in SENTENCE.split(it["answer"]) if len(set(_terms(s))) >= 3]
            for budget in BUDGETS:
                pc = min(DEFAULT_PASSAGE_CHARS, max(200, budget // 4))
                passages = split_documents(docs, passage_chars=pc)
                chosen = {(p.doc, p.index) for p in select_passages(claims, passages, max_chars=budget)}
                for c in claims:
                    terms = set(_terms(c))
                    overlap = {(p.doc, p.index): len(terms & set(_terms(p.text))) for p in passages if p.doc == mine}
                    best = max(overlap.values(), default=0)
                    row = out[(size, budget)]
                    row[0] += 1
                    if best == 0:
                        row[2] += 1
                        continue
                    row[1] += any(v == best and k in chosen for k, v in overlap.items())
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


async def tokens_per_item(items: list[Any], url: str, **judge_kwargs: Any) -> float:
    from judgeflow import Judge
    from judgeflow.backends.limits import forget, limiters

    forget()
    judge = Judge("openai/gpt-4o-mini", base_url=url + "/v1", api_key="sk-fake", **judge_kwargs)
    try:
        results = [j async for j in judge.ajudge_many(items, concurrency=8)]
    finally:
        await judge.aclose()
    assert all(j.status == "judged" for j in results), [j.error for j in results if j.error][:3]
    return sum(lim.charged for lim in limiters()) / len(items)


def sized_items(items: list[dict[str, Any]], size: int, n: int, rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for it in [i for i in items if len(i["source"]) >= 500][:n]:
        text = it["source"] if len(it["source"]) >= size else "\n\n".join(long_source(it, items, size, rng)[0])
        out.append({"id": it["id"], "source": text[:size], "answer": it["answer"]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=10, help="items per source size in part 2 (default 10)")
    ap.add_argument("--recall-items", type=int, default=120, help="items hidden in long sources in part 1 (default 120)")
    args = ap.parse_args()
    items = load()
    print("1. evidence recall of passage selection (claims whose evidence passage is kept):")
    for (size, budget), (claims, kept, none) in recall(items, args.recall_items).items():
        print(f"  source {size // 1000:>2}k chars, budget {budget // 1000:>2}k: recall {kept / max(claims - none, 1):.3f} "
              f"({kept} of {claims - none} claims; {none} share no word with their source)")
    from cpu import start_async_fake, stop_async_fake

    proc, url = start_async_fake(0.0)
    rng = random.Random(11)
    try:
        print("2. limiter tokens per item (graph, OpenAI wire): sources sent whole -> default now")
        for size in (1_000, 4_000, 16_000, 64_000):
            batch = sized_items(items, size, args.items, rng)
            whole = asyncio.run(tokens_per_item(batch, url, max_source_chars=0))
            now = asyncio.run(tokens_per_item(batch, url))
            print(f"  {size // 1000:>2}k chars: {whole:>8,.0f} -> {now:>8,.0f} tokens an item ({now / whole:.2f}x)")
    finally:
        stop_async_fake(proc)


if __name__ == "__main__":
    main()
