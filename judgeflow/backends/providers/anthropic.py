"""anthropic/<model>: Anthropic's Messages API, or an Anthropic-compatible endpoint with --base-url."""

from __future__ import annotations

import os
from typing import Any

from .base import Provider, SdkArgs, missing_key


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

    def make_wire(self) -> Any:
        from ..llm.wire import AnthropicWire

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


PROVIDER = Anthropic()
