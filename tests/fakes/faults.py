"""Injected faults for the schema fake (schema_provider.py), drawn as ../shared/tools/fake_llm.py draws
them: a share `error_rate` of model requests is answered 429 (retry-after: 0) and 500 in turn, and a
share `garbage_rate` of the structured ones gets a 200 whose JSON is unreadable; one seeded stream.

    faults = Faults(error_rate=0.3, garbage_rate=0.1, seed=1)
    faults.draw(structured=True)   # None, "http429", "http500" or "garbage"
"""

from __future__ import annotations

import random
import threading
from typing import Any

GARBAGE = [
    '{"result": [1, 2, <<truncated',
    "Sure! Here is the JSON you asked for: {not: valid json,,}",
    '{"unterminated": "string',
    "```json\n{'single': 'quotes', trailing: }\n```",
]


class Faults:
    """The fault stream; `error_rate` and `garbage_rate` may be changed while the fake runs."""

    def __init__(self, *, error_rate: float = 0.0, garbage_rate: float = 0.0, seed: Any = 0) -> None:
        self.error_rate, self.garbage_rate = error_rate, garbage_rate
        self.rng = random.Random(f"faults:{seed}")
        self.errors = 0
        self._lock = threading.Lock()

    def draw(self, structured: bool) -> str | None:
        with self._lock:
            if self.error_rate > 0 and self.rng.random() < self.error_rate:
                self.errors += 1
                return "http429" if self.errors % 2 == 1 else "http500"
            if structured and self.garbage_rate > 0 and self.rng.random() < self.garbage_rate:
                return "garbage"
        return None


def error_body(wire: str, kind: str, message: str) -> dict[str, Any]:
    """An error reply in the wire's own shape."""
    if wire == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def fault_reply(wire: str, fault: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    """(status, body, headers) of an injected "http429" or "http500"."""
    if fault == "http429":
        return 429, error_body(wire, "rate_limit_error", "fake rate limit (injected)"), \
            {"retry-after": "0", "x-ratelimit-remaining-requests": "0"}
    return 500, error_body(wire, "api_error" if wire == "anthropic" else "server_error", "fake server error (injected)"), {}


def garble(reply: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """`reply` with its structured part (tool arguments, tool input or JSON content) made unreadable."""
    text = rng.choice(GARBAGE)
    for choice in reply.get("choices", []):
        calls = choice["message"].get("tool_calls")
        if calls:
            calls[0]["function"]["arguments"] = text
        else:
            choice["message"]["content"] = text
    for block in reply.get("content", []):
        if block.get("type") == "tool_use":
            block["input"] = text  # the wire wants an object: a string of broken JSON, as fake_llm.py sends
    return reply
