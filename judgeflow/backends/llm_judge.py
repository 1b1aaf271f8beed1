"""The LLM backend: `LLMJudge` renders the criterion's prompts and asks a model through
`llm.LLMClient` (the Instructor seam), one typed call per step, requirement coverage included.

`prompt_fields` delimits an item's texts for the prompts. The offline judges (`lexical`,
`rouge`) take the same steps without a model; `backends.make_backend` picks one by name.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, TypeVar

from ..citations import CITED_SOURCES, claim_notes
from ..config.client import DEFAULT_MAX_CLAIMS_PER_CHECK
from ..coverage import (
    STATUSES,
    Requirement,
    RequirementCheck,
    RequirementChecks,
    Requirements,
    requirements_block,
)
from ..criteria import Criterion
from ..details import checkable, code_kind, details, short_claim
from ..items import Item
from ..knowledge import Slot
from ..prompts import documents, listed, register_tags, tag
from ..results import TraceEntry, Usage
from ..schemas import (
    REPLIES_VERSION,
    Claim,
    ClaimCheck,
    ClaimChecks,
    checks_reply,
    claims_reply,
    commitments_of,
    commitments_reply,
    coverage_reply,
    criterion_vocab,
    requirements_reply,
    single_reply,
)

DEFAULT_MODEL_ENV = "JUDGEFLOW_MODEL"
OFFLINE_MODEL = "baseline/lexical"


def prompt_fields(item: Item, claims: list[Claim] | None = None,
                  notes: dict[str, str] | None = None) -> dict[str, str]:
    """The item's texts, each delimited and neutralised, ready for a criterion prompt (`notes`: the
    claims' citation notes, when already computed: `citation_notes`)."""
    fields = {
        "question": tag("question", item.question),
        "answer": tag("answer", item.answer),
        "reference": tag("reference", item.reference),
        "source": documents(item.source) if item.source else tag("source", None),
        "spec": tag("spec", item.spec),
    }
    if claims is not None:
        notes = citation_notes(item, claims) if notes is None else notes
        fields["claims"] = listed("claims", ((c.id, c.text + notes.get(c.id, "")) for c in claims))
    return fields


def citation_notes(item: Item, claims: list[Claim]) -> dict[str, str]:
    """Claim id -> the note on the citation it carries (" [cites document 2]"); {} if none does."""
    sources = item.extra.get(CITED_SOURCES, item.source)  # numbered as the answer cites them
    return claim_notes(item.answer, sources if item.messages is None else None, claims)


def not_offered(criterion: Criterion, notes: dict[str, str]) -> tuple[str, ...]:
    """The verdicts a check prompt leaves out: the misattributed-citation verdict where no claim of
    the chunk carries a citation (`notes` empty: its meaning cannot apply, its lines would be paid
    for nothing)."""
    verdict = criterion.evidence_roles().get("misattributed")
    return (verdict,) if verdict and not notes else ()


# Output budgets (max_tokens) sized close to what replies use: OpenAI charges max_tokens against the
# tokens-per-minute limit before a reply is written, so a budget far above the need slows a
# rate-limited run (measured replies: decompose ~31 tokens, a check of two claims ~67). A reply cut
# off at its budget is asked again once with twice the budget (LLMClient.ask).
#: output tokens a claim's verdict needs: keys and enums, an evidence quote, a one-sentence reason
TOKENS_PER_VERDICT = 96
#: output tokens a claim needs besides the answer's own words it restates (keys, kind, context)
TOKENS_PER_CLAIM = 24
#: output tokens a spec requirement needs (restated in full, keys)
TOKENS_PER_REQUIREMENT = 60
#: output tokens of a reply's frame (braces, the list key)
TOKENS_BASE = 48
#: output tokens a commit-first entry needs (the id key, a date, number or name or two)
TOKENS_PER_COMMITMENT = 32
register_tags(["<slots>", "<slot>"])


