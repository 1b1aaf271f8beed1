"""Self-contained HTML reports for `calibrate` and `compare`: inline SVG pictures, no scripts.

The confusion matrix and the false-alarm / miss split are drawn as SVG generated here; kappa
with its interval as a dot and whisker. Every piece of text from results files (claims,
reasons, ids, group names) is untrusted and HTML-escaped.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..citations import marker_view
from ..results import ClaimResult, JudgeVote
from ..spans import place_claims
from .agreement import Agreement, CalibrationReport, Confusion, Disagreement, kappa_text, strength
from .comparison import ComparisonReport, Decision

FA_COLOR = "#e8891c"
"""False alarms (judge 1, human 0)."""
MISS_COLOR = "#7b4fc9"
"""Misses (judge 0, human 1)."""
AGREE_COLOR = "#2e8b57"
MAX_ITEMS = 300

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:1.5em;margin-bottom:4px}h2{font-size:1.2em;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
.sub{color:#666;margin-top:0}.diag{background:#f6f6f2;border-left:4px solid #999;padding:10px 14px;margin:12px 0}
.warn{background:#fff6e0;border-left:4px solid #e8a400;padding:6px 12px;margin:6px 0}
.pics{display:flex;flex-wrap:wrap;gap:28px;align-items:flex-start}.pic{flex:0 0 auto}
.pic figcaption{font-size:.85em;color:#555;max-width:380px}
table{border-collapse:collapse;margin:8px 0;font-size:.92em}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:1px 7px;border-radius:9px;color:#fff;font-size:.8em}
.fa{background:""" + FA_COLOR + """}.miss{background:""" + MISS_COLOR + """}.ok{background:""" + AGREE_COLOR + """}
details{border:1px solid #e3e3e3;border-radius:4px;margin:6px 0;padding:4px 10px}summary{cursor:pointer}
tr.decides td{background:#fff1e0}.muted{color:#777}.nw{white-space:nowrap}
.texts th{width:90px}.txt{white-space:pre-wrap;max-width:900px}mark{background:#fde68a;padding:0 1px}
mark.decides{background:#f9b26b;outline:1px solid #c96f00}mark.err{background:#fbc4a0}
tr.err td{background:#fff7f2}.flag{color:#b42318;font-weight:600}
mark.cite,.cite{border-radius:3px;padding:0 2px;font-weight:600}.cite.supported{background:#c9f0d5;color:#14532d}
.cite.misattributed{background:#7b4fc9;color:#fff}.cite.fabricated{background:#b42318;color:#fff}
.cite.unsupported{background:#fbc4a0;color:#7a2e0b}.cite.unchecked{background:#e5e7eb;color:#333}
div.cite{display:block;width:fit-content;margin-top:3px;font-size:.85em}
"""
FOLD_CHARS = 600
"""Texts longer than this are folded (click to open)."""


def e(text: object) -> str:
    """HTML-escape any value (quotes too, so it is safe in attributes)."""
    return html.escape("" if text is None else str(text), quote=True)


