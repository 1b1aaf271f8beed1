"""How a provider's wire differs, as hooks (in the way of inspect_ai's `ModelAPI`): the ask loop
(client.py) calls them and never branches on the provider.

`Wire` is the OpenAI wire (openai/, ollama/, azure/ and any OpenAI-compatible server);
`AnthropicWire` and `GivenClient` (a ready Instructor client: Gemini, Bedrock and Mistral through
Instructor's `from_provider`, or one given by a test) override what differs.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

#: Anthropic's minimum cacheable prefix (tokens) by model name prefix; 1024 for the others
ANTHROPIC_CACHE_MINIMUM = (("claude-opus-4-5", 4096), ("claude-opus-4-6", 4096), ("claude-haiku-4-5", 4096),
                           ("claude-sonnet-4-6", 2048), ("claude-3-5-haiku", 2048), ("claude-3-haiku", 2048))


def instructor_mode(structured: str) -> Any:
    """Instructor's mode for a --structured choice."""
    import instructor

    if structured in ("tools", "tools_strict"):
        return instructor.Mode.TOOLS
    return instructor.Mode.JSON_SCHEMA if structured == "json_schema" else instructor.Mode.JSON


class Wire:
    """The OpenAI wire: the defaults every hook falls back to."""

    #: the wire format (the rate limiter reads its headers and counts its tokens by it)
    name = "openai"
    #: requests can mark where their shared prefix ends (`with_cache_breakpoint`); the OpenAI wire
    #: caches common prefixes by itself
    prompt_caching = False

    def auto_structured(self, base_url: str | None) -> str:
        """The structured-output mode `auto` picks for this endpoint."""
        return "tools_strict" if base_url is None else "tools"  # local servers: llama.cpp rejects json_schema

    def sampling(self, kwargs: dict[str, Any], temperature: float | None) -> None:
        """Put the sampling temperature (None: not sent) into the create call's arguments."""
        if temperature is not None:
            kwargs["temperature"] = temperature

    def request_shape(self, response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
        """Request fields that Instructor's own request lacks for this mode (sent as extra_body)."""
        return _shape(response_model, structured, custom_url)

    def with_cache_breakpoint(self, messages: list[dict[str, Any]], prefix: int, model: str,
                              response_model: type[BaseModel]) -> list[dict[str, Any]]:
        """The messages marked where the prefix shared with other requests ends; the OpenAI wire caches
        common prefixes by itself (unchanged)."""
        return messages

    def instructor(self, sdk: Any, structured: str) -> Any:
        """The Instructor client over the SDK client `sdk` for a mode."""
        import instructor

        return instructor.from_openai(sdk, mode=instructor_mode(structured))


class OllamaWire(Wire):
    def auto_structured(self, base_url: str | None) -> str:
        return "json_schema"


class AzureWire(Wire):
    def auto_structured(self, base_url: str | None) -> str:
        return "tools_strict"


class AnthropicWire(Wire):
    """The Anthropic Messages wire: temperature in the body, tools as Instructor sends them, and
    `cache_control` breakpoints for prompt caching."""

    name = "anthropic"
    prompt_caching = True

    def auto_structured(self, base_url: str | None) -> str:
        return "tools"

    def sampling(self, kwargs: dict[str, Any], temperature: float | None) -> None:
        if temperature is not None:
            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "temperature": temperature}

    def request_shape(self, response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
        return {}

    def with_cache_breakpoint(self, messages: list[dict[str, Any]], prefix: int, model: str,
                              response_model: type[BaseModel]) -> list[dict[str, Any]]:
        name = model.partition("/")[2]
        minimum = next((n for start, n in ANTHROPIC_CACHE_MINIMUM if name.startswith(start)), 1024)
        return _with_breakpoint(messages, prefix, minimum, _schema_chars(response_model))

    def instructor(self, sdk: Any, structured: str) -> Any:
        import instructor

        return instructor.from_anthropic(sdk, mode=instructor_mode(structured))


class GivenClient(Wire):
    """A ready Instructor client (from_provider's, or a test's): it builds its own requests."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire

    prompt_caching = False

    def auto_structured(self, base_url: str | None) -> str:
        return "tools"

    def sampling(self, kwargs: dict[str, Any], temperature: float | None) -> None:
        self.wire.sampling(kwargs, temperature)

    def request_shape(self, response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
        return {}


@lru_cache(maxsize=1024)
def _shape(response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
    """The extra request fields for a reply model and mode, built once (never mutated by callers)."""
    schema = response_model.model_json_schema()
    name, description = schema.get("title", response_model.__name__), schema.get("description", "")
    params = {k: v for k, v in schema.items() if k not in ("title", "description")}
    if structured == "tools_strict":
        return {"tools": [{"type": "function", "function": {
            "name": name, "description": description, "parameters": params, "strict": True}}]}
    if structured == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "schema": params, "strict": True}}}
    if structured == "json" and custom_url:
        # llama.cpp and others constrain decoding to a schema given with json_object
        return {"response_format": {"type": "json_object", "schema": params}}
    return {}


@lru_cache(maxsize=1024)
def _schema_chars(response_model: type[BaseModel]) -> int:
    """Characters of a reply model's schema (the tool definition is part of the cached prefix)."""
    return len(json.dumps(response_model.model_json_schema()))


def _with_breakpoint(messages: list[dict[str, Any]], prefix: int, minimum: int,
                     extra_chars: int = 0) -> list[dict[str, Any]]:
    """The messages with the last one split at `prefix` characters into two text blocks, the first
    marked `cache_control: ephemeral` (Anthropic caches tools, system and that block), if the part
    up to there is at least `minimum` tokens (chars / 4); else the messages unchanged."""
    *head, last = messages
    text = last["content"]
    if not isinstance(text, str) or not 0 < prefix < len(text):
        return messages
    if (extra_chars + sum(len(m["content"]) for m in head if isinstance(m["content"], str)) + prefix) / 4 < minimum:
        return messages
    blocks = [{"type": "text", "text": text[:prefix], "cache_control": {"type": "ephemeral"}},
              {"type": "text", "text": text[prefix:]}]
    return [*head, {**last, "content": blocks}]
