"""Known positives without labels: hallucinations injected by rules into answers known to be correct.

    rows, summary = inject_rows(records, seed=0)     # each correct answer: one row per error type that applies
    inject_file("items.jsonl", "injected.jsonl")

Each rule changes the answer's own words (a date, a number, a person's name, another named entity,
a negation) or adds an invented detail, and records where: `injected: [{type, start, end}]`,
[start, end) character offsets of the changed text in the new `answer`. Each answer also gives an
untouched control (`injected: []`), whose 1s are the judge's false alarms. Rows are marked
(`inject_marks.py`: the `injected` field and an id ending `#inj-TYPE`) so they never mix with real
results, and carry `label` (1 injected, 0 control) and `injected_from` (the source id).

Correct answers are the rows labelled 0; a file without labels is taken as correct answers (the
summary says so). The rules are plain regular expressions over English text: an answer with no
year, number or capitalised name gets only the types that apply (negation, invented detail). With
a model (`inject_file(..., client=make_client(...))`, `judgeflow inject --model`) the model writes
each edit and code places it (`inject_model.py`).
"""

from __future__ import annotations

import asyncio
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..errors import InvalidItemError
from ..io.jsonl import write_results
from ..items import Item, read_records
from .inject_marks import FIELD, ID_MARK, Injection

TYPES = ("date", "number", "name", "entity", "negation", "invented_detail")
#: the longest answer a rule reads (untrusted text: bounded)
MAX_ANSWER_CHARS = 20_000

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
FIRST_NAMES = ("James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "William",
               "Elizabeth", "David", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah",
               "Charles", "Karen", "Peter", "Anna", "George", "Helen", "Paul", "Laura", "Mark", "Emma")
SURNAMES = ("Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson", "Anderson", "Taylor",
            "Moore", "Martin", "Thompson", "White", "Harris", "Clark", "Lewis", "Walker", "Hall", "Young")
PLACES = ("France", "Brazil", "Canada", "Japan", "Egypt", "Norway", "Chicago", "Madrid", "Toronto", "Melbourne",
          "Oxford University", "the Red Cross", "NASA", "the United Nations", "Vienna", "Peru")
#: capitalised words that start a sentence or a phrase, never a first name
NOT_NAMES = frozenset(("The", "A", "An", "In", "On", "At", "No", "Yes", "It", "This", "That", "There", "They", "He",
                       "She", "We", "You", "If", "But", "And", "Of", "For", "From", "By", "As", "After", "Before"))
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
DETAILS = ("It was later awarded the {prize} in {year}.", "This was first reported by {person} in {year}.",
           "The work was funded by {place} until {year}.", "A second edition followed in {year}, led by {person}.")
PRIZES = ("Pulitzer Prize", "Turing Award", "Lasker Award", "Wolf Prize", "Kyoto Prize", "Order of Merit")

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_MONTH = re.compile(r"\b(" + "|".join(MONTHS) + r")\b")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w.]\d)")
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)
_CAP = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
_PERSON = re.compile(rf"\b({'|'.join(FIRST_NAMES)}|{_CAP})\s+({_CAP})\b")
_ENTITY = re.compile(rf"(?<=[a-z,;] )({_CAP}(?:\s+{_CAP})*)\b")
_AUX = re.compile(r"\b(is|was|are|were|has|have|had|can|could|will|would|does|did|should|must)\b"
                  r"(?!\s+(?:not|no|never|none|nothing)\b)")
_ARTICLE = re.compile(r"\b(?:the|a|an|of|The|A|An)\s+$")
_NOT = re.compile(r"\b(is|was|are|were|has|have|had|can|could|will|would|does|did|should|must)\s+not\b")


class InjectSummary(BaseModel):
    """What `inject_file` wrote."""

    output: str = ""
    read: int = 0
    correct: int = 0
    """Rows taken as correct answers (labelled 0, or every row of a file without labels)."""
    assumed_correct: bool = False
    """The file had no labels: every answer was taken as correct."""
    skipped: int = 0
    """Rows labelled 1 or without an answer: nothing to inject into."""
    by: str = "rules"
    """"rules", or the model that wrote the edits (`inject_model.py`)."""
    not_placed: int = 0
    """Model edits dropped: their words are not in the answer, they change nothing, or the call failed."""
    controls: int = 0
    injected: dict[str, int] = Field(default_factory=dict)
    """Error type -> injected rows."""
    seed: int = 0


Rule = Callable[[str, random.Random, list[str]], tuple[str, Injection] | None]