def _f(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "–"
    return f"{x:.0%}" if pct else f"{x:.2f}"


# -- pictures -----------------------------------------------------------------------------


def svg_confusion(c: Confusion, *, title: str = "") -> str:
    """A 2x2 confusion matrix: rows human 0/1, columns judge 0/1, shade by count."""
    n = max(c.tn + c.fp + c.fn + c.tp, 1)
    top = max(c.tn, c.fp, c.fn, c.tp, 1)
    cells = [(0, 0, c.tn, AGREE_COLOR, "agree (0)"), (0, 1, c.fp, FA_COLOR, "false alarms"),
             (1, 0, c.fn, MISS_COLOR, "misses"), (1, 1, c.tp, AGREE_COLOR, "agree (1)")]
    x0, y0, w, h = 90, 50, 130, 100
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{x0 + 2 * w + 10}" height="{y0 + 2 * h + 10}" '
             f'role="img" aria-label="confusion matrix {e(title)}" font-family="sans-serif">',
             f'<text x="{x0 + w}" y="16" text-anchor="middle" font-size="13" font-weight="bold">judge</text>',
             f'<text x="{x0 + w / 2}" y="38" text-anchor="middle" font-size="12">0 (none)</text>',
             f'<text x="{x0 + 1.5 * w}" y="38" text-anchor="middle" font-size="12">1 (error)</text>',
             f'<text x="14" y="{y0 + h}" font-size="13" font-weight="bold" transform="rotate(-90 14 {y0 + h})" '
             f'text-anchor="middle">human</text>',
             f'<text x="{x0 - 8}" y="{y0 + h / 2 + 4}" text-anchor="end" font-size="12">0 (none)</text>',
             f'<text x="{x0 - 8}" y="{y0 + 1.5 * h + 4}" text-anchor="end" font-size="12">1 (error)</text>']
    for r, col, count, color, name in cells:
        x, y = x0 + col * w, y0 + r * h
        alpha = 0.12 + 0.78 * count / top
        ink = "#fff" if alpha > 0.55 else "#222"
        parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{color}" fill-opacity="{alpha:.2f}" '
                     f'stroke="#fff" stroke-width="2"/>')
        parts.append(f'<text x="{x + w / 2}" y="{y + h / 2 - 2}" text-anchor="middle" font-size="24" '
                     f'font-weight="bold" fill="{ink}">{count}</text>')
        parts.append(f'<text x="{x + w / 2}" y="{y + h / 2 + 20}" text-anchor="middle" font-size="12" '
                     f'fill="{ink}">{name} · {count / n:.0%}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_split(false_alarms: int, misses: int, *, width: int = 380, legend: bool = True) -> str:
    """A stacked bar: the disagreements split into false alarms and misses."""
    total = false_alarms + misses
    h, y = 34, 22
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + h + (26 if legend else 2)}" role="img" '
             f'aria-label="false alarms {false_alarms}, misses {misses}" font-family="sans-serif">',
             f'<text x="0" y="14" font-size="12">{total} disagreement(s)</text>']
    if total == 0:
        parts.append(f'<rect x="0" y="{y}" width="{width}" height="{h}" fill="#ddd"/>'
                     f'<text x="{width / 2}" y="{y + h / 2 + 4}" text-anchor="middle" font-size="12">none</text>')
    else:
        wf = width * false_alarms / total
        parts.append(f'<rect x="0" y="{y}" width="{wf:.1f}" height="{h}" fill="{FA_COLOR}"/>')
        parts.append(f'<rect x="{wf:.1f}" y="{y}" width="{width - wf:.1f}" height="{h}" fill="{MISS_COLOR}"/>')
        for x, count, anchor, seg in ((4, false_alarms, "start", wf), (width - 4, misses, "end", width - wf)):
            if count and seg >= 8 * len(f"{count} ({count / total:.0%})") + 6:
                parts.append(f'<text x="{x}" y="{y + h / 2 + 5}" text-anchor="{anchor}" font-size="13" '
                             f'font-weight="bold" fill="#fff">{count} ({count / total:.0%})</text>')
    if not legend:
        parts.append("</svg>")
        return "".join(parts)
    parts.append(f'<rect x="0" y="{y + h + 8}" width="10" height="10" fill="{FA_COLOR}"/>'
                 f'<text x="14" y="{y + h + 17}" font-size="11">false alarms (judge 1, human 0)</text>'
                 f'<rect x="{width - 150}" y="{y + h + 8}" width="10" height="10" fill="{MISS_COLOR}"/>'
                 f'<text x="{width - 136}" y="{y + h + 17}" font-size="11">misses (judge 0, human 1)</text></svg>')
    return "".join(parts)


