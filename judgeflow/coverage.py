"""Requirement coverage: which of a spec's requirements an output meets (the graph's `cover` step).

The spec is split into requirements (r1, r2, ...; once per distinct spec and judge) and each is
marked `met`, `not_met` or `not_applicable` against the output. The prompts live in the spec
criterion's TOML (`[coverage]`); the label rule is `aggregate.cover_label`. An LLM backend brings
its own checker (`backend.coverage`); any other backend gets the offline one here: requirements are
the spec's lines, bullets and sentences, matched by content words and numbers (a floor).
"""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from .errors import LLMError
from .items import Item
from .prompts import listed, register_tags
from .results import RequirementResult, TraceEntry, Usage
from .schemas import PLAIN_ID
from .text import SENTENCE as _SENT
from .text import content_words as _content
from .text import numbers as _numbers
from .validation import exactly_once, repeated, validation_context

if TYPE_CHECKING:
    from .criteria import Criterion

RequirementStatus = Literal["met", "not_met", "not_applicable"]
STATUSES = ("met", "not_met", "not_applicable")


class Requirement(BaseModel):
    """One atomic requirement taken from the spec."""

    id: str = Field(description="Requirement id: r1, r2, ...")
    text: str = Field(description="The requirement, in the spec's own language and wording.")

    @field_validator("id")
    @classmethod
    def _plain_id(cls, v: str) -> str:
        # ids go back into the coverage prompt as `r1: text` lines: keep them plain tokens
        if not PLAIN_ID.fullmatch(v.strip()):
            raise ValueError(f"requirement id {v[:40]!r} must be a short plain token like r1, r2, ...")
        return v.strip()

    @field_validator("text")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("requirement text must not be empty")
        return v.strip()


class Requirements(BaseModel):
    """The spec split into requirements. Empty if the spec asks for nothing."""

    requirements: list[Requirement] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_ids(self) -> Requirements:
        ids = [r.id for r in self.requirements]
        dupes = repeated(ids)
        if dupes:
            raise ValueError(f"requirement ids must be unique; repeated: {dupes}")
        return self


class RequirementCheck(BaseModel):
    """Whether the output meets one requirement."""

    requirement_id: str = Field(description="The id of the requirement being checked.")
    status: RequirementStatus = Field(description="met, not_met, or not_applicable.")
    evidence: str = Field(default="", description="A short verbatim quote from the output, or empty.")
    reason: str = Field(default="", description="One sentence explaining the status.")


class RequirementChecks(BaseModel):
    """A status for every requirement: each requirement id exactly once."""

    checks: list[RequirementCheck]

    @model_validator(mode="after")
    def _complete(self, info: ValidationInfo) -> RequirementChecks:
        expected = validation_context(info).get("requirement_ids")
        if expected is None:
            return self
        problems = exactly_once(expected, [c.requirement_id for c in self.checks], "requirement", "status")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def requirements_block(reqs: list[Requirement]) -> str:
    """The requirements for the coverage prompt: one `r1: text` line each (see `prompts.listed`)."""
    return listed("requirements", ((r.id, r.text) for r in reqs))


register_tags(["<requirements>", '<requirement id="r1">'])  # so untrusted text cannot fake them
_requirements_block = requirements_block  # the old private name


class RequirementChecker(Protocol):
    """Splits specs into requirements and checks an output against them (prompts from `criterion`)."""

    @property
    def fingerprint(self) -> str: ...

    async def decompose(self, spec: str, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Requirement]: ...

    async def check(
        self, item: Item, criterion: Criterion, requirements: list[Requirement], usage: Usage, trace: list[TraceEntry]
    ) -> list[RequirementCheck]: ...


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|[a-z][.)])\s+", re.IGNORECASE)
_CONDITION = re.compile(r"^\s*(if|when|whenever|unless|for|если|когда|wenn|falls|si|cuando|quand)\b[^,:]*[,:]",
                        re.IGNORECASE)
#: words of requirement-speak that say nothing about the content asked for
_SPEC_WORDS = _content("""must should shall need needs required require requires include includes
    including contain contains containing output response reply answer agent provide provides state
    states mention mentions give gives list lists use uses always never exactly least most name names
    say says show shows return returns report reports""")


