"""The answer's own citations: its markers read, each cited claim checked against the cited source.

A RAG answer cites its sources: `[1]`, `[1, 2]`, `[1-3]`, `[Source A]`, footnotes (`[^1]` with a
`[^1]: ...` line), markdown links (`[the report](https://...)`). The sources are numbered from 1 in
the order given (RAGAS `retrieved_contexts`, DeepEval `retrieval_context`, ...), and may also be
named by their title (a source given as `{"title", "text"}` starts with its title line) or by a
URL they contain. What code can decide, it decides:

- a marker that names no source (`[7]` with two sources) makes the claim `fabricated`, whatever a
  model says (the criterion's `fabricated` role, e.g. `fabricated_citation`);
- a claim the judge finds supported whose evidence quote is in another document than the ones
  cited is `misattributed` (the criterion's `misattributed` role); a judge may also say so itself;
- a supported claim whose quote is in a cited document (or whose quote cannot be placed: the
  judge's word, `evidence_found` says so) is `supported`; an error verdict makes it `unsupported`.

Per answer: citation precision (the (claim, cited document) pairs that hold the claim's evidence,
of all pairs, a fabricated marker counting as a pair that holds nothing) and recall (claims
whose citation supports them, of all claims). A run sums the counts (`run_citations`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .quotes import CITATION, norm, quote_in
from .results import ClaimResult
from .spans import locate, place

#: citation markers, longest forms first: a footnote, a markdown link, [Source X], [1, 2-4]
_MARKER = re.compile(
    r"\[\^(?P<foot>[\w-]{1,20})\](?!:)"
    r"|\[(?P<link>[^\[\]\n]{1,200})\]\((?P<url>[^()\s]{1,500})\)"
    r"|\[(?:source|sources|doc|document|ref|reference|context|passage)s?\s*:?\s*(?P<named>[^\[\]\n]{1,60})\]"
    r"|\[(?P<nums>\d{1,4}(?:\s*[-–,;]\s*\d{1,4}){0,20})\]",
    re.IGNORECASE,
)
#: a footnote definition line: `[^1]: Source 2` / `[^a]: https://...`
_FOOTNOTE = re.compile(r"^\[\^(?P<label>[\w-]{1,20})\]:\s*(?P<text>.*)$", re.MULTILINE)
#: where a sentence ends: terminal punctuation (then any markers right after it), or a line break
_SENTENCE_END = re.compile(r"[.!?](?:\s*\[[^\[\]\n]{1,200}\](?:\([^()\s]*\))?)*(?=\s|$)|\n")
#: code in the answer (fenced blocks, inline backticks): an index there is not a citation
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]{1,500}`", re.DOTALL)
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
#: where a narrowed item (passage selection) keeps the documents as given, for the citation notes
CITED_SOURCES = "judgeflow_cited_sources"
#: the most markers read from one answer (an answer is untrusted text)
MAX_MARKERS = 500
MAX_RANGE = 50


@dataclass
class Marker:
    """One citation marker of the answer: where it is and which sources (1-based) it names."""

    text: str
    start: int
    end: int
    refs: list[str] = field(default_factory=list)
    """What it names, as written ("7", "A", a title, a URL)."""
    docs: list[int | None] = field(default_factory=list)
    """Each ref's source number (from 1), None for a ref that names no source."""

    @property
    def fabricated(self) -> bool:
        return any(d is None for d in self.docs)


def _titles(sources: Sequence[str]) -> list[str]:
    return [norm(s.split("\n", 1)[0])[:200] for s in sources]


