"""The Backend protocol (the steps the graph calls) and the hook that turns a model name into a
backend. The core knows only this protocol; the implementations live in the backends/ wing,
which registers its lookup here (`set_backend_factory`) when it is imported: by the first
backend asked for (`judgeflow --version` and `import judgeflow` load none of it)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Protocol

from .criteria import Criterion
from .errors import ConfigError
from .items import Item
from .results import TraceEntry, Usage
from .schemas import Claim, ClaimCheck


class Backend(Protocol):
    """The three steps a judge can take. Each may raise LLMError (-> the item is unscored)."""

    model: str

    @property
    def fingerprint(self) -> str:
        """Everything about the backend that changes its verdicts (for cache keys)."""
        ...

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]: ...

    async def check(
        self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage, trace: list[TraceEntry]
    ) -> list[ClaimCheck]: ...

    async def single(
        self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
    ) -> tuple[list[Claim], list[ClaimCheck]]: ...


async def single_from_steps(
    backend: Backend, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]
) -> tuple[list[Claim], list[ClaimCheck]]:
    """`single` for backends without a one-call path (the offline judges): decompose, then check."""
    claims = await backend.decompose(item, criterion, usage, trace)
    return claims, await backend.check(item, criterion, claims, usage, trace)


_factory: Callable[..., Backend] | None = None
#: the package that registers the shipped backends when imported
DEFAULT_BACKENDS = "judgeflow.backends"


def set_backend_factory(factory: Callable[..., Backend]) -> None:
    """Install the function that builds a backend from "provider/model" (backends.make_backend)."""
    global _factory
    _factory = factory


def make_backend(model: str | None = None, **options: Any) -> Backend:
    """A backend for "provider/model", built by the registered factory (see backends/)."""
    if _factory is None:  # the wing registers itself on import (by name: the core never imports a wing)
        importlib.import_module(DEFAULT_BACKENDS)
    if _factory is None:
        raise ConfigError(f"no backends registered: {DEFAULT_BACKENDS} did not call set_backend_factory")
    return _factory(model, **options)
