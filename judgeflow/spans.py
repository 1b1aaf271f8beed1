"""Where in the answer: each claim's character span, found and checked in code, and a row's error spans.

The decomposer gives, for each claim, the words of the answer it comes from (`Claim.quote`);
offline judges split the answer themselves, so their claim text is that passage. Neither is
trusted: `locate` looks the passage up in the answer (case and spacing ignored, as evidence
quotes are checked in `quotes.py`; "..." joins fragments, found in order) and maps the match
back to offsets in the answer as given. A claim whose passage is not in the answer is marked
`placed=False` with no span: never a guessed position.

Spans are half-open `[start, end)` offsets into `Item.answer` (Python string indices).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from .quotes import ELLIPSIS, QUOTES
from .results import ClaimResult, Judgment

#: dropped in folding: the dot above that case folding leaves on "İ" ("i̇"), so "İstanbul" matches "istanbul"
_DOT_ABOVE = "\u0307"


def _fold(ch: str) -> str:
    """One character as it is compared: canonically decomposed (NFD) and case-folded, so an NFC and
    an NFD text match, and "İ" matches "i"."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", ch).casefold()).replace(_DOT_ABOVE, "")


_RUN = re.compile(r"\S+")  # \s is str.isspace() for str patterns


@lru_cache(maxsize=64)  # an answer is searched once per claim (quote, then text): fold it once
def _folded(text: str) -> tuple[str, tuple[int, ...]]:
    """`text` folded (`_fold`) with runs of whitespace as one space, and each output char's index in `text`."""
    out: list[str] = []
    where: list[int] = []
    for m in _RUN.finditer(text):
        start, word = m.start(), m.group()
        if out:
            out.append(" ")
            where.append(start - 1)
        if word.isascii():  # a word at a time: ASCII folds one character to one
            out.append(word.casefold())
            where.extend(range(start, m.end()))
            continue
        for i, ch in enumerate(word, start):
            for f in (ch.casefold() if ch.isascii() else _fold(ch)):  # "ß" folds to "ss": both map back to the one character
                out.append(f)
                where.append(i)
    return "".join(out), tuple(where)


def _needle(fragment: str) -> str:
    if fragment.isascii():  # ASCII folds one character to one: the whole string at once
        folded = fragment.casefold()
    else:
        folded = "".join(_fold(c) if not c.isascii() else c.casefold() for c in fragment)
    return " ".join(folded.split()).strip(QUOTES + " ")


def _extends(ch: str) -> bool:
    """Whether `ch` belongs to the grapheme before it: a combining mark, a variation selector, an
    emoji modifier or tag, or a zero-width joiner."""
    o = ord(ch)
    return (unicodedata.category(ch) in ("Mn", "Mc", "Me") or 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF
            or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F or o == 0x200D)


def graphemes(text: str, start: int, end: int) -> tuple[int, int]:
    """`[start, end)` widened to grapheme boundaries: never a combining mark, a variation selector
    or a ZWJ sequence's part cut off (an approximation of UAX #29 for these cases)."""
    while start > 0 and start < len(text) and _extends(text[start]):
        start -= 1
    while end < len(text) and (_extends(text[end]) or (text[end - 1] == "\u200d" and end > start)):
        end += 1
    return start, end


@lru_cache(maxsize=256)  # a judged item's claims are placed twice (citations, then the row's spans)
def locate(passage: str, text: str, start: int = 0) -> tuple[int, int] | None:
    """The `[start, end)` offsets of `passage` in `text` (case and spacing ignored), or None.

    "..." or "…" in the passage joins fragments, each found after the previous one; the span runs
    from the first fragment's start to the last one's end. Searching begins at offset `start`.
    """
    fragments = [n for n in (_needle(f) for f in ELLIPSIS.split(passage.strip().strip(QUOTES))) if n]
    if not fragments or not text:
        return None
    hay, where = _folded(text)
    pos = bisect_left(where, start)  # `where` never decreases
    first = last = None
    for frag in fragments:
        k = hay.find(frag, pos)
        if k < 0:
            return None
        first = k if first is None else first
        last = k + len(frag) - 1
        pos = k + len(frag)
    assert first is not None and last is not None
    return graphemes(text, where[first], where[last] + 1)


def place(claim: ClaimResult, answer: str) -> ClaimResult:
    """The claim with its span in `answer`: from its quote, else its own text; `placed=False` if neither is there."""
    for passage in (claim.quote, claim.text):
        span = locate(passage, answer) if passage and passage.strip() else None
        if span is not None:
            return claim.model_copy(update={"span": list(span), "placed": True})
    return claim.model_copy(update={"span": None, "placed": False})


def place_claims(claims: Sequence[ClaimResult], answer: str | None) -> list[ClaimResult]:
    """Every claim placed in the answer (no answer: claims left as they are, `placed` None)."""
    if not answer:
        return list(claims)
    return [place(c, answer) for c in claims]


def error_spans(claims: Sequence[ClaimResult], answer: str) -> list[dict[str, Any]]:
    """The answer spans of the error claims, in answer order: {start, end, claim, text}."""
    out = [{"start": c.span[0], "end": c.span[1], "claim": c.id, "text": answer[c.span[0]:c.span[1]]}
           for c in claims if c.error and c.span]
    return sorted(out, key=lambda s: (s["start"], s["end"]))


def with_spans(judgment: Judgment, answer: str | None) -> Judgment:
    """A judged row with its claims placed and its error spans; other rows unchanged.

    Idempotent, so a row served from the cache (judged before spans existed) gets them too."""
    if judgment.status != "judged" or not answer:
        return judgment
    claims = place_claims(judgment.claims, answer)
    return judgment.model_copy(update={"claims": claims, "spans": error_spans(claims, answer)})


def unplaced(claims: Sequence[ClaimResult]) -> list[str]:
    """Ids of claims that could not be placed in the answer."""
    return [c.id for c in claims if c.placed is False]