def resolve(ref: str, sources: Sequence[str]) -> int | None:
    """The source (from 1) a marker's ref names: its number, a letter (A = 1), a title or a URL it holds."""
    ref = ref.strip()
    if ref.isdigit():
        n = int(ref)
        return n if 1 <= n <= len(sources) else None
    want = norm(ref).strip("\"'")
    titles = _titles(sources)
    for i, t in enumerate(titles, 1):
        if want and (want == t or (len(want) >= 4 and t.startswith(want))):
            return i
    if len(ref) == 1 and ref.isalpha() and ref.isupper():
        n = ord(ref) - ord("A") + 1
        return n if 1 <= n <= len(sources) else None
    if _URL.fullmatch(ref):
        hits = [i for i, s in enumerate(sources, 1) if ref.rstrip("/") in s]
        return hits[0] if hits else None
    number = re.fullmatch(r"(?:source|document|doc|ref|context)?\s*#?\s*(\d{1,4})", want)
    if number:
        return resolve(number.group(1), sources)
    return None


def _numbers(spec: str) -> list[str]:
    """ "1, 3-5" -> ["1", "3", "4", "5"] (a range of more than MAX_RANGE is kept as written: it names no source)."""
    out: list[str] = []
    for part in (p.strip() for p in re.split(r"\s*[,;]\s*", spec)):
        span = re.fullmatch(r"(\d{1,4})\s*[-–]\s*(\d{1,4})", part)
        if span and 0 <= int(span.group(2)) - int(span.group(1)) <= MAX_RANGE:
            out.extend(str(n) for n in range(int(span.group(1)), int(span.group(2)) + 1))
        elif part:
            out.append(part)
    return out


def _plausible(nums: str) -> bool:
    """Whether "[1, 3-5]" reads as source numbers: none is 0, none is 1000 or more (a year)."""
    values = [int(n) for n in re.findall(r"\d+", nums)]
    return all(0 < v < 1000 for v in values)


def _footnotes(answer: str) -> dict[str, str]:
    return {m.group("label"): m.group("text").strip() for m in _FOOTNOTE.finditer(answer)}


def _footnote_ref(text: str, label: str) -> str:
    """What a footnote definition names: a URL, a number ("Source 2", "[2]"), a title; else its label."""
    url = _URL.search(text)
    if url:
        return url.group(0)
    number = re.search(r"\d{1,4}", text)
    if number and re.fullmatch(
        r"\W*(?:source|document|doc|ref|context)?\s*\W*\d{1,4}\W*", text, re.IGNORECASE
    ):
        return number.group(0)
    return text or label


def find_markers(answer: str, sources: Sequence[str]) -> list[Marker]:
    """The answer's citation markers, in order, each with the sources it names (footnote definition
    lines are not markers themselves)."""
    notes = _footnotes(answer)
    skipped = [(m.start(), m.end()) for m in _FOOTNOTE.finditer(answer)] + [
        (m.start(), m.end()) for m in _CODE.finditer(answer)
    ]  # code (`a[1]`) and footnote definitions
    out: list[Marker] = []
    for m in _MARKER.finditer(answer):
        if len(out) >= MAX_MARKERS:
            break
        if any(a <= m.start() < b for a, b in skipped):
            continue
        if m.group("nums") is not None and not _plausible(m.group("nums")):
            continue  # "[0, 1]" (an interval), "[2019]" (a year): not source numbers
        if m.group("foot") is not None:
            label = m.group("foot")
            refs = [_footnote_ref(notes[label], label)] if label in notes else [label]
        elif m.group("link") is not None:
            url = m.group("url")
            if not (_URL.fullmatch(url) or url.startswith("#")):
                continue  # a relative link is not a source
            refs = [url if _URL.fullmatch(url) else m.group("link")]
        elif m.group("named") is not None:
            refs = (
                _numbers(m.group("named"))
                if re.fullmatch(r"[\d\s,;\-–]+", m.group("named"))
                else [r.strip() for r in re.split(r"\s*[,;]\s*", m.group("named")) if r.strip()]
            )
        else:
            refs = _numbers(m.group("nums"))
        out.append(
            Marker(
                text=m.group(0),
                start=m.start(),
                end=m.end(),
                refs=refs,
                docs=[resolve(r, sources) for r in refs],
            )
        )
    return out


