"""FaithBench (Bao et al., NAACL 2025): 750 summaries by 10 LLMs, annotated by people at span level.

Files: `data_for_release/batch_{1..16}.json` (no batch 13) of vectara/FaithBench at cf89797 (the
release's last commit, 2025-05-12), each `{"samples": [{"sample_id", "source", "summary",
"annotations": [{"label": [...], "summary_start", "summary_end", ...}], "metadata": {...}}]}`.

Label: the release's own binarisation (`scripts/binarize.py`, its default config): pool every
annotator's labels on "worst"; Questionable, Unwanted, Unwanted.Intrinsic and Unwanted.Extrinsic
are hallucinated (1), Benign or no annotation is consistent (0). Spans: each annotation's
`[summary_start, summary_end)` with its labels (Benign-only spans are not hallucinations). Metric:
balanced accuracy and F1-macro, the FaithBench leaderboard's. Beside them: the detectors whose
predictions the release ships in `metadata` (GPT-4o, GPT-4-Turbo, GPT-3.5-Turbo as judges,
HHEM-2.1 at 0.5, TrueTeacher, TRUE NLI), on the very items judged; their fields follow HHEM's
convention, 1 = consistent (checked: the items GPT-4o calls 1 have the higher HHEM scores).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..calibration.span_metrics import spans_of_results
from ..io.bounded import loads
from ..results import Judgment
from .base import Benchmark, Figure, Published, SourceFile
from .fetch import local_path
from .metrics import balanced_accuracy, f1_macro, figure, label_figures, span_figure

COMMIT = "cf89797d82812c23b5d5e5c121f1d9b8983bbbce"
BATCHES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16)
SHA256 = {
    1: "a4e7858702e741b0fb024a022a906f61fb8eb65011b7f7b138e56e080a4c8c59",
    2: "18f1b2b9eae6fbf2020f295dc5ca512ef1a7e389e763b707bc51831f58df6a70",
    3: "84b709a9d88998f478f429ee2330ea18666ae9e5340ea398ece03cec6ab54308",
    4: "c0f68bc222dd8b6e332cb6668840de8da150687ddf6f9b5bd243f389033fda42",
    5: "6be08bb37ccdf68e41e117b0174cc3c8b41ed7bf85134d00e0e89c023e96b436",
    6: "a5fd42aa64fbe15f535192ddfd3cfc72b53535cde7834cb6685ebe0a229f8587",
    7: "28e83e1487381ce317103505dab4d5679ad74f53541374a98e24e3673734343b",
    8: "5cf2b8ab42fe1d4b0018cf736448dd8a88318267b0efc2f45ea200e713932975",
    9: "4924fe2d0975890712032a128544c0619c2ebf81d5d472e99e7883f1a9720bd5",
    10: "8e5cec822516abbf74cd6796104bbe537da98628c671b64c10afa3b15bebe08c",
    11: "cf999c8fa9696f4b24d8f4b08f9fdd6603a942cfee63ad851ff6d1f265c116cc",
    12: "fda9f0e0eae69c13b79a8fc1f81d1f8a02e9f28ad8c3274619c4369bb15c818e",
    14: "72f07b9f4b91f8a49d96e7adc79a8308edb92a2e6b34babcd9ef68dc6b7b2f34",
    15: "c6608ce2edd17134674c7f8a0fdfc871e22458b432b35506889886c737eb4663",
    16: "e35ace1069bb79844b122415d3c4192f7147737a2b9ad509185fb2c1ba7090db",
}
FILES = tuple(SourceFile(f"data_for_release/batch_{b}.json", sha256=SHA256[b]) for b in BATCHES)
#: the release's binarisation: these labels make a summary hallucinated (`scripts/binarize.py`)
HALLUCINATED = {"Questionable", "Unwanted", "Unwanted.Intrinsic", "Unwanted.Extrinsic"}
#: detectors whose predictions the release ships in `metadata`: field -> (name, threshold or None for 0/1)
DETECTORS = {"gpt_4o": ("GPT-4o as a judge", None), "gpt-4-turbo": ("GPT-4-Turbo as a judge", None),
             "gpt-3.5-turbo": ("GPT-3.5-Turbo as a judge", None), "hhem-2.1": ("HHEM-2.1 (score < 0.5)", 0.5),
             "trueteacher": ("TrueTeacher", None), "true_nli": ("TRUE NLI", None)}
CITE = "Bao et al., FaithBench, NAACL 2025"


def sample_label(sample: dict[str, Any]) -> tuple[int, str]:
    """(label, fine label): worst-pooled over all annotations, as the release's binarize.py."""
    labels = {str(x) for a in sample.get("annotations") or [] for x in a.get("label") or []}
    if labels & HALLUCINATED:
        return 1, "unwanted" if labels - {"Questionable", "Benign"} else "questionable"
    return 0, "benign" if "Benign" in labels else "consistent"


