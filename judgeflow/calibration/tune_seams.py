"""The two things `tune` needs from the rest of judgeflow, behind two small seams.

    judging = StoreJudging(backend, store=RunStore(...), strategy="graph")
    results = await judging.judge(criterion, items)          # cached: a re-run is free
    editor = Editor(client, cache_dir=Path(".judgeflow/tune-proposals"))
    edits, cached = await editor.propose(criterion, messages, 3, usage)

`StoreJudging` judges items with one criterion through the run store's response cache (the
criterion's fingerprint is part of the key, so each edited criterion has its own entries).
`Editor` asks a model for typed criterion edits through judgeflow's one LLM seam
(`LLMClient.ask`), and keeps each reply in a file named by the request's hash, so a resumed tune
asks nothing twice. A `StepBudget` (the run's `runs.budget.Budget`) is checked before each batch of calls.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._judge import Judge
from ..backends import Backend
from ..criteria import Criterion
from ..errors import JudgeflowError
from ..io.atomic import atomic_file
from ..items import Item
from ..results import Judgment, Usage
from ..runs.budget import Budget
from .edits import CriterionEdit, edits_reply, read_edits

#: model calls one item costs at least, by strategy (decompose + check; one call)
CALLS_PER_ITEM = {"graph": 2, "single": 1}
PROPOSAL_VERSION = 1


class BudgetReached(JudgeflowError):
    """The next batch of calls would pass --budget (what is done so far is kept in the caches)."""


class StepBudget:
    """`tune --budget`: the run's one spend cap (`runs.budget.Budget`, the same as `run --budget`),
    checked before each batch of calls is started, so a tune stops between steps, never inside one.
    The clients tune builds carry the cap (each call reserves before it is sent); spend through a
    backend or editor handed to tune is charged to it here (`carried=False`)."""

    def __init__(self, cap: Budget | None) -> None:
        self.cap = cap
        self.first_call: float | None = None
        """The estimated cost of one call before any was made (`tune` sets it from the prices), so
        a cost cap holds from the first step, not only once a call's cost is known."""

    @classmethod
    def parse(cls, text: str | Budget | None, prices: Any = None) -> StepBudget:
        """`500` (calls), `$2.50` or `2.5usd` (estimated cost), a ready Budget; None: no cap."""
        return cls(text if isinstance(text, Budget) else Budget.parse(text, prices=prices))

    @property
    def cost(self) -> float | None:
        """The dollar cap, if any."""
        return self.cap.usd_cap if self.cap is not None else None

    def add(self, usage: Usage, model: str, *, carried: bool) -> None:
        """Count a step's usage: already settled by the clients that carry the cap, else charged."""
        if self.cap is not None and not carried:
            self.cap.charge(usage, model)

    def check(self, planned_calls: int, doing: str) -> None:
        """Raise BudgetReached if `planned_calls` more calls would pass the cap."""
        cap = self.cap
        if cap is None or not planned_calls:
            return
        spent = cap.spent
        if cap.calls_cap is not None and spent.calls + planned_calls > cap.calls_cap:
            raise BudgetReached(f"{doing} needs about {planned_calls} more call(s); {spent.calls:g} of the "
                                f"budget's {cap.calls_cap} are spent")
        per_call = spent.usd / spent.calls if spent.calls and spent.usd else self.first_call
        if cap.usd_cap is not None and per_call is not None and spent.usd + per_call * planned_calls > cap.usd_cap:
            raise BudgetReached(f"{doing} would cost about ${per_call * planned_calls:.4f} more; "
                                f"${spent.usd:.4f} of the budget's ${cap.usd_cap:.2f} are spent")


class StoreJudging:
    """Judge items with a given criterion, through the run store's response cache when given."""

    def __init__(self, backend: Backend, *, store: Any = None, strategy: str = "graph", concurrency: int = 16) -> None:
        self.backend, self.store, self.strategy, self.concurrency = backend, store, strategy, concurrency

    @property
    def model(self) -> str:
        return self.backend.model

    def _judge(self, criterion: Criterion) -> Judge:
        return Judge(backend=self.backend, criterion=criterion, strategy=self.strategy,
                     concurrency=self.concurrency, keep_trace=False)

    def planned_calls(self, criterion: Criterion, items: Sequence[Item]) -> int:
        """Calls judging `items` takes at least: the items not in the cache, times the strategy's calls."""
        misses = len(items)
        if self.store is not None:
            judge = self._judge(criterion)
            misses = sum(1 for it in items if (k := judge.fingerprint(it)) is None or self.store.cached(k) is None)
        return misses * CALLS_PER_ITEM.get(self.strategy, 2)

    async def judge(self, criterion: Criterion, items: Sequence[Item]) -> list[Judgment]:
        """Every item's result under `criterion`, in input order (through the cache when there is a store)."""
        from ..judging import judge_stream
        from ..runs.cache import cached

        judging = self._judge(criterion) if self.store is None else cached(self._judge(criterion), self.store)
        out: list[Judgment | None] = [None] * len(items)
        async for seq, j in judge_stream(judging, list(items), concurrency=self.concurrency):
            out[seq] = j
        missing = [items[i].id for i, j in enumerate(out) if j is None]
        if missing:  # pragma: no cover - every item yields one result (judge_stream's contract)
            raise RuntimeError(f"no result for items {missing[:5]}")
        return [j for j in out if j is not None]


class Editor:
    """Asks a model for typed edits to a criterion's data (one LLM seam; replies kept on disk)."""

    def __init__(self, client: Any, *, cache_dir: Path | None = None, owned: bool = False) -> None:
        """`client`: an LLMClient (anything with its `ask`); `owned`: built for this tune (closed at its end)."""
        self.client, self.cache_dir, self.owned = client, cache_dir, owned

    @property
    def model(self) -> str:
        return str(self.client.model)

    def _key(self, messages: list[dict[str, Any]], max_edits: int) -> str:
        data = {"v": PROPOSAL_VERSION, "model": self.model, "url": getattr(self.client, "base_url", None),
                "t": getattr(self.client, "temperature", None), "max": max_edits, "messages": messages}
        return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    async def propose(self, criterion: Criterion, messages: list[dict[str, Any]], max_edits: int,
                      usage: Usage) -> tuple[list[CriterionEdit], bool]:
        """Up to `max_edits` edits (the calls counted into `usage`), and whether they came from the cache.

        Raises:
            LLMError: no valid reply after the client's retries and re-asks.
        """
        path = self.cache_dir / f"{self._key(messages, max_edits)}.json" if self.cache_dir else None
        if path is not None and path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                return [CriterionEdit.model_validate(e) for e in data["edits"]], True
            except (ValueError, KeyError, TypeError):
                pass  # a torn file: ask again
        reply = await self.client.ask(edits_reply(criterion, max_edits), messages, usage=usage, step="propose",
                                      max_tokens=400 + 300 * max_edits)
        edits = read_edits(reply, max_edits)
        if path is not None:
            _write_atomic(path, json.dumps({"edits": [e.model_dump() for e in edits]}, ensure_ascii=False))
        return edits, False


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as f:
        f.write(text)
