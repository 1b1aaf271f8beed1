"""What a served graph (graphs/judge.py under `langgraph dev` / LangGraph Server) lets a caller choose.

A caller sends the context as JSON, and the server spends its own API key on it. So a served
caller may choose only names the operator allows; endpoints and criterion files are the server's:

    JUDGEFLOW_ALLOWED_MODELS  "provider/model" names a caller may choose, comma-separated (the offline
                              baseline/* judges are always allowed)
    JUDGEFLOW_MODEL           the model when the caller names none (default: baseline/lexical)
    JUDGEFLOW_BASE_URL        the endpoint of every served model (default: the provider's own)
    JUDGEFLOW_CRITERIA_DIR    the operator's own criterion files (*.toml), chosen by file name

A criterion is chosen by name only (a shipped one, or one in JUDGEFLOW_CRITERIA_DIR), in the
context and in an item's own `criterion` field alike: never by path, so the reply to a bad name
is the same whatever is on the server's disk (and nothing is read). A context with any other field
(`base_url`, ...) is refused. The endpoint's address never appears in what the caller
gets back (errors, trace), and the key judgeflow sent never appears anywhere (`redact`).
Python callers who build a `JudgeContext` themselves keep full control (any endpoint, a criterion
path, a ready backend).
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .backends import Backend, make_backend
from .config.judging import JudgeSpec
from .criteria import Criterion, list_criteria, load_criterion, routes, shipped_criterion
from .errors import CriterionError, JudgeflowError, LLMError
from .items import Item
from .redact import redact, redact_data
from .results import TraceEntry, Usage
from .schemas import Claim, ClaimCheck
from .workflow import JudgeContext, Strategy, build_graph

T = TypeVar("T")

DEFAULT_MODEL = "baseline/lexical"
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_HIDDEN = "the served endpoint"


def allowed_models() -> list[str]:
    """The models a served caller may choose: the operator's allow-list and the default model."""
    listed = [m.strip() for m in os.environ.get("JUDGEFLOW_ALLOWED_MODELS", "").split(",") if m.strip()]
    return sorted({*listed, default_model()})


def default_model() -> str:
    return os.environ.get("JUDGEFLOW_MODEL") or DEFAULT_MODEL


def operator_criterion(name: str) -> str | None:
    """The file of the operator's criterion `name` (JUDGEFLOW_CRITERIA_DIR/<name>.toml), if there is one."""
    folder = os.environ.get("JUDGEFLOW_CRITERIA_DIR")
    path = Path(folder) / f"{name}.toml" if folder and _NAME.fullmatch(name) else None
    return str(path) if path is not None and path.is_file() else None


def served_criterion_file(name: str) -> str | None:
    """What a served caller's criterion name stands for: a shipped name (returned as is) or the
    operator's file; None for anything else (a path, an unknown name)."""
    if not _NAME.fullmatch(name):
        return None
    return name if shipped_criterion(name) else operator_criterion(name)


def served_criterion(name: str) -> Criterion:
    """An item's own `criterion` field in a served graph: a name the operator allows, never a path.
    The error is the same whatever is on the server's disk (nothing is read for a refused name)."""
    found = served_criterion_file(name)
    if found is None:
        raise CriterionError(not_served(name))
    return load_criterion(found)


def not_served(name: str) -> str:
    return (f"criterion {name[:80]!r} is not one of the criteria served here: {', '.join(served_names())} "
            "(a name, never a path)")


@lru_cache(maxsize=1)
def served_names() -> tuple[str, ...]:
    """The criterion names a served caller may give, for messages (listed once, when the graph is
    built: a directory scan inside a served run blocks the server's event loop)."""
    folder = os.environ.get("JUDGEFLOW_CRITERIA_DIR")
    mine = [p.stem for p in Path(folder).glob("*.toml") if _NAME.fullmatch(p.stem)] if folder else []
    return tuple(sorted({*list_criteria(), *mine}))


class ServedContext(BaseModel):
    """The context a served caller may send (JSON): names only; see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = None
    """One of the operator's allowed models (JUDGEFLOW_ALLOWED_MODELS, baseline/*); None: JUDGEFLOW_MODEL."""
    criterion: str | None = None
    """A shipped criterion name (or one the operator registered); None routes by the item's fields."""
    strategy: Strategy = "graph"
    mode: Literal["auto", "factual", "faithfulness", "spec"] | None = None
    max_source_chars: int | None = Field(default=None, ge=0)

    @field_validator("model")
    @classmethod
    def _allowed_model(cls, v: str | None) -> str | None:
        if v is None or v.lower().startswith("baseline/") or v in allowed_models():
            return v
        raise ValueError(f"model {v[:80]!r} is not served here; choose one of {allowed_models()} "
                         "(the operator sets JUDGEFLOW_ALLOWED_MODELS)")

    @field_validator("criterion")
    @classmethod
    def _named_criterion(cls, v: str | None) -> str | None:
        if v is None or served_criterion_file(v):
            return v
        raise ValueError(not_served(v))

    def judge_context(self) -> JudgeContext:
        """The JudgeContext this served context stands for (built once per context and configuration)."""
        return _judge_context(self, os.environ.get("JUDGEFLOW_MODEL"), os.environ.get("JUDGEFLOW_BASE_URL"),
                              os.environ.get("JUDGEFLOW_CRITERIA_DIR"), os.environ.get("JUDGEFLOW_MAX_INPUT_CHARS"))


