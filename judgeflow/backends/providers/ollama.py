"""ollama/<model>: a local Ollama server (OLLAMA_BASE_URL, else localhost:11434), OpenAI wire, free."""

from __future__ import annotations

import os
from typing import Any

from .base import Provider, SdkArgs
from .wire import Wire

DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"


class Ollama(Provider):
    name = "ollama"
    prices_id = None
    key_env = ()
    free = True
    local = True

    def make_wire(self) -> Wire:
        return OllamaWire()

    def sdk_client(self, model: str, base_url: str | None, api_key: str | None, *, api_version: str | None,
                   **kwargs: Any) -> tuple[SdkArgs, str | None]:
        base_url = base_url or os.environ.get("OLLAMA_BASE_URL") or DEFAULT_OLLAMA_URL
        return super().sdk_client(model, base_url, api_key or "ollama", api_version=api_version, **kwargs)


class OllamaWire(Wire):
    """The Ollama wire: the OpenAI wire, `auto` picking json_schema (structured outputs)."""

    def auto_structured(self, base_url: str | None) -> str:
        return "json_schema"


PROVIDER = Ollama()
