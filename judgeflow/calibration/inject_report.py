"""The judge on injected known positives: recall per error type, span overlap, false alarms on controls.

    report = inject_report("injected_results.jsonl")      # results of `judgeflow run` on `judgeflow inject`'s rows
    report.types[0].recall, report.false_alarm_rate, report.text

Each injected row is a known error of one type at known character offsets: recall is the share of
the scored ones the judge labelled 1 (Wilson interval); span overlap is, of those it caught, the
share whose error spans (`spans`, offsets into the answer) overlap the injected span. The untouched
controls are known-correct answers: their 1s are false alarms. Unscored rows are counted apart,
never as misses. A file with rows that are not injected is refused (real results never mix in).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..ensembles.cascade import wilson
from ..errors import InvalidItemError
from ..io.results import read_results
from ..results import Judgment
from .inject_marks import FIELD
from .rates import pct

#: the most injected spans a row may list (untrusted input: bounded)
MAX_SPANS = 20


class TypeRecall(BaseModel):
    """The judge on the injected rows of one error type."""

    type: str
    rows: int = 0
    scored: int = 0
    caught: int = 0
    recall: float | None = None
    low: float | None = None
    high: float | None = None
    with_spans: int = 0
    """Caught rows whose result placed error spans in the answer."""
    span_hits: int = 0
    """Of those, rows where an error span overlaps the injected span."""
    span_overlap: float | None = None
    """span_hits / with_spans."""
    span_precision: float | None = None
    """Mean share of the judge's error-span characters that fall inside the injected span (of the rows with
    spans): 1 when the judge points at the change exactly, low when it flags a whole sentence around it."""
    precision_sum: float = Field(default=0.0, exclude=True)


class InjectReport(BaseModel):
    """Recall per injected type, and the false-alarm rate on the untouched controls."""

    results: str = "results"
    models: list[str] = Field(default_factory=list)
    types: list[TypeRecall] = Field(default_factory=list)
    overall: TypeRecall = Field(default_factory=lambda: TypeRecall(type="all"))
    controls: int = 0
    controls_scored: int = 0
    false_alarms: int = 0
    false_alarm_rate: float | None = None
    false_alarm_ci: tuple[float, float] | None = None
    unscored: int = 0
    text: str = ""


def spans_of(j: Judgment, where: str) -> list[tuple[str, int, int]]:
    """(type, start, end) of a row's injected spans.

    Raises:
        InvalidItemError: a row without the field, or with entries that are not {type, start, end}.
    """
    raw = j.extra.get(FIELD)
    if not isinstance(raw, list) or len(raw) > MAX_SPANS:
        raise InvalidItemError(f"row {j.id!r} is not an injected row (no '{FIELD}' list of at most {MAX_SPANS} "
                               "spans): report only the results of `judgeflow inject`'s rows; real results never mix "
                               "in", path=where, field=FIELD, item_id=j.id)
    out = []
    for s in raw:
        ok = (isinstance(s, Mapping) and isinstance(s.get("type"), str) and isinstance(s.get("start"), int)
              and isinstance(s.get("end"), int) and 0 <= s["start"] <= s["end"])
        if not ok:
            raise InvalidItemError(f"row {j.id!r}: each '{FIELD}' entry needs type (text) and start <= end (character "
                                   f"offsets), got {str(s)[:80]}", path=where, field=FIELD, item_id=j.id)
        out.append((s["type"], s["start"], s["end"]))
    return out


def overlaps(j: Judgment, start: int, end: int) -> tuple[bool, float] | None:
    """(whether one of the judge's error spans overlaps [start, end), the share of their characters inside
    it); None when the row has no placed span."""
    placed = [(s["start"], s["end"]) for s in j.spans or []
              if isinstance(s.get("start"), int) and isinstance(s.get("end"), int) and s["start"] < s["end"]]
    if not placed:
        return None
    flagged = set().union(*(range(a, b) for a, b in placed))
    inside = sum(start <= c < end for c in flagged)
    return any(a < end and start < b for a, b in placed), inside / len(flagged)


def _finish(t: TypeRecall) -> TypeRecall:
    if t.scored:
        t.recall = t.caught / t.scored
        t.low, t.high = wilson(t.caught, t.scored) or (None, None)
    t.span_overlap = t.span_hits / t.with_spans if t.with_spans else None
    t.span_precision = t.precision_sum / t.with_spans if t.with_spans else None
    return t


def _count(t: TypeRecall, j: Judgment, start: int, end: int) -> None:
    t.rows += 1
    if j.label is None:
        return
    t.scored += 1
    t.caught += j.label
    hit = overlaps(j, start, end) if j.label == 1 else None
    if hit is not None:
        t.with_spans += 1
        t.span_hits += hit[0]
        t.precision_sum += hit[1]


def inject_report(results: Iterable[Judgment] | str | Path) -> InjectReport:
    """Recall per injected type and the false-alarm rate of the controls in `results`.

    Raises:
        InvalidItemError: a row that is not an injected row, or bad injected spans.
    """
    where = str(results) if isinstance(results, (str, Path)) else "results"
    rows = read_results(results) if isinstance(results, (str, Path)) else list(results)
    out = InjectReport(results=where, models=sorted({j.model or "(none)" for j in rows if j.status != "invalid"}))
    by_type: dict[str, TypeRecall] = {}
    for j in rows:
        spans = spans_of(j, where)
        out.unscored += j.label is None
        if not spans:
            out.controls += 1
            out.controls_scored += j.label is not None
            out.false_alarms += j.label == 1
            continue
        kind, start, end = spans[0]
        _count(by_type.setdefault(kind, TypeRecall(type=kind)), j, start, end)
        _count(out.overall, j, start, end)
    out.types = [_finish(by_type[k]) for k in sorted(by_type)]
    _finish(out.overall)
    if out.controls_scored:
        out.false_alarm_rate = out.false_alarms / out.controls_scored
        out.false_alarm_ci = wilson(out.false_alarms, out.controls_scored)
    out.text = summary_text(out)
    return out


def summary_text(r: InjectReport) -> str:
    o = r.overall
    fa = ("no scored controls" if r.false_alarm_rate is None else
          f"false alarms on the untouched answers {pct(r.false_alarm_rate)} ({r.false_alarms} of {r.controls_scored})")
    return (f"recall on injected errors {pct(o.recall)} [{pct(o.low)}, {pct(o.high)}] ({o.caught} of {o.scored} scored); "
            f"{fa}; {r.unscored} row(s) unscored, not counted")


def report_rows(r: InjectReport) -> list[dict[str, Any]]:
    """One dict per type (then "all") for a table: type, rows, recall [CI], span overlap."""
    return [{"type": t.type, "rows": t.rows, "scored": t.scored, "caught": t.caught,
             "recall": "-" if t.recall is None else f"{pct(t.recall)} [{pct(t.low)}, {pct(t.high)}]",
             "span overlap": "-" if t.span_overlap is None else f"{pct(t.span_overlap)} ({t.span_hits} of {t.with_spans})",
             "span precision": "-" if t.span_precision is None else pct(t.span_precision)}
            for t in [*r.types, r.overall]]