def _replace(answer: str, m: re.Match[str], new: str, kind: str, group: int = 1) -> tuple[str, Injection]:
    start, end = m.span(group)
    out = answer[:start] + new + answer[end:]
    return out, Injection(type=kind, start=start, end=start + len(new), original=m.group(group))


def _pick(rng: random.Random, matches: list[re.Match[str]]) -> re.Match[str] | None:
    return rng.choice(matches) if matches else None


def date_rule(answer: str, rng: random.Random, _pool: list[str]) -> tuple[str, Injection] | None:
    m = _pick(rng, list(_YEAR.finditer(answer)))
    if m is not None:
        year = int(m.group(1)) + rng.choice((-1, 1)) * rng.randint(2, 15)
        return _replace(answer, m, str(year), "date")
    m = _pick(rng, list(_MONTH.finditer(answer)))
    if m is not None:
        return _replace(answer, m, rng.choice([x for x in MONTHS if x != m.group(1)]), "date")
    return None


def _other_number(text: str, rng: random.Random) -> str:
    digits = text.replace(",", "")
    if "." in digits:
        return f"{float(digits) * rng.choice((1.5, 0.6, 2.0)):.{len(digits.split('.')[1])}f}"
    n = int(digits)
    new = n + max(1, round(n * rng.uniform(0.2, 0.6))) * rng.choice((-1, 1)) if n > 3 else n + rng.randint(2, 6)
    return f"{abs(new) if abs(new) != n else n + 1:,}" if "," in text else str(abs(new) if abs(new) != n else n + 1)


def number_rule(answer: str, rng: random.Random, _pool: list[str]) -> tuple[str, Injection] | None:
    years = {m.span(1) for m in _YEAR.finditer(answer)}
    m = _pick(rng, [x for x in _NUMBER.finditer(answer) if x.span(1) not in years])
    if m is not None:
        return _replace(answer, m, _other_number(m.group(1), rng), "number")
    m = _pick(rng, list(_NUMBER_WORD.finditer(answer)))
    if m is not None:
        word = rng.choice([w for w in NUMBER_WORDS if w != m.group(1).lower()])
        return _replace(answer, m, word.capitalize() if m.group(1)[0].isupper() else word, "number")
    return None


def name_rule(answer: str, rng: random.Random, _pool: list[str]) -> tuple[str, Injection] | None:
    people = [m for m in _PERSON.finditer(answer) if m.group(1) not in NOT_NAMES and m.group(2) not in MONTHS
              and m.group(1) in FIRST_NAMES or (m.start() > 0 and not _ARTICLE.search(answer[:m.start()]))]
    m = _pick(rng, people)
    if m is None:
        return None
    if rng.random() < 0.5:
        return _replace(answer, m, rng.choice([x for x in SURNAMES if x != m.group(2)]), "name", 2)
    return _replace(answer, m, rng.choice([x for x in FIRST_NAMES if x != m.group(1)]), "name", 1)


def entity_rule(answer: str, rng: random.Random, pool: list[str]) -> tuple[str, Injection] | None:
    m = _pick(rng, [x for x in _ENTITY.finditer(answer) if x.group(1) not in MONTHS])
    if m is None:
        return None
    others = [e for e in pool if e != m.group(1) and e not in answer] or [p for p in PLACES if p not in answer]
    return _replace(answer, m, rng.choice(others), "entity")


def negation_rule(answer: str, rng: random.Random, _pool: list[str]) -> tuple[str, Injection] | None:
    m = _pick(rng, list(_NOT.finditer(answer)))
    if m is not None:
        return _replace(answer, m, m.group(1), "negation", 0)
    m = _pick(rng, list(_AUX.finditer(answer)))
    if m is not None:
        return _replace(answer, m, m.group(1) + " not", "negation")
    return None


def invented_rule(answer: str, rng: random.Random, pool: list[str]) -> tuple[str, Injection] | None:
    detail = rng.choice(DETAILS).format(prize=rng.choice(PRIZES), year=rng.randint(1890, 2015),
                                        person=f"{rng.choice(FIRST_NAMES)} {rng.choice(SURNAMES)}",
                                        place=rng.choice(pool or list(PLACES)))
    body = answer.rstrip()
    sep = " " if body.endswith((".", "!", "?")) else ". "
    start = len(body) + len(sep)
    return body + sep + detail, Injection(type="invented_detail", start=start, end=start + len(detail))


RULES: dict[str, Rule] = {"date": date_rule, "number": number_rule, "name": name_rule, "entity": entity_rule,
                          "negation": negation_rule, "invented_detail": invented_rule}


