"""The batch APIs of the schema fake (schema_provider.py), with ../shared/tools/fake_llm.py's behaviour:
each line is answered by the same code as an online call (schema filling and faults apply; latency
and rate limits do not), when the batch ends.

  OpenAI    POST/GET /v1/files, GET/DELETE /v1/files/<id>, GET /v1/files/<id>/content;
            POST/GET /v1/batches, GET /v1/batches/<id>, POST /v1/batches/<id>/cancel.
            Output lines in a seeded shuffled order; failed lines go to the error file (a 500:
            response.status_code 500; a 429: response null, error.code request_timeout).
  Anthropic POST/GET /v1/messages/batches, GET/DELETE /v1/messages/batches/<id>,
            GET .../<id>/results, POST .../<id>/cancel.

A batch ends on its `polls`-th GET (0: ended when created). A cancel ends it on the next GET, with
the share of lines done by then (polls so far / `polls`) answered, the rest cancelled.
`expire_fraction` F leaves the last F of each batch's lines unanswered (OpenAI: status expired,
those lines in the error file as batch_expired; Anthropic: results of type expired).
"""

from __future__ import annotations

import email.policy
import hashlib
import json
import math
import random
import threading
import time
from collections.abc import Callable
from email.parser import BytesParser
from typing import Any

#: (wire, request body, batch id, custom_id) -> (status, reply body, fault or None)
Answer = Callable[[str, dict[str, Any], str, str], tuple[int, dict[str, Any], Any]]
_ENDED = ("completed", "failed", "expired", "cancelled")


