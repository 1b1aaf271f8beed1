"""Untrusted text goes into prompts only inside tags, with look-alike tags neutralised.

An answer that contains `</answer>` or `<source>` cannot close the data block early or open a
new one: any tag whose name is one our prompts use is rewritten with look-alike brackets. The
list of tag names is not written by hand: it is read from the prompts themselves (every shipped
criterion's TOML, every criterion loaded, every prompt built in code, and every `tag()` call),
so a new tag cannot be forgotten. Chat-template control tokens (`<|im_start|>`, `<|eot_id|>`,
`[INST]`, `<s>`, ...) are neutralised too: a local server that renders the chat template itself
could otherwise read them as turn boundaries.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable

#: tags the code itself writes around data (more are added from the prompts as they are seen)
_BASE_TAGS = ("question", "answer", "reference", "source", "document", "spec", "claims", "claim", "data")
TAGS = _BASE_TAGS
"""The structural tags every prompt uses (a criterion may register more: `neutralized_tags()`)."""
_TAG_NAME = re.compile(r"<\s*/?\s*([A-Za-z][A-Za-z0-9_-]*)(?=[\s/>])[^<>]*>")
_ATTR = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_tags: set[str] = set(_BASE_TAGS)
_lock = threading.Lock()
_tag_re: re.Pattern[str] | None = None
_sources: list[Callable[[], Iterable[str]]] = []  # prompt texts not yet read (criteria files, ...)

#: chat-template control tokens of common open models (ChatML, Llama 2/3, Mistral, Gemma, Phi, DeepSeek, ...)
_CONTROL = re.compile(
    r"<\s*[|｜][^<>\n]{0,64}?[|｜]\s*>"                     # <|im_start|>, <|eot_id|>, <｜begin▁of▁sentence｜>
    r"|\[\s*/?\s*(?:INST|SYS|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS|TOOL_CONTENT)\s*\]"  # [INST]
    r"|<<\s*/?\s*SYS\s*>>"                                  # <<SYS>>
    r"|<\s*/?\s*(?:s|start_of_turn|end_of_turn|bos|eos|pad|unk|think|tool_call|tool_response)\s*>",  # <s>, gemma
    re.IGNORECASE,
)


def tags_in(text: str) -> set[str]:
    """The tag names used in a prompt text (`<answer>`, `</claims>`, `<claim id="...">` ...)."""
    return {m.group(1).lower() for m in _TAG_NAME.finditer(text)}


def register_tags(texts: Iterable[str]) -> None:
    """Add every tag used in these prompt texts to the names `neutralize` rewrites."""
    global _tag_re
    found = set().union(*(tags_in(t) for t in texts))
    if not found <= _tags:
        with _lock:
            _tags.update(found)
            _tag_re = None


def neutralized_tags() -> frozenset[str]:
    """The tag names neutralised in untrusted text (for tests and audits)."""
    _load_shipped()
    return frozenset(_tags)


def add_prompt_source(source: Callable[[], Iterable[str]]) -> None:
    """Register prompt texts to be read (once, lazily) for their tags: e.g. every shipped criterion file."""
    with _lock:
        _sources.append(source)


def _load_shipped() -> None:
    """Read the tags of every registered prompt source not read yet."""
    while _sources:
        with _lock:
            source = _sources.pop() if _sources else None
        if source is not None:
            register_tags(list(source()))


def _pattern() -> re.Pattern[str]:
    global _tag_re
    _load_shipped()
    pattern = _tag_re
    if pattern is None:
        names = "|".join(re.escape(t) for t in sorted(_tags, key=len, reverse=True))
        pattern = _tag_re = re.compile(r"<\s*(/?)\s*(" + names + r")(?![A-Za-z0-9_-])([^>]*)>", re.IGNORECASE)
    return pattern


def neutralize(text: str) -> str:
    """Rewrite `<answer>`/`</source ...>`-like tags and chat-template tokens so they cannot act as
    delimiters or turn boundaries (the text stays readable: `‹answer›`, `‹|im_start|›`, `［INST］`)."""
    text = _pattern().sub(lambda m: f"‹{m.group(1)}{m.group(2)}{m.group(3)}›", text)
    return _CONTROL.sub(_defuse, text)


def _defuse(m: re.Match[str]) -> str:
    s = m.group(0)
    return s.replace("<", "‹").replace(">", "›").replace("[", "［").replace("]", "］")


def _known(name: str) -> None:
    """Make sure a tag name the code writes is one `neutralize` rewrites (a set look-up once known)."""
    if name.lower() not in _tags:
        register_tags([f"<{name}>"])


def _attrs(attrs: dict[str, str | int]) -> str:
    out = []
    for k, v in attrs.items():
        value = str(v)
        if not _ATTR.fullmatch(value):  # ids come from models: never let one close the tag
            raise ValueError(f"attribute {k}={value[:40]!r} must be a plain token (letters, digits, _ . : -)")
        out.append(f' {k}="{value}"')
    return "".join(out)


def tag(name: str, text: str | None, **attrs: str | int) -> str:
    """Wrap untrusted `text` in <name> tags after neutralising delimiters inside it."""
    _known(name)
    if text is None:
        return f"<{name}>(none given)</{name}>"
    return f"<{name}{_attrs(attrs)}>\n{neutralize(text)}\n</{name}>"


def inline(name: str, text: str, **attrs: str | int) -> str:
    """`<name attrs>text</name>` on one line, `text` neutralised (claims and requirements in a list)."""
    _known(name)
    return f"<{name}{_attrs(attrs)}>{neutralize(text)}</{name}>"


def listed(name: str, entries: Iterable[tuple[str, str]]) -> str:
    """A <name> block of `id: text` lines (claims to check): each text neutralised and folded onto
    one line, so no text can start a line of its own and pose as another id, or close the block."""
    _known(name)
    lines = []
    for key, text in entries:
        if not _ATTR.fullmatch(key):  # ids come from models: never let one forge a line
            raise ValueError(f"id {key[:40]!r} must be a plain token (letters, digits, _ . : -)")
        lines.append(f"{key}: {' '.join(neutralize(text).split())}")
    return f"<{name}>\n" + "\n".join(lines) + f"\n</{name}>"


def documents(texts: list[str]) -> str:
    """Render source documents as one <source> block of numbered <document>s."""
    if len(texts) == 1:
        return tag("source", texts[0])
    inner = "\n".join(tag("document", t, index=i) for i, t in enumerate(texts, 1))
    return f"<source>\n{inner}\n</source>"
