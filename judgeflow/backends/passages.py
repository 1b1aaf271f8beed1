"""Long sources: split documents into passages, keep the ones that matter, and cite them.

A claim about one paragraph of a 50-page source is checked against that paragraph, not against
whatever fits in the prompt. `PassageJudge` wraps any backend (an LLM or the offline judge):

- every source document is split into passages of about `passage_chars` characters (at sentence
  boundaries);
- if all the documents together are longer than `max_source_chars`, only the passages that score
  highest for the claims (BM25 over content words and numbers: no model, no download) are sent,
  in reading order, up to that budget; shorter sources are sent unchanged;
- each check's evidence quote is located in the passages, and the evidence is recorded as
  `[document 2, passage 3] <quote>` (see `parse_citation`).

    judge = Judge("openai/gpt-4o-mini", max_source_chars=6000)   # via make_backend
"""

from __future__ import annotations

import math
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from ..citations import CITED_SOURCES, find_markers
from ..criteria import Criterion
from ..errors import ConfigError
from ..evidence_paths import blocks
from ..items import Item
from ..knowledge import Slot
from ..results import TraceEntry, Usage
from ..schemas import Claim, ClaimCheck
from ..text import SENTENCE as _SENT
from ..text import content_words as _content
from ..text import numbers as _numbers
from ..traces import split_document
from .base import Backend

DEFAULT_PASSAGE_CHARS = 800


class TraceCutWarning(UserWarning):
    """A trace's evidence was cut to the passages most relevant to the claims."""


_CITATION = re.compile(r"^\[document (\d+), passage (\d+)\]\s?")


class Passage(BaseModel):
    """A span of one source document."""

    doc: int
    """1-based index of the source document."""
    index: int
    """1-based index of the passage within its document."""
    text: str

    @property
    def label(self) -> str:
        return f"document {self.doc}, passage {self.index}"


def split_passages(text: str, *, doc: int = 1, passage_chars: int = DEFAULT_PASSAGE_CHARS) -> list[Passage]:
    """Split one document into passages of at most ~`passage_chars`, at sentence boundaries.

    A paragraph break starts a new passage once the current one is at least half full; a single
    sentence longer than `passage_chars` becomes a passage on its own. A fenced code block, a
    paragraph of a code tool result and a top-level member of a JSON one are never split
    (`evidence_paths.blocks`): one longer than `passage_chars` is a passage on its own.
    """
    chunks: list[str] = []
    current = ""
    for para, whole in blocks(text, passage_chars):
        if whole:  # a JSON member or a code block: never split, packed with its neighbours while they fit
            if current and len(current) + 1 + len(para) > passage_chars:
                chunks.append(current)
                current = ""
            current = f"{current.rstrip()}\n{para}\n" if current else f"{para}\n"
            continue
        if current and len(current) >= passage_chars // 2:
            chunks.append(current)
            current = ""
        for sent in (s.strip() for s in _SENT.split(para)):
            if not sent:
                continue
            if current and len(current) + 1 + len(sent) > passage_chars:
                chunks.append(current)
                current = ""
            current = f"{current} {sent}" if current else sent
        if current:
            current += "\n"
    if current.strip():
        chunks.append(current)
    return [Passage(doc=doc, index=i, text=c.strip()) for i, c in enumerate(chunks, 1)]


def split_documents(documents: Sequence[str], *, passage_chars: int = DEFAULT_PASSAGE_CHARS) -> list[Passage]:
    """All passages of all documents, in reading order."""
    out: list[Passage] = []
    for d, text in enumerate(documents, 1):
        out.extend(split_passages(text, doc=d, passage_chars=passage_chars))
    return out


def _terms(text: str) -> list[str]:
    return [*_content(text), *_numbers(text)]


class BM25:
    """Okapi BM25 over passages (k1=1.5, b=0.75), with the baseline's stemming and stopwords."""

    def __init__(self, passages: Sequence[Passage], *, k1: float = 1.5, b: float = 0.75) -> None:
        self.passages = list(passages)
        self.k1, self.b = k1, b
        self.tfs = [Counter(_terms(p.text)) for p in self.passages]
        self.lengths = [sum(tf.values()) for tf in self.tfs]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 1.0
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(self.passages)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> list[float]:
        terms = set(_terms(query))
        out = []
        for tf, length in zip(self.tfs, self.lengths, strict=True):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * length / (self.avg or 1.0))
            for t in terms:
                f = tf.get(t, 0)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            out.append(s)
        return out


