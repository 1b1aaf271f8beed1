"""The providers: one module each, every hook in it (`base.Provider`); one lazy table, `PROVIDERS`.

    provider("anthropic").tpm_bucket()          # "input": what --tpm limits on its wire
    provider_of("azure/my-deployment").wire()   # the ask loop's hooks for it

A new provider is one module here with a `PROVIDER` and one row in `PROVIDERS` (its name -> its
module); nothing else compares provider names (tests/test_architecture.py checks it). Modules are
imported on first use, so importing judgeflow loads no provider code and no SDK.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import TYPE_CHECKING

from ...errors import ConfigError
from .wire import GivenClient, Wire

if TYPE_CHECKING:
    from .base import Provider

#: every provider judgeflow speaks to: "provider" in "provider/model" -> its module (imported lazily)
PROVIDERS: dict[str, str] = {
    "openai": "openai", "anthropic": "anthropic", "ollama": "ollama", "azure": "azure",
    "google": "google", "bedrock": "bedrock", "mistral": "mistral",
}


@cache
def provider(name: str) -> Provider:
    """The provider called `name` (a wire family name, "openai" or "anthropic", is one too)."""
    module = PROVIDERS.get(name.lower())
    if module is None:
        raise ConfigError(
            f"unknown provider {name!r}; use one of {', '.join(PROVIDERS)} (any OpenAI-compatible server: "
            "openai/<model> with --base-url), or baseline/lexical, baseline/rouge-l for offline judges")
    made: Provider = importlib.import_module(f"{__name__}.{module}").PROVIDER
    return made


def provider_of(model: str) -> Provider:
    """The provider of "provider/model"."""
    return provider(model.partition("/")[0])


def wire_of(name: str, *, given_client: bool = False) -> Wire:
    """The ask loop's hooks for provider `name` (an unknown name speaks the OpenAI wire); with a ready
    Instructor client, the ones that leave its requests alone."""
    wire = provider(name if known(name) else "openai").wire()
    return GivenClient(wire) if given_client else wire


def known(name: str) -> bool:
    """Whether `name` is a provider (not an offline judge or a typo)."""
    return name.lower() in PROVIDERS


__all__ = ["PROVIDERS", "known", "provider", "provider_of", "wire_of"]
