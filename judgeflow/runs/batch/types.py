"""The small types the batch providers share: a batch's status and a reply as the store keeps it.

A module of its own so that `batch/openai.py` and `batch/anthropic.py` import only these, never the
package that imports them (no import cycle).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


def encode_reply(status: int, body: Any) -> str:
    """A provider reply as the store keeps it."""
    return json.dumps({"status": status, "body": body}, ensure_ascii=False)


@dataclass
class BatchStatus:
    """Where a submitted batch is."""

    batch_id: str
    state: str
    """The provider's own status word (in_progress, completed, ended, failed, expired, cancelled, ...)."""
    done: bool
    """True when the batch has ended, in any state: its results (possibly none) can be collected."""
    counts: dict[str, int] = field(default_factory=dict)


def failure(message: str) -> str:
    """A failed line as the transport replays it once the failure is final (a 500 error body)."""
    return encode_reply(500, {"type": "error", "error": {"type": "api_error", "message": message}})


def output_rows(text: str, where: str) -> Iterator[tuple[dict[str, Any] | None, str]]:
    """The lines of a provider's batch output file, each as (row, where) or (None, problem): a torn
    line, or one that is not a JSON object, fails that line only; `where` names the file and line."""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        at = f"{where} line {n}"
        try:
            row = json.loads(line)
        except ValueError as e:
            yield None, f"{at}: not valid JSON ({getattr(e, 'msg', e)}, column {getattr(e, 'colno', '?')})"
            continue
        if not isinstance(row, dict):
            yield None, f"{at}: a JSON {type(row).__name__}, not an object"
            continue
        yield row, at


def unreadable(problems: list[str]) -> str:
    """What the message of a request with no result adds when some lines could not be read."""
    if not problems:
        return ""
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"; unreadable lines: {'; '.join(problems[:3])}{more}"


def failure_text(reply: str) -> str:
    """The message of a failure reply (`failure`)."""
    try:
        return str(json.loads(reply)["body"]["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return reply