def multipart(content_type: str, raw: bytes) -> tuple[dict[str, str], dict[str, tuple[str, bytes]]]:
    """({field: text}, {field: (file name, content)}) of a multipart/form-data body."""
    msg = BytesParser(policy=email.policy.default).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    fields: dict[str, str] = {}
    files: dict[str, tuple[str, bytes]] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if part.get_filename() is not None:
            files[str(name)] = (part.get_filename(), part.get_payload(decode=True))
        else:
            fields[str(name)] = part.get_payload(decode=True).decode()
    return fields, files


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class SchemaBatches:
    """Files, batches and message batches kept in memory; `route` serves one HTTP request."""

    def __init__(self, answer: Answer, base_url: Callable[[], str], *, seed: Any = 0, polls: int = 1,
                 expire_fraction: float = 0.0) -> None:
        self.answer, self.base_url, self.seed = answer, base_url, seed
        self.polls, self.expire_fraction = polls, expire_fraction
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._n = 0
        self._lock = threading.RLock()

    def _id(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n:04d}"

    def route(self, method: str, path: str, query: dict[str, str], content_type: str, raw: bytes) -> tuple[int, Any]:
        """(status, JSON value or bytes) for a request under /v1/files, /v1/batches or /v1/messages/batches."""
        parts = path.strip("/").split("/")[1:]  # without the "v1"
        with self._lock:
            if parts[0] == "files":
                return self._files(method, parts[1:], query, content_type, raw)
            kind = "openai" if parts[0] == "batches" else "anthropic"
            rest = parts[1:] if kind == "openai" else parts[2:]
            if not rest:
                if method == "POST":
                    return 200, self._create(kind, json.loads(raw))
                listed = [self._view(b) for b in reversed(self.batches.values()) if b["kind"] == kind]
                listed = listed[:int(query.get("limit") or 20)]
                return 200, {"object": "list", "data": listed, "has_more": False,
                             "first_id": listed[0]["id"] if listed else None, "last_id": listed[-1]["id"] if listed else None}
            b = self.batches.get(rest[0])
            if b is None:
                return 404, {"error": {"message": f"no batch {rest[0]}", "type": "not_found_error"}}
            return self._batch(method, b, rest[1] if len(rest) > 1 else None)

    def _files(self, method: str, parts: list[str], query: dict[str, str], content_type: str, raw: bytes) -> tuple[int, Any]:
        if not parts and method == "POST":
            fields, files = multipart(content_type, raw)
            name, data = files["file"]
            return 200, self._store(name, fields.get("purpose", "batch"), data)
        if not parts:
            listed = [f["meta"] for f in reversed(self.files.values())
                      if not query.get("purpose") or f["meta"]["purpose"] == query["purpose"]]
            return 200, {"object": "list", "data": listed, "has_more": False,
                         "first_id": listed[0]["id"] if listed else None, "last_id": listed[-1]["id"] if listed else None}
        f = self.files.get(parts[0])
        if f is None:
            return 404, {"error": {"message": f"No such File object: {parts[0]}", "type": "invalid_request_error"}}
        if method == "DELETE":
            del self.files[parts[0]]
            return 200, {"id": parts[0], "object": "file", "deleted": True}
        return 200, f["data"] if parts[1:] == ["content"] else f["meta"]

    def _store(self, name: str, purpose: str, data: bytes) -> dict[str, Any]:
        fid = self._id("file-")
        self.files[fid] = {"data": data, "meta": {"id": fid, "object": "file", "bytes": len(data), "filename": name,
                                                  "created_at": int(time.time()), "purpose": purpose, "status": "processed"}}
        return self.files[fid]["meta"]

    def _create(self, kind: str, req: dict[str, Any]) -> dict[str, Any]:
        if kind == "openai":
            raw = self.files[req["input_file_id"]]["data"].decode()
            lines = [json.loads(x) for x in raw.splitlines() if x.strip()]
            b = {"kind": kind, "id": self._id("batch_"), "status": "validating", "input": req["input_file_id"],
                 "metadata": req.get("metadata"), "lines": [(x["custom_id"], x["url"], x["body"]) for x in lines]}
        else:
            b = {"kind": kind, "id": self._id("msgbatch_"), "status": "in_progress",
                 "lines": [(r["custom_id"], "/v1/messages", r["params"]) for r in req["requests"]]}
        b.update(polls=0, need=self.polls, expire=self.expire_fraction, created=time.time(), counts={}, out=None, err=None)
        self.batches[b["id"]] = b
        if b["need"] == 0:
            self._end(b, cancelled=False)
        return self._view(b)

    def _batch(self, method: str, b: dict[str, Any], action: str | None) -> tuple[int, Any]:
        ended = b["status"] in (*_ENDED, "ended")
        if action == "cancel":
            if not ended:
                b["status"] = "cancelling" if b["kind"] == "openai" else "canceling"
            return 200, self._view(b)
        if action == "results":
            return (200, b["out"]) if ended else (400, {"type": "error", "error": {"type": "invalid_request_error",
                                                                                   "message": "not ended"}})
        if method == "DELETE":
            del self.batches[b["id"]]
            return 200, {"id": b["id"], "type": "message_batch_deleted"}
        b["polls"] += 1
        if b["status"] in ("cancelling", "canceling"):
            self._end(b, cancelled=True)
        elif not ended and b["polls"] >= b["need"]:
            self._end(b, cancelled=False)
        elif not ended and b["kind"] == "openai":
            b["status"] = "finalizing" if b["need"] >= 3 and b["polls"] == b["need"] - 1 else "in_progress"
        return 200, self._view(b)

    def _end(self, b: dict[str, Any], *, cancelled: bool) -> None:
        total, n = len(b["lines"]), b["need"]
        if cancelled:
            done = max(0, total * min(b["polls"] - 1, n) // n) if n else total
        else:
            done = total - (min(total, max(1, math.ceil(total * b["expire"]))) if b["expire"] > 0 and total else 0)
        order = random.Random(f"{self.seed}:order:{b['id']}")
        if b["kind"] == "openai":
            out, err = self._openai_lines(b, done, cancelled)
            order.shuffle(out)
            order.shuffle(err)
            b["out"] = self._store(f"{b['id']}_output.jsonl", "batch_output", _jsonl(out))["id"] if out else None
            b["err"] = self._store(f"{b['id']}_error.jsonl", "batch_output", _jsonl(err))["id"] if err else None
            b["counts"] = {"total": total, "completed": len(out), "failed": len(err)}
            b["status"] = "cancelled" if cancelled else "expired" if done < total else "completed"
        else:
            rows = self._anthropic_lines(b, done, cancelled)
            order.shuffle(rows)
            b["out"] = _jsonl(rows)
            b["counts"] = {k: sum(r["result"]["type"] == k for r in rows)
                           for k in ("succeeded", "errored", "canceled", "expired")}
            b["status"], b["ended"] = "ended", time.time()

    def _openai_lines(self, b: dict[str, Any], done: int, cancelled: bool) -> tuple[list[Any], list[Any]]:
        out: list[dict[str, Any]] = []
        err: list[dict[str, Any]] = []
        for i, (cid, _url, body) in enumerate(b["lines"]):
            rid = "batch_req_" + hashlib.sha256(f"{b['id']}:{cid}".encode()).hexdigest()[:24]
            if i >= done:
                code = "batch_cancelled" if cancelled else "batch_expired"
                err.append({"id": rid, "custom_id": cid, "response": None, "error": {"code": code, "message": code}})
                continue
            status, reply, fault = self.answer("openai", body, b["id"], cid)
            if fault == "http429":
                err.append({"id": rid, "custom_id": cid, "response": None,
                            "error": {"code": "request_timeout", "message": "the call to the model timed out (injected)"}})
                continue
            row = {"id": rid, "custom_id": cid, "error": None,
                   "response": {"status_code": status, "request_id": "req_" + rid[-24:], "body": reply}}
            (out if status == 200 else err).append(row)
        return out, err

    def _anthropic_lines(self, b: dict[str, Any], done: int, cancelled: bool) -> list[dict[str, Any]]:
        rows = []
        for i, (cid, _url, params) in enumerate(b["lines"]):
            if i >= done:
                result: dict[str, Any] = {"type": "canceled" if cancelled else "expired"}
            else:
                status, reply, _ = self.answer("anthropic", params, b["id"], cid)
                result = {"type": "succeeded", "message": reply} if status == 200 else {
                    "type": "errored", "error": {"type": "error", "error": reply.get("error")}}
            rows.append({"custom_id": cid, "result": result})
        return rows

    def _view(self, b: dict[str, Any]) -> dict[str, Any]:
        """The batch object as the provider shows it."""
        if b["kind"] == "openai":
            return {"id": b["id"], "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
                    "input_file_id": b["input"], "completion_window": "24h", "status": b["status"],
                    "created_at": int(b["created"]), "metadata": b["metadata"], "output_file_id": b["out"],
                    "error_file_id": b["err"], "request_counts": b["counts"] or {"total": len(b["lines"]),
                                                                                "completed": 0, "failed": 0}}
        ended = b["status"] == "ended"
        counts = {"processing": 0 if ended else len(b["lines"]), "succeeded": 0, "errored": 0, "canceled": 0,
                  "expired": 0, **b["counts"]}
        return {"id": b["id"], "type": "message_batch", "processing_status": b["status"], "request_counts": counts,
                "created_at": _iso(b["created"]), "expires_at": _iso(b["created"] + 86400),
                "ended_at": _iso(b["ended"]) if ended else None, "archived_at": None,
                "cancel_initiated_at": _iso(b["created"]) if b["status"] == "canceling" else None,
                "results_url": f"{self.base_url()}/v1/messages/batches/{b['id']}/results" if ended else None}