def svg_kappas(rows: Sequence[tuple[str, Agreement]], *, width: int = 520) -> str:
    """Kappa with its 95% interval per row (dot and whisker) over Landis & Koch bands."""
    lows = [a.kappa_ci[0] if a.kappa_ci else a.kappa for _, a in rows if a.kappa is not None]
    left, right, hi, rh = 150, 40, 1.0, 30
    lo = max(-1.0, min([-0.2, *(math.floor(v * 5) / 5 for v in lows)]))  # a multiple of 0.2
    plot = width - left - right

    def x(k: float) -> float:
        return left + plot * (min(max(k, lo), hi) - lo) / (hi - lo)

    height = 36 + rh * len(rows)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             f'aria-label="kappa with 95% intervals" font-family="sans-serif">']
    bands = [(lo, 0.0, "#f4dede"), (0.0, 0.2, "#f7ece0"), (0.2, 0.4, "#f7f3df"), (0.4, 0.6, "#eef5e0"),
             (0.6, 0.8, "#e2f1e3"), (0.8, 1.0, "#d5ecd9")]
    for a, b, color in bands:
        parts.append(f'<rect x="{x(a):.1f}" y="8" width="{x(b) - x(a):.1f}" height="{height - 30}" fill="{color}"/>')
    for t in [k / 10 for k in range(-10, 11, 2) if k / 10 >= lo - 1e-9]:
        parts.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="8" y2="{height - 22}" stroke="#bbb" stroke-width="0.5"/>'
                     f'<text x="{x(t):.1f}" y="{height - 8}" text-anchor="middle" font-size="11">{t:.1f}</text>')
    for i, (name, a) in enumerate(rows):
        y = 8 + rh * i + rh / 2 + 2
        label = name if len(name) <= 22 else name[:21] + "…"
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end" font-size="12">{e(label)}</text>')
        if a.kappa is None:
            parts.append(f'<text x="{x(0):.1f}" y="{y + 4}" font-size="11" fill="#777">undefined</text>')
            continue
        if a.kappa_ci:
            parts.append(f'<line x1="{x(a.kappa_ci[0]):.1f}" x2="{x(a.kappa_ci[1]):.1f}" y1="{y}" y2="{y}" '
                         f'stroke="#333" stroke-width="2"/>')
        parts.append(f'<circle cx="{x(a.kappa):.1f}" cy="{y}" r="5" fill="#1f4e9a"/>'
                     f'<text x="{x(a.kappa) + 8:.1f}" y="{y - 6}" font-size="11">{a.kappa:.2f}</text>')
    parts.append("</svg>")
    return "".join(parts)


# -- blocks -------------------------------------------------------------------------------


def _metrics_table(a: Agreement) -> str:
    kappa = f"{e(kappa_text(a))} ({strength(a.kappa)})" if a.kappa is not None else f"undefined: {e(a.kappa_note)}"
    rows = [("items (n)", str(a.n)), ("Cohen's kappa [95% CI]", kappa), ("accuracy", _f(a.accuracy)),
            ("precision (class 1)", _f(a.precision)), ("recall (class 1)", _f(a.recall)), ("F1 (class 1)", _f(a.f1)),
            ("false alarms", f"{a.false_alarms} ({_f(a.false_alarm_share, True)} of disagreements)"),
            ("misses", f"{a.misses} ({_f(a.miss_share, True)} of disagreements)")]
    return "<table>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def _pictures(a: Agreement, caption: str = "") -> str:
    return (f'<div class="pics"><figure class="pic">{svg_confusion(a.confusion, title=caption)}'
            f'<figcaption>Confusion matrix{": " + e(caption) if caption else ""}. Rows: the person; columns: '
            f'the judge.</figcaption></figure><figure class="pic">{svg_split(a.false_alarms, a.misses)}'
            f'<figcaption>The direction of the errors: many false alarms means the criterion is stricter '
            f'than the person.</figcaption></figure></div>')


def _claims_table(claims: Sequence[ClaimResult], deciding: ClaimResult | None,
                  evidence: Sequence[str] | None = None) -> str:
    """Every error claim marked (the deciding one most), and evidence flagged where the judge's own check
    did not find it, or (given the evidence texts) it is not in them."""
    if not claims:
        return '<p class="muted">no claims (e.g. a refusal)</p>'
    head = "<tr><th>claim</th><th>text</th><th>verdict</th><th>basis</th><th>evidence</th><th>reason</th></tr>"
    rows = []
    for c in claims:
        cls = ' class="decides"' if deciding is not None and c.id == deciding.id else ' class="err"' if c.error else ""
        verdict = f"<b>{e(c.verdict)}</b>" if c.error else e(c.verdict)
        rows.append(f"<tr{cls}><td>{e(c.id)}</td><td>{e(c.text)}</td><td>{verdict}{_citation_cell(c)}</td><td>{e(c.basis)}</td>"
                    f"<td>{e(c.evidence)}{_evidence_flag(c, evidence)}</td><td>{e(c.reason)}</td></tr>")
    return "<table>" + head + "".join(rows) + "</table>"


