"""Commit-first knowledge checks and the decided-by account (#52).

A claim the reference does not settle is, today, checked against the judge's own knowledge in the
same call that shows it the claim: a judge shown a plausible value tends to accept it. With
`knowledge = "commit-first"` the judge is first asked, in one short call per item, to fill the
claim's slots (its dates, numbers, names, places) with the claim's own values masked; code then
compares that commitment with the claim's values. A verdict from knowledge stands only where both
reads agree (the check said the claim is correct and the commitment matches, or the check said it
is false and the commitment differs); disagreement, no commitment, or no concrete value to commit
to -> the criterion's `unverifiable` verdict, with basis `none` and the reason saying why.

Everything here is plain code: slot finding (`slots`), masking (`mask`), comparison
(`compare`), the rule (`settle`) and the account of what decided each claim (`decided_by`).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from .quotes import CITATION, QUOTES, quote_in
from .schemas import ClaimCheck
from .text import STOP

Strategy = Literal["default", "commit-first"]
STRATEGIES: tuple[Strategy, ...] = ("default", "commit-first")
#: what settled a claim, in the order they are reported
DECIDERS = ("reference", "knowledge", "evidence", "unverifiable")
#: bases that mean the item's own evidence settled the claim
OWN_EVIDENCE = ("reference", "source", "spec")
#: the most slots masked in one claim (a claim listing twenty numbers is not one slot)
MAX_SLOTS = 6
BLANK = "[blank {n}]"

_MONTH = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
          r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?")
_DATE = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+\d{{3,4}}\b"  # 31 March 1889
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{3,4}}\b"          # March 31, 1889
    rf"|\b{_MONTH}\s+\d{{3,4}}\b"                                         # March 1889
)
_NUMBER = re.compile(r"(?<![\w.])\d[\d,\u00a0]*(?:\.\d+)?(?:s\b|%)?")
#: capitalised words in a row, with the small words names carry inside ("Gulf of Mexico")
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:(?:of|de|da|del|di|von|van|der|la|le|the|and)\s+)?[A-Z][\w'’-]*)*")
_NO_ANSWER = re.compile(r"^\W*(?:unknown|not sure|i don'?t know|n/?a|none|unsure|\?+)\W*$", re.I)


@dataclass(frozen=True)
class Slot:
    """A claim with its concrete values masked: what the judge is asked to fill."""

    claim_id: str
    masked: str
    values: tuple[str, ...]


def _spans(text: str) -> list[tuple[int, int]]:
    """Where the claim's dates, numbers and names are (dates first: their numbers are part of them)."""
    found: list[tuple[int, int]] = []

    def add(a: int, b: int) -> None:
        if not any(a < y and x < b for x, y in found):
            found.append((a, b))

    for m in _DATE.finditer(text):
        add(m.start(), m.end())
    for m in _NUMBER.finditer(text):
        add(m.start(), m.end())
    start = len(text) - len(text.lstrip(" \t\"'«“("))
    first = None
    for m in _NAME.finditer(text):
        value = m.group(0).rstrip(".")
        if m.start() == start:  # the sentence's subject ("The Eiffel Tower is ..."): masked only if alone
            first = None if value.casefold() in STOP else (m.start(), m.start() + len(value))
        else:
            add(m.start(), m.start() + len(value))
    if first is not None and not found:
        found.append(first)
    return sorted(found)


