"""anthropic/<model>: Anthropic's Messages API, or an Anthropic-compatible endpoint with --base-url."""

from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .base import Provider, SdkArgs, missing_key
from .wire import Wire, instructor_mode

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .profiles import Profile

#: Anthropic's minimum cacheable prefix (tokens) by model name prefix; 1024 for the others
ANTHROPIC_CACHE_MINIMUM = (("claude-opus-4-5", 4096), ("claude-opus-4-6", 4096), ("claude-haiku-4-5", 4096),
                           ("claude-sonnet-4-6", 2048), ("claude-3-5-haiku", 2048), ("claude-3-haiku", 2048))


class Anthropic(Provider):
    name = "anthropic"
    prices_id = 'anthropic'
    family = "anthropic"
    family_title = "Anthropic"
    key_env = ("ANTHROPIC_API_KEY",)
    sdk_module = "anthropic"
    error_base = "AnthropicError"
    batch = "judgeflow.runs.batch.anthropic:AnthropicBatches"
    refuses = {"tools_strict": "is for OpenAI-wire models; anthropic/ supports tools, json_schema and json"}

    def make_wire(self) -> Wire:
        return AnthropicWire()

    def tpm_bucket(self) -> str:
        return "input"  # Anthropic limits input tokens per minute (and output apart)

    def costs(self, tokens: float, out: float) -> tuple[float, float, float, float]:
        return (1.0, 0.0, tokens, out)

    def temperature(self, temperature: float | None, base_url: str | None) -> float | None:
        return temperature if base_url else None  # its own API takes no sampling parameters for current models

    def sdk_client(self, model: str, base_url: str | None, api_key: str | None, *, api_version: str | None,
                   **kwargs: Any) -> tuple[SdkArgs, str | None]:
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            if base_url is None:
                raise missing_key(model, "ANTHROPIC_API_KEY")
            key = "not-needed"
        return SdkArgs("anthropic", "AsyncAnthropic", dict(api_key=key, base_url=base_url, **kwargs)), base_url


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

    def reasoning(self, kwargs: dict[str, Any], profile: Profile, effort: str) -> None:
        """Thinking: budgeted (`thinking.budget_tokens` >= 1024 and below max_tokens, which the client's
        budget holds: the allowance plus the reply) or adaptive (`output_config.effort`); with either, no
        forced tool choice (profiles.ANTHROPIC_THINKING, ANTHROPIC_ADAPTIVE)."""
        if effort == "none":
            return
        if profile.knob == "thinking":
            kwargs["thinking"] = {"type": "enabled", "budget_tokens": profile.allowance(effort)}
        elif profile.knob == "adaptive":
            kwargs["thinking"] = {"type": "adaptive"}
            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "output_config": {"effort": effort}}
        else:
            return
        kwargs["tool_choice"] = {"type": "auto"}  # thinking refuses a forced tool call

    def request_shape(self, response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
        return {}

    def with_cache_breakpoint(self, messages: list[dict[str, Any]], prefix: int, model: str,
                              response_model: type[BaseModel]) -> list[dict[str, Any]]:
        name = model.partition("/")[2]
        minimum = next((n for start, n in ANTHROPIC_CACHE_MINIMUM if name.startswith(start)), 1024)
        return with_breakpoint(messages, prefix, minimum, schema_chars(response_model))

    def instructor(self, sdk: Any, structured: str) -> Any:
        import instructor

        return instructor.from_anthropic(sdk, mode=instructor_mode(structured))


@lru_cache(maxsize=1024)
def schema_chars(response_model: type[BaseModel]) -> int:
    """Characters of a reply model's schema (the tool definition is part of the cached prefix)."""
    return len(json.dumps(response_model.model_json_schema()))


def with_breakpoint(messages: list[dict[str, Any]], prefix: int, minimum: int,
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


PROVIDER = Anthropic()