@lru_cache(maxsize=64)
def _judge_context(ctx: ServedContext, *config: str | None) -> JudgeContext:
    """`config`: the operator's settings this depends on (a change builds a new context)."""
    criterion = (operator_criterion(ctx.criterion) or ctx.criterion) if ctx.criterion else None
    *endpoint, max_input = config
    backend = _served_backend(ctx.model or default_model(), ctx.max_source_chars, *endpoint)
    limit = int(max_input) if max_input and max_input.strip().isdigit() and int(max_input) > 0 else None
    spec = JudgeSpec(model=backend.model, strategy=ctx.strategy, mode=ctx.mode)
    return JudgeContext(spec=spec, backend=backend, criterion=criterion,
                        item_criterion=served_criterion, max_input_chars=limit)


@lru_cache(maxsize=16)
def _served_backend(model: str, max_source_chars: int | None, default_model: str | None, base_url: str | None,
                    criteria_dir: str | None) -> Backend:
    """The backend of an allowed model, on the operator's endpoint (`base_url`: JUDGEFLOW_BASE_URL,
    which make_client reads; None: the provider's own, nothing to hide; CLI advice is still taken out)."""
    backend = make_backend(model, max_source_chars=max_source_chars)
    return HidingEndpoint(backend, base_url)


def build_served_graph() -> Any:
    """The judge graph as served: its context is a `ServedContext` (a JudgeContext passes through),
    and a run without one gets `ServedContext()`: the operator's defaults, its endpoint hidden."""
    from langgraph.graph.state import CompiledStateGraph

    class ServedGraph(CompiledStateGraph):  # type: ignore[type-arg]
        def stream(self, *args: Any, context: Any = None, **kwargs: Any) -> Any:
            return super().stream(*args, context=ServedContext() if context is None else context, **kwargs)

        def astream(self, *args: Any, context: Any = None, **kwargs: Any) -> Any:
            return super().astream(*args, context=ServedContext() if context is None else context, **kwargs)

    served_names()
    routes()  # the routing table scans the criteria folder: once here, never inside a served run
    graph = build_graph(context_schema=ServedContext)
    graph.__class__ = ServedGraph  # the same graph; `copy()` (LangGraph's server makes one per run) keeps it
    return graph


_CLI_ADVICE = re.compile(r";\s*(?:lower --concurrency|it can never pass)[^;]*")


def api_message(text: str) -> str:
    """A message for a served caller: the advice meant for the command line (flags, `--resume`) taken out."""
    text = _CLI_ADVICE.sub("", text)
    return re.sub(r"--max-wait (\S+)", r"the server's max_wait (\1)", text)


class HidingEndpoint:
    """A backend whose errors and trace entries never name its endpoint (served callers get both
    back), nor give them command-line advice."""

    def __init__(self, backend: Backend, base_url: str | None) -> None:
        self.backend, self.model = backend, backend.model
        u = urlsplit(base_url or "")
        self._hide = sorted({s for s in (base_url, redact(base_url) if base_url else "", u.netloc,
                                         u.netloc.rpartition("@")[2], u.hostname or "") if s}, key=len, reverse=True)

    @property
    def fingerprint(self) -> str:
        return self.backend.fingerprint

    @property
    def structured(self) -> str | None:
        return self.backend.structured

    @property
    def temperature(self) -> float | None:
        return self.backend.temperature

    @property
    def notes(self) -> list[str]:
        return [self.hide(n) for n in self.backend.notes]

    @property
    def coverage(self) -> Any:
        return self.backend.coverage

    async def aclose(self) -> None:
        await self.backend.aclose()

    def hide(self, text: str) -> str:
        for s in self._hide:
            text = text.replace(s, _HIDDEN)
        return api_message(text)

    async def decompose(self, item: Item, criterion: Criterion, usage: Usage, trace: list[TraceEntry]) -> list[Claim]:
        return await self._hiding(trace, self.backend.decompose(item, criterion, usage, trace))

    async def check(self, item: Item, criterion: Criterion, claims: list[Claim], usage: Usage,
                    trace: list[TraceEntry]) -> list[ClaimCheck]:
        return await self._hiding(trace, self.backend.check(item, criterion, claims, usage, trace))

    async def single(self, item: Item, criterion: Criterion, usage: Usage,
                     trace: list[TraceEntry]) -> tuple[list[Claim], list[ClaimCheck]]:
        return await self._hiding(trace, self.backend.single(item, criterion, usage, trace))

    async def _hiding(self, trace: list[TraceEntry], step: Awaitable[T]) -> T:
        try:
            return await step
        except LLMError as e:
            raise LLMError(self.hide(str(e)), attempts=e.attempts,
                           last_reply=self.hide(e.last_reply) if e.last_reply else e.last_reply) from None
        except JudgeflowError as e:  # ProviderUnavailable ends the run: its message reaches the caller
            raise type(e)(self.hide(str(e))) from None
        finally:
            for entry in trace:
                entry.reply = redact_data(entry.reply, self.hide)
                entry.rejected = [self.hide(r) for r in entry.rejected]

