"""OpenAI's Batch API: upload a JSONL of chat-completion requests, create a batch, collect its files."""

from __future__ import annotations

import json
import os
from typing import Any

import openai

from ...backends.connections import tls_context
from ...errors import ConfigError
from .types import BatchStatus, encode_reply, failure, output_rows, unreadable

ENDPOINT = "/v1/chat/completions"
ENDED = ("completed", "failed", "expired", "cancelled")


class OpenAIBatches:
    """The Batch API through the official SDK (key from $OPENAI_API_KEY, never stored)."""

    name = "openai"
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024

    def __init__(self, *, base_url: str | None = None, http_client: Any = None) -> None:
        key = os.environ.get("OPENAI_API_KEY")
        if not key and base_url is None:
            raise ConfigError("the OpenAI Batch API needs an API key: set OPENAI_API_KEY")
        # the process's one TLS context (loading the CA store per client cost ~70 ms of CPU each)
        kwargs = {"http_client": http_client if http_client is not None else openai.DefaultHttpxClient(verify=tls_context())}
        self.client = openai.OpenAI(api_key=key or "not-needed", base_url=base_url, **kwargs)

    @staticmethod
    def _line(key: str, body: dict[str, Any]) -> str:
        return json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False)

    def line_size(self, key: str, body: dict[str, Any]) -> int:
        return len(self._line(key, body).encode()) + 1

    def submit(self, requests: dict[str, dict[str, Any]], tag: str) -> str:
        data = "".join(self._line(key, body) + "\n" for key, body in requests.items()).encode()
        upload = self.client.files.create(file=(f"{tag}.jsonl", data), purpose="batch")
        try:
            batch = self.client.batches.create(input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h",
                                               metadata={"judgeflow_tag": tag})
        except BaseException:
            self._delete_file(upload.id)
            raise
        return batch.id

    def find(self, tag: str, n: int, since: float, exclude: set[str]) -> str | None:
        for b in self.client.batches.list(limit=100):  # newest first, auto-paginated
            if b.created_at < since - 3600:
                break
            if (b.metadata or {}).get("judgeflow_tag") == tag and b.id not in exclude:
                return b.id
        return None

    def discard(self, tag: str, since: float) -> list[str]:
        """Delete the input file(s) an interrupted `submit(..., tag)` uploaded (named after the tag) but
        never turned into a batch; return the ids that could not be deleted."""
        name, left = f"{tag}.jsonl", []
        for f in self.client.files.list(purpose="batch", order="desc"):  # newest first, auto-paginated
            if f.created_at and f.created_at < since - 3600:
                break
            if f.filename == name and not self._delete_file(f.id):
                left.append(f.id)
        return left

    def status(self, batch_id: str) -> BatchStatus:
        b = self.client.batches.retrieve(batch_id)
        counts = b.request_counts.model_dump() if b.request_counts else {}
        return BatchStatus(batch_id=batch_id, state=b.status, done=b.status in ENDED, counts=counts)

    def results(self, batch_id: str, keys: set[str]) -> tuple[dict[str, str], dict[str, tuple[str, bool]]]:
        b = self.client.batches.retrieve(batch_id)
        ok: dict[str, str] = {}
        failed: dict[str, tuple[str, bool]] = {}
        problems: list[str] = []
        for file_id in (b.output_file_id, b.error_file_id):
            if file_id:
                text = self.client.files.content(file_id).text
                self._read_output(text, f"{file_id} (batch {batch_id})", keys, b.status, ok, failed, problems)
        whole = f"; {b.errors.model_dump(mode='json')}" if getattr(b, "errors", None) else ""
        for key in keys - ok.keys() - failed.keys():
            failed[key] = (failure(f"no result for this request in {b.status} batch {batch_id}{whole}"
                                   f"{unreadable(problems)}"), b.status == "cancelled")
        return ok, failed

    @staticmethod
    def _read_output(text: str, where: str, keys: set[str], state: str, ok: dict[str, str],
                     failed: dict[str, tuple[str, bool]], problems: list[str]) -> None:
        """One output or error file into `ok` / `failed`; a line that cannot be read goes to `problems`
        (its request, if known, fails alone and is sent again)."""
        for row, at in output_rows(text, where):
            key = row.get("custom_id") if row is not None else None
            if row is None or not isinstance(key, str):
                problems.append(at if row is None else f"{at}: no custom_id")
                continue
            if keys and key not in keys:
                continue
            response = row.get("response") if isinstance(row.get("response"), dict) else {}
            status = response.get("status_code")
            if not row.get("error") and (not isinstance(status, int) or isinstance(status, bool)):
                failed[key] = (failure(f"{at}: status_code {status!r} is not a number"), False)
                continue
            if not row.get("error") and 200 <= status < 300:
                ok[key] = encode_reply(status, response.get("body"))
                continue
            body = response.get("body")
            error = row.get("error") or (body.get("error") if isinstance(body, dict) else None) or {"message": f"HTTP {status}"}
            code = error.get("code") if isinstance(error, dict) else None
            failed[key] = (failure(f"batch request failed ({state} {where}): {error}"), code == "batch_cancelled")

    def delete(self, batch_id: str) -> list[str]:
        b = self.client.batches.retrieve(batch_id)
        return [f for f in (b.input_file_id, b.output_file_id, b.error_file_id) if f and not self._delete_file(f)]

    def _delete_file(self, file_id: str) -> bool:
        try:
            self.client.files.delete(file_id)
        except openai.NotFoundError:
            return True  # already gone
        except openai.OpenAIError:
            return False
        return True