def _sentence(answer: str, at: int) -> tuple[int, int]:
    start = 0
    for m in _SENTENCE_END.finditer(answer):
        if m.end() > at:
            return start, m.end()
        start = m.end()
    return start, len(answer)


def claim_markers(
    span: Sequence[int] | None, answer: str, markers: Sequence[Marker]
) -> list[Marker]:
    """The markers a claim at `span` carries: those inside it, else the first run of markers after it
    in its sentence (`Paris is in France [1] and Berlin in Germany [2].`)."""
    if not span or not markers:
        return []
    start, end = span[0], span[1]
    inside = [m for m in markers if start <= m.start < end]
    if inside:
        return inside
    _, stop = _sentence(answer, max(end - 1, start))
    after = [m for m in markers if end <= m.start < stop]
    run: list[Marker] = []
    for m in after:
        if run and answer[run[-1].end : m.start].strip(" ,;.") != "":
            break
        if (
            not run
            and answer[end : m.start].strip(" ,;.:)\"'")
            and len(answer[end : m.start].split()) > 6
        ):
            break  # the marker belongs to a later part of the sentence, not this claim
        run.append(m)
    return run


def cites_note(markers: Sequence[Marker]) -> str:
    """How a claim's citation is shown to the judge: " [cites document 2]" (a marker naming no
    source: "[cites [7], which names no source]")."""
    named = sorted({d for m in markers for d in m.docs if d is not None})
    bad = [m.text for m in markers if m.fabricated]
    parts = (
        [
            f"document {', '.join(map(str, named))}"
            if len(named) < 2
            else f"documents {', '.join(map(str, named))}"
        ]
        if named
        else []
    )
    parts += [f"{t}, which names no source" for t in bad]
    return f" [cites {'; '.join(parts)}]" if parts else ""


def _where_quoted(evidence: str, sources: Sequence[str]) -> set[int]:
    """The sources (from 1) an evidence quote is in: its `[document D, passage P]` prefix, else a search."""
    m = re.match(r"^\[document (\d+), passage \d+\]", evidence or "", re.IGNORECASE)
    if m:
        return {int(m.group(1))}
    quote = CITATION.sub("", evidence or "").strip()
    if not quote.strip("\"'“”‘’«» ."):
        return set()
    return {i for i, s in enumerate(sources, 1) if quote_in(quote, s)}


def check_claims(
    claims: Sequence[Any],
    answer: str,
    sources: Sequence[str],
    roles: dict[str, str],
    pass_verdict: str,
    error_verdicts: Iterable[str],
) -> tuple[list[Any], dict[str, Any] | None]:
    """Claims (`ClaimResult`s, placed: `span`) with their citations checked, and the answer's counts
    (None when the answer cites nothing). `roles`: the criterion's evidence roles. A marker naming
    no source that no placed claim carries goes to the unplaced claim sharing most words with its
    sentence, else becomes a claim of its own (`f1`, ...): a fabricated citation is never lost."""
    markers = find_markers(answer, sources)
    if not markers:
        return list(claims), None
    carried = {c.id: claim_markers(c.span, answer, markers) for c in claims}
    claims = [*claims, *_orphans(claims, carried, answer, markers, roles)]
    errors = set(error_verdicts)
    out: list[Any] = []
    pairs = supporting = supported_claims = 0
    for c in claims:
        mine = carried.get(c.id) or ([m for m in markers if m.text in c.cites] if c.cites else [])
        if not mine:
            out.append(c)
            continue
        status, update = _status(c, mine, sources, roles, pass_verdict, errors)
        cited = {d for m in mine for d in m.docs}
        holds = _where_quoted(c.evidence, sources)
        pairs += len(cited)
        if status == "supported":
            supported_claims += 1
            supporting += len(cited & holds) if holds else len(cited)
        out.append(
            c.model_copy(update={"cites": [m.text for m in mine], "citation": status, **update})
        )
    counted = [c for c in out if c.verdict is not None]
    stats: dict[str, Any] = {
        "markers": len(markers),
        "pairs": pairs,
        "supporting": supporting,
        "claims": len(counted),
        "supported_claims": supported_claims,
        "fabricated": sum(1 for c in out if c.citation == "fabricated"),
        "misattributed": sum(1 for c in out if c.citation == "misattributed"),
    }
    return out, stats | rates(stats)