def entity_pool(answers: Iterable[str]) -> list[str]:
    """Capitalised names found in the answers: the entities one answer's may be swapped for."""
    found = Counter(m.group(1) for a in answers for m in _ENTITY.finditer(a[:MAX_ANSWER_CHARS]))
    return sorted(e for e in found if e not in MONTHS)[:500]


def _correct(records: list[tuple[int, Mapping[str, Any]]], where: str) -> tuple[list[Mapping[str, Any]], bool]:
    """The rows whose answer is correct (label 0; every row when no row has a label)."""
    items = []
    for line, rec in records:
        item = Item.from_record(rec, path=where, line=line)
        items.append((rec, item))
    labelled = any(i.label is not None for _, i in items)
    return [rec for rec, i in items if i.answer and (i.label == 0 if labelled else True)], not labelled


def inject_rows(records: list[tuple[int, Mapping[str, Any]]], *, seed: int = 0, types: Iterable[str] = TYPES,
                where: str = "items", edits: Mapping[tuple[str, str], tuple[str, Injection] | None] | None = None,
                by: str = "rules") -> tuple[list[dict[str, Any]], InjectSummary]:
    """For each correct answer: its control and one injected row per type that applies (`edits`: a model's,
    keyed by (id, type), instead of the rules)."""
    rows, assumed = _correct(records, where)
    summary = InjectSummary(read=len(records), correct=len(rows), assumed_correct=assumed,
                            skipped=len(records) - len(rows), seed=seed, by=by)
    pool = entity_pool(str(r.get("answer", "")) for r in rows)
    counts: Counter[str] = Counter()
    out: list[dict[str, Any]] = []
    for rec in rows:
        item_id, answer = str(rec.get("id")), str(rec["answer"])[:MAX_ANSWER_CHARS]
        base = {k: v for k, v in rec.items() if k not in ("id", "answer", "label", FIELD)}
        out.append({"id": f"{item_id}{ID_MARK}none", **base, "answer": answer, "label": 0, FIELD: [],
                    "injected_from": item_id})
        for kind in types:
            if edits is not None:
                got = edits.get((item_id, kind))
                summary.not_placed += got is None
            else:
                got = RULES[kind](answer, random.Random(f"{seed}:{item_id}:{kind}"), pool)
            if got is None:
                continue
            new, inj = got
            counts[kind] += 1
            out.append({"id": f"{item_id}{ID_MARK}{kind}", **base, "answer": new, "label": 1,
                        FIELD: [inj.model_dump(exclude={"original"})], "injected_original": inj.original,
                        "injected_from": item_id, "injected_by": by})
    summary.controls = len(rows)
    summary.injected = {k: counts[k] for k in TYPES if counts[k]}
    return out, summary


async def _ask(client: Any, rows: list[Mapping[str, Any]], types: list[str],
               close: bool) -> dict[tuple[str, str], tuple[str, Injection] | None]:
    from .inject_model import (
        amodel_edits,  # the model's edits (inject_model imports Injection from inject_marks)
    )

    try:
        return await amodel_edits(client, [{**r, "answer": str(r["answer"])[:MAX_ANSWER_CHARS]} for r in rows], types)
    finally:
        if close:
            await client.aclose()


def inject_file(path: str | Path, output: str | Path, *, seed: int = 0, types: Iterable[str] = TYPES,
                client: Any = None, close_client: bool = False) -> InjectSummary:
    """Read items, inject (by rules, or by `client`, an LLMClient, through `inject_model.py`; `close_client`:
    close it when done), write the rows (JSONL) to `output`.

    Raises:
        InvalidItemError: an unreadable row, an unknown type, or no correct answer to inject into.
    """
    types = list(types)
    bad = [t for t in types if t not in RULES]
    if bad:
        raise InvalidItemError(f"unknown error type(s) {bad}; choose from {', '.join(TYPES)}", field="type")
    records = []
    for line, rec in read_records(path):
        if isinstance(rec, InvalidItemError):
            raise rec
        records.append((line, rec))
    edits = None
    if client is not None:
        correct, _ = _correct(records, str(path))
        edits = asyncio.run(_ask(client, correct, types, close_client))
    rows, summary = inject_rows(records, seed=seed, types=types, where=str(path), edits=edits,
                                by="rules" if client is None else str(client.model))
    if not summary.correct:
        raise InvalidItemError("no correct answer to inject into: inject needs rows labelled 0 (or a file without "
                               "labels, taken as correct answers)", path=str(path), field="label")
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_results(out, rows)
    summary.output = str(out)
    return summary
