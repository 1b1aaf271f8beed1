"""A made-up run for `judgeflow review` (items + results, both classes) and the review server in its own
process, for the browser tests and benchmarks/review.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from judgeflow.results import ClaimResult, Judgment

URL = re.compile(r"open (http://127\.0\.0\.1:\d+/\?token=\S+)")


def write_run(tmp: Path, n: int) -> None:
    """n items and their results (every third one flagged, a claim each), as `judgeflow run` leaves them."""
    items, rows = [], []
    for k in range(n):
        items.append({"id": f"it-{k:05d}", "question": f"Question number {k}?", "reference": f"Answer {k}.",
                      "answer": f"The answer is {k}." + (" It was in 1890." if k % 3 == 0 else "")})
        claim = ClaimResult(id="c1", text=f"The answer is {k}.", verdict="supported", basis="reference",
                            evidence=f"Answer {k}.")
        rows.append(Judgment(id=f"it-{k:05d}", label=int(k % 3 == 0), status="judged",
                             criterion="reference_faithfulness", claims=[claim]).to_row())
    (tmp / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    (tmp / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def start_review(tmp: Path, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """`judgeflow review` on tmp's run, on a free port: (process, the URL it printed). Stop it with stop_review."""
    server = subprocess.Popen([sys.executable, "-m", "judgeflow", "review", "results.jsonl", "--items", "items.jsonl",
                               "--labels", "labels.jsonl", "--port", "0"], cwd=tmp, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in server.stdout:  # type: ignore[union-attr]
        seen.append(line)
        m = URL.search(line)
        if m:
            return server, m.group(1)
    stop_review(server)
    raise AssertionError(f"judgeflow review printed no URL: {''.join(seen)}")


def stop_review(server: subprocess.Popen[str]) -> None:
    server.terminate()
    server.wait(timeout=20)
