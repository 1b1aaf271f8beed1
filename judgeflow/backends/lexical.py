"""Offline judges that need no model: floors to compare LLM judges with.

`baseline/lexical` follows the same graph as an LLM judge: sentence/clause claims, each
compared with the reference, source or spec by content-word overlap and by its concrete facts
(numbers and dates, capitalised names, negation), with verdicts in the criterion's vocabulary.
It is deterministic, fast and free, and it is what `judgeflow run` uses when no model is set.
It has no world knowledge: in factual mode a claim it cannot match is `unverifiable`, except
that a claim sharing almost nothing with a short reference is counted as contradicting it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..citations import without_markers
from ..criteria import Criterion, Role
from ..errors import ConfigError
from ..items import Item
from ..results import TraceEntry, Usage
from ..schemas import Claim, ClaimCheck
from ..text import (
    MONTHS as _MONTHS,
)
from ..text import (
    NUMBER as _NUM,
)
from ..text import (
    SENTENCE as _SENT,
)
from ..text import (
    WORD as _WORD,
)
from ..text import (
    YEAR as _YEAR,
)
from ..text import (
    content_words as _content,
)
from ..text import (
    names as _names,
)
from ..text import (
    negated as _negated,
)
from ..text import (
    numbers as _numbers,
)
from ..traces import split_document
from .base import Offline, single_from_steps

if TYPE_CHECKING:
    from .rouge import RougeJudge

Outcome = Literal["supported", "conflict", "missing", "weak"]

_REFUSALS = re.compile(
    r"^\s*(i have no comment|no comment|i don'?t know|i do not know|unknown|i'?m not sure|"
    r"i cannot answer|i can'?t answer|не знаю|без комментариев)\W*$",
    re.IGNORECASE,
)
def split_claims(answer: str) -> list[Claim]:
    """Sentences (and ;-clauses) with some content; none for a refusal."""
    text = unicodedata.normalize("NFC", answer).strip()
    if not text or _REFUSALS.match(text):
        return []
    parts = [p.strip() for p in _SENT.split(text) if p and p.strip()]
    claims = []
    for said in parts:
        p = without_markers(said).strip()  # the answer's own citation markers are not facts (judgeflow.citations)
        if not _content(p) and not _numbers(p):
            continue
        if p.endswith(":"):  # a lead-in ("Here is a summary of the passage:") states nothing itself
            continue
        kind = ("date" if (_YEAR.search(p) or _MONTHS.search(p)) else "number" if _NUM.search(p)
                else "name" if _names(p) else "other")
        claims.append(Claim(id=f"c{len(claims) + 1}", text=p, kind=kind, quote=said if said != p else ""))
    return claims


@dataclass
class _Evidence:
    text: str
    sentences: list[str]
    content: set[str]
    numbers: set[str]
    names: set[str]
    short: bool
    sentence_content: list[set[str]] = field(default_factory=list)


def _evidence(item: Item, criterion: Criterion) -> tuple[str, _Evidence]:
    for f in criterion.evidence_fields:
        # the documents themselves, without "[Document i]" headers (their numbers are not evidence)
        text = "\n\n".join(_documents(item)) if f == "source" and item.source else getattr(item, f)
        if text:
            sents = [s for s in _SENT.split(text) if s.strip()] or [text]
            return f, _Evidence(text, sents, _content(text), _numbers(text), _names(text),
                                len(_WORD.findall(text)) <= 40, [_content(s) for s in sents])
    return "none", _Evidence("", [], set(), set(), set(), True)


def _documents(item: Item) -> list[str]:
    """The source documents; a trace's without their "[tool get_weather, call_1]" headers (labels, not evidence)."""
    assert item.source is not None
    return item.source if item.messages is None else [split_document(d)[1] for d in item.source]


def _best_sentence(claim_words: set[str], ev: _Evidence) -> str:
    best, score = "", 0
    for s, words in zip(ev.sentences, ev.sentence_content):
        overlap = len(claim_words & words)
        if overlap > score:
            best, score = s.strip(), overlap
    return best[:300]


