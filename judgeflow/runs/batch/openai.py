"""OpenAI's Batch API: upload a JSONL of chat-completion requests, create a batch, collect its files."""

from __future__ import annotations

import json
import os
from typing import Any

import openai

from . import BatchStatus, encode_reply
from ...errors import ConfigError

ENDPOINT = "/v1/chat/completions"


class OpenAIBatches:
    """The Batch API through the official SDK (key from $OPENAI_API_KEY, never stored)."""

    name = "openai"

    def __init__(self, *, base_url: str | None = None, http_client: Any = None) -> None:
        key = os.environ.get("OPENAI_API_KEY")
        if not key and base_url is None:
            raise ConfigError("the OpenAI Batch API needs an API key: set OPENAI_API_KEY")
        kwargs = {"http_client": http_client} if http_client is not None else {}
        self.client = openai.OpenAI(api_key=key or "not-needed", base_url=base_url, **kwargs)

    def submit(self, requests: dict[str, dict[str, Any]]) -> str:
        lines = [json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False)
                 for key, body in requests.items()]
        upload = self.client.files.create(file=("judgeflow-batch.jsonl", ("\n".join(lines) + "\n").encode()),
                                          purpose="batch")
        batch = self.client.batches.create(input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h")
        return batch.id

    def status(self, batch_id: str) -> BatchStatus:
        b = self.client.batches.retrieve(batch_id)
        counts = b.request_counts.model_dump() if b.request_counts else {}
        return BatchStatus(batch_id=batch_id, state=b.status, done=b.status == "completed",
                           failed=b.status in ("failed", "expired", "cancelled"), counts=counts)

    def results(self, batch_id: str) -> dict[str, str]:
        b = self.client.batches.retrieve(batch_id)
        out: dict[str, str] = {}
        for file_id in (b.output_file_id, b.error_file_id):
            if not file_id:
                continue
            for line in self.client.files.content(file_id).text.splitlines():
                if not line.strip():
                    continue
                row = json.loads(line)
                response = row.get("response") or {}
                if row.get("error") or not response:
                    error = row.get("error") or {"message": "no response"}
                    out[row["custom_id"]] = encode_reply(500, {"error": {"message": f"batch request failed: {error}"}})
                else:
                    out[row["custom_id"]] = encode_reply(int(response.get("status_code", 200)), response.get("body"))
        return out
