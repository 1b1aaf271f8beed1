"""Which language an answer is in: a cheap script + stopword guess (no model, no download).

Claims stay in the answer's language (every criterion's decompose prompt says so, and
`Claim.text` is described to the model as "in the answer's own language"); verdicts stay in the
criterion's fixed English vocabulary, enforced by the `ClaimChecks` validator. The language is
recorded on every result as `Judgment.language` (an input field `language` wins over the guess);
`by_language` reports results per language, reading an older result's `extra["language"]` too.

    detect_language("Москву основал Юрий Долгорукий в 1147 году.")   # "ru"
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from .items import Item
from .results import Judgment

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_TWO_ASCII_LETTERS = re.compile(r"[A-Za-z][^A-Za-z]*[A-Za-z]")

#: a few very frequent function words per language, enough to tell Latin-script languages apart
STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset("""the and of to in is was are it that for on with as by this be at from an a i you
                       not no yes do does did there if can will would should have has they he she we my
                       your all one only many never what who when which their its but or""".split()),
    "de": frozenset("der die das und ist nicht ein eine zu den mit von im auf des sich dem wurde für".split()),
    "fr": frozenset("le la les et est des une un du en que qui dans pour pas au sur par il été".split()),
    "es": frozenset("el la los las y es de que en un una por con para del se fue al su".split()),
    "it": frozenset("il lo la gli le e è di che un una per con del della non sono fu nel".split()),
    "pt": frozenset("o a os as e é de que um uma para com do da não em foi no na".split()),
    "ru": frozenset("и в во не что на с как а то он она это по из к у за от был была было году".split()),
    "uk": frozenset("і в не що на з як а то він вона це по із до у за від був була було році".split()),
}
_SCRIPT_LANGS = {"CYRILLIC": ("ru", "uk"), "LATIN": ("en", "de", "fr", "es", "it", "pt")}
_SCRIPT_ONLY = {"GREEK": "el", "ARABIC": "ar", "HEBREW": "he", "HANGUL": "ko", "DEVANAGARI": "hi",
                "HIRAGANA": "ja", "KATAKANA": "ja", "CJK": "zh", "THAI": "th", "ARMENIAN": "hy",
                "GEORGIAN": "ka"}
_UK_LETTERS = set("іїєґ")


@lru_cache(maxsize=8192)
def _script(ch: str) -> str:
    """The Unicode script of a letter (the first word of its name), remembered per character."""
    name = unicodedata.name(ch, "")
    return name.split(" ")[0] if name else ""


def detect_language(text: str | None) -> str | None:
    """An ISO 639-1 guess ("en", "ru", "de", ...) for `text`, or None if there is too little text.

    The dominant script decides non-Latin, non-Cyrillic languages outright (any kana makes CJK
    text Japanese); within Latin and Cyrillic, stopword counts decide (і/ї/є/ґ mark Ukrainian),
    and Latin text with no known stopwords is reported as English.
    """
    if not text:
        return None
    if text.isascii():  # the common case: every letter is Latin, no per-character pass
        if _TWO_ASCII_LETTERS.search(text) is None:
            return None
        script = "LATIN"
    else:
        script = _dominant_script(text)
        if script is None:
            return None
    if script in _SCRIPT_ONLY:
        return _SCRIPT_ONLY[script]
    candidates = _SCRIPT_LANGS.get(script)
    if candidates is None:
        return None
    lowered = text.lower()
    if script == "CYRILLIC" and any(c in _UK_LETTERS for c in lowered):
        return "uk"
    counts = Counter(_WORD.findall(lowered))
    hits = {lang: sum(counts[w] for w in STOPWORDS[lang] if w in counts) for lang in candidates}
    best = max(candidates, key=lambda lang: (hits[lang], lang == candidates[0]))
    return best


def _dominant_script(text: str) -> str | None:
    """The script most letters of `text` are in ("HIRAGANA" if there is any kana: Japanese; a tie
    keeps the script seen first); None for fewer than two letters."""
    letters = [c for c in text if c.isalpha()]
    if len(letters) < 2:
        return None
    scripts = Counter(map(_script, letters))
    if scripts.get("HIRAGANA") or scripts.get("KATAKANA"):
        return "HIRAGANA"
    return scripts.most_common(1)[0][0]


def item_language(item: Item) -> str | None:
    """The answer's language (the question's if the answer is too short to tell)."""
    return detect_language(item.answer) or detect_language(item.question)


def with_language(item: Item) -> Item:
    """The item with `extra["language"]` set (kept if the input already had one).

    Not needed any more: every Judgment has `language`; the adapters no longer add this field
    (it reached output rows a second time, as `input_language`)."""
    if "language" in item.extra:
        return item
    lang = item_language(item)
    return item if lang is None else item.model_copy(update={"extra": {**item.extra, "language": lang}})


def language_of(judgment: Judgment) -> str | None:
    """A result's language: its `language`, else `extra["language"]`, else guessed from its claims."""
    lang = judgment.language or judgment.extra.get("language")
    if isinstance(lang, str) and lang:
        return lang
    return detect_language(" ".join(c.text for c in judgment.claims))


def by_language(judgments: Iterable[Judgment]) -> dict[str, dict[str, Any]]:
    """Per language: counts of items, label 1, label 0, unscored, and agreement with human labels.

    Returns:
        {"ru": {"items": 3, "label_1": 1, "label_0": 2, "unscored": 0, "labelled": 3,
                "agree": 3}, ...}; "?" collects results whose language is unknown.
    """
    out: dict[str, dict[str, Any]] = {}
    for j in judgments:
        row = out.setdefault(language_of(j) or "?", {"items": 0, "label_1": 0, "label_0": 0,
                                                     "unscored": 0, "labelled": 0, "agree": 0})
        row["items"] += 1
        if j.label is None:
            row["unscored"] += 1
        else:
            row[f"label_{j.label}"] += 1
        if j.human_label is not None and j.label is not None:
            row["labelled"] += 1
            row["agree"] += int(j.label == j.human_label)
    return dict(sorted(out.items()))
