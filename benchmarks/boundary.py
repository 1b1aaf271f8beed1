"""The model boundary, measured: % of items scored and re-asks per item against a fake that follows
the JSON schema it is sent and nothing else (../shared/tools/fake_llm.py, unmodified), for 100
factual + 50 faithfulness rows + the 20 spec_review rows (spec mode, requirement coverage on),
graph and single strategies, OpenAI and Anthropic wire. Optionally also a real local server.

    python benchmarks/boundary.py                       # starts fake_llm.py on a free port
    python benchmarks/boundary.py --server-url http://127.0.0.1:8765/v1 --server-model <id> --server-items 10

Prints one line per (wire, strategy): rows, scored %, re-asks and repairs per item, calls; and for
a real server: scored, seconds and tokens per item.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import external
from external import need_data, shared_dir

ROOT = Path(__file__).resolve().parents[1]
SHARED = shared_dir()  # the labelled data and the schema-following fake (see external.py)
SLICES = [("factual_qa.jsonl", 100, []), ("faithfulness.jsonl", 50, []), ("spec_review.jsonl", 20, ["--mode", "spec"])]


def take(path: Path, n: int, out: Path) -> Path:
    out.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
    return out


def run(items: Path, out: Path, store: Path, model: str, base_url: str, *extra: str) -> tuple[list[dict], float]:
    from judgeflow.cli import main

    start = time.monotonic()
    main(["run", str(items), "-o", str(out), "--model", model, "--base-url", base_url, "--store", str(store),
          "--no-progress", "--no-cache", *extra])
    elapsed = time.monotonic() - start
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()], elapsed


def fake_matrix(tmp: Path, base: str) -> None:
    print(f"against {external.fake_script(SHARED).name} (schema-following, unmodified):")
    for wire in ("openai", "anthropic"):
        url = f"{base}/v1" if wire == "openai" else base
        for strategy in ("graph", "single"):
            rows: list[dict] = []
            for name, n, extra in SLICES:
                items = take(SHARED / "data" / name, n, tmp / f"in-{name}")
                got, _ = run(items, tmp / f"out-{wire}-{strategy}-{name}", tmp / "runs.sqlite", f"{wire}/fake-judge",
                             url, "--strategy", strategy, *extra)
                rows += got
            scored = sum(r["status"] == "judged" for r in rows)
            reasks = sum(r["usage"]["reasks"] for r in rows)
            repairs = sum(r["usage"]["repairs"] for r in rows)
            calls = sum(r["usage"]["calls"] for r in rows)
            print(f"  {wire:9} {strategy:6} rows {len(rows)}  scored {scored}/{len(rows)} = {scored / len(rows):.1%}  "
                  f"re-asks/item {reasks / len(rows):.2f}  repairs/item {repairs / len(rows):.2f}  "
                  f"calls/item {calls / len(rows):.2f}  structured {sorted({r['structured'] for r in rows})}")


def server(tmp: Path, url: str, model: str, n: int, strategy: str) -> None:
    items = tmp / "examples.jsonl"
    lines: list[str] = []
    for f in sorted((ROOT / "examples").rglob("*.jsonl")):
        lines += f.read_text(encoding="utf-8").splitlines()
    items.write_text("\n".join(lines[:n]) + "\n", encoding="utf-8")
    rows, elapsed = run(items, tmp / "server-out.jsonl", tmp / "server.sqlite", model, url, "--strategy", strategy,
                        "--concurrency", "1", "--timeout", "300")
    scored = sum(r["status"] == "judged" for r in rows)
    tokens = sum(r["usage"]["input_tokens"] + r["usage"]["output_tokens"] for r in rows)
    reasks = sum(r["usage"]["reasks"] for r in rows)
    print(f"real server {url} ({model}, {strategy}): scored {scored}/{len(rows)}; {elapsed / len(rows):.1f} s/item; "
          f"{tokens / len(rows):,.0f} tokens/item; re-asks/item {reasks / len(rows):.2f}; "
          f"structured {sorted({r['structured'] for r in rows})}")
    for r in rows:
        if r["status"] != "judged":
            print(f"  {r['id']}: {r['error']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server-url", help="also measure a real OpenAI-compatible server (e.g. llama.cpp)")
    ap.add_argument("--server-model", default="openai/local", help="provider/model for the real server")
    ap.add_argument("--server-items", type=int, default=10)
    ap.add_argument("--server-strategy", default="graph", choices=["graph", "single"])
    ap.add_argument("--no-fake", action="store_true", help="skip the fake_llm.py matrix")
    need_data(SHARED)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.no_fake:
            proc, root = external.start_fake(shared=SHARED)
            try:
                fake_matrix(tmp, root)
            finally:
                proc.terminate()
                proc.wait(timeout=10)
        if args.server_url:
            server(tmp, args.server_url, args.server_model, args.server_items, args.server_strategy)


if __name__ == "__main__":
    main()