def _evidence_flag(c: ClaimResult, evidence: Sequence[str] | None) -> str:
    if c.evidence_found is False:
        return '<div class="flag">quote not found in the evidence</div>'
    if (evidence and c.evidence and c.basis != "knowledge" and len(c.evidence.strip()) >= 3
            and not any(_quote_pattern(c.evidence).search(t) for t in evidence)):
        return '<div class="flag">not found in the shown evidence</div>'
    return ""


def _quote_pattern(quote: str) -> re.Pattern[str]:
    """A quote matched case and spacing aside."""
    return re.compile(r"\s+".join(re.escape(w) for w in quote.split()), re.IGNORECASE)


def _badge(direction: str) -> str:
    return ('<span class="badge fa">false alarm</span>' if direction == "false_alarm"
            else '<span class="badge miss">miss</span>')


def highlight(text: str, quotes: Sequence[tuple[str, str]]) -> str:
    """`text` HTML-escaped, with each quote found in it (case and spacing aside) in <mark class=CLS>
    ("decides" for the deciding claim's, "err" for another error claim's). Quotes are the judge's
    output: escaped like the rest."""
    spans: list[tuple[int, int, str]] = []
    for quote, cls in quotes:
        if not quote.split() or len(quote.strip()) < 3:
            continue
        spans += [(m.start(), m.end(), cls) for m in _quote_pattern(quote).finditer(text)]
    out, at = [], 0
    for start, end, cls in sorted(spans, key=lambda x: (x[0], x[2] != "decides")):
        if start < at:
            continue  # overlaps a quote already marked
        attr = f' class="{cls}"' if cls else ""
        out.append(e(text[at:start]) + f"<mark{attr}>" + e(text[start:end]) + "</mark>")
        at = end
    return "".join(out) + e(text[at:])


def mark_spans(text: str, spans: Sequence[tuple[int, int, str, str]]) -> str:
    """`text` HTML-escaped with each (start, end, class, title) span in <mark>; overlaps and spans
    outside the text are skipped. Text and titles are untrusted: escaped like the rest."""
    out, at = [], 0
    for start, end, cls, title in sorted(spans, key=lambda x: (x[0], x[2] != "decides")):
        if start < at or end > len(text) or start >= end:
            continue
        attr = (f' class="{e(cls)}"' if cls else "") + (f' title="{e(title)}"' if title else "")
        out.append(e(text[at:start]) + f"<mark{attr}>" + e(text[start:end]) + "</mark>")
        at = end
    return "".join(out) + e(text[at:])


def _answer_cell(d: Disagreement) -> str:
    """The answer with the error claims' spans marked (placed again against this answer, in code), and
    its own citation markers marked by what they are (supported, misattributed, fabricated, unsupported)."""
    answer = d.answer or ""
    claims = place_claims(d.claims, answer)
    markers = marker_view(answer, d.source, claims)
    cites = [(m["start"], m["end"], f"cite {m['status'] or 'unchecked'}",
              f"citation {m['text']}: {m['status'] or 'not checked'}"
              + (f" ({', '.join(m['claims'])})" if m["claims"] else "")) for m in markers]
    spans = [piece for c in claims if c.error and c.span
             for piece in _around(c.span[0], c.span[1], _claim_class(c, d.deciding_claim),
                                  f"{c.id} {c.verdict}: {c.text}", cites)] + cites
    lost = [c.id for c in claims if c.error and c.placed is False]
    note = (f'<div class="flag">error claim(s) {e(", ".join(lost))} could not be placed in the answer</div>'
            if lost else "")
    body = f'<div class="txt">{mark_spans(answer, spans)}</div>{note}'
    if len(answer) <= FOLD_CHARS:
        return body
    return (f"<details><summary>answer: {len(answer):,} characters, {len(spans)} error span(s) marked "
            f"(click to open)</summary>{body}</details>")