class LexicalRequirementChecker:
    """Offline coverage: the spec's lines/sentences are requirements, met by content-word overlap."""

    def __init__(self, *, threshold: float = 0.5) -> None:
        self.threshold = threshold

    @property
    def fingerprint(self) -> str:
        return f"lexical-coverage|v1|t={self.threshold}"

    async def decompose(self, spec: str, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Requirement]:
        return split_requirements(spec)

    async def check(
        self, item: Item, criterion: Criterion, requirements: list[Requirement], usage: Usage, trace: list[TraceEntry]
    ) -> list[RequirementCheck]:
        out_words = _content(item.answer)
        out_numbers = _numbers(item.answer)
        sentences = [s.strip() for s in _SENT.split(item.answer) if s.strip()]
        checks = []
        for r in requirements:
            condition = _CONDITION.match(r.text)
            body = r.text[condition.end():] if condition else r.text
            if condition:
                cond_words = _content(condition.group(0)) - _SPEC_WORDS
                if cond_words and not cond_words <= out_words:  # every word of the condition must occur
                    checks.append(RequirementCheck(requirement_id=r.id, status="not_applicable",
                                                   reason=f"its condition ({condition.group(0).strip(' ,:')}) "
                                                          "does not arise in the output"))
                    continue
            words = _content(body) - _SPEC_WORDS
            numbers = _numbers(body)
            overlap = len(words & out_words) / len(words) if words else 1.0
            missing_numbers = sorted(numbers - out_numbers)
            best = max(sentences, key=lambda s: len(words & _content(s)), default="")
            if overlap >= self.threshold and not missing_numbers:
                checks.append(RequirementCheck(requirement_id=r.id, status="met", evidence=best[:300],
                                               reason=f"{overlap:.0%} of its content words appear in the output"))
            else:
                what = f"values {missing_numbers} are missing" if missing_numbers else \
                    f"only {overlap:.0%} of its content words appear in the output"
                checks.append(RequirementCheck(requirement_id=r.id, status="not_met", reason=what))
        return checks


def split_requirements(spec: str) -> list[Requirement]:
    """The spec's bullet points, lines and sentences that ask for something, as r1, r2, ..."""
    parts: list[str] = []
    for line in spec.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line or line.endswith(":") and len(line) < 60:  # headings ("Requirements:")
            continue
        parts.extend(s.strip() for s in _SENT.split(line) if s.strip())
    reqs = [p for p in parts if (_content(p) - _SPEC_WORDS) or _numbers(p)]
    return [Requirement(id=f"r{n}", text=t) for n, t in enumerate(reqs, 1)]


def requirement_checker(backend: Any) -> RequirementChecker:
    """The coverage checker that matches a judge backend: its own (an LLM's), else the offline one."""
    checker: RequirementChecker | None = backend.coverage
    return checker if checker is not None else LexicalRequirementChecker()


class Coverage:
    """One judge's requirement coverage: its checker, and each spec's requirements split once.

    Concurrent items with the same spec wait for one split call; its usage and trace go to the
    first item that needed it.
    """

    def __init__(self, checker: RequirementChecker) -> None:
        self.checker = checker
        self._specs: dict[tuple[str, str], list[Requirement]] = {}
        self._pending: dict[tuple[str, str], asyncio.Task[list[Requirement]]] = {}

    @property
    def fingerprint(self) -> str:
        return self.checker.fingerprint

    async def requirements(self, spec: str, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Requirement]:
        """The spec's requirements, split once per (criterion, spec)."""
        key = (criterion.coverage_fingerprint, spec)
        if key in self._specs:
            return self._specs[key]
        loop = asyncio.get_running_loop()
        task = self._pending.get(key)
        if task is None or task.get_loop() is not loop:
            task = loop.create_task(self.checker.decompose(spec, criterion, usage, trace))
            self._pending[key] = task
        try:
            reqs = await task
        except LLMError:
            self._pending.pop(key, None)
            raise
        self._specs[key] = reqs
        self._pending.pop(key, None)
        return reqs

    async def cover(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[RequirementResult]:
        """Each requirement of the item's spec with its status. Raises LLMError."""
        assert item.spec is not None
        reqs = await self.requirements(item.spec, criterion, usage, trace)
        checks = await self.checker.check(item, criterion, reqs, usage, trace) if reqs else []
        by_id = {c.requirement_id: c for c in checks}
        return [RequirementResult(id=r.id, text=r.text, status=by_id[r.id].status,
                                  evidence=by_id[r.id].evidence, reason=by_id[r.id].reason)
                for r in reqs if r.id in by_id]
