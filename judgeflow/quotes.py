"""Evidence quotes: whether a judge's quote really occurs in a text (case and spacing ignored).

One rule for every place that checks a quote: `aggregate.verify_evidence` (against the evidence a
claim names), `traces.attribute` (against the one message of a trace it came from) and the review
app's highlighting.
"""

from __future__ import annotations

import re

#: a passage citation `[document 2, passage 3]` in front of a quote (see backends/passages.py)
CITATION = re.compile(r"^\[document \d+, passage \d+\]\s*", re.IGNORECASE)
#: "..." or "…" joins fragments of one quote, each looked for on its own
ELLIPSIS = re.compile(r"\.\.\.|…")
QUOTES = "\"'“”‘’«»"


def norm(text: str) -> str:
    """Case and spacing folded."""
    return " ".join(text.casefold().split())


def quote_in(quote: str, text: str) -> bool:
    """Whether an evidence quote occurs in `text` (case and spacing ignored; "..." joins fragments)."""
    haystack = norm(text)
    fragments = [norm(f).strip(QUOTES + " ") for f in ELLIPSIS.split(quote.strip().strip(QUOTES).strip())]
    return all(f in haystack for f in fragments if f)
