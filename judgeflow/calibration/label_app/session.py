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

from ...citations import marker_view
from ...errors import ConfigError, InvalidItemError
from ...knowledge import DECIDERS, decided_by
from ...results import ClaimResult, Judgment
from ...spans import place
from ...traces import split_document
from ..agreement import calibrate, deciding_claim, field_value, two_places
from ..comparison import check_same_items, compare  # the same-items check, run at launch
from ..labeller import Labeller, atomic_write
from ..labels import LABEL_FIELDS, read_results
from ..sampling import JUDGE_LABEL, read_pool, stratified_sample
from .spans import quote_spans

NOTE = "label_note"
"""The labels-file field for the optional note (other tools carry it through untouched)."""
FILTERS = ("judge", "human", "disagree", "criterion", "dataset", "status", "language")


PAGE = 100
"""Queue rows per page: the page renders a page, never the whole queue (5,000 items stay quick)."""


def _int(query: Mapping[str, str], key: str, default: int) -> int:
    raw = query.get(key)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{key} must be a whole number, got {raw!r}") from None


class SaveConflict(Exception):
    """A save names another item than the one at its index (the page and the file disagree)."""


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
        keep_labels: a new labels file keeps the items' own labels (default: dropped, for a blind relabel).
        name: who labels (`review --as NAME`): each label is saved with `labelled_by`.

    Raises:
        ConfigError: no labels file and no items to make one from.
        InvalidItemError: unreadable files, or runs over different items.
    """

    def __init__(self, results: str | Path, labels: str | Path, *, items: str | Path | None = None,
                 other: str | Path | None = None, reveal: bool = False, seed: int = 0,
                 keep_labels: bool = False, name: str | None = None) -> None:
        self.results_path, self.labels_path = Path(results), Path(labels)
        self.results = read_results(results)
        self.by_id = {j.id: j for j in self.results}
        self.other_path = Path(other) if other else None
        self.other: dict[str, Judgment] = {}
        if other:
            rows = read_results(other)
            check_same_items(self.results, rows, str(results), str(other))
            self.other = {j.id: j for j in rows}
        self.reveal_all = reveal
        self.created = False
        self.without_results = 0
        self.dropped_labels = 0
        """The items' own labels left out of a new labels file (blind relabelling; keep_labels keeps them)."""
        if not self.labels_path.exists():
            if items is None:
                raise ConfigError(f"{self.labels_path} does not exist, results rows carry no question or answer, "
                                  "and no run store knows the items file the run read: pass --items ITEMS (the "
                                  "file you gave `judgeflow run`; or --store STORE, the run's --store) to start "
                                  "labelling, or --labels FILE made by `judgeflow sample` / `judgeflow label`")
            self._create(Path(items), seed, keep_labels)
        self.labeller = Labeller(self.labels_path, name=name)
        self.lock = threading.Lock()
        self.not_in_results = [it.id for it in self.labeller.items if it.id not in self.by_id]

    def _create(self, items: Path, seed: int, keep_labels: bool) -> None:
        """Write every item that has a result, in `judgeflow sample`'s stratified order; the items' own
        labels kept with `keep_labels`, else dropped (and counted)."""
        rows, self.without_results = read_pool(items, self.results_path)
        if not rows:
            raise InvalidItemError("no item of this file has a row in the results; give the items file the "
                                   f"results were made from ({self.results_path})", path=str(items))
        order, _ = stratified_sample(rows, len(rows), keys=[JUDGE_LABEL], seed=seed)
        self.labels_path.parent.mkdir(parents=True, exist_ok=True)
        drop = {JUDGE_LABEL} | (set() if keep_labels else set(LABEL_FIELDS))
        if not keep_labels:
            self.dropped_labels = sum(1 for r in rows if any(r.get(f) not in (None, "") for f in LABEL_FIELDS))
        atomic_write(self.labels_path, [{k: v for k, v in rows[i].items() if k not in drop} for i in order])
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

    def matching(self, query: Mapping[str, str]) -> list[dict[str, Any]]:
        """Queue rows matching the filters (exact facet values; judge/disagree only on revealed items)."""
        q = (query.get("q") or "").strip().casefold()
        rows = []
        for i in range(len(self)):
            if q:
                it = self.labeller.items[i]
                hay = " ".join(x for x in (it.id, it.question, it.answer, it.reference, it.spec) if x)
                if q not in hay.casefold():
                    continue
            e = self.entry(i)
            if all(self._matches(e, k, query.get(k) or "") for k in FILTERS):
                rows.append(e)
        return rows

    def queue(self, query: Mapping[str, str]) -> dict[str, Any]:
        """One page of the matching queue rows: the page holding item `around`, else from `offset`."""
        rows = self.matching(query)
        limit = max(1, min(_int(query, "limit", PAGE), 1000))
        offset = max(0, _int(query, "offset", 0))
        if query.get("around"):
            at = _int(query, "around", 0)
            pos = next((k for k, e in enumerate(rows) if e["index"] >= at), 0)
            offset = pos // limit * limit
        return {"items": rows[offset:offset + limit], "offset": offset, "limit": limit, "matched": len(rows),
                "total": len(self), "facets": self.facets(), "blind": not self.reveal_all}

    def step(self, query: Mapping[str, str]) -> dict[str, Any]:
        """The item to open from item `from` in the matching queue: `delta` rows on, or (open=1) the next open one."""
        at, delta = _int(query, "from", -1), _int(query, "delta", 1)
        order = self.matching(query)
        if query.get("open") == "1":
            is_open = [e for e in order if e["human"] is None and not e["skipped"] and e["index"] != at]
            nxt = next((e for e in is_open if e["index"] > at), is_open[0] if is_open else None)
            return {"index": nxt["index"] if nxt else None}
        pos = next((k for k, e in enumerate(order) if e["index"] == at), None)
        if pos is None:
            later = [e for e in order if (e["index"] > at) == (delta > 0)]
            nxt = (later[0] if delta > 0 else later[-1]) if later else None
        else:
            nxt = order[pos + delta] if 0 <= pos + delta < len(order) else None
        return {"index": nxt["index"] if nxt else None}

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
            placed = place(c, answer) if answer else c
            d["answer_span"], d["placed"] = placed.span, placed.placed  # the quote (else the text), checked in code
            view.append(d)
        return {"label": j.label, "status": j.status, "criterion": j.criterion, "reason": j.reason, "error": j.error,
                "model": j.model, "strategy": j.strategy, "claims": view,
                "citations": marker_view(answer, source, j.claims),  # the answer's own markers, checked
                "decided_by": dict.fromkeys(DECIDERS, 0) | dict(decided_by(j.claims)),
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

    def label(self, i: int, value: int | None, note: str | None = None, *, item_id: str | None = None) -> dict[str, Any]:
        """Save item i's label (None = skip; a skip keeps an existing label) and note; return the item's new state.

        `item_id` must be the id of item i, the item the page showed when the key was pressed.

        Raises:
            IndexError: no item i.
            SaveConflict: `item_id` is not item i's id (nothing is saved).
            OutputError: the labels file cannot be written (nothing is saved; the item stays as it was).
        """
        if not 0 <= i < len(self):
            raise IndexError(i)
        shown = self.labeller.items[i].id
        if item_id != shown:
            raise SaveConflict(f"this save names item {item_id!r} but item {i + 1} is {shown!r}; nothing was saved: "
                               "reload the page")
        with self.lock:
            row = dict(self.labeller.rows[i])
            if note is not None:
                if note.strip():
                    row[NOTE] = note
                else:
                    row.pop(NOTE, None)
            if value is None and self.human(i) is not None:
                self.labeller.write_row(i, row)  # keep the label, save the note
            else:
                self.labeller.set_label(i, value, row=row)
            nxt = self.labeller.next_open(i)
        return {"item": self.item(i), "entry": self.entry(i), "next": nxt}

    # -- calibration -------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Pay for the heavy imports (scikit-learn: seconds on a cold disk) and a first calibration at
        start-up, so that no save waits for them."""
        import sklearn.metrics  # noqa: F401

        self.calibration()

    def _no_labels_message(self) -> str:
        """What the panel says before the first label here, naming the labels the results carry."""
        carried = sum(1 for j in self.results if j.human_label is not None)
        msg = f"no item labelled in {self.labels_path.name} yet: label items to see the agreement"
        if carried:
            msg += (f". The results carry {carried} human label(s) from the items file (their `label`): "
                    f"`judgeflow calibrate {self.results_path}` uses them; `judgeflow review --keep-labels` "
                    "starts a labels file with them")
        return msg

    def calibration(self) -> dict[str, Any]:
        """The live panel: progress, and `calibrate` (and `compare` with a second run) on the labels so far."""
        s = self.labeller.summary()
        labels = {it.id: it.label for it in self.labeller.items if it.label is not None}
        out: dict[str, Any] = {"labelled": s.labelled, "skipped": s.skipped, "total": s.total,
                               "remaining": s.remaining, "labels_path": str(self.labels_path), "report": None,
                               "message": None, "compare": None}
        if not labels:
            out["message"] = self._no_labels_message()
            return out
        try:
            r = calibrate(self.results, labels=labels)
        except InvalidItemError as e:
            out["message"] = e.bare_message
            return out
        out["report"] = {
            "n": r.n, "kappa": r.kappa, "kappa_ci": r.kappa_ci, "kappa_note": r.kappa_note, "kappa_ci_note": r.kappa_ci_note,
            "kappa_value": two_places(r.kappa) if r.kappa is not None else None,  # as the diagnosis prints it
            "kappa_ci_text": f"{two_places(r.kappa_ci[0])} to {two_places(r.kappa_ci[1])}" if r.kappa_ci else None,
            "confusion": r.confusion.model_dump(), "false_alarms": r.false_alarms, "misses": r.misses,
            "unscored": r.unscored + r.invalid, "diagnosis": r.diagnosis, "criteria": r.criteria,
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