def _orphans(
    claims: Sequence[Any],
    carried: dict[str, list[Marker]],
    answer: str,
    markers: Sequence[Marker],
    roles: dict[str, str],
) -> list[Any]:
    """Markers naming no source that no claim carries: each given to the unplaced claim sharing most
    words with its sentence (`carried` updated), else a claim of its own (returned)."""
    taken = {m.start for ms in carried.values() for m in ms}
    added: list[Any] = []
    for m in (m for m in markers if m.fabricated and m.start not in taken):
        start, end = _sentence(answer, m.start)
        sentence = without_markers(answer[start:end]).strip()
        words = set(norm(sentence).split())
        overlap = [
            (len(words & set(norm(c.text).split())), c)
            for c in claims
            if not c.span and c.verdict is not None
        ]
        best = max(overlap, key=lambda x: x[0], default=(0, None))
        if best[1] is not None and best[0] >= 2:
            carried.setdefault(best[1].id, []).append(m)
        elif roles.get("fabricated"):
            added.append(
                ClaimResult(
                    id=f"f{len(added) + 1}",
                    text=sentence or m.text,
                    verdict=roles["fabricated"],
                    error=True,
                    basis="none",
                    span=[start, end],
                    placed=True,
                    cites=[m.text],
                    reason="no claim of the judge carries this citation; added in code",
                )
            )
            carried[added[-1].id] = [m]
    return added


def _status(
    c: Any,
    mine: Sequence[Marker],
    sources: Sequence[str],
    roles: dict[str, str],
    pass_verdict: str,
    errors: set[str],
) -> tuple[str, dict[str, Any]]:
    """A cited claim's citation status and what changes on the claim (verdict, error, reason)."""
    fabricated, misattributed = roles.get("fabricated"), roles.get("misattributed")
    bad = [m.text for m in mine if m.fabricated]
    if bad:
        why = (
            f"cites {', '.join(bad)}, which names no source ({len(sources)} given); decided in code"
            + (f" (the judge said {c.verdict})" if c.verdict and c.verdict != fabricated else "")
        )
        return "fabricated", (
            {"verdict": fabricated, "error": True, "reason": f"{why}. {c.reason}".strip()}
            if fabricated and c.verdict is not None
            else {}
        )
    if c.verdict is None:
        return "unsupported", {}
    if misattributed and c.verdict == misattributed:
        return "misattributed", {}
    if c.verdict in errors:
        return "unsupported", {}
    if c.verdict != pass_verdict:
        return "unsupported", {}
    cited = {d for m in mine for d in m.docs}
    holds = _where_quoted(c.evidence, sources)
    if holds and not holds & cited and misattributed:
        where = ", ".join(f"document {d}" for d in sorted(holds))
        named = ", ".join(f"document {d}" for d in sorted(d for d in cited if d is not None))
        why = f"the evidence is in {where}, but the answer cites {named}; decided in code"
        return "misattributed", {
            "verdict": misattributed,
            "error": True,
            "reason": f"{why}. {c.reason}".strip(),
        }
    return "supported", {}


def rates(stats: dict[str, Any]) -> dict[str, float | None]:
    """Precision (supporting pairs / pairs) and recall (claims a citation supports / claims); None on nothing."""
    p = stats["supporting"] / stats["pairs"] if stats["pairs"] else None
    r = stats["supported_claims"] / stats["claims"] if stats["claims"] else None
    return {
        "precision": None if p is None else round(p, 4),
        "recall": None if r is None else round(r, 4),
    }


COUNTS = (
    "markers",
    "pairs",
    "supporting",
    "claims",
    "supported_claims",
    "fabricated",
    "misattributed",
)


