"""The small types the batch providers share: a batch's status and a reply as the store keeps it.

A module of its own so that `batch/openai.py` and `batch/anthropic.py` import only these, never the
package that imports them (no import cycle).
"""

from __future__ import annotations

import json
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
