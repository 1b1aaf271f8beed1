"""The data behind `judgeflow review`: the queue, one item's view, labelling, live calibration.

No web framework here: `server.py` only turns these methods into routes. Labels live in a
labels file in `judgeflow label`'s format (the item rows, each with `label` / `labelled_at` or
`label_skipped`, and the judge's verdict under `judge`); `labeler.Labeller` reads it and writes
every label atomically, so the terminal labeller and this app resume each other's work.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..agreement import calibrate, deciding_claim, field_value
from ..comparison import _check_same_items, compare  # private: the same-items check, run at launch
from ...errors import ConfigError, InvalidItemError
from ..labeller import Labeller, atomic_write
from ..labels import LABEL_FIELDS, read_results
from ...results import ClaimResult, Judgment
from ..sampling import JUDGE_LABEL, read_pool, stratified_sample
from .spans import locate, quote_spans
from ...traces import split_document

NOTE = "label_note"
"""The labels-file field for the optional note (other tools carry it through untouched)."""
FILTERS = ("judge", "human", "disagree", "criterion", "dataset", "status", "language")


def snippet(question: str | None, answer: str, limit: int = 70) -> str:
    """A short line for the queue: the start of the question and of the answer."""
    def cut(t: str) -> str:
        t = " ".join(t.split())
        return t if len(t) <= limit else t[:limit].rstrip() + "…"
    return f"{cut(question)} → {cut(answer)}" if question else cut(answer)


class ReviewSession:
    """One review: a results file, its labels file, and optionally a second run to compare.

    Args:
        results: results from `judgeflow run`.
        labels: the labels file; read if it exists, else created from `items` (every item
            with a result, in the stratified order of `judgeflow sample --results`).
        items: the items file given to `judgeflow run` (results rows do not carry the texts).
        other: a second run's results on the same items (A/B view).
        reveal: show the judge's verdict before an item is labelled (default: blind).
        seed: the stratified order's seed.

    Raises:
        ConfigError: no labels file and no items to make one from.
        InvalidItemError: unreadable files, or runs over different items.
    """

    def __init__(self, results: str | Path, labels: str | Path, *, items: str | Path | None = None,
                 other: str | Path | None = None, reveal: bool = False, seed: int = 0) -> None:
        self.results_path, self.labels_path = Path(results), Path(labels)
        self.results = read_results(results)
        self.by_id = {j.id: j for j in self.results}
        self.other_path = Path(other) if other else None
        self.other: dict[str, Judgment] = {}
        if other:
            rows = read_results(other)
            _check_same_items(self.results, rows, str(results), str(other))
            self.other = {j.id: j for j in rows}
        self.reveal_all = reveal
        self.created = False
        self.without_results = 0
        if not self.labels_path.exists():
            if items is None:
                raise ConfigError(f"{self.labels_path} does not exist and results rows carry no question or answer: "
                                  "pass --items ITEMS (the file you gave `judgeflow run`) to start labelling, or "
                                  "--labels FILE made by `judgeflow sample` / `judgeflow label`")
            self._create(Path(items), seed)
        self.labeller = Labeller(self.labels_path)
        self.lock = threading.Lock()
        self.not_in_results = [it.id for it in self.labeller.items if it.id not in self.by_id]

    def _create(self, items: Path, seed: int) -> None:
        """Write every item that has a result, in `judgeflow sample`'s stratified order, labels dropped."""
        rows, self.without_results = read_pool(items, self.results_path)
        if not rows:
            raise InvalidItemError("no item of this file has a row in the results; give the items file the "
                                   f"results were made from ({self.results_path})", path=str(items))
        order, _ = stratified_sample(rows, len(rows), keys=[JUDGE_LABEL], seed=seed)
        self.labels_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.labels_path, [{k: v for k, v in rows[i].items() if k != JUDGE_LABEL and k not in LABEL_FIELDS}
                                        for i in order])
        self.created = True

    # -- per item ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.labeller.items)

    def human(self, i: int) -> int | None:
        return self.labeller.label_of(i)

    def revealed(self, i: int) -> bool:
        """Whether item i may show the judge's verdict: after it is labelled, or always with --reveal."""
        return self.reveal_all or self.human(i) is not None

    def judgment(self, i: int) -> Judgment | None:
        return self.by_id.get(self.labeller.items[i].id)

    def _facets(self, i: int) -> dict[str, Any]:
        j, row = self.judgment(i), self.labeller.rows[i]
        return {
            "criterion": (j.criterion if j else None) or "(none)",
            "dataset": field_value(j, "dataset") if j else str(row.get("dataset", "(none)")),
            "status": j.status if j else "no result",
            "language": (j.language if j else None) or "(none)",
        }

    def entry(self, i: int) -> dict[str, Any]:
        """One queue row: what can be shown without revealing the judge on a blind, open item."""
        it, human = self.labeller.items[i], self.human(i)
        out: dict[str, Any] = {"index": i, "id": it.id, "human": human,
                               "skipped": human is None and bool(self.labeller.rows[i].get("label_skipped")),
                               "snippet": snippet(it.question, it.answer), **self._facets(i)}
        j = self.judgment(i)
        if self.revealed(i) and j is not None:
            out["judge"] = j.label
            out["disagree"] = None if human is None or j.label is None else j.label != human
            if self.other:
                o = self.other.get(it.id)
                out["other"] = o.label if o else None
        return out

    def queue(self, query: Mapping[str, str]) -> dict[str, Any]:
        """Queue rows matching the filters (exact facet values; judge/disagree only on revealed items)."""
        q = (query.get("q") or "").strip().casefold()
        rows = []
        for i in range(len(self)):
            e = self.entry(i)
            if q:
                it = self.labeller.items[i]
                hay = " ".join(x for x in (it.id, it.question, it.answer, it.reference, it.spec) if x)
                if q not in hay.casefold():
                    continue
            if not all(self._matches(e, k, query.get(k) or "") for k in FILTERS):
                continue
            rows.append(e)
        return {"items": rows, "total": len(self), "facets": self.facets(), "blind": not self.reveal_all}

    @staticmethod
    def _matches(e: dict[str, Any], key: str, want: str) -> bool:
        if not want:
            return True
        if key == "human":
            have = "skipped" if e["skipped"] else ("open" if e["human"] is None else str(e["human"]))
            return have == want
        if key == "judge":
            return "judge" in e and ("unscored" if e["judge"] is None else str(e["judge"])) == want
        if key == "disagree":
            return e.get("disagree") is (want == "yes")
        return str(e.get(key)) == want

    def facets(self) -> dict[str, list[str]]:
        """The values each facet filter offers."""
        out: dict[str, set[str]] = {k: set() for k in ("criterion", "dataset", "status", "language")}
        for i in range(len(self)):
            for k, v in self._facets(i).items():
                out[k].add(v)
        return {k: sorted(v) for k, v in out.items()}

    def item(self, i: int) -> dict[str, Any]:
        """Everything the item view shows; the judge's part only when revealed."""
        if not 0 <= i < len(self):
            raise IndexError(i)
        it, row = self.labeller.items[i], self.labeller.rows[i]
        out: dict[str, Any] = {
            "index": i, "total": len(self), "id": it.id, "question": it.question, "reference": it.reference,
            "source": it.source or [], "spec": it.spec, "answer": it.answer, "human": self.human(i),
            "skipped": self.human(i) is None and bool(row.get("label_skipped")),
            "note": row.get(NOTE) or "", "revealed": self.revealed(i), **self._facets(i),
        }
        if it.messages is not None:  # a conversation: each source document is one labelled message
            out["source_labels"] = [split_document(d)[0] for d in out["source"]]
            out["source"] = [split_document(d)[1] for d in out["source"]]
        j = self.judgment(i)
        if not out["revealed"] or j is None:
            return out
        out["judge"] = self._judge_view(j, it.reference, it.source or [], it.spec, it.answer)
        o = self.other.get(it.id)
        if o is not None:
            out["other"] = self._judge_view(o, it.reference, it.source or [], it.spec, it.answer)
            flip = None
            if j.label != o.label:
                one = j if j.label == 1 else o
                c = deciding_claim(one)
                flip = {"run": "A" if one is j else "B", "claim": c.model_dump() if c else None}
            out["flip"] = flip
        return out

    @staticmethod
    def _judge_view(j: Judgment, reference: str | None, source: list[str], spec: str | None,
                    answer: str) -> dict[str, Any]:
        decider = deciding_claim(j)
        claims = sorted(j.claims, key=lambda c: c is not decider)  # the deciding claim first
        texts = {"reference": [reference] if reference else [], "source": source, "spec": [spec] if spec else []}
        view = []
        for c in claims:
            d = c.model_dump()
            d["deciding"] = c is decider
            d["spans"] = ReviewSession._evidence_spans(c, texts)
            d["answer_span"] = locate(c.text, answer)
            view.append(d)
        return {"label": j.label, "status": j.status, "criterion": j.criterion, "reason": j.reason, "error": j.error,
                "model": j.model, "strategy": j.strategy, "claims": view,
                "requirements": [r.model_dump() for r in j.requirements] if j.requirements is not None else None}

    @staticmethod
    def _evidence_spans(c: ClaimResult, texts: dict[str, list[str]]) -> list[dict[str, Any]]:
        """Where the claim's evidence quote sits in the text its basis names ([] if not located)."""
        field = c.basis if c.basis in texts else None
        if not c.evidence or field is None:
            return []
        if c.cited is not None:  # a trace: the quote is looked for in the message it came from only
            docs = [split_document(d) for d in texts[field]]
            at = next((k for k, (label, _) in enumerate(docs) if label == c.cited), None)
            quote = c.evidence.removeprefix(f"[{c.cited}]").strip()
            hits = [(at, s, e) for _, s, e in quote_spans(quote, [docs[at][1]]) or []] if at is not None else []
            return [{"field": field, "doc": k, "start": s, "end": e, "cited": True} for k, s, e in hits] or \
                ([{"field": field, "doc": at, "start": 0, "end": 0, "cited": True}] if at is not None else [])
        hits = quote_spans(c.evidence, texts[field]) or []
        return [{"field": field, "doc": k, "start": s, "end": e} for k, s, e in hits]

    # -- labelling ---------------------------------------------------------------------------

    def label(self, i: int, value: int | None, note: str | None = None) -> dict[str, Any]:
        """Save item i's label (None = skip; a skip keeps an existing label) and note; return the new state."""
        if not 0 <= i < len(self):
            raise IndexError(i)
        with self.lock:
            row = self.labeller.rows[i]
            if note is not None:
                if note.strip():
                    row[NOTE] = note
                else:
                    row.pop(NOTE, None)
            if value is None and self.human(i) is not None:
                atomic_write(self.labeller.path, self.labeller.rows)  # keep the label, save the note
            else:
                self.labeller.set_label(i, value)
            nxt = self.labeller.next_open(i)
        return {"item": self.item(i), "entry": self.entry(i), "next": nxt, "calibration": self.calibration()}

    # -- calibration -------------------------------------------------------------------------

    def calibration(self) -> dict[str, Any]:
        """The live panel: progress, and `calibrate` (and `compare` with a second run) on the labels so far."""
        s = self.labeller.summary()
        labels = {it.id: it.label for it in self.labeller.items if it.label is not None}
        out: dict[str, Any] = {"labelled": s.labelled, "skipped": s.skipped, "total": s.total,
                               "remaining": s.remaining, "labels_path": str(self.labels_path), "report": None,
                               "message": None, "compare": None}
        try:
            r = calibrate(self.results, labels=labels)
        except InvalidItemError as e:
            out["message"] = e.bare_message
            return out
        out["report"] = {
            "n": r.n, "kappa": r.kappa, "kappa_ci": r.kappa_ci, "kappa_note": r.kappa_note,
            "confusion": r.confusion.model_dump(), "false_alarms": r.false_alarms, "misses": r.misses,
            "unscored": r.unscored + r.invalid, "diagnosis": r.diagnosis,
            "warnings": [w for w in r.warnings if "have no result row" not in w],
        }
        if self.other:
            try:
                c = compare(self.results, list(self.other.values()), labels=labels,
                            names=(self.results_path.stem, self.other_path.stem if self.other_path else "B"))
                out["compare"] = {"n": c.n, "a": c.a.name, "b": c.b.name, "kappa_a": c.a.agreement.kappa,
                                  "kappa_b": c.b.agreement.kappa, "verdict": c.verdict}
            except InvalidItemError as e:
                out["compare"] = {"message": str(e)}
        return out