def _around(start: int, end: int, cls: str, title: str, holes: Sequence[tuple[int, int, str, str]],
            ) -> list[tuple[int, int, str, str]]:
    """The span [start, end) in pieces around the holes inside it (citation markers keep their own mark)."""
    out, at = [], start
    for h_start, h_end, _, _ in sorted(holes):
        if h_end <= at or h_start >= end:
            continue
        if h_start > at:
            out.append((at, h_start, cls, title))
        at = max(at, h_end)
    if at < end:
        out.append((at, end, cls, title))
    return out


def _citation_cell(c: ClaimResult) -> str:
    """What a claim's citation is (empty for a claim that cites nothing)."""
    if not c.cites:
        return ""
    return f'<div class="cite {e(c.citation or "unchecked")}">cites {e(" ".join(c.cites))}: {e(c.citation or "–")}</div>'


def _text_cell(text: str, quotes: Sequence[tuple[str, str]], name: str) -> str:
    body = f'<div class="txt">{highlight(text, quotes)}</div>'
    if len(text) <= FOLD_CHARS:
        return body
    marks = sum(1 for q, _ in quotes if q.split() and _quote_pattern(q).search(text))
    found = f", {marks} evidence quote(s) marked" if marks else ""
    return (f"<details><summary>{e(name)}: {len(text):,} characters{found} (click to open)</summary>"
            f"{body}</details>")


def _claim_class(c: ClaimResult, deciding: ClaimResult | None) -> str:
    return "decides" if deciding is not None and c.id == deciding.id else "err" if c.error else ""


def _texts(d: Disagreement) -> str:
    """The question, the evidence (reference / source documents / spec) and the answer, escaped;
    long texts folded; the claims' evidence quotes marked where they occur in the evidence."""
    if d.answer is None and d.question is None:
        return ('<p class="muted">The texts are not in the results file; pass the items file '
                "(`calibrate --labels` or `--items`) to see the question, the evidence and the answer.</p>")
    quotes = [(c.evidence or "", _claim_class(c, d.deciding_claim)) for c in d.claims]
    rows = []
    if d.question:
        rows.append(("question", _text_cell(d.question, [], "question")))
    if d.reference:
        rows.append(("reference", _text_cell(d.reference, quotes, "reference")))
    for i, doc in enumerate(d.source or [], 1):
        name = "source" if len(d.source or []) == 1 else f"source {i}"
        rows.append((name, _text_cell(doc, quotes, name)))
    if d.spec:
        rows.append(("spec", _text_cell(d.spec, quotes, "spec")))
    if d.answer is not None:
        rows.append(("answer", _answer_cell(d)))
    return '<table class="texts">' + "".join(f"<tr><th>{e(k)}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def _disagreement(d: Disagreement) -> str:
    why = f"{d.deciding_claim.verdict}: {d.deciding_claim.text}" if d.deciding_claim else (d.reason or "")
    group = f" · {e(d.group)}" if d.group else ""
    return (f"<details><summary>{_badge(d.direction)} <b>{e(d.id)}</b>{group} · human {d.human}, judge {d.judge}"
            f" · <span class=\"muted\">{e(why[:160])}</span></summary>{_texts(d)}<p>Judge's reason: {e(d.reason)}</p>"
            f"{_votes_table(d.votes)}{_claims_table(d.claims, d.deciding_claim, _evidence_texts(d))}</details>")


def _evidence_texts(d: Disagreement) -> list[str] | None:
    """The texts a claim's evidence should come from (None when the report lacks the texts)."""
    texts = [t for t in (d.reference, *(d.source or []), d.spec) if t]
    return texts or None


def _votes_table(votes: Sequence[JudgeVote] | None) -> str:
    """A panel's or cascade's members and how each voted on this item."""
    if not votes:
        return ""
    head = "<tr><th>judge</th><th>role</th><th>vote</th><th>samples</th><th>reason</th></tr>"
    rows = [f"<tr><td>{e(v.model)}</td><td>{e(v.role)}</td><td class=num><b>{'unscored' if v.label is None else v.label}"
            f"</b></td><td>{e(' '.join('-' if x is None else str(x) for x in v.samples) if v.samples else '')}</td>"
            f"<td>{e(v.reason if v.label is not None else v.error)}</td></tr>" for v in votes]
    return "<p>Members' votes:</p><table>" + head + "".join(rows) + "</table>"


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head>'
            f"<body>{body}<p class=\"muted\">Made by judgeflow. Labels: 1 = hallucination/error, 0 = none found."
            f"</p></body></html>\n")


