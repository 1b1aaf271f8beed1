"""Where a claim's evidence quote (or the claim itself) occurs in a text, as character spans.

Matching follows `aggregate.verify_evidence`: case and spacing ignored, a leading
"[Document i, passage j]" citation dropped, "..." joining fragments that are located one by one.
"""

from __future__ import annotations

import re

from ...quotes import CITATION, ELLIPSIS, QUOTES  # the same rules the judge used

_WORD = re.compile(r"\S+")


def fragments(quote: str) -> list[str]:
    """The quote's pieces to look for (citation dropped, split at ellipses, quotes stripped)."""
    quote = CITATION.sub("", quote or "").strip().strip(QUOTES).strip()
    return [f.strip().strip(QUOTES + " ") for f in ELLIPSIS.split(quote) if f.strip().strip(QUOTES + " ")]


def locate(fragment: str, text: str) -> tuple[int, int] | None:
    """The first span of `text` that reads as `fragment` (case and spacing ignored), or None."""
    words = _WORD.findall(fragment)
    if not words or not text:
        return None
    m = re.search(r"\s+".join(re.escape(w) for w in words), text, flags=re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def quote_spans(quote: str, texts: list[str]) -> list[tuple[int, int, int]] | None:
    """(text index, start, end) of every fragment of `quote`, searching each text in turn.

    None if any fragment occurs in none of the texts (the quote is not in the evidence).
    """
    out = []
    for frag in fragments(quote):
        hit = next(((k, *span) for k, t in enumerate(texts) if (span := locate(frag, t)) is not None), None)
        if hit is None:
            return None
        out.append(hit)
    return out or None
