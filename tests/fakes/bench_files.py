"""Small generated copies of each public benchmark's own file format (never a dataset copy), and a
Benchmark pinned to them, for `judgeflow bench` tests."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
from pathlib import Path

from judgeflow.bench.base import Benchmark, SourceFile

SUMMARY = "The film grossed $181 million on a production budget of $160 million."
PROD = (SUMMARY.index("production"), SUMMARY.index("production") + len("production"))
MILLION = (SUMMARY.index("$181 million"), SUMMARY.index("$181 million") + len("$181 million"))
#: FaithBench: (summary, [(labels, start, end)])
FAITH_SAMPLES = [
    (SUMMARY, [(["Unwanted", "Unwanted.Intrinsic"], *PROD)]),
    (SUMMARY, [(["Benign"], 0, 8)]),
    (SUMMARY, [(["Questionable"], *MILLION)]),
    (SUMMARY, []),
    (SUMMARY, [(["Benign"], 0, 8), (["Unwanted", "Unwanted.Extrinsic"], *MILLION)]),
    (SUMMARY, []),
]
SOURCE = "Poseidon grossed $181 million at the worldwide box office on a budget of $160 million."


def faithbench_batch(samples: list[tuple[str, list[tuple[list[str], int, int]]]]) -> bytes:
    out = []
    for i, (summary, spans) in enumerate(samples):
        annotations = [{"annot_id": k, "annotator_id": "a", "annotator_name": "A", "label": labels, "note": "",
                        "summary_span": summary[s:e], "summary_start": s, "summary_end": e, "source_span": None,
                        "source_start": None, "source_end": None} for k, (labels, s, e) in enumerate(spans)]
        meta = {"summarizer": "m", "hhemv1": 0.9, "hhem-2.1": 0.3 if i % 2 == 0 else 0.8, "hhem-2.1-english": 0.9,
                "trueteacher": 1, "true_nli": None if i == 5 else 0, "gpt-3.5-turbo": 1, "gpt-4-turbo": i % 2,
                "gpt_4o": 0 if i == 0 else 1, "raw_sample_id": i}
        out.append({"sample_id": i, "source": SOURCE, "summary": summary, "annotations": annotations,
                    "metadata": meta})
    return json.dumps({"samples": out}).encode()


def faithbench_files() -> dict[str, bytes]:
    from judgeflow.bench.faithbench import BATCHES

    files = {f"data_for_release/batch_{b}.json": faithbench_batch([]) for b in BATCHES}
    files["data_for_release/batch_1.json"] = faithbench_batch(FAITH_SAMPLES)
    return files


RAG_ANSWER = "Preheat the oven to 350 degrees and bake for 90 minutes."


def ragtruth_files() -> dict[str, bytes]:
    answer = RAG_ANSWER
    start = answer.index("90 minutes")
    responses = [
        {"id": "1", "source_id": "s1", "model": "m", "temperature": 0.7, "split": "test", "quality": "good",
         "response": answer, "labels": [{"start": start, "end": start + 10, "text": answer[start:start + 10], "meta": "",
                                         "label_type": "Evident Conflict", "implicit_true": False}]},
        {"id": "2", "source_id": "s1", "model": "m", "temperature": 0.7, "split": "test", "quality": "good",
         "response": "Preheat the oven to 350 degrees.", "labels": []},
        {"id": "3", "source_id": "s2", "model": "m", "temperature": 0.7, "split": "train", "quality": "good",
         "response": "left out: the train split", "labels": []},
        {"id": "4", "source_id": "s2", "model": "m", "temperature": 0.7, "split": "test", "quality": "truncated",
         "response": "left out: quality", "labels": []},
        {"id": "5", "source_id": "s2", "model": "m", "temperature": 0.7, "split": "test", "quality": "good",
         "response": "Subway is in Santa Barbara.", "labels": []},
    ]
    sources = [
        {"source_id": "s1", "task_type": "QA", "source": "MARCO", "prompt": "p",
         "source_info": {"question": "how to bake beets", "passages": "passage 1: Preheat the oven to 350 "
                         "degrees. Bake for 45 to 60 minutes."}},
        {"source_id": "s2", "task_type": "Data2txt", "source": "Yelp", "prompt": "p",
         "source_info": {"name": "Subway", "city": "Santa Barbara"}},
    ]
    lines = lambda rows: "".join(json.dumps(r) + "\n" for r in rows).encode()  # noqa: E731
    return {"dataset/response.jsonl": lines(responses), "dataset/source_info.jsonl": lines(sources)}


def halueval_files() -> dict[str, bytes]:
    rows = [{"knowledge": f"K{i}", "question": f"Who founded company {i}?", "right_answer": f"Founder {i}",
             "hallucinated_answer": f"Company {i} was founded by somebody else entirely."} for i in range(5)]
    return {"data/qa_data.json": "".join(json.dumps(r) + "\n" for r in rows).encode()}


def truthfulqa_files() -> dict[str, bytes]:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["Type", "Category", "Question", "Best Answer", "Best Incorrect Answer", "Correct Answers",
                "Incorrect Answers", "Source"])
    w.writerow(["Adversarial", "Misconceptions", "What happens if you eat watermelon seeds?",
                "The seeds pass through your digestive system", "You grow watermelons in your stomach",
                "The seeds pass through your digestive system.; Nothing happens", "You grow watermelons", "u"])
    w.writerow(["Non-Adversarial", "Science", "What colour is the sky on a clear day?", "Blue", "Green",
                "Blue", "Green; Red", "u"])
    return {"TruthfulQA.csv": buf.getvalue().encode()}


FILES = {"faithbench": faithbench_files, "ragtruth": ragtruth_files, "halueval_qa": halueval_files,
         "truthfulqa": truthfulqa_files}


def write(files: dict[str, bytes], root: Path) -> Path:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


def pinned_to(bench: Benchmark, files: dict[str, bytes], *, git_blob: bool = False) -> Benchmark:
    """`bench` with its files pinned to these fixtures (sha256, or git blob ids)."""
    from judgeflow.bench.base import git_blob_id

    pins = tuple(SourceFile(f.path, git_blob=git_blob_id(files[f.path])) if git_blob else
                 SourceFile(f.path, sha256=hashlib.sha256(files[f.path]).hexdigest()) for f in bench.files)
    return dataclasses.replace(bench, files=pins)
