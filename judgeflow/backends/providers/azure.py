"""azure/<deployment>: Azure OpenAI on the resource endpoint (--base-url or $AZURE_OPENAI_ENDPOINT)."""

from __future__ import annotations

import os
from typing import Any

from ...errors import ConfigError
from .base import Provider, SdkArgs
from .wire import Wire


class Azure(Provider):
    name = "azure"
    prices_id = 'azure'
    key_env = ("AZURE_OPENAI_API_KEY",)

    def make_wire(self) -> Wire:
        return AzureWire()

    def sdk_client(self, model: str, base_url: str | None, api_key: str | None, *, api_version: str | None,
                   **kwargs: Any) -> tuple[SdkArgs, str | None]:
        endpoint = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        key = api_key or os.environ.get("AZURE_OPENAI_API_KEY")
        if not endpoint or not key:
            raise ConfigError(f"model {model!r} needs an Azure endpoint and key: set AZURE_OPENAI_ENDPOINT "
                              "(or --base-url https://<resource>.openai.azure.com) and AZURE_OPENAI_API_KEY")
        version = api_version or os.environ.get("OPENAI_API_VERSION") or "2024-10-21"
        return SdkArgs("openai", "AsyncAzureOpenAI", dict(api_key=key, azure_endpoint=endpoint, api_version=version,
                                                          **kwargs)), endpoint


class AzureWire(Wire):
    """The Azure OpenAI wire: the OpenAI wire, `auto` picking strict tools as on OpenAI's own API (an Azure
    endpoint is always a base URL, which would otherwise pick plain tools)."""

    def auto_structured(self, base_url: str | None) -> str:
        return "tools_strict"


PROVIDER = Azure()