def _warnings(ws: Sequence[str]) -> str:
    return "".join(f'<div class="warn">{e(w)}</div>' for w in ws)


# -- reports ------------------------------------------------------------------------------


def _publishable(r: CalibrationReport) -> str:
    """The corrected hallucination rate and the verdict on the judge (`corrected.py`, `trust.py`)."""
    rate = f"<p><b>Hallucination rate.</b> {e(r.corrected_rate.note)}</p>" if r.corrected_rate is not None else ""
    return (f"<h2>A rate you can publish</h2>{rate}<p><b>Judge: {e(r.judge_verdict)}.</b> {e(r.verdict.text)} "
            f"<span class=\"sub\">({e(r.verdict.rule)})</span></p>")
def _citations_block(c: dict[str, Any] | None) -> str:
    """The answers' own citations: precision and recall (none: nothing shown)."""
    if not c:
        return ""
    return (f"<h2>Citations</h2><p>In the {c['answers']} answers that cite their sources: citation precision "
            f"<b>{_f(c['precision'], True)}</b> ({c['supporting']} of {c['pairs']} claim-source pairs hold the "
            f"claim), recall <b>{_f(c['recall'], True)}</b> ({c['supported_claims']} of {c['claims']} claims "
            f"supported by their citation); {c['fabricated']} fabricated, {c['misattributed']} misattributed. "
            'Markers in the answers below: <span class="cite supported">supported</span> '
            '<span class="cite misattributed">misattributed</span> <span class="cite fabricated">fabricated</span> '
            '<span class="cite unsupported">unsupported</span>.</p>')


def calibration_html(r: CalibrationReport, *, title: str = "Calibration") -> str:
    """The whole calibration report as one HTML page."""
    crit = ", ".join(f"{k} ({v})" for k, v in r.criteria.items())
    body = [f"<h1>{e(title)}</h1><p class=\"sub\">criterion {e(crit)} · judge {e(', '.join(r.models))} · "
            f"human labels from {e(r.label_source)}</p>",
            f'<div class="diag"><b>Diagnosis.</b> {e(r.diagnosis)}</div>', _warnings(r.warnings),
            f"<p>{r.total} result rows: {r.n} used; {r.unscored} unscored and {r.invalid} invalid (labelled but "
            f"excluded, never counted as 0); {r.unlabelled} without a human label.</p>",
            *([f"<p>Claims decided by: {e(', '.join(f'{k} {v:.0%}' for k, v in r.decided_by.items()))} "
               "(reference: the item's own evidence; knowledge: the judge's; evidence: given documents; "
               "unverifiable: nothing settled them).</p>"] if r.decided_by else []),
            "<h2>Agreement</h2>", _pictures(r), _metrics_table(r), _publishable(r),
            _citations_block(r.citations)]
    if r.groups:
        body.append(f"<h2>By {e(r.by)}</h2>")
        if r.fleiss_members:
            fk = "undefined" if r.fleiss_kappa is None else f"{r.fleiss_kappa:.2f}"
            body.append(f"<p>Agreement between the {r.fleiss_members} members (Fleiss' kappa): {fk}, on the "
                        f"{r.fleiss_items} labelled items all of them scored.</p>")
        body.append(svg_kappas([(g.group, g) for g in r.groups]))
        head = ("<tr><th>" + e(r.by) + "</th><th>n</th><th>excluded</th><th>kappa [95% CI]</th><th>accuracy</th>"
                "<th>F1</th><th>false alarms</th><th>misses</th><th>split</th><th>diagnosis</th></tr>")
        rows = []
        for g in r.groups:
            kappa = e(kappa_text(g))
            rows.append(f"<tr><td>{e(g.group)}</td><td class=num>{g.n}</td><td class=num>{g.unscored}</td>"
                        f"<td class=nw>{kappa}</td><td class=num>{_f(g.accuracy)}</td><td class=num>{_f(g.f1)}</td>"
                        f"<td class=num>{g.false_alarms}</td><td class=num>{g.misses}</td>"
                        f"<td>{svg_split(g.false_alarms, g.misses, width=200, legend=False)}</td><td>{e(g.diagnosis)}</td></tr>")
        body.append("<table>" + head + "".join(rows) + "</table>")
    body.append(f"<h2>Disagreements ({len(r.disagreements)})</h2>")
    body.append("<p>Each item the judge and the person label differently: the question, the evidence and the "
                "answer (long texts folded; the judge's evidence quotes marked in the evidence), then the judge's "
                "claims; the claim whose verdict decided a 1 is highlighted.</p>")
    body.extend(_disagreement(d) for d in r.disagreements[:MAX_ITEMS])
    if len(r.disagreements) > MAX_ITEMS:
        body.append(f"<p>… {len(r.disagreements) - MAX_ITEMS} more in the JSON report (--json).</p>")
    return _page(title, "".join(body))