def select_passages(
    queries: Sequence[str], passages: Sequence[Passage], *, max_chars: int
) -> list[Passage]:
    """The passages most relevant to the queries (claims), within `max_chars`, in reading order.

    Each query's ranking is visited in turn (round robin), so every claim gets its best passage
    before any claim gets its second. If everything fits, everything is kept. A query that shares
    no word with any passage (a paraphrase, another language or script, numbers written out) has
    no ranking: the budget left is then filled in reading order, so a source is never sent empty.
    """
    if sum(len(p.text) for p in passages) <= max_chars:
        return list(passages)
    bm25 = BM25(passages)
    rankings = []
    for q in queries or [""]:
        scores = bm25.scores(q)
        rankings.append([i for i in sorted(range(len(passages)), key=lambda i: -scores[i]) if scores[i] > 0])
    chosen: list[int] = []
    used = 0
    depth = 0
    while any(depth < len(r) for r in rankings):
        for r in rankings:
            if depth < len(r) and r[depth] not in chosen:
                size = len(passages[r[depth]].text)
                if used + size <= max_chars or not chosen:
                    chosen.append(r[depth])
                    used += size
        depth += 1
    if not chosen or not all(rankings):
        _fill(chosen, used, passages, max_chars)
    return [passages[i] for i in sorted(chosen)]


def _fill(chosen: list[int], used: int, passages: Sequence[Passage], max_chars: int) -> None:
    """Add passages in reading order while they fit (at least one)."""
    taken = set(chosen)
    for i, p in enumerate(passages):
        if i not in taken and (used + len(p.text) <= max_chars or not chosen):
            chosen.append(i)
            taken.add(i)
            used += len(p.text)


def locate(quote: str, passages: Sequence[Passage]) -> Passage | None:
    """The passage an evidence quote comes from: verbatim if possible, else by term overlap."""
    q = " ".join(quote.split()).strip(" .\"'«»")
    if not q or not passages:
        return None
    for p in passages:
        if q.lower() in " ".join(p.text.split()).lower():
            return p
    terms = set(_terms(q))
    if not terms:
        return None
    best, score = None, 0.0
    for p in passages:
        s = len(terms & set(_terms(p.text))) / len(terms)
        if s > score:
            best, score = p, s
    return best if score >= 0.5 else None


def cite(evidence: str, passages: Sequence[Passage]) -> str:
    """`evidence` prefixed with `[document D, passage P]` when its passage can be found."""
    if not evidence or _CITATION.match(evidence):
        return evidence
    p = locate(evidence, passages)
    return f"[{p.label}] {evidence}" if p else evidence


def parse_citation(evidence: str) -> tuple[int | None, int | None, str]:
    """Split `[document D, passage P] quote` into (D, P, quote); (None, None, evidence) if uncited."""
    m = _CITATION.match(evidence or "")
    if not m:
        return None, None, evidence
    return int(m.group(1)), int(m.group(2)), evidence[m.end():]


