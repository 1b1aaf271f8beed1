"""Moved: the wires are hooks of their providers now (backends/providers/: the OpenAI wire's defaults
in `providers/wire.py`, `AnthropicWire` in `providers/anthropic.py`, `OllamaWire` in
`providers/ollama.py`, `AzureWire` in `providers/azure.py`). These names stay importable from
here until 0.4 (CHANGELOG, "Moved")."""

from __future__ import annotations

from ..providers.anthropic import ANTHROPIC_CACHE_MINIMUM, AnthropicWire
from ..providers.azure import AzureWire
from ..providers.ollama import OllamaWire
from ..providers.wire import GivenClient, Wire, instructor_mode

__all__ = ["ANTHROPIC_CACHE_MINIMUM", "AnthropicWire", "AzureWire", "GivenClient", "OllamaWire", "Wire",
           "instructor_mode"]
