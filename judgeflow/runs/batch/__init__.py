"""Provider batch APIs (about half the price): submit a run's model calls as batches, collect later.

How it works: the judge runs its ordinary path (LangGraph workflow -> `LLMClient.ask` -> Instructor
-> the provider SDK), but the SDK's HTTP transport is a `ReplayTransport`. A request whose reply
is already in the run store gets that reply, so Instructor parses and validates it exactly as
online; a request without one is recorded as pending and answered with an error, so the item
stops there. The pending requests go to the provider as one batch (every item's decompose call,
or its single call); when that batch is collected its replies are stored and the judge runs
again, now reaching the check calls: the second batch. After the last batch every item is
judged, or unscored with the reason (a batch reply that fails validation, or a failed request).
Re-asks need another round trip, so batch runs make none (an invalid reply leaves the item
unscored; `collect --online` re-judges those items online).

The provider side (upload, create, status, results) lives in `batch_openai` and
`batch_anthropic`; both speak through the official SDKs and read the API key from the
environment, never from the store.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx2

from ...errors import ConfigError, InvalidItemError
from ...items import Item
from ...judge import Judge, invalid_judgment
from ...results import Judgment
from ..store import RunStore

PENDING = "judgeflow-batch-pending"
"""Marker in the error a pending request gets; items that hit it are not finished yet."""


def request_key(body: dict[str, Any]) -> str:
    """The key of a model request: a hash of its canonical JSON body (64 hex characters)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def encode_reply(status: int, body: Any) -> str:
    """A provider reply as the store keeps it."""
    return json.dumps({"status": status, "body": body}, ensure_ascii=False)


class ReplayTransport(httpx2.AsyncBaseTransport):
    """Answers model requests from the store's batch replies; records the rest as pending."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.pending: dict[str, dict[str, Any]] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(await request.aread() or b"{}")
        key = request_key(body)
        headers = {"x-should-retry": "false", "content-type": "application/json"}
        raw = self.store.reply(key)
        if raw is None:
            self.pending[key] = body
            return httpx2.Response(503, headers=headers, json={"error": {"message": PENDING, "type": PENDING}})
        reply = json.loads(raw)
        return httpx2.Response(reply["status"], headers=headers, json=reply["body"])


class BatchProvider(Protocol):
    """One provider's batch API."""

    name: str

    def submit(self, requests: dict[str, dict[str, Any]]) -> str:
        """Send {key: request body} as one batch; return the batch id."""
        ...

    def status(self, batch_id: str) -> BatchStatus: ...

    def results(self, batch_id: str) -> dict[str, str]:
        """{key: encode_reply(status, body)} for every request of a finished batch."""
        ...


@dataclass
class BatchStatus:
    """Where a submitted batch is."""

    batch_id: str
    state: str
    """The provider's own status word (in_progress, completed, ended, failed, expired, ...)."""
    done: bool
    """True when results can be collected."""
    failed: bool = False
    """True when the batch as a whole failed or expired: nothing to collect."""
    counts: dict[str, int] = field(default_factory=dict)


def make_provider(model: str, *, base_url: str | None = None, http_client: Any = None) -> BatchProvider:
    """The batch API for "provider/model" (openai/ or anthropic/)."""
    provider, _, _ = model.partition("/")
    if provider == "openai":
        from .openai import OpenAIBatches

        return OpenAIBatches(base_url=base_url, http_client=http_client)
    if provider == "anthropic":
        from .anthropic import AnthropicBatches

        return AnthropicBatches(base_url=base_url, http_client=http_client)
    raise ConfigError(f"--batch needs an openai/ or anthropic/ model (their batch APIs); got {model!r}")


def replay_judge(settings: dict[str, Any], transport: ReplayTransport) -> Judge:
    """The run's judge, with its provider calls answered by `transport` (no re-asks, no retries)."""
    kwargs: dict[str, Any] = {}
    if settings.get("base_url"):
        kwargs["base_url"] = settings["base_url"]
    if settings.get("temperature"):
        kwargs["temperature"] = settings["temperature"]
    return Judge(
        settings["model"], mode=settings.get("mode"), criterion=settings.get("criterion_arg"),
        strategy=settings.get("strategy", "graph"), keep_trace=bool(settings.get("trace")),
        api_key="batch-replay", http_client=httpx2.AsyncClient(transport=transport),
        provider_retries=0, max_retries=0, **kwargs,
    )


def is_pending(j: Judgment) -> bool:
    return j.status == "unscored" and PENDING in (j.error or "")


async def advance(
    store: RunStore, run_id: str, judge: Judge, transport: ReplayTransport,
    rows: Sequence[Item | InvalidItemError],
) -> dict[str, dict[str, Any]]:
    """Judge every unfinished row as far as the stored replies allow; record the finished ones.

    Returns the pending requests (the next batch), empty when the run is complete.
    """
    done = store.done_ids(run_id)
    seq_of: dict[str, int] = {}
    todo = []
    for seq, it in enumerate(rows):
        item_id = it.id if isinstance(it, Item) else invalid_judgment(it).id
        seq_of.setdefault(item_id, seq)
        if item_id not in done:
            todo.append(it)
    transport.pending.clear()
    async for j in judge.ajudge_many(todo, concurrency=64, store=store):  # judged results enter the cache
        if not is_pending(j):
            store.record(run_id, seq_of[j.id], j)
    return dict(transport.pending)
