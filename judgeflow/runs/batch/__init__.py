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

When something goes wrong (see `ledger`): every completed line of a batch is kept, whatever
the batch's final state (completed, expired, cancelled, ended); a failed or expired line is sent
again in the next batch, up to `MAX_ATTEMPTS` times, a cancelled one is not; replies serve only
the run that collected them. Each batch is recorded as an intent before it is submitted, so a kill
in between is resolved by finding the batch at the provider, not by paying for it twice; an intent
the provider has no batch for is abandoned, and the input file it may have uploaded (named after the
intent's tag, every prompt in it) is deleted, by the next `batch status`, `batch collect` or
`run --resume` of the run (under the run's lock: never while its writer is still uploading). A round
bigger than the provider's limits is split into several batches.

The provider side (upload, create, status, results, find, delete) lives in `batch_openai` and
`batch_anthropic`; both speak through the official SDKs and read the API key from the
environment, never from the store.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

import httpx2

from ..._judge import Judge
from ...config.judging import JudgeSpec, RepeatsSpec
from ...config.run import RunSpec
from ...errors import ConfigError, InvalidItemError
from ...files import STDIO
from ...items import Item
from ...judging import judge_stream, row_id
from ...redact import remember_secret
from ...results import Judgment, Usage
from ..cache import cached
from ..store import RunStore
from .ledger import MAX_ATTEMPTS, BatchLedger
from .types import BatchStatus

if TYPE_CHECKING:
    from ..run import Run

PENDING = "judgeflow-batch-pending"
"""Marker in the error a pending request gets; items that hit it are not finished yet."""


def request_key(body: dict[str, Any]) -> str:
    """The key of a model request: a hash of its canonical JSON body (64 hex characters)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class ReplayTransport(httpx2.AsyncBaseTransport):
    """Answers model requests from the run's batch replies; records the rest as pending.

    A request whose last batch line failed is pending again (sent in the next batch) until its
    failure is final (`MAX_ATTEMPTS`, or cancelled): then it gets that failure, and its item ends
    unscored with the reason.
    """

    def __init__(self, ledger: BatchLedger, run_id: str) -> None:
        self.ledger = ledger
        self.run_id = run_id
        self.pending: dict[str, dict[str, Any]] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(await request.aread() or b"{}")
        key = request_key(body)
        headers = {"x-should-retry": "false", "content-type": "application/json"}
        got = self.ledger.reply(self.run_id, key)
        if got is None or not (got.ok or got.final or got.attempts >= MAX_ATTEMPTS):
            self.pending[key] = body
            return httpx2.Response(503, headers=headers, json={"error": {"message": PENDING, "type": PENDING}})
        reply = json.loads(got.reply)
        return httpx2.Response(reply["status"], headers=headers, json=reply["body"])


class BatchProvider(Protocol):
    """One provider's batch API."""

    name: str
    max_requests: int
    """Requests per batch the provider accepts."""
    max_bytes: int
    """Bytes per batch (OpenAI: the input file; Anthropic: the request body)."""

    def line_size(self, key: str, body: dict[str, Any]) -> int:
        """Bytes one request adds to a batch."""
        ...

    def submit(self, requests: dict[str, dict[str, Any]], tag: str) -> str:
        """Send {key: request body} as one batch labelled `tag`; return the batch id."""
        ...

    def find(self, tag: str, n: int, since: float, exclude: set[str]) -> str | None:
        """The id of a batch submitted with `tag` (n requests, at or after `since`), if the provider has one."""
        ...

    def discard(self, tag: str, since: float) -> list[str]:
        """Delete what an interrupted submission under `tag` (recorded at `since`) left at the provider without
        a batch (OpenAI: the uploaded input file, every prompt in it); return what could not be deleted."""
        ...

    def status(self, batch_id: str) -> BatchStatus: ...

    def results(self, batch_id: str, keys: set[str]) -> tuple[dict[str, str], dict[str, tuple[str, bool]]]:
        """A finished batch: ({key: reply} of completed lines, {key: (failure reply, final)} of the others).

        Every key of `keys` is in one of the two (a line the provider did not report is a failure).
        """
        ...

    def delete(self, batch_id: str) -> list[str]:
        """Delete what the batch left at the provider (files with prompts and replies); return what failed."""
        ...


def split(requests: dict[str, dict[str, Any]], provider: BatchProvider) -> list[dict[str, dict[str, Any]]]:
    """`requests` in batches within the provider's request and byte limits, in order."""
    parts: list[dict[str, dict[str, Any]]] = [{}]
    size = 0
    for key, body in requests.items():
        n = provider.line_size(key, body)
        if parts[-1] and (len(parts[-1]) >= provider.max_requests or size + n > provider.max_bytes):
            parts.append({})
            size = 0
        parts[-1][key] = body
        size += n
    return [p for p in parts if p]


def batch_tag(run_id: str, keys: Sequence[str]) -> str:
    """The idempotency tag of a batch: the same run and requests give the same tag."""
    h = hashlib.sha256((run_id + ":" + ",".join(sorted(keys))).encode()).hexdigest()
    return f"judgeflow-{h[:24]}"


def make_provider(model: str, *, base_url: str | None = None, http_client: Any = None) -> BatchProvider:
    """The batch API for "provider/model" (openai/ or anthropic/)."""
    from importlib import import_module

    from ...backends.providers import known, provider_of

    p = provider_of(model) if known(model.partition("/")[0]) else None
    base_url = base_url or os.environ.get("JUDGEFLOW_BASE_URL") or None  # where an online run goes (#48)
    if p is not None and p.batch:
        for env in p.key_env:
            remember_secret(os.environ.get(env))  # masked by value wherever it appears
        remember_secret(urlsplit(base_url or "").password)
        module, _, name = p.batch.partition(":")
        made: BatchProvider = getattr(import_module(module), name)(base_url=base_url, http_client=http_client)
        return made
    raise ConfigError(f"--batch needs an openai/ or anthropic/ model (their batch APIs); got {model!r}")


def check_batch_input(path: Path) -> None:
    """A batch run reads its input again at each `collect`: it must be a file, never stdin."""
    if str(path) == STDIO:
        raise ConfigError("--batch needs the items in a file: `batch collect` reads them again when the replies "
                          "arrive, and stdin cannot be read twice; save them first (e.g. `... > items.jsonl`) and "
                          "run `judgeflow run items.jsonl --batch ...`")


def batch_judge(spec: RunSpec, **client: Any) -> Judge:
    """The one judge of a batch run (`spec`: its record), its trace kept as the run writes it;
    `client` replaces client options."""
    from ...build import build

    one = spec.judging.judging if isinstance(spec.judging, RepeatsSpec) else spec.judging
    if not isinstance(one, JudgeSpec):
        raise ConfigError("this run judged with a panel or cascade, which a batch does not replay")
    judge = build(one.model_copy(update={"keep_trace": spec.trace}), **client)
    assert isinstance(judge, Judge)
    return judge


def replay_judge(spec: RunSpec, transport: ReplayTransport) -> Judge:
    """The run's judge, with its provider calls answered by `transport` (no re-asks, no retries)."""
    return batch_judge(spec, api_key="batch-replay", http_client=httpx2.AsyncClient(transport=transport),
                       provider_retries=0, max_retries=0)


def is_pending(j: Judgment) -> bool:
    return j.status == "unscored" and PENDING in (j.error or "")


async def advance(
    run: Run, judge: Judge, transport: ReplayTransport, rows: Sequence[Item | InvalidItemError], *,
    cache: bool = True,
) -> dict[str, dict[str, Any]]:
    """Judge every unfinished row as far as the stored replies allow; record the finished ones.

    `cache=False` (`run --batch --no-cache`, in every round): no result is served from the
    response cache, so every item goes to the batch; new results still enter the cache.
    Returns the pending requests (the next batch), empty when the run is complete.
    """
    done = run.store.done_ids(run.run_id)
    todo = [(seq, it) for seq, it in enumerate(rows) if row_id(it) not in done]
    transport.pending.clear()
    made: list[str] = []
    async for n, j in judge_stream(cached(judge, run.store, read=cache), [it for _, it in todo], concurrency=64):
        if not is_pending(j):  # judged results entered the cache
            run.record(todo[n][0], j)
            if j.usage.calls:
                made.append(j.id)
    transport.ledger.mark_items(run.run_id, made, batch=True)
    return dict(transport.pending)


def paid(store: RunStore, run_id: str) -> tuple[Usage, Usage]:
    """(batch, online) usage of a run: every successful batch line, and the results judged online."""
    ledger = BatchLedger(store)
    from_batch = ledger.batch_items(run_id)
    online = Usage()
    for j in store.results(run_id):
        if j.id not in from_batch:
            online.add(j.usage)
    return ledger.billed(run_id), online