class LexicalJudge(Offline):
    """Deterministic content-overlap and concrete-fact judge (`baseline/lexical`)."""

    def __init__(self, *, threshold: float = 0.5, low: float = 0.15) -> None:
        self.model = "baseline/lexical"
        self.threshold = threshold
        self.low = low

    @property
    def fingerprint(self) -> str:
        return f"{self.model}|v1|t={self.threshold}|low={self.low}"

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]:
        return split_claims(item.answer)

    async def check(
        self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage, trace: list[TraceEntry]
    ) -> list[ClaimCheck]:
        basis, ev = _evidence(item, criterion)
        verdicts = _verdict_names(criterion)
        outcomes = [self._outcome(claim.text, ev, criterion) for claim in claims]
        if criterion.family == "factual" and any(o == "supported" for o, _, _ in outcomes):
            # Whole-answer reading of a short reference: once the answer states the reference's
            # answer, its other sentences are extra details, not errors (factual_correctness).
            outcomes = [("weak", "an extra detail beyond the reference; cannot be checked offline", False)
                        if unrelated else (o, r, unrelated) for o, r, unrelated in outcomes]
        checks = []
        for claim, (outcome, reason, _) in zip(claims, outcomes):
            verdict = verdicts[outcome]
            words = _content(claim.text)
            checks.append(ClaimCheck(
                claim_id=claim.id, verdict=verdict,
                basis=basis if outcome != "weak" and basis in criterion.bases else "none",
                evidence=_best_sentence(words, ev) if outcome in ("supported", "conflict") else "",
                reason=reason,
            ))
        return checks

    async def single(
        self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
    ) -> tuple[list[Claim], list[ClaimCheck]]:
        return await single_from_steps(self, item, criterion, usage, trace)

    def _outcome(self, claim: str, ev: _Evidence, criterion: Criterion) -> tuple[Outcome, str, bool]:
        """(outcome, reason, whether it rests only on sharing nothing with a short reference)."""
        words = _content(claim)
        overlap = len(words & ev.content) / len(words) if words else 1.0
        nums = _numbers(claim)
        # a claim sharing a number with a short reference does not "share nothing" with it:
        # "Moscow was founded in 1147." vs "1147"
        unrelated = ev.short and criterion.family == "factual" and overlap < self.low and not nums & ev.numbers
        missing_nums = nums - ev.numbers
        missing_names = _names(claim) - ev.content - ev.names
        if missing_nums and self._same_subject_other_number(words, ev, criterion.family == "factual"):
            return "conflict", f"states {sorted(missing_nums)} where the evidence has {sorted(ev.numbers)[:5]}", False
        strict = criterion.family == "faithfulness" or "knowledge" not in criterion.bases
        if ev.short and criterion.family == "factual" and overlap >= self.threshold and _negated(claim) != _negated(ev.text):
            return "conflict", "same content as the reference with the opposite polarity (negation)", False
        if overlap >= self.threshold and not missing_nums and not (strict and missing_names):
            return "supported", f"{overlap:.0%} of its content words appear in the evidence", False
        if missing_nums or missing_names:
            what = sorted(missing_nums | missing_names)[:5]
            if strict:
                return "missing", f"concrete details {what} are not in the evidence", False
            if unrelated:
                return ("conflict", f"shares {overlap:.0%} of its content with the reference and names {what}, "
                        "which it lacks", True)
            return "weak", f"concrete details {what} cannot be checked offline", False
        if strict:
            return "missing", f"only {overlap:.0%} of its content words appear in the evidence", False
        if unrelated:
            return "conflict", f"shares only {overlap:.0%} of its content with the reference", True
        return "weak", f"{overlap:.0%} content overlap; cannot be settled without world knowledge", False

    @staticmethod
    def _same_subject_other_number(words: set[str], ev: _Evidence, reference_mode: bool) -> bool:
        """A number the evidence lacks is a contradiction only where the evidence gives another
        number for the same thing: a short reference (factual mode) with numbers, or an evidence sentence with
        numbers that shares a content word with the claim."""
        if not ev.numbers:
            return False
        if ev.short and reference_mode:
            return True
        return any(words & sc and _NUM.search(s) for s, sc in zip(ev.sentences, ev.sentence_content))


#: the lexical judge's outcomes -> the criterion's roles (`[roles]` in its TOML)
_ROLE_OF: dict[Outcome, Role] = {"supported": "pass", "conflict": "conflict", "missing": "missing", "weak": "weak"}


def _verdict_names(criterion: Criterion) -> dict[Outcome, str]:
    """Each outcome as the criterion calls it (its declared roles; checked when the criterion loads)."""
    roles = criterion.verdict_roles()
    return {outcome: roles[role] for outcome, role in _ROLE_OF.items()}


def make_baseline(name: str, **kwargs: float) -> LexicalJudge | RougeJudge:
    """`baseline/<name>` -> an offline judge: lexical, or rouge-l (the study's ROUGE-L baseline)."""
    if name == "lexical":
        return LexicalJudge(**kwargs)
    if name in ("rouge-l", "rougel", "rouge"):
        from .rouge import RougeJudge as Rouge

        return Rouge(**kwargs)
    raise ConfigError(f"unknown offline judge 'baseline/{name}'; available: baseline/lexical, baseline/rouge-l")
