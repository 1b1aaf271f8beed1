"""Anthropic's Message Batches: create a batch of Messages requests, poll it, stream its results."""

from __future__ import annotations

import os
from typing import Any

import anthropic

from . import BatchStatus, encode_reply
from ...errors import ConfigError


class AnthropicBatches:
    """Message Batches through the official SDK (key from $ANTHROPIC_API_KEY, never stored)."""

    name = "anthropic"

    def __init__(self, *, base_url: str | None = None, http_client: Any = None) -> None:
        key = os.environ.get("ANTHROPIC_API_KEY")
        if not key and base_url is None:
            raise ConfigError("Anthropic Message Batches need an API key: set ANTHROPIC_API_KEY")
        kwargs = {"http_client": http_client} if http_client is not None else {}
        self.client = anthropic.Anthropic(api_key=key or "not-needed", base_url=base_url, **kwargs)

    def submit(self, requests: dict[str, dict[str, Any]]) -> str:
        batch = self.client.messages.batches.create(
            requests=[{"custom_id": key, "params": body} for key, body in requests.items()]  # type: ignore[misc]
        )
        return batch.id

    def status(self, batch_id: str) -> BatchStatus:
        b = self.client.messages.batches.retrieve(batch_id)
        counts = b.request_counts.model_dump() if b.request_counts else {}
        ended = b.processing_status == "ended"
        return BatchStatus(batch_id=batch_id, state=b.processing_status, done=ended,
                           failed=ended and not b.results_url, counts=counts)

    def results(self, batch_id: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for entry in self.client.messages.batches.results(batch_id):
            result = entry.result
            if result.type == "succeeded":
                out[entry.custom_id] = encode_reply(200, result.message.model_dump(mode="json"))
            else:
                detail = getattr(result, "error", None)
                message = f"batch request {result.type}" + (f": {detail.model_dump(mode='json')}" if detail else "")
                out[entry.custom_id] = encode_reply(500, {"type": "error", "error": {"type": "api_error",
                                                                                    "message": message}})
        return out
