"""Untrusted text goes into prompts only inside tags, with look-alike tags neutralised.

An answer that contains `</answer>` or `<source>` cannot close the data block early or open a
new one: any tag whose name is one of ours is rewritten with look-alike brackets.
"""

from __future__ import annotations

import re

TAGS = ("question", "answer", "reference", "source", "document", "spec", "claims", "claim", "data")
_TAG_RE = re.compile(r"<\s*(/?)\s*(" + "|".join(TAGS) + r")\b([^>]*)>", re.IGNORECASE)


def neutralize(text: str) -> str:
    """Rewrite `<answer>`/`</source ...>`-like tags so they cannot act as delimiters."""
    return _TAG_RE.sub(lambda m: f"‹{m.group(1)}{m.group(2)}{m.group(3)}›", text)


def tag(name: str, text: str | None, **attrs: str | int) -> str:
    """Wrap untrusted `text` in <name> tags after neutralising delimiters inside it."""
    if text is None:
        return f"<{name}>(none given)</{name}>"
    attr = "".join(f' {k}="{v}"' for k, v in attrs.items())
    return f"<{name}{attr}>\n{neutralize(text)}\n</{name}>"


def documents(texts: list[str]) -> str:
    """Render source documents as one <source> block of numbered <document>s."""
    if len(texts) == 1:
        return tag("source", texts[0])
    inner = "\n".join(tag("document", t, index=i) for i, t in enumerate(texts, 1))
    return f"<source>\n{inner}\n</source>"
