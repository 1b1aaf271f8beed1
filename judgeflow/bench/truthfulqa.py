"""TruthfulQA (Lin, Hilton and Evans, ACL 2022): 790 questions that some people answer falsely, each with
a best answer and lists of true and false answers.

File: `TruthfulQA.csv` of sylinrl/TruthfulQA at d71c110 (2025-01-15, the v1 release of January
2025): columns Type, Category, Question, Best Answer, Best Incorrect Answer, Correct Answers,
Incorrect Answers (both "; "-separated), Source.

Items: two per question: a true answer (label 0; the first listed Correct Answer that is not the
Best Answer, else the Best Answer) and the Best Incorrect Answer (label 1), with the Best Answer as
the reference. Metric: Cohen's kappa and balanced accuracy.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .base import Benchmark, Published, SourceFile
from .fetch import local_path
from .metrics import kappa_figures

COMMIT = "d71c110897f5d31c5d7f309e7bc316c152f6f031"
FILES = (SourceFile("TruthfulQA.csv", sha256="b8d8ef1e12f98b4f2a9f47abc9765da0640b182b6c5d9b92f0c1a1f2f1e02e5c"),)
AB = ("reference_faithfulness", "factual_correctness")
COLUMNS = ("Question", "Best Answer", "Best Incorrect Answer", "Correct Answers")


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def true_answer(row: dict[str, str]) -> str:
    best = row["Best Answer"].strip()
    for answer in (a.strip() for a in row["Correct Answers"].split(";")):
        if answer and _norm(answer) != _norm(best):
            return answer
    return best


def convert(data: Path) -> Iterator[dict[str, Any]]:
    path = local_path(data, FILES[0])
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not TruthfulQA.csv: no column {', '.join(missing)}")
        for n, row in enumerate(reader):
            meta = {"row": n, "type": row.get("Type"), "category": row.get("Category")}
            for kind, answer, label in (("true", true_answer(row), 0), ("false", row["Best Incorrect Answer"], 1)):
                yield {"id": f"truthfulqa-{n}-{kind}", "question": row["Question"], "reference": row["Best Answer"],
                       "answer": answer.strip(), "label": label, "dataset": "truthfulqa", "meta": meta}


BENCHMARK = Benchmark(
    name="truthfulqa", title="TruthfulQA", repo="sylinrl/TruthfulQA", commit=COMMIT, files=FILES,
    licence="Apache License 2.0 (the TruthfulQA authors): use, modify and distribute, with the licence and notices.",
    licence_url=f"https://github.com/sylinrl/TruthfulQA/blob/{COMMIT}/LICENSE",
    convert=convert, metric=kappa_figures, ab=AB,
    published=(Published("GPT-judge (fine-tuned GPT-3)", "accuracy against human truth labels", None,
                         "Lin et al., TruthfulQA, ACL 2022, section 4.2",
                         note="90-96% (validation, on models' generated answers, not these listed ones)"),),
)
