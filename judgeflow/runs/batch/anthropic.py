"""Anthropic's Message Batches: create a batch of Messages requests, poll it, stream its results."""

from __future__ import annotations

import json
import os
from typing import Any

import anthropic
from anthropic.types.messages import MessageBatchIndividualResponse
from pydantic import ValidationError

from ...backends.connections import tls_context
from ...errors import ConfigError
from .types import BatchStatus, encode_reply, failure, output_rows, unreadable


class AnthropicBatches:
    """Message Batches through the official SDK (key from $ANTHROPIC_API_KEY, never stored).

    A message batch carries no metadata, so `find` recognises a batch by its size and creation
    time; adopting a stranger's batch is harmless, since replies are matched by request hash
    (`custom_id`) and any request it lacks is sent again.
    """

    name = "anthropic"
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def __init__(self, *, base_url: str | None = None, http_client: Any = None) -> None:
        key = os.environ.get("ANTHROPIC_API_KEY")
        if not key and base_url is None:
            raise ConfigError("Anthropic Message Batches need an API key: set ANTHROPIC_API_KEY")
        # the process's one TLS context (loading the CA store per client cost ~70 ms of CPU each)
        kwargs = {"http_client": http_client if http_client is not None else anthropic.DefaultHttpxClient(verify=tls_context())}
        self.client = anthropic.Anthropic(api_key=key or "not-needed", base_url=base_url, **kwargs)

    def line_size(self, key: str, body: dict[str, Any]) -> int:
        return len(json.dumps({"custom_id": key, "params": body}, ensure_ascii=False).encode()) + 1

    def submit(self, requests: dict[str, dict[str, Any]], tag: str) -> str:
        batch = self.client.messages.batches.create(
            requests=[{"custom_id": key, "params": body} for key, body in requests.items()]
        )
        return batch.id

    def find(self, tag: str, n: int, since: float, exclude: set[str]) -> str | None:
        for b in self.client.messages.batches.list(limit=100):  # newest first, auto-paginated
            created = b.created_at.timestamp()
            if created < since - 3600:
                break
            total = sum(b.request_counts.model_dump().values())
            if b.id not in exclude and total == n and created >= since - 60:
                return b.id
        return None

    def discard(self, tag: str, since: float) -> list[str]:
        """Nothing to delete: a message batch is created in one request, with no upload before it."""
        return []

    def status(self, batch_id: str) -> BatchStatus:
        b = self.client.messages.batches.retrieve(batch_id)
        counts = b.request_counts.model_dump() if b.request_counts else {}
        return BatchStatus(batch_id=batch_id, state=b.processing_status, done=b.processing_status == "ended",
                           counts=counts)

    def results(self, batch_id: str, keys: set[str]) -> tuple[dict[str, str], dict[str, tuple[str, bool]]]:
        ok: dict[str, str] = {}
        failed: dict[str, tuple[str, bool]] = {}
        problems: list[str] = []
        text = self.client.messages.batches.with_raw_response.results(batch_id).text()  # read line by line below
        for row, at in output_rows(text, f"the results of batch {batch_id}"):
            entry = _entry(row, at, problems)
            if entry is None:
                key = row.get("custom_id") if row is not None else None
                if isinstance(key, str) and key in keys:  # known request, unreadable result: that one fails alone
                    failed[key] = (failure(problems[-1]), False)
                continue
            if keys and entry.custom_id not in keys:
                continue
            result = entry.result
            if result.type == "succeeded":
                ok[entry.custom_id] = encode_reply(200, result.message.model_dump(mode="json"))
                continue
            detail = getattr(result, "error", None)
            message = f"batch request {result.type}" + (f": {detail.model_dump(mode='json')}" if detail else "")
            failed[entry.custom_id] = (failure(f"{message} (batch {batch_id})"), result.type == "canceled")
        for key in keys - ok.keys() - failed.keys():
            failed[key] = (failure(f"no result for this request in batch {batch_id}{unreadable(problems)}"), False)
        return ok, failed

    def delete(self, batch_id: str) -> list[str]:
        try:
            self.client.messages.batches.delete(batch_id)
        except anthropic.NotFoundError:
            return []
        except anthropic.AnthropicError:
            return [batch_id]
        return []


def _entry(row: dict[str, Any] | None, at: str, problems: list[str]) -> MessageBatchIndividualResponse | None:
    """One results line as the SDK's type; a line that is not one is added to `problems`."""
    if row is None:
        problems.append(at)
        return None
    try:
        return MessageBatchIndividualResponse.model_validate(row)
    except ValidationError as e:
        err = e.errors()[0]
        problems.append(f"{at}: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}")
        return None
