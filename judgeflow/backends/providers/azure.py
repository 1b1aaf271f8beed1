"""azure/<deployment>: Azure OpenAI on the resource endpoint (--base-url or $AZURE_OPENAI_ENDPOINT)."""

from __future__ import annotations

import os
from typing import Any

from ...errors import ConfigError
from .base import Provider, SdkArgs


class Azure(Provider):
    name = "azure"
    prices_id = 'azure'
    key_env = ("AZURE_OPENAI_API_KEY",)

    def make_wire(self) -> Any:
        from ..llm.wire import AzureWire

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


PROVIDER = Azure()