@dataclass
class Citations:
    """A run's citation counts, summed over its answers' (`Judgment.citations`) as rows arrive."""

    answers: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))

    def add(self, row: dict[str, Any] | None) -> None:
        if not row:
            return
        self.answers += 1
        for k in COUNTS:
            self.counts[k] += int(row.get(k) or 0)

    def summary(self) -> dict[str, Any] | None:
        """{"answers", the counts, "precision", "recall"} over the sums; None when no answer cited anything."""
        if not self.answers:
            return None
        return {"answers": self.answers, **self.counts, **rates(self.counts)}


def run_citations(rows: Iterable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """A run's citations (`Citations.summary`) from its rows' `citations`."""
    total = Citations()
    for row in rows:
        total.add(row)
    return total.summary()


def check_item(
    claims: Sequence[Any],
    answer: str,
    sources: Sequence[str] | None,
    criterion: Any,
) -> tuple[list[Any], dict[str, Any] | None]:
    """`check_claims` for a judged item, when its criterion names citation roles and it has sources."""
    roles = criterion.evidence_roles()
    if not sources or not answer or not ({"fabricated", "misattributed"} & roles.keys()):
        return list(claims), None
    placed = [place(c, answer) for c in claims]
    return check_claims(
        placed, answer, sources, roles, criterion.verdict_roles()["pass"], criterion.error_verdicts
    )


def claim_notes(
    answer: str, sources: Sequence[str] | None, claims: Sequence[Any]
) -> dict[str, str]:
    """Claim id -> the note on its citation shown to the judge beside the claim (" [cites document 2]");
    only claims that carry a marker (none for an answer that cites nothing)."""
    markers = find_markers(answer, sources) if sources and answer else []
    if not markers:
        return {}
    out = {}
    for c in claims:
        span = next(
            (s for p in (c.quote, c.text) if p and p.strip() and (s := locate(p, answer))), None
        )
        note = cites_note(claim_markers(span, answer, markers))
        if note:
            out[c.id] = note
    return out


def without_markers(answer: str) -> str:
    """The answer with its citation markers and footnote definitions blanked (a `[7]` is not a number
    the answer states; a link keeps its text; what `find_markers` does not read as a marker stays)."""
    markers = find_markers(answer, ())
    if not markers and not _FOOTNOTE.search(answer):
        return answer
    out, at = [], 0
    for m in markers:
        link = _MARKER.match(answer, m.start)
        out += [
            answer[at : m.start],
            link.group("link") if link and link.group("link") is not None else "",
        ]
        at = m.end
    text = _FOOTNOTE.sub("", "".join(out) + answer[at:])
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", text)


#: how bad a citation status is, worst last (a marker two claims carry shows the worse)
_RANK = {"supported": 0, "unsupported": 1, "misattributed": 2, "fabricated": 3}


def marker_view(
    answer: str, sources: Sequence[str] | None, claims: Sequence[Any]
) -> list[dict[str, Any]]:
    """Each citation marker of the answer with what it is, for the report and the review page:
    {"start", "end", "text", "docs", "status", "claims"}; status from the claims carrying it (the worst),
    "fabricated" for a marker naming no source, None for a marker no checked claim carries."""
    if not answer or not sources:
        return []
    markers = find_markers(answer, sources)
    carried: dict[int, list[Any]] = {}
    for c in claims:
        if getattr(c, "citation", None):
            span = c.span or (place(c, answer).span if hasattr(c, "model_copy") else None)
            for m in claim_markers(span, answer, markers):
                carried.setdefault(m.start, []).append(c)
    out = []
    for m in markers:
        carriers = carried.get(m.start, [])
        statuses = [c.citation for c in carriers] + (["fabricated"] if m.fabricated else [])
        status = max(statuses, key=lambda s: _RANK.get(s, 0)) if statuses else None
        out.append(
            {
                "start": m.start,
                "end": m.end,
                "text": m.text,
                "docs": m.docs,
                "status": status,
                "claims": [c.id for c in carriers],
            }
        )
    return out