def spans_of(sample: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"start": a["summary_start"], "end": a["summary_end"], "labels": list(a.get("label") or [])}
            for a in sample.get("annotations") or []
            if isinstance(a.get("summary_start"), int) and isinstance(a.get("summary_end"), int)]


def convert(data: Path) -> Iterator[dict[str, Any]]:
    for f, batch in zip(FILES, BATCHES):
        path = local_path(data, f)
        try:
            samples = loads(path.read_text(encoding="utf-8"))["samples"]
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not a FaithBench batch file ({{'samples': [...]}}): {e}") from None
        for s in samples:
            label, fine = sample_label(s)
            meta = {"batch": batch, "sample_id": s["sample_id"], "fine_label": fine, "detectors": s.get("metadata")}
            yield {"id": f"faithbench-{batch}-{s['sample_id']}", "source": s["source"], "answer": s["summary"],
                   "label": label, "spans": spans_of(s), "dataset": "faithbench", "meta": meta}


def metric(rows: Sequence[Judgment], seed: int) -> list[Figure]:
    figures = label_figures(rows, [("balanced accuracy", balanced_accuracy), ("F1-macro", f1_macro)], seed)
    return [*figures, span_figure(rows, spans_of_results(rows), seed)]


def detector_label(meta: dict[str, Any] | None, field: str, threshold: float | None) -> int | None:
    """A shipped detector's verdict as judgeflow's label (1 = hallucination); None if it has none."""
    value = (meta or {}).get(field)
    if value is None:
        return None
    return int(value < threshold) if threshold is not None else 1 - int(value)


def on_items(records: Sequence[dict[str, Any]], seed: int) -> list[Published]:
    """The release's own detectors on the very items judged: balanced accuracy and F1-macro."""
    out = []
    for field, (name, threshold) in DETECTORS.items():
        pairs = [(r["label"], d) for r in records
                 if (d := detector_label(r["meta"].get("detectors"), field, threshold)) is not None]
        figs = [figure(m, fn, [h for h, _ in pairs], [d for _, d in pairs], seed=seed)
                for m, fn in (("balanced accuracy", balanced_accuracy), ("F1-macro", f1_macro))]
        out.append(Published(name, "; ".join(f"{f.name} {f.text()}" for f in figs), None,
                             f"its predictions shipped in the release, on these {figs[0].n} items"))
    return out


BENCHMARK = Benchmark(
    name="faithbench", title="FaithBench", repo="vectara/FaithBench", commit=COMMIT, files=FILES,
    licence=("Creative Commons Attribution-NonCommercial-ShareAlike 4.0 International (CC BY-NC-SA 4.0), "
             "Vectara and the FaithBench authors: non-commercial use only, with attribution; what you "
             "derive from it is shared under the same licence."),
    licence_url=f"https://github.com/vectara/FaithBench/blob/{COMMIT}/LICENSE",
    convert=convert, metric=metric, needs_consent=True, published_on_items=on_items,
    published=(Published("the best detectors of the paper", "accuracy", None, f"{CITE}, abstract",
                         note="\"near 50%\""),),
)
