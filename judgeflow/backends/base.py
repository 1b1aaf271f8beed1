"""The Backend protocol: the steps the graph calls. The implementations in this folder import it
from here; the core reads it (and the provider table) through `judgeflow.backends`."""

from __future__ import annotations

from typing import Any, Protocol

from ..criteria import Criterion
from ..items import Item
from ..knowledge import Slot
from ..results import TraceEntry, Usage
from ..schemas import Claim, ClaimCheck


class Backend(Protocol):
    """The three steps a judge can take. Each may raise LLMError (-> the item is unscored)."""

    model: str

    @property
    def fingerprint(self) -> str:
        """Everything about the backend that changes its verdicts (for cache keys)."""
        ...

    @property
    def structured(self) -> str | None:
        """The structured-output mode in use (after any fallback); None for a model-free judge."""
        ...

    @property
    def temperature(self) -> float | None:
        """The sampling temperature (None: the provider's default; -1.0: not a model, always the same answer)."""
        ...

    @property
    def notes(self) -> list[str]:
        """What the model client wants the user to know (e.g. a structured-output fallback taken)."""
        ...

    @property
    def coverage(self) -> Any:
        """Its own requirement checker (an LLM's), or None: the offline one is used."""
        ...

    async def aclose(self) -> None:
        """Close the provider's connections (they belong to the event loop that opened them)."""
        ...

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]: ...

    async def check(
        self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage, trace: list[TraceEntry]
    ) -> list[ClaimCheck]: ...

    async def single(
        self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
    ) -> tuple[list[Claim], list[ClaimCheck]]: ...

    async def commit(
        self, item: Item, criterion: Criterion, slots: list[Slot], usage: Usage, trace: list[TraceEntry]
    ) -> dict[str, str]:
        """Commit-first (knowledge.py): claim id -> the values the judge gives for the claim's
        masked slots without seeing them ("" where it does not know)."""
        ...


async def single_from_steps(
    backend: Backend, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
) -> tuple[list[Claim], list[ClaimCheck]]:
    """`single` for backends without a one-call path (the offline judges): decompose, then check."""
    claims = await backend.decompose(item, criterion, usage, trace)
    return claims, await backend.check(item, criterion, claims, usage, trace)


class Offline:
    """What a model-free judge (baseline/lexical, baseline/rouge-l) answers for the model-only parts."""

    structured: str | None = None
    temperature: float | None = -1.0
    coverage: Any = None

    @property
    def notes(self) -> list[str]:
        return []

    async def commit(
        self, item: Item, criterion: Criterion, slots: list[Slot], usage: Usage, trace: list[TraceEntry]
    ) -> dict[str, str]:
        """No world knowledge: no commitments (commit-first leaves these claims unverifiable)."""
        return {}

    async def aclose(self) -> None:
        """Nothing to close."""
