"""A few labelled items in the shapes of ../shared/data's files, for tests that need rows of each kind
but not that data itself (a plain clone has no ../shared):

  factual_rows(n)       question, reference, answer, label, dataset: the shipped 48-row sample
                        (examples/data/factual_qa_sample.jsonl, TruthfulQA and HaluEval rows), cycled;
  faithfulness_rows(n)  source passages and summaries of them, some with a wrong year or place;
  spec_rows(n)          release notes checked against a spec (--mode spec), some breaking it.

Every row has its own id (and answer, so that no row is served from another's cached reply).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FACTUAL_SAMPLE = ROOT / "examples" / "data" / "factual_qa_sample.jsonl"

_CITIES = [("Moscow", 1147, "Yuri Dolgorukiy", "the Moskva"), ("Kyiv", 482, "Kyi", "the Dnieper"),
           ("Novgorod", 859, "the Slovenes", "the Volkhov"), ("Kazan", 1005, "the Volga Bulgars", "the Kazanka")]


def factual_rows(n: int) -> list[dict[str, Any]]:
    """n factual QA rows: the shipped sample's 48 rows in order, then again with ids suffixed."""
    base = [json.loads(x) for x in FACTUAL_SAMPLE.read_text(encoding="utf-8").splitlines() if x.strip()]
    out = []
    for k in range(n):
        row = dict(base[k % len(base)])
        if k >= len(base):
            row.update(id=f"{row['id']}-{k // len(base)}", answer=f"{row['answer']} ({k // len(base)})")
        out.append(row)
    return out


def faithfulness_rows(n: int) -> list[dict[str, Any]]:
    """n summaries of a source passage; every third one gets the founding year wrong (label 1)."""
    out = []
    for k in range(n):
        city, year, founder, river = _CITIES[k % len(_CITIES)]
        wrong = k % 3 == 2
        source = f"{city} was founded in {year} by {founder}. It lies on {river}. Passage {k}."
        answer = f"{city} was founded in {year + 100 if wrong else year} by {founder}. The city is on {river}."
        out.append({"id": f"faith-{k:03d}", "task": "Summarize the source passage.", "source": source,
                    "answer": answer, "label": int(wrong), "dataset": "faithfulness_generated"})
    return out


def spec_rows(n: int) -> list[dict[str, Any]]:
    """n release notes for version 3.<k> against a spec; every other one names the wrong version (label 1)."""
    out = []
    for k in range(n):
        wrong = k % 2 == 1
        version = f"3.{k + 10}"
        shown = f"3.{k + 1}" if wrong else version
        out.append({"id": f"spec-{k:03d}", "task": f"Write a one-line release note for version {version} of the CLI.",
                    "spec": f"Release notes: one line; must name the version exactly as {version}; no emoji.",
                    "answer": f"judgeflow CLI {shown} adds --version and did-you-mean hints.", "label": int(wrong),
                    "dataset": "spec_review_generated"})
    return out


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
