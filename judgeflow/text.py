"""The offline tokeniser: sentences, content words (stemmed, stop words removed), numbers,
capitalised names and negation, for English and Russian. Shared by the offline judges
(backends/lexical, backends/passages) and the offline requirement checker."""

from __future__ import annotations

import re
from functools import lru_cache

STOP = set(
    """a an the and or but if then than so of to in on at by for with from as into onto over under
    is are was were be been being am do does did done have has had having it its it's this that these
    those there here their they them he she his her him we us our you your i me my mine who whom whose
    which what when where why how not no nor yes can could would should will shall may might must
    also just very more most much many some any all each every both either neither such only own same
    too s t about after before because while during between through up down out off again further once
    one ones something someone anything nothing
    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне
    было вот от меня еще нет о из ему теперь когда даже ну ли если уже или ни быть был него до вас
    нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их
    чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот того потому этого какой
    совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда зачем всех никогда можно при
    наконец два об другой хоть после над больше тот через эти нас про всего них какая много разве три
    эту моя впрочем хорошо свою этой перед иногда лучше чуть том нельзя такой им более всегда конечно
    всю между это""".split()
)
NEGATIONS = {"not", "no", "never", "none", "nobody", "nothing", "cannot", "can't", "isn't", "don't", "doesn't",
        "didn't", "won't", "wasn't", "aren't", "weren't", "не", "нет", "никогда", "ни"}
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
SENTENCE = re.compile(r"(?:(?<=[.!?;])|(?<=[.!?][\"'»”)]))\s+(?=[\"'«“(]?[A-ZА-ЯЁ0-9])|\n+")
#: a piece ending so is not a sentence end: a title or unit abbreviation, or an initial ("J. K. Rowling")
ABBREVIATION = re.compile(r"(?:\b(?:Dr|Mr|Mrs|Ms|Mt|St|Prof|Jr|Sr|Vol|vs|Inc|Co|Mio|Mrd|Nr|Fig|approx|ca|e\.g|i\.e|"
                          r"a\.m|p\.m|U\.S|U\.K)|(?:^|\s)[A-ZА-ЯЁ])\.$")
#: "No." before a number is the abbreviation of "number" ("No. 1"); before a word it is an answer ("No. It ...")
NUMBER_SIGN = re.compile(r"\b(?:No|Nos|no|Nr|Vol|Art|p|pp)\.$")
YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
MONTHS = re.compile(
    r"\b(january|february|march|april|may|june|july|august|september|october|november|december)\b", re.I
)


@lru_cache(maxsize=1 << 16)
def stem(w: str) -> str:
    w = w.lower().replace("’", "'")
    for suf in ("'s", "ing", "edly", "ed", "es", "ly", "s",
                "ая", "ое", "ые", "ий", "ый", "ой", "ом", "ах", "ов", "ей", "а", "у", "е", "и", "ы", "ь"):
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            return w[: -len(suf)]
    return w[:8]


def content_words(text: str) -> set[str]:
    return {stem(w) for w in WORD.findall(text) if w.lower() not in STOP and not w.isdigit()}


_THOUSANDS = re.compile(r"\b\d{1,3}(?:[,\u00a0\u202f]\d{3})+\b")


_ZERO_FRACTION = re.compile(r"\.0+$")


def numbers(text: str) -> set[str]:
    """Numbers in `text`, normalised: "1,000" = "1000" (a thousands separator), "2,5" = "2.5",
    "5.0" = "5". Other trailing zeros are kept: "3.10" (Python 3.10) is not "3.1"."""
    text = _THOUSANDS.sub(lambda m: re.sub(r"\D", "", m.group()), text)
    return {_ZERO_FRACTION.sub("", n.replace(",", ".")) for n in NUMBER.findall(text)}


def names(text: str) -> set[str]:
    """Capitalised words not at a sentence start (a rough proper-noun detector)."""
    out = set()
    for sent in SENTENCE.split(text):
        words = WORD.findall(sent)
        for w in words[1:]:
            if w[:1].isupper() and w.lower() not in STOP:
                out.add(stem(w))
    return out


def negated(text: str) -> bool:
    words = {w.lower() for w in WORD.findall(text)}
    return bool(words & NEGATIONS) or "n't" in text.lower()


def sentences(text: str) -> list[str]:
    """The non-empty sentences (and ;-clauses) of `text`, stripped; a cut after an abbreviation ("Dr.",
    "Mio.", an initial) or a number sign before its number ("No. 1") is joined back
    (`python benchmarks/handwritten.py` measures this against pysbd and NLTK's Punkt)."""
    out: list[str] = []
    for piece in (s.strip() for s in SENTENCE.split(text)):
        if not piece:
            continue
        if out and (ABBREVIATION.search(out[-1]) or (NUMBER_SIGN.search(out[-1]) and piece[:1].isdigit())):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out
