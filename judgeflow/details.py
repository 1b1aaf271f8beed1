"""What an answer states that can be checked, found in code: its numbers, dates and names, and
whether it makes any statement at all (a refusal, a hedge or a question makes none).

Two honesty checks on a decomposition use it: an empty claim list for an answer that states
something is not a pass (the row is unscored, never a silent 0), and a number, date or name of the
answer that no claim carries is checked too (graph strategy: added as a claim; single strategy:
named in the row as not checked).
"""

from __future__ import annotations

import re
import unicodedata

from .citations import without_markers
from .schemas import Claim
from .text import STOP, WORD, sentences, stem

_REFUSAL = re.compile(
    r"^\W*(i have no comment|no comment|i don'?t know|i do not know|unknown|i'?m not sure|i am not sure|"
    r"i cannot|i can'?t|i'?m unable|i am unable|i'?m sorry|i am sorry|sorry|as an ai|i have no (information|idea)|"
    r"no idea|not sure|не знаю|без комментариев|я не знаю)\b",
    re.IGNORECASE,
)
#: a number standing alone (not the digits of an id like "r1" or "gpt4")
NUMBER = re.compile(r"(?<![^\W\d_])\d+(?:[.,]\d+)?(?![^\W\d_])")
_MONTH = re.compile(r"\b(january|february|march|april|may|june|july|august|september|october|november|"
                    r"december)\b(?:\s+\d{1,2})?", re.IGNORECASE)
#: a capitalised word (or a run of them) right after a small word ("by Yuri Dolgorukiy", "in New
#: Zealand", "the Seine"): a rough proper name; an imperative after other text ("system Ignore") is not
_NAME_RUN = re.compile(r"\b([A-ZА-ЯЁ][a-zа-яё][^\W\d_]*(?:[\s-][A-ZА-ЯЁ][a-zа-яё][^\W\d_]*)*)")
_BEFORE = re.compile(r"([^\W\d_]+|,)\s+$")


def _normal(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def _states_nothing(sentence: str) -> bool:
    """A refusal or hedge with no number in it, a question, or a sentence with no content word."""
    if sentence.rstrip().endswith("?"):
        return True
    words = [w for w in WORD.findall(sentence) if w.lower() not in STOP]
    if not words:
        return True
    return bool(_REFUSAL.match(sentence)) and not NUMBER.search(sentence)


def details(answer: str) -> list[str]:
    """The answer's numbers, dates and names, in order of appearance, each once ("1147", "Yuri Dolgorukiy")."""
    out: list[str] = []
    for sent in sentences(_normal(without_markers(answer))):
        if _states_nothing(sent):
            continue
        found = [(m.start(), m.group()) for m in NUMBER.finditer(sent)]
        found += [(m.start(), m.group()) for m in _MONTH.finditer(sent)]
        for m in _NAME_RUN.finditer(sent):
            before = _BEFORE.search(sent[: m.start()])
            if before and (before.group(1) == "," or before.group(1).lower() in STOP) and m.group().lower() not in STOP:
                found.append((m.start(), m.group()))
        for _, d in sorted(found):
            if d not in out and not any(d in o for o in out if not d.isdigit()):
                out.append(d)
    return out


def checkable(answer: str) -> bool:
    """True if the answer states something a judge could check (a number, a date, a name, any
    declarative sentence); False for a refusal, a hedge, a question or an empty answer."""
    return any(not _states_nothing(s) for s in sentences(_normal(answer)))


def _carried(detail: str, claims: list[Claim], stems: list[set[str]]) -> bool:
    if NUMBER.fullmatch(detail):
        pattern = re.compile(rf"(?<![\d.,]){re.escape(detail)}(?![\d]|[.,]\d)")
        return any(pattern.search(c.text) for c in claims)
    want = {stem(w) for w in WORD.findall(detail)}
    return any(want <= have for have in stems)


def uncarried(answer: str, claims: list[Claim]) -> list[str]:
    """The answer's numbers, dates and names that no claim's text carries."""
    found = details(answer)
    if not found:
        return []
    stems = [{stem(w) for w in WORD.findall(c.text)} for c in claims]  # once, not once per detail
    return [d for d in found if not _carried(d, claims, stems)]


def _kind(detail: str) -> str:
    return "date" if _MONTH.search(detail) or re.fullmatch(r"1\d{3}|20\d{2}", detail) else \
        "number" if NUMBER.fullmatch(detail) else "name"


def short_claim(answer: str, words: int, kinds: list[str]) -> Claim | None:
    """An answer of one line, one sentence and at most `words` words as its one claim, with no
    decompose call: text = the answer (whitespace folded), quote = the answer as written, kind found
    in code (date, number or name from its first detail, else other; "other" where the criterion
    lacks that kind). None (the model decomposes) for `words` 0, a longer answer, a refusal, hedge
    or question (nothing checkable), or an answer carrying a citation marker."""
    quote = answer.strip()
    if words <= 0 or not quote or "\n" in quote or len(quote.split()) > words:
        return None
    if len(sentences(_normal(quote))) != 1 or not checkable(quote):
        return None
    if without_markers(quote) != quote:  # a citation: the decompose step keeps the marker's claim
        return None
    return Claim(id="c1", text=" ".join(quote.split()), kind=code_kind(quote, kinds), quote=quote)


def code_kind(text: str, kinds: list[str]) -> str:
    """A claim's kind found in code: date, number or name from its first detail, else other;
    "other" (or the last kind listed) where the criterion does not list that kind."""
    found = details(text)
    kind = _kind(found[0]) if found else "other"
    if kind in kinds or not kinds:
        return kind
    return "other" if "other" in kinds else kinds[-1]


def with_dropped(answer: str, claims: list[Claim]) -> tuple[list[Claim], list[str]]:
    """The claims plus, for each detail no claim carries, the answer's sentence stating it as one
    more claim (ids continue c<n+1>...); and the details so added. A correct core does not excuse a
    wrong detail elsewhere: the check step judges these too."""
    dropped = uncarried(answer, claims)
    if not dropped:
        return claims, []
    out = list(claims)
    added: set[str] = set()
    sents = sentences(_normal(answer))  # once, not once per detail
    for d in dropped:
        sent = next((s for s in sents if d in s), d)
        if sent in added:
            continue
        added.add(sent)
        out.append(Claim(id=f"c{len(out) + 1}", text=sent, kind=_kind(d)))
    return out, dropped


def empty_reason(answer: str) -> str | None:
    """Why an empty claim list cannot be a 0 for this answer, or None when it states nothing checkable."""
    if not checkable(answer):
        return None
    found = details(answer)
    what = f"states {', '.join(found[:5])}" if found else "makes a statement"
    return (f"the decomposition returned no claims (re-asked once) for an answer that {what}: "
            "not a pass; re-run it or use a stronger judge model")