def _decision_block(name: str, d: Decision) -> str:
    why = f"{d.claim.verdict}: {d.claim.text}" if d.claim else (d.reason or "")
    return (f"<p><b>{e(name)}</b> says {d.label} — {e(why)}</p>{_claims_table(d.claims, d.claim)}")


def comparison_html(r: ComparisonReport, *, title: str = "Comparison") -> str:
    """The whole comparison report as one HTML page."""
    ci = f" (95% CI {r.kappa_diff_ci[0]:+.2f} to {r.kappa_diff_ci[1]:+.2f})" if r.kappa_diff_ci else ""
    diff = f"{r.kappa_diff:+.2f}{ci}" if r.kappa_diff is not None else "undefined"
    body = [f"<h1>{e(title)}</h1><p class=\"sub\">A = {e(r.a.name)} · B = {e(r.b.name)} · {r.n} paired items "
            f"· human labels from {e(r.label_source)}</p>",
            f'<div class="diag"><b>Verdict.</b> {e(r.verdict)}</div>', _warnings(r.warnings),
            "<h2>Kappa</h2>", svg_kappas([(r.a.name, r.a.agreement), (r.b.name, r.b.agreement)]),
            f"<table><tr><th>kappa(B) − kappa(A)</th><td>{diff}</td></tr>"
            f"<tr><th>A right, B wrong</th><td>{r.a_right_b_wrong}</td></tr>"
            f"<tr><th>B right, A wrong</th><td>{r.b_right_a_wrong}</td></tr>"
            f"<tr><th>McNemar exact p</th><td>{r.mcnemar_p:.3g}</td></tr></table>"]
    for side, s in (("A", r.a), ("B", r.b)):
        body.append(f"<h2>{side}: {e(s.name)}</h2><p>{e(s.agreement.diagnosis)}</p>")
        body.append(_pictures(s.agreement, s.name))
        body.append(_metrics_table(s.agreement))
    body.append(f"<h2>Items the two runs label differently ({len(r.disagreements)})</h2>")
    for d in r.disagreements[:MAX_ITEMS]:
        right = r.a.name if d.right == "a" else r.b.name
        body.append(f"<details><summary><b>{e(d.id)}</b> · human {d.human} · A {d.a.label}, B {d.b.label} · "
                    f'<span class="badge ok">{e(right)} is right</span></summary>'
                    f"{_decision_block('A ' + r.a.name, d.a)}{_decision_block('B ' + r.b.name, d.b)}</details>")
    if len(r.disagreements) > MAX_ITEMS:
        body.append(f"<p>… {len(r.disagreements) - MAX_ITEMS} more in the JSON report (--json).</p>")
    return _page(title, "".join(body))


def _write(text: str, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def write_calibration_html(report: CalibrationReport, path: str | Path, *, title: str = "Calibration") -> Path:
    """Write `calibration_html(report)` to `path`."""
    return _write(calibration_html(report, title=title), path)


def write_comparison_html(report: ComparisonReport, path: str | Path, *, title: str = "Comparison") -> Path:
    """Write `comparison_html(report)` to `path`."""
    return _write(comparison_html(report, title=title), path)
