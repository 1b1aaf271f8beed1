"""RAGTruth (Niu et al., ACL 2024): about 18,000 RAG answers by six LLMs, hallucinated spans marked by people.

Files: `dataset/response.jsonl` (one answer a line: `id`, `source_id`, `model`, `labels` [{"start",
"end", "text", "label_type", "implicit_true", "due_to_null", "meta"}], `split`, `quality`,
`response`) and `dataset/source_info.jsonl` (`source_id`, `task_type` QA / Summary / Data2txt,
`source_info`: the passages and question, the article, or the structured data) of
ParticleMedia/RAGTruth at c103204 (2024-12-02). Their sha256 could not be learnt here (no copy of
the two files was readable); each is pinned by its git blob id at that commit, a hash of the
content checked the same way.

Items: the test split's answers of good quality (as the release's `baseline/prepare_dataset.py`),
the source as the evidence (QA: the passages, with the question; Data2txt: the JSON record).
Label 1 when the answer has any annotated span. Metric: response-level F1 (the F1 of class 1, the
paper's "case" F1) and span-level F1 by character overlap. `implicit_true` spans (true, but not
in the context) stay hallucinations, as annotated; rows keep the flag in `spans`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..calibration.span_metrics import spans_of_results
from ..io.bounded import loads
from ..results import Judgment
from .base import Benchmark, Figure, Published, SourceFile
from .fetch import local_path
from .metrics import f1_positive, label_figures, span_figure

COMMIT = "c103204b9ce28d6bbad859304bf30de72b8ed8fe"
FILES = (SourceFile("dataset/response.jsonl", git_blob="f9ae5913fb9976684f3e13be3cd3465062db54cc"),
         SourceFile("dataset/source_info.jsonl", git_blob="119277774009f110aa58596b93f9512f62594a89"))
LETTUCE = "Kovács and Recski, LettuceDetect, 2025 (arXiv 2502.17125), RAGTruth test set"


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield loads(line)
                except ValueError as e:
                    raise ValueError(f"{path}:{n}: not a JSON line ({e})") from None


def evidence(info: dict[str, Any]) -> tuple[str, str | None]:
    """(source text, question) of a source_info row."""
    task, si = info.get("task_type"), info.get("source_info")
    if task == "QA" and isinstance(si, dict):
        return str(si.get("passages", "")), si.get("question")
    return (si if isinstance(si, str) else json.dumps(si, ensure_ascii=False)), None


def convert(data: Path) -> Iterator[dict[str, Any]]:
    sources = {str(r["source_id"]): r for r in _lines(local_path(data, FILES[1]))}
    for r in _lines(local_path(data, FILES[0])):
        if r.get("split") != "test" or r.get("quality") != "good":
            continue
        info = sources.get(str(r["source_id"]))
        if info is None:
            raise ValueError(f"{FILES[0].path}: response {r['id']} names source {r['source_id']}, which "
                             f"{FILES[1].path} does not have")
        source, question = evidence(info)
        spans = [{"start": s["start"], "end": s["end"], "labels": [s.get("label_type", "")],
                  "implicit_true": bool(s.get("implicit_true"))} for s in r.get("labels") or []]
        item = {"id": f"ragtruth-{r['id']}", "source": source, "answer": r["response"],
                "label": int(bool(spans)), "spans": spans, "dataset": "ragtruth",
                "meta": {"task_type": info.get("task_type"), "model": r.get("model"), "source_id": r["source_id"]}}
        if question:
            item["question"] = question
        yield item


def metric(rows: Sequence[Judgment], seed: int) -> list[Figure]:
    (response,) = label_figures(rows, [("response-level F1", f1_positive)], seed)
    return [response, span_figure(rows, spans_of_results(rows), seed)]


BENCHMARK = Benchmark(
    name="ragtruth", title="RAGTruth", repo="ParticleMedia/RAGTruth", commit=COMMIT, files=FILES,
    licence="MIT License, Copyright (c) 2023 Particle Media: use, copy, modify and distribute, keeping the notice.",
    licence_url=f"https://github.com/ParticleMedia/RAGTruth/blob/{COMMIT}/LICENSE",
    convert=convert, metric=metric,
    published=(Published("GPT-4 (zero-shot prompt)", "response-level F1", 0.634, LETTUCE),
               Published("Llama-2-13B fine-tuned (RAGTruth paper)", "response-level F1", 0.787, LETTUCE),
               Published("lettucedetect-large-v1", "response-level F1", 0.792, LETTUCE),
               Published("Llama-2-13B fine-tuned (RAGTruth paper)", "span-level F1", 0.527, LETTUCE),
               Published("lettucedetect-large-v1", "span-level F1", 0.589, LETTUCE)),
)