def expected_claims(answer: str, n: int) -> int:
    """About how many claims an answer holds (a claim per sentence or so), at most the schema's `n`."""
    return min(n, len(answer) // 80 + 2)


def claims_budget(answer: str, n: int) -> int:
    """max_tokens of a decompose reply: the answer's words restated as claims (its tokens, a
    quarter more for context) and each expected claim's keys."""
    return TOKENS_BASE + -(-len(answer) * 5 // 16) + expected_claims(answer, n) * TOKENS_PER_CLAIM


def max_claims(answer: str, cap: int = 40) -> int:
    """How many claims an answer of this length may be split into (the schema's maxItems): a power
    of two from 4 up, so answers of similar length get the same schema (a provider's prompt cache
    holds the tool schema at the start of its prefix)."""
    need = max(3, len(answer) // 30 + 2)
    return min(cap, 1 << (need - 1).bit_length())

T = TypeVar("T")


def within_bound(listed: list[T], bound: int, usage: Usage) -> list[T]:
    """A reply's list cut to its schema's bound (maxItems: a grammar stops a rambling list there;
    without one a reply may list 10,000 claims to a two-word answer, each one paid for when it is
    checked); what was cut is counted in `usage.over_bound` and named in the row's reason."""
    if len(listed) > bound:
        usage.over_bound += len(listed) - bound
    return listed[:bound]


def empty_reask(messages: list[dict[str, Any]], answer: str) -> list[dict[str, Any]]:
    """The decompose (or single) messages again, told that the empty list it gave is not an answer:
    the answer states something checkable (its numbers, dates and names named, found in code)."""
    found = details(answer)
    named = f" (it names {', '.join(found[:5])})" if found else ""
    note = (f"\n\nYour previous reply listed no claims, but the answer makes checkable statements{named}. "
            "List every claim the answer makes.")
    return messages[:-1] + [{**messages[-1], "content": messages[-1]["content"] + note}]


class LLMJudge:
    """A judge that asks a model, one typed call per step.

    The reply models are built per criterion (and per set of claim ids) in `schemas`: verdicts,
    bases and fact kinds are enums, checks are keyed by claim id, and ids are assigned here in
    code. Each call asks for the output tokens its step needs (`max_tokens`), not a fixed 4096.
    """

    def __init__(self, client: Any, *, max_claims_per_check: int = DEFAULT_MAX_CLAIMS_PER_CHECK) -> None:
        self.client = client
        self.model: str = client.model
        self.max_claims_per_check = max_claims_per_check

    async def aclose(self) -> None:
        """Close the model client's connections (see `LLMClient.aclose`)."""
        await self.client.aclose()

    @property
    def structured(self) -> str | None:
        """The structured-output mode in use (after any fallback)."""
        mode: str | None = self.client.structured
        return mode

    @property
    def temperature(self) -> float | None:
        temperature: float | None = self.client.temperature
        return temperature

    @property
    def notes(self) -> list[str]:
        return list(self.client.notes)

    @property
    def coverage(self) -> LLMRequirementChecker:
        """Requirement coverage asked of the same model."""
        return LLMRequirementChecker(self.client)

    @property
    def fingerprint(self) -> str:
        c = self.client
        reasoning = f"|effort={c.effort}|family={c.profile.family}" if c.profile.reasons else ""
        return (f"{c.model}|url={c.base_url}|structured={self.structured}|t={c.temperature}|mt={c.max_tokens}"
                f"|chunk={self.max_claims_per_check}|replies={REPLIES_VERSION}{reasoning}")

    def _messages(self, criterion: Criterion, key: str, fields: dict[str, str],
                  hidden: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": criterion.system_for(key)},
            {"role": "user", "content": criterion.render(key, fields, hidden).strip()},
        ]

    @staticmethod
    def _shared_prefix(item: Item, criterion: Criterion, messages: list[dict[str, Any]],
                       fields: dict[str, str]) -> int | None:
        """Where the part of the user message that items sharing evidence have in common ends
        (the instructions, then the source, reference or spec), or None if the item's own text
        comes first. The provider seam may put a prompt-cache breakpoint there."""
        user = messages[-1]["content"]
        for name in criterion.evidence_fields:
            if getattr(item, name, None):
                block = fields[name]
                start = user.find(block)
                if start < 0:
                    return None
                end = start + len(block)
                own = [user.find(fields[f]) for f in ("question", "answer", "claims") if f in fields]
                return end if all(i < 0 or i >= end for i in own) else None
        return None

    def _context(self, criterion: Criterion, **more: Any) -> dict[str, Any]:
        return {"verdicts": list(criterion.model_verdicts), "bases": list(criterion.bases),
                "fact_kinds": criterion.fact_kinds, **more}

    def _cache_hint(self, item: Item, criterion: Criterion, messages: list[dict[str, Any]],
                    fields: dict[str, str]) -> dict[str, Any]:
        """cache_prefix= for clients that take it (a prompt-cache breakpoint after the shared evidence)."""
        if not self.client.prompt_caching:
            return {}
        prefix = self._shared_prefix(item, criterion, messages, fields)
        return {} if prefix is None else {"cache_prefix": prefix}

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]:
        short = short_claim(item.answer, criterion.short_answer_words, criterion.fact_kinds)
        if short is not None:  # one short sentence is its own claim: no call
            return [short]
        kinds, _, _ = criterion_vocab(criterion)
        n = max_claims(item.answer)
        messages = self._messages(criterion, "decompose", prompt_fields(item))
        for attempt in range(2):  # an empty list for an answer that states something is asked once more
            result = await self.client.ask(
                claims_reply(kinds, n, criterion.ask_kinds),
                messages if attempt == 0 else empty_reask(messages, item.answer),
                context=self._context(criterion), usage=usage, trace=trace, step="decompose",
                max_tokens=claims_budget(item.answer, n),
            )
            claims = within_bound(list(result.to_claims()), n, usage)
            if claims or not checkable(item.answer):
                break
            usage.reasks += attempt == 0
        if criterion.ask_kinds:
            return claims
        return [c.model_copy(update={"kind": code_kind(c.text, criterion.fact_kinds)}) for c in claims]

    async def check(
        self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage, trace: list[TraceEntry]
    ) -> list[ClaimCheck]:
        _, bases, verdicts = criterion_vocab(criterion)
        checks: list[ClaimCheck] = []
        n = self.max_claims_per_check
        for start in range(0, len(claims), n):  # very long claim lists are split
            chunk = claims[start : start + n]
            ids = tuple(c.id for c in chunk)
            notes = citation_notes(item, chunk)
            fields = prompt_fields(item, chunk, notes)
            hidden = not_offered(criterion, notes)
            offered = tuple(v for v in verdicts if v not in hidden)
            messages = self._messages(criterion, "check", fields, hidden)
            result = await self.client.ask(
                checks_reply(bases, offered, ids), messages,
                context=self._context(criterion, claim_ids=list(ids), verdicts=list(offered)),
                usage=usage, trace=trace, step="check", max_tokens=TOKENS_BASE + len(chunk) * TOKENS_PER_VERDICT,
                **self._cache_hint(item, criterion, messages, fields),
            )
            checks.extend(ClaimChecks(checks=result.to_checks()).checks)  # the validators, second line
        return checks

    async def single(
        self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
    ) -> tuple[list[Claim], list[ClaimCheck]]:
        kinds, bases, verdicts = criterion_vocab(criterion)
        n = max_claims(item.answer)
        fields = prompt_fields(item)
        messages = self._messages(criterion, "single", fields)
        for attempt in range(2):  # an empty list for an answer that states something is asked once more
            result = await self.client.ask(
                single_reply(kinds, bases, verdicts, n), messages if attempt == 0 else empty_reask(messages, item.answer),
                context=self._context(criterion), usage=usage, trace=trace, step="single",
                max_tokens=claims_budget(item.answer, n) + expected_claims(item.answer, n) * TOKENS_PER_VERDICT,
                **self._cache_hint(item, criterion, messages, fields),
            )
            claims, checks = result.split()
            if claims or not checkable(item.answer):
                break
            usage.reasks += attempt == 0
        return within_bound(claims, n, usage), checks[:n]

    async def commit(
        self, item: Item, criterion: Criterion, slots: list[Slot], usage: Usage, trace: list[TraceEntry]
    ) -> dict[str, str]:
        """One short call for all of the item's slots: the question and each claim with its values
        masked (never the answer, the reference or the claim's values)."""
        if not slots:
            return {}
        ids = tuple(s.claim_id for s in slots)
        fields = {"question": tag("question", item.question),
                  "slots": listed("slots", ((s.claim_id, s.masked) for s in slots))}
        messages: list[dict[str, Any]] = list(criterion.render_commit(fields))
        result = await self.client.ask(
            commitments_reply(ids), messages, context={}, usage=usage, trace=trace, step="commit",
            max_tokens=TOKENS_BASE + len(ids) * TOKENS_PER_COMMITMENT,
        )
        return commitments_of(result)


class LLMRequirementChecker:
    """Requirement coverage asked of a model: one typed call to split, one to check (prompts from
    the criterion's [coverage] table)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    @property
    def fingerprint(self) -> str:
        c = self.client  # the prompts enter the cache key through criterion.coverage_fingerprint
        data = f"{c.model}|t={c.temperature}|{c.structured}|replies=3"  # 3: the status entry in $defs (#40)
        return "llm:" + hashlib.sha256(data.encode()).hexdigest()[:16]

    def _messages(self, criterion: Criterion, key: str, fields: dict[str, str]) -> list[dict[str, Any]]:
        return [{"role": "system", "content": criterion.render_coverage("system", {}).strip()},
                {"role": "user", "content": criterion.render_coverage(key, fields).strip()}]

    async def decompose(self, spec: str, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Requirement]:
        n = max(3, min(50, len(spec) // 30 + 2))
        result = await self.client.ask(
            requirements_reply(n), self._messages(criterion, "requirements", {"spec": tag("spec", spec)}),
            usage=usage, trace=trace, step="requirements", max_tokens=64 + n * TOKENS_PER_REQUIREMENT,
        )
        listed = within_bound(list(result.requirements), n, usage)
        reqs = [Requirement(id=f"r{i}", text=r.text) for i, r in enumerate(listed, 1)]  # ids by code
        return Requirements(requirements=reqs).requirements

    async def check(
        self, item: Item, criterion: Criterion, requirements: list[Requirement], usage: Usage, trace: list[TraceEntry]
    ) -> list[RequirementCheck]:
        fields = prompt_fields(item) | {"requirements": requirements_block(requirements)}
        ids = tuple(r.id for r in requirements)
        result = await self.client.ask(
            coverage_reply(STATUSES, ids), self._messages(criterion, "check", fields),
            context={"requirement_ids": list(ids)},
            usage=usage, trace=trace, step="coverage", max_tokens=64 + len(ids) * TOKENS_PER_VERDICT,
        )
        checks = [RequirementCheck(requirement_id=i, **e.model_dump()) for i, e in result.entries()]
        return RequirementChecks.model_validate({"checks": checks}, context={"requirement_ids": list(ids)}).checks


def default_model() -> str:
    """The model to use when none is given: $JUDGEFLOW_MODEL, else the offline judge."""
    return os.environ.get(DEFAULT_MODEL_ENV) or OFFLINE_MODEL
