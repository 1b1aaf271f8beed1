"""The LLM backend: `LLMJudge` renders the criterion's prompts and asks a model through
`llm.LLMClient` (the Instructor seam), one typed call per step; `prompt_fields` delimits an
item's texts for the prompts. The offline judges (`lexical`, `rouge`) take the same steps
without a model; `backends.make_backend` picks one from a "provider/model" string.
"""

from __future__ import annotations

import os
from typing import Any

from ..schemas import Claim, ClaimCheck, ClaimChecks, Claims, SingleJudgment
from ..criteria import Criterion
from ..prompts import documents, inline, tag
from ..items import Item
from ..registry import Backend, single_from_steps  # noqa: F401 - re-exported (old judgeflow.backends names)
from ..results import TraceEntry, Usage

DEFAULT_MODEL_ENV = "JUDGEFLOW_MODEL"
OFFLINE_MODEL = "baseline/lexical"


def prompt_fields(item: Item, claims: list[Claim] | None = None) -> dict[str, str]:
    """The item's texts, each delimited and neutralised, ready for a criterion prompt."""
    fields = {
        "question": tag("question", item.question),
        "answer": tag("answer", item.answer),
        "reference": tag("reference", item.reference),
        "source": documents(item.source) if item.source else tag("source", None),
        "spec": tag("spec", item.spec),
    }
    if claims is not None:
        inner = "\n".join(inline("claim", c.text, id=c.id) for c in claims)
        fields["claims"] = f"<claims>\n{inner}\n</claims>"
    return fields


class LLMJudge:
    """A judge that asks a model, one typed call per step."""

    def __init__(self, client: Any, *, max_claims_per_check: int = 25) -> None:
        self.client = client
        self.model: str = client.model
        self.max_claims_per_check = max_claims_per_check

    @property
    def fingerprint(self) -> str:
        c = self.client
        mode = getattr(getattr(c.client, "mode", None), "value", None)
        return (f"{c.model}|url={c.base_url}|mode={mode}|t={c.temperature}|mt={c.max_tokens}"
                f"|chunk={self.max_claims_per_check}")

    def _messages(self, criterion: Criterion, key: str, fields: dict[str, str]) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": criterion.prompts.system.strip()},
            {"role": "user", "content": criterion.render(key, fields).strip()},
        ]

    def _context(self, criterion: Criterion, **more: Any) -> dict[str, Any]:
        return {"verdicts": list(criterion.verdicts), "bases": list(criterion.bases),
                "fact_kinds": criterion.fact_kinds, **more}

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]:
        result = await self.client.ask(
            Claims, self._messages(criterion, "decompose", prompt_fields(item)),
            context=self._context(criterion), usage=usage, trace=trace, step="decompose",
        )
        return result.claims

    async def check(
        self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage, trace: list[TraceEntry]
    ) -> list[ClaimCheck]:
        checks: list[ClaimCheck] = []
        n = self.max_claims_per_check
        for start in range(0, len(claims), n):  # very long claim lists are split
            chunk = claims[start : start + n]
            result = await self.client.ask(
                ClaimChecks, self._messages(criterion, "check", prompt_fields(item, chunk)),
                context=self._context(criterion, claim_ids=[c.id for c in chunk]),
                usage=usage, trace=trace, step="check",
            )
            checks.extend(result.checks)
        return checks

    async def single(
        self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
    ) -> tuple[list[Claim], list[ClaimCheck]]:
        result = await self.client.ask(
            SingleJudgment, self._messages(criterion, "single", prompt_fields(item)),
            context=self._context(criterion), usage=usage, trace=trace, step="single",
        )
        return result.split()


def default_model() -> str:
    """The model to use when none is given: $JUDGEFLOW_MODEL, else the offline judge."""
    return os.environ.get(DEFAULT_MODEL_ENV) or OFFLINE_MODEL