class PassageJudge:
    """Wrap a backend so long sources are cut to the relevant passages and evidence is cited."""

    def __init__(self, inner: Any, *, max_source_chars: int, passage_chars: int | None = None,
                 cite_short: bool = True) -> None:
        """
        Args:
            inner: the backend that judges (LLMJudge, LexicalJudge, ...).
            max_source_chars: sources longer than this (all documents together) are cut to
                the most relevant passages, up to this many characters.
            passage_chars: passage size; default a quarter of the budget, at most 800.
            cite_short: also cite passages in the evidence of sources short enough to send
                whole (False: the default cut of LLM judges, which leaves those untouched).
        """
        if passage_chars is None:
            passage_chars = min(DEFAULT_PASSAGE_CHARS, max(200, max_source_chars // 4))
        if max_source_chars < 200 or max_source_chars < passage_chars:
            raise ConfigError(
                f"max_source_chars={max_source_chars} is smaller than one passage ({passage_chars} chars); "
                "give at least 200 and at least passage_chars, e.g. max_source_chars=6000"
            )
        self.inner: Backend = inner
        self.model: str = inner.model
        self.max_source_chars = max_source_chars
        self.passage_chars = passage_chars
        self.cite_short = cite_short

    def __getattr__(self, name: str) -> Any:
        """The wrapped backend's attributes (`client`, `max_claims_per_check`, ...): model judges
        are wrapped by default, and `judge.backend.client` must still reach the client."""
        if name == "inner" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property
    def structured(self) -> str | None:
        return self.inner.structured

    @property
    def temperature(self) -> float | None:
        return self.inner.temperature

    @property
    def notes(self) -> list[str]:
        return self.inner.notes

    @property
    def coverage(self) -> Any:
        """The inner backend's requirement checker, if it has one (coverage never reads the source)."""
        return self.inner.coverage

    async def aclose(self) -> None:
        await self.inner.aclose()

    @property
    def fingerprint(self) -> str:
        default = "" if self.cite_short else ",default"
        return f"{self.inner.fingerprint}|passages={self.max_source_chars}/{self.passage_chars}{default}"

    def _narrow(self, item: Item, queries: list[str]) -> tuple[Item, list[Passage]]:
        if not item.source:
            return item, []
        if sum(len(s) for s in item.source) <= self.max_source_chars:  # short source: sent unchanged
            if not self.cite_short:
                return item, []
            return item, split_documents(item.source, passage_chars=self.passage_chars)  # evidence still cited
        passages = split_documents(item.source, passage_chars=self.passage_chars)
        chosen = select_passages(queries, passages, max_chars=self.max_source_chars)
        if item.messages is not None:
            return self._narrow_trace(item, passages, chosen), chosen
        if not find_markers(item.answer, item.source):
            return item.model_copy(update={"source": [p.text for p in chosen]}), chosen
        # the answer cites its sources by their own numbers: each passage says which document it is from,
        # and the judge's citation notes are worked out against the documents as given (`claim_notes`)
        return item.model_copy(update={"source": [f"[{p.label}]\n{p.text}" for p in chosen],
                                       "extra": {**item.extra, CITED_SOURCES: item.source}}), chosen

    def _narrow_trace(self, item: Item, passages: list[Passage], chosen: list[Passage]) -> Item:
        """A trace cut to its passages: each headed by its message's label, and a warning naming
        the messages left out (a claim about them can no longer be checked against them)."""
        labels = [split_document(d)[0] or f"document {i}" for i, d in enumerate(item.source or [], 1)]
        kept = []
        for p in chosen:
            head = f"[{labels[p.doc - 1]}]"
            body = p.text[len(head):].lstrip() if p.text.startswith(head) else p.text
            kept.append(f"{head}\n{body}")
        dropped = [labels[d - 1] for d in sorted({p.doc for p in passages} - {p.doc for p in chosen})]
        cut = len(passages) - len(chosen)
        if cut:
            warnings.warn(f"item {item.id!r}: the trace is longer than max_source_chars={self.max_source_chars}; "
                          f"{cut} of {len(passages)} passages were cut" + (f", dropping {len(dropped)} message(s): "
                          f"{'; '.join(dropped[:5])}{' ...' if len(dropped) > 5 else ''}" if dropped else "")
                          + "; raise max_source_chars to send more", TraceCutWarning, stacklevel=2)
        return item.model_copy(update={"source": kept})

    def _cited(self, checks: list[ClaimCheck], passages: list[Passage]) -> list[ClaimCheck]:
        return [c.model_copy(update={"evidence": cite(c.evidence, passages)}) for c in checks]

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]:
        narrowed, _ = self._narrow(item, [item.answer])
        claims: list[Claim] = await self.inner.decompose(narrowed, criterion, usage, trace)
        return claims

    async def check(
        self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage, trace: list[TraceEntry]
    ) -> list[ClaimCheck]:
        narrowed, passages = self._narrow(item, [c.text for c in claims])
        return self._cited(await self.inner.check(narrowed, criterion, claims, usage, trace), passages)

    async def single(
        self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
    ) -> tuple[list[Claim], list[ClaimCheck]]:
        queries = [p for p in _SENT.split(item.answer) if p.strip()] or [item.answer]
        narrowed, passages = self._narrow(item, queries)
        claims, checks = await self.inner.single(narrowed, criterion, usage, trace)
        return claims, self._cited(checks, passages)

    async def commit(
        self, item: Item, criterion: Criterion, slots: list[Slot], usage: Usage, trace: list[TraceEntry]
    ) -> dict[str, str]:
        commitments: dict[str, str] = await self.inner.commit(item, criterion, slots, usage, trace)
        return commitments
