"""The OpenAI and Anthropic wire formats of a reply, for both fakes (no dependencies, so that
tests/fakes/provider.py also runs as a script): a pydantic model or dict becomes a tool call named
after the model's class (or the request's first tool), a str plain text content."""

from __future__ import annotations

import json
from typing import Any


def _tool_name(reply: Any, request: dict) -> str:
    if hasattr(reply, "model_dump_json"):
        return type(reply).__name__
    tools = request.get("tools") or []
    if tools:
        t = tools[0]
        return t.get("function", {}).get("name") or t.get("name")
    return "reply"


def openai_body(reply: Any, request: dict, usage: tuple[int, int] = (100, 20)) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(reply, str):
        message["content"] = reply
    else:
        args = reply.model_dump_json() if hasattr(reply, "model_dump_json") else json.dumps(reply)
        message["tool_calls"] = [{
            "id": "call_1", "type": "function",
            "function": {"name": _tool_name(reply, request), "arguments": args},
        }]
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": request.get("model", "m"),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def anthropic_body(reply: Any, request: dict, usage: tuple[int, int] = (100, 20)) -> dict:
    if isinstance(reply, str):
        content = [{"type": "text", "text": reply}]
    else:
        data = json.loads(reply.model_dump_json()) if hasattr(reply, "model_dump_json") else reply
        content = [{"type": "tool_use", "id": "toolu_1", "name": _tool_name(reply, request), "input": data}]
    return {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": request.get("model", "m"),
        "content": content, "stop_reason": "tool_use" if content[0]["type"] == "tool_use" else "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }
