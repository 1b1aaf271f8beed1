"""Generated data for the acceptance tier (tests/acceptance/): the README's example items at a user's size.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "qa_items.jsonl"


def generated_items(n: int, *, invalid_every: int = 0) -> list[dict]:
    """n items: the README's example items cycled, each with its own id (and, every `invalid_every`
    rows, a row with nothing to judge against: an invalid row)."""
    base = [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
    out = []
    for k in range(n):
        row = dict(base[k % len(base)])
        row["id"] = f"{row['id']}-{k}"
        if invalid_every and k % invalid_every == invalid_every - 1:
            row = {"id": row["id"], "question": row.get("question", "q"), "answer": row["answer"]}
        out.append(row)
    return out


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
