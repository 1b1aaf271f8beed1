"""Prompt and completion tokens per item beside the peers, and the share of prompt tokens a
provider would serve from its prompt cache.

    python benchmarks/tokens.py            # ~2 min
    python benchmarks/tokens.py --claims --baseline /tmp/base   # 3. only, this checkout beside another

Against ../shared/tools/fake_llm.py (schema-following; its replies are valid, so nothing is
re-asked), OpenAI wire. Tokens = ceil(chars / 4) of what is actually sent: every message's text
plus the JSON of the tool definitions (the fake's own count, which judgeflow reads as usage).

1. Tokens per item on the first 20 rows of factual_qa.jsonl and faithfulness.jsonl, graph and
   single, beside the peers' figures quoted in issue #12 (constants, measured there with the same
   fake and the same rule; not re-measured here).
2. Prompt-cache share on every row of faithfulness.jsonl (graph and single, concurrency 16, the
   order judgeflow sends them in): from the logged request bodies, each request's common prefix
   with the previous request carrying the same <source> (tools, then system, then the user
   message), counted only if that request had finished before this one was sent.
   OpenAI: cached when the common prefix is >= 1024 tokens, in steps of 128.
   Anthropic: the cache_control breakpoint sits after the source; cached when the prefix up to it
   is identical and at least the model's minimum (1024 for Sonnet 4.5/Opus 4.1, 4096 for Haiku 4.5).
3. Graph prompt tokens of one faithfulness item (the file's first row) as its claims grow: the fake
   lists N claims (`--array-len N`) for N = 2, 9, 12, 28, beside RAGAS Faithfulness and DeepEval
   Faithfulness as quoted in issue #40 (2,215 and 2,628 tokens at 28 claims, +10 and +16 a claim;
   the other sizes follow from those slopes; not measured here). With `--baseline DIR` the same is
   measured on another checkout (its own judgeflow, same fake, same item) in the same sitting.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from external import need_shared, shared_dir  # noqa: E402 (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]
SHARED = shared_dir()  # the labelled data and the schema-following fake (see external.py)

#: quoted from issue #12 (same fake, same 20 rows, tokens = ceil(chars/4)); not measured here
PEERS = [("RAGAS FactualCorrectness", "factual", 4, 3424, 145),
         ("RAGAS Faithfulness", "faithfulness", 2, 2344, 76),
         ("DeepEval Faithfulness", "faithfulness", 4, 2133, 80)]
#: judgeflow before this change, quoted from issue #12 (same measurement)
ISSUE_BEFORE = {("factual", "graph"): 1399, ("factual", "single"): 893,
                ("faithfulness", "graph"): 1726, ("faithfulness", "single"): 1302}
AIMS = {("factual", "graph"): 1000, ("faithfulness", "graph"): 1280}
_SOURCE = re.compile(r"<source>.*?</source>", re.S)
#: the factual criterion's opt-in short-answer path measured at this many words
SHORT_ANSWER_WORDS = 15
#: quoted from issue #40: (prompt tokens at 28 claims, tokens a claim adds)
PEERS_BY_CLAIMS = [("RAGAS Faithfulness", 2215, 10), ("DeepEval Faithfulness", 2628, 16)]
CLAIM_SIZES = (2, 9, 12, 28)
#: quoted from issue #50: RAGAS Faithfulness's prompt tokens averaged over the first 20 faithfulness
#: rows at ~28 claims (same fake, same count); not measured here
RAGAS_20_ROWS_28 = 2174
#: aims of issue #50: at most this share of RAGAS's on those rows; a factual graph item at most 700
AIM_SHARE, AIM_FACTUAL = 0.75, 700


def start_fake(log: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(SHARED / "tools" / "fake_llm.py"), "--port", "0", "--log", str(log),
                             "--log-bodies", *extra], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT="):
        proc.kill()
        raise SystemExit(f"fake_llm.py did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.strip().split('=')[1])}/v1"


def judge(url: str, filename: str, mode: str, strategy: str, n: int | None, concurrency: int,
          criterion: Any = None) -> list[Any]:
    from judgeflow import Judge, read_items
    from judgeflow.items import Item

    items = [it for it in read_items(SHARED / "data" / filename) if isinstance(it, Item)][:n]
    fixed = {"criterion": criterion} if criterion is not None else {"mode": mode}
    j = Judge("openai/fake-judge", base_url=url, api_key="bench", strategy=strategy,
              concurrency=concurrency, keep_trace=False, **fixed)
    return j.judge_many(items)


def per_item(tmp: Path) -> dict[tuple[str, str], float]:
    proc, url = start_fake(tmp / "tokens.log")
    out = {}
    try:
        print("1. tokens per item, first 20 rows (tokens = ceil(chars/4) of messages + tool JSON):")
        print(f"   {'judge':34} {'calls':>5} {'prompt tok/item':>15} {'completion tok/item':>19}  ratio to issue's before / aim")
        for mode, filename in (("factual", "factual_qa.jsonl"), ("faithfulness", "faithfulness.jsonl")):
            for strategy in ("graph", "single"):
                rows = judge(url, filename, mode, strategy, 20, 4)
                n = len(rows)
                prompt = sum(r.usage.input_tokens for r in rows) / n
                completion = sum(r.usage.output_tokens for r in rows) / n
                calls = sum(r.usage.calls for r in rows) / n
                reasks = sum(r.usage.reasks for r in rows)
                out[(mode, strategy)] = prompt
                aim = AIMS.get((mode, strategy))
                note = f"{prompt / ISSUE_BEFORE[(mode, strategy)]:.2f}x before" + (
                    f", {prompt / aim:.2f} of the aim < {aim:,}" if aim else "")
                print(f"   judgeflow {strategy} {mode:<17} {calls:>5.2f} {prompt:>15,.0f} {completion:>19,.0f}  {note}"
                      f"{f'  ({reasks} re-asks)' if reasks else ''}")
        print("   peers, quoted from issue #12 (not measured here):")
        for name, mode, calls, prompt, completion in PEERS:
            ours = out[(mode, "graph")]
            print(f"   {name:34} {calls:>5} {prompt:>15,} {completion:>19,}  judgeflow graph = {ours / prompt:.2f}x")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _requests(log: Path) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        e = json.loads(line)
        req = e.get("request")
        if not isinstance(req, dict) or "messages" not in req:
            continue
        tools = json.dumps(req.get("tools")) if req.get("tools") else ""
        msgs = req["messages"]
        system = "".join(_text(m.get("content")) for m in msgs if m.get("role") == "system")
        user = "".join(_text(m.get("content")) for m in msgs if m.get("role") != "system")
        source = _SOURCE.search(user)
        end = e["ts"]
        out.append({"start": end - e.get("elapsed_ms", 0) / 1000, "end": end, "text": tools + system + user,
                    "key": source.group(0) if source else None,
                    "breakpoint": len(tools) + len(system) + source.end() if source else None,
                    "tokens": e.get("prompt_tokens") or math.ceil(len(tools + system + user) / 4)})
    return sorted(out, key=lambda r: r["start"])


def cache_share(requests: list[dict[str, Any]]) -> dict[str, float]:
    total = sum(r["tokens"] for r in requests) or 1
    openai = 0
    anthropic = {1024: 0, 4096: 0}
    last: dict[str, dict[str, Any]] = {}
    for r in requests:
        key = r["key"]
        prev = last.get(key) if key is not None else None
        if prev is not None and prev["end"] <= r["start"]:
            common = len(os.path.commonprefix([prev["text"], r["text"]])) // 4
            if common >= 1024:
                openai += 1024 + 128 * ((common - 1024) // 128)
            bp = r["breakpoint"]
            if bp is not None and prev["breakpoint"] == bp and prev["text"][:bp] == r["text"][:bp]:
                for minimum in anthropic:
                    if bp / 4 >= minimum:
                        anthropic[minimum] += bp // 4
        if key is not None:
            last[key] = r
    return {"openai": openai / total, "anthropic_1024": anthropic[1024] / total,
            "anthropic_4096": anthropic[4096] / total, "requests": len(requests), "prompt_tokens": total}


def caching(tmp: Path) -> None:
    print("2. prompt-cache share on faithfulness.jsonl (all rows, concurrency 16, judgeflow's send order):")
    for strategy in ("graph", "single"):
        log = tmp / f"cache-{strategy}.log"
        proc, url = start_fake(log)
        try:
            judge(url, "faithfulness.jsonl", "faithfulness", strategy, None, 16)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        s = cache_share(_requests(log))
        print(f"   {strategy:6} {s['requests']} requests, {s['prompt_tokens']:,} prompt tokens: served from cache "
              f"OpenAI {s['openai']:.1%}; Anthropic {s['anthropic_1024']:.1%} (1024-token minimum: Sonnet 4.5, "
              f"Opus 4.1), {s['anthropic_4096']:.1%} (4096: Haiku 4.5)")


def rows_average(tmp: Path, filename: str, mode: str, *fake: str,
                 criterion: Any = None) -> dict[str, float]:
    """Graph prompt tokens averaged over the first 20 rows of `filename` (the fake started with
    `fake`), with the rows' re-asks (invalid replies, replies cut off at max_tokens), unscored
    rows and calls."""
    proc, url = start_fake(tmp / f"rows-{mode}.log", *fake)
    try:
        rows = judge(url, filename, mode, "graph", 20, 4, criterion)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return {"prompt": sum(r.usage.input_tokens for r in rows) / len(rows),
            "reasks": sum(r.usage.reasks for r in rows),
            "unscored": sum(r.status != "judged" for r in rows),
            "calls": sum(r.usage.calls for r in rows) / len(rows)}


def by_claims(tmp: Path) -> dict[str, Any]:
    """{N: prompt tokens, claims, calls, check schema tokens} of the first faithfulness row, graph;
    "rows28" and "factual20": the 20-row averages (see the module docstring)."""
    out: dict[str, Any] = {
        "rows28": rows_average(tmp, "faithfulness.jsonl", "faithfulness", "--array-len", "28"),
        "factual20": rows_average(tmp, "factual_qa.jsonl", "factual")}
    from judgeflow import load_criterion

    factual = load_criterion("factual_correctness")
    if "short_answer_words" in type(factual).model_fields:  # opt-in (#50); not in older checkouts
        short = factual.model_copy(update={"short_answer_words": SHORT_ANSWER_WORDS})
        out["factual20short"] = rows_average(tmp, "factual_qa.jsonl", "factual", criterion=short)
    for n in CLAIM_SIZES:
        log = tmp / f"claims-{n}.log"
        proc, url = start_fake(log, "--array-len", str(n))
        try:
            row = judge(url, "faithfulness.jsonl", "faithfulness", "graph", 1, 1)[0]
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        checks = [r for r in _logged(log) if "ClaimChecks" in json.dumps(r.get("tools"))]
        schema = sum(math.ceil(len(json.dumps(r["tools"])) / 4) for r in checks)
        out[str(n)] = {"prompt": row.usage.input_tokens, "claims": len(row.claims), "calls": row.usage.calls,
                  "schema": schema}
    return out


def _logged(log: Path) -> list[dict[str, Any]]:
    bodies = (json.loads(line).get("request") for line in log.read_text(encoding="utf-8").splitlines())
    return [b for b in bodies if isinstance(b, dict) and "messages" in b]


def claims_table(baseline: Path | None) -> None:
    print("3. graph prompt tokens, one faithfulness item, by claims (peers quoted from issue #40):")
    roots = ([("before", baseline.resolve())] if baseline else []) + [("after", ROOT)]
    got = {}
    for name, root in roots:
        done = subprocess.run([sys.executable, __file__, "--claims-worker"], capture_output=True, text=True,
                              check=False, env={**os.environ, "PYTHONPATH": str(root)})
        if done.returncode:
            raise SystemExit(f"{name} ({root}) failed: {done.stderr[-2000:]}")
        found = json.loads(done.stdout.strip().splitlines()[-1])
        got[name] = {int(k) if k.isdigit() else k: v for k, v in found.items()}
    head = "".join(f" | {name}: prompt (calls, check schema) ratio RAGAS / DeepEval" for name in got)
    print(f"   {'claims':>6} | RAGAS | DeepEval{head}")
    for n in CLAIM_SIZES:
        peers = [at28 - per * (28 - n) for _, at28, per in PEERS_BY_CLAIMS]
        cells = "".join(
            f" | {g[n]['prompt']:>5,} ({g[n]['calls']}, {g[n]['schema']:,}) {g[n]['prompt'] / peers[0]:.2f}x / "
            f"{g[n]['prompt'] / peers[1]:.2f}x" for g in (got[name] for name in got))
        claims = {g[n]["claims"] for g in got.values()}
        print(f"   {'/'.join(map(str, sorted(claims))):>6} | {peers[0]:,} | {peers[1]:,}{cells}")
    for name, g in got.items():
        print(f"   {name}: +{(g[28]['prompt'] - g[2]['prompt']) / 26:.0f} prompt tokens a claim from 2 to 28 claims "
              "(RAGAS +10, DeepEval +16)")
    for name, g in got.items():
        rows28, factual20 = (g[k] if isinstance(g[k], dict) else {"prompt": g[k]}
                             for k in ("rows28", "factual20"))
        share = rows28["prompt"] / RAGAS_20_ROWS_28
        print(f"   {name}: 20 faithfulness rows at 28 claims {rows28['prompt']:,.0f} prompt tokens "
              f"an item = {share:.2f}x RAGAS's {RAGAS_20_ROWS_28:,} (aim {AIM_SHARE}x); "
              f"20 factual rows {factual20['prompt']:,.0f} (aim {AIM_FACTUAL})")
        if "factual20short" in g:
            short = g["factual20short"]
            print(f"   {name}: 20 factual rows with short_answer_words = {SHORT_ANSWER_WORDS} "
                  f"(opt-in, off by default): {short['prompt']:,.0f} ({short['calls']:.2f} calls a row), "
                  f"re-asks / unscored {short['reasks']} / {short['unscored']}")
        if "reasks" in rows28:
            print(f"   {name}: re-asks (cut-offs included) / unscored rows: faithfulness "
                  f"{rows28['reasks']} / {rows28['unscored']}, factual {factual20['reasks']} / "
                  f"{factual20['unscored']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-cache-share", action="store_true", help="only the per-item token table")
    ap.add_argument("--claims", action="store_true", help="only the table by claims (3.)")
    ap.add_argument("--baseline", type=Path, help="another checkout, measured beside this one in 3.")
    ap.add_argument("--claims-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    need_shared(SHARED)
    with tempfile.TemporaryDirectory() as d:
        if args.claims_worker:  # run by claims_table with PYTHONPATH at the checkout measured
            print(json.dumps(by_claims(Path(d))))
            return 0
        if not args.claims:
            per_item(Path(d))
            if not args.no_cache_share:
                caching(Path(d))
        claims_table(args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
