"""HaluEval QA (Li et al., EMNLP 2023): 10,000 HotpotQA questions, each with its right answer and a
hallucinated answer ChatGPT generated and filtered to be plausible.

File: `data/qa_data.json` of RUCAIBox/HaluEval at b7253db (2024-02-12): one JSON object a line,
`{"knowledge", "question", "right_answer", "hallucinated_answer"}`. Its sha256 could not be learnt
here (no copy of the full file was readable); it is pinned by its git blob id at that commit.

Items: two per question, in file order: the right answer (label 0) and the hallucinated one
(label 1), with the right answer as the reference (the knowledge text stays in `meta`, not shown
to the judge). The label-0 answers equal the reference, so that half is easy for any judge.
Metric: Cohen's kappa and balanced accuracy. HaluEval's own figure is accuracy on a random choice
of one answer per question (balanced in expectation), printed beside balanced accuracy.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..io.bounded import loads
from .base import Benchmark, Published, SourceFile
from .fetch import local_path
from .metrics import kappa_figures

COMMIT = "b7253db3cdaa0ab2c382f92b26b390109174f77e"
FILES = (SourceFile("data/qa_data.json", git_blob="981d8944c2a74937a9556d50dd12ffb493d95c27"),)
AB = ("reference_faithfulness", "factual_correctness")


def convert(data: Path) -> Iterator[dict[str, Any]]:
    path = local_path(data, FILES[0])
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = loads(line)
                question, right, wrong = r["question"], r["right_answer"], r["hallucinated_answer"]
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{n}: not a HaluEval QA row ({{'question', 'right_answer', "
                                 f"'hallucinated_answer', 'knowledge'}}): {e}") from None
            meta = {"row": n - 1, "knowledge": r.get("knowledge")}
            for kind, answer, label in (("right", right, 0), ("hallucinated", wrong, 1)):
                yield {"id": f"halueval-qa-{n - 1}-{kind}", "question": question, "reference": right,
                       "answer": answer, "label": label, "dataset": "halueval_qa", "meta": meta}


BENCHMARK = Benchmark(
    name="halueval_qa", title="HaluEval QA", repo="RUCAIBox/HaluEval", commit=COMMIT, files=FILES,
    licence="MIT License, Copyright (c) 2020 RUCAIBox: use, copy, modify and distribute, keeping the notice.",
    licence_url=f"https://github.com/RUCAIBox/HaluEval/blob/{COMMIT}/LICENSE",
    convert=convert, metric=kappa_figures, ab=AB,
    published=(Published("ChatGPT (gpt-3.5-turbo), HaluEval's prompt", "accuracy (one answer per question)", 0.6259,
                         "Li et al., HaluEval, EMNLP 2023, QA column"),),
)