def _key(text: str) -> str:
    """A value folded for comparison: accents, case, punctuation, thousands separators and "the"."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = re.sub(r"(?<=\d)[,\u00a0](?=\d{3}\b)", "", text)
    words = [w for w in re.findall(r"[^\W_]+", text) if w not in ("the", "a", "an")]
    return " ".join(words)


def mask(claim_id: str, text: str, question: str | None = None) -> Slot | None:
    """The claim with its values masked, or None when it states no concrete value to commit to.

    Values the question itself names (its subject: "Australia" in "What is the capital of
    Australia?") stay, so the judge knows what is asked; if every value is in the question, the
    last one is masked."""
    spans = _spans(text)
    if not spans:
        return None
    asked = _key(question or "")
    chosen = [s for s in spans if _key(text[s[0]:s[1]]) not in asked or not asked]
    chosen = (chosen or spans[-1:])[:MAX_SLOTS]
    out, values, last = [], [], 0
    for n, (a, b) in enumerate(chosen, 1):
        out.append(text[last:a] + BLANK.format(n=n))
        values.append(text[a:b])
        last = b
    out.append(text[last:])
    return Slot(claim_id, "".join(out), tuple(values))


Match = Literal["agree", "differ", "none"]


def compare(slot: Slot, commitment: str) -> tuple[Match, list[str]]:
    """Whether the judge's commitment names the claim's values: ("agree" | "differ" | "none", the
    values it does not name). Values are compared folded (`_key`), word by word (`_named`): a
    commitment "1147 AD" names "1147", "March 31, 1889" names "31 March 1889"."""
    c = (commitment or "").strip()
    if not c or _NO_ANSWER.match(c):
        return "none", list(slot.values)
    got = _key(c).split()
    missing = [v for v in slot.values if not _named(_key(v).split(), got)]
    return ("agree" if not missing else "differ"), missing


def _named(value: list[str], commitment: list[str]) -> bool:
    """Every word of the value is in the commitment: numbers exactly, longer words up to a spelling
    variant (a transliteration: "Yury Dolgoruky" names "Yuri Dolgorukiy")."""
    def near(w: str) -> bool:
        if w in commitment:
            return True
        return len(w) >= 4 and w.isalpha() and any(
            len(c) >= 4 and c.isalpha() and SequenceMatcher(None, w, c).ratio() >= 0.75 for c in commitment)

    return bool(value) and all(near(w) for w in value)


def settle(check: ClaimCheck, slot: Slot | None, commitment: str | None, *, errors: Sequence[str],
           unsettled: str) -> ClaimCheck:
    """A knowledge-based check after commit-first: kept where both reads agree, else `unsettled`."""
    def unsure(why: str) -> ClaimCheck:
        return check.model_copy(update={"verdict": unsettled, "basis": "none", "evidence": "",
                                        "reason": f"commit-first: {why} (the check said {check.verdict})"})

    if slot is None:
        return unsure("no concrete value (date, number, name, place) to commit to")
    match, missing = compare(slot, commitment or "")
    if match == "none":
        return unsure(f"the judge committed to no value for {', '.join(slot.values)}")
    said = f"committed first to {commitment!r}"
    if check.verdict == unsettled:
        return check.model_copy(update={"basis": "none", "reason": f"{check.reason} (commit-first: {said})".strip()})
    wrong = check.verdict in errors
    if (match == "agree") != wrong:  # both reads agree: correct and named, or false and not named
        return check.model_copy(update={"reason": f"{check.reason} (commit-first: {said})".strip()})
    if wrong:
        return unsure(f"the judge {said}, which names the claim's own {', '.join(slot.values)}")
    return unsure(f"the judge {said}, not the claim's {', '.join(missing)}")


def candidates(checks: Iterable[ClaimCheck], texts: dict[str, str | None] | None = None) -> list[ClaimCheck]:
    """The checks the item's own evidence did not settle: basis knowledge or none, and (given the
    item's `texts` by basis) a basis reference/source/spec whose quote that text does not contain:
    a quote the reference lacks cannot have settled the claim (an empty quote is taken at its word)."""
    def unquoted(c: ClaimCheck) -> bool:
        text = (texts or {}).get(c.basis)
        quote = CITATION.sub("", c.evidence or "").strip().strip(QUOTES).strip()
        return bool(text and quote) and not quote_in(quote, text or "")

    return [c for c in checks if (c.basis not in OWN_EVIDENCE and c.basis != "evidence") or unquoted(c)]


def decided(basis: str | None, verdict: str | None) -> str:
    """What settled one claim: reference (the item's reference, source or spec), knowledge, evidence
    (given documents) or unverifiable (nothing did: basis none, verdict unverifiable, or no verdict)."""
    if verdict is None or basis in (None, "none") or verdict == "unverifiable":
        return "unverifiable"
    if basis in OWN_EVIDENCE:
        return "reference"
    return basis if basis in DECIDERS else "unverifiable"


def decided_by(claims: Iterable[Any]) -> Counter[str]:
    """Claims per decider (`decided`) for claim results (anything with `basis` and `verdict`)."""
    return Counter(decided(c.basis, c.verdict) for c in claims)


def item_decided(claims: Sequence[Any], label: int | None) -> str:
    """What decided one item (`calibrate --by decided_by`): a 1, the decider of its first error
    claim; otherwise the least settled of its claims (unverifiable, then knowledge, evidence,
    reference); "(none)" without claims."""
    if not claims:
        return "(none)"
    if label == 1:
        first = next((c for c in claims if c.error), None)
        if first is not None:
            return decided(first.basis, first.verdict)
    present = {decided(c.basis, c.verdict) for c in claims}
    return next(k for k in ("unverifiable", "knowledge", "evidence", "reference") if k in present)


def shares(counts: Counter[str]) -> dict[str, float]:
    """Each decider's share of the claims (all four keys; 0.0 each when there are no claims)."""
    total = sum(counts[k] for k in DECIDERS)
    return {k: round(counts[k] / total, 4) if total else 0.0 for k in DECIDERS}


def shares_line(counts: Counter[str]) -> str:
    """"claims decided by: reference 60%, knowledge 10%, evidence 0%, unverifiable 30% (of 10 claims)"."""
    total = sum(counts[k] for k in DECIDERS)
    parts = ", ".join(f"{k} {counts[k] / total:.0%}" for k in DECIDERS) if total else "no claims"
    return f"claims decided by: {parts} (of {total} claims)"
