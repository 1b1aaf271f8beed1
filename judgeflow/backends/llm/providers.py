"""Per-provider construction: `make_client("provider/model", ...)` builds the SDK client and the
`LLMClient`; a provider's differences from the OpenAI wire are the hooks of its `Wire` (wire.py),
never branches in the ask loop (client.py).

Providers: `openai/<model>`, `anthropic/<model>`, `ollama/<model>`, `azure/<deployment>`;
through Instructor's `from_provider`: `google/<model>` (Gemini), `bedrock/<model>`,
`mistral/<model>`. With `base_url`, `openai/` speaks to any OpenAI-compatible server (vLLM,
llama.cpp, LM Studio) and `anthropic/` to any Anthropic-compatible endpoint.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlparse

from ...errors import ConfigError
from ...redact import remember_secret
from ..connections import LoopClient, check_transport, sdk_client
from ..limits import DEFAULT_MAX_WAIT, limiter_for
from .client import DEFAULT_MAX_TOKENS_CAP, STRUCTURED, LLMClient
from .failures import _short
from .wire import WIRES, instructor_mode, wire_of

PROVIDERS = ("openai", "anthropic", "ollama", "azure", "google", "bedrock", "mistral")
DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"
#: seconds per request to a provider's API (the default --timeout)
DEFAULT_TIMEOUT = 120.0
#: seconds per request to a local endpoint (ollama/, a --base-url on localhost): a 7B model on a
#: laptop CPU takes 90-170 s a call, and a single-slot server queues the rest behind it
LOCAL_TIMEOUT = 900.0
_LOOPBACK = ("localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0")


def is_local(provider: str, base_url: str | None) -> bool:
    """ollama/, or a base URL on this machine: an endpoint that computes each request itself (a
    request that timed out is likely still being computed, so it is not sent again)."""
    if provider == "ollama" and not base_url:
        return True
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "") if base_url else ""
    return host in _LOOPBACK or host.endswith(".localhost")
#: optional SDKs for the providers reached through Instructor's from_provider: (module, pip extra)
_FROM_PROVIDER = {"google": ("google.genai", "google"), "bedrock": ("boto3", "bedrock"),
                  "mistral": ("mistralai", "mistral")}
#: where those SDKs read their keys: judgeflow masks them by value (`redact.remember_secret`)
_KEY_ENV = {"google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"), "mistral": ("MISTRAL_API_KEY",),
            "bedrock": ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")}


def parse_model(model: str) -> tuple[str, str]:
    """Split "provider/model" (the model part may itself contain slashes)."""
    provider, sep, name = model.partition("/")
    if not sep or not provider or not name:
        raise ConfigError(
            f'model {model!r} must be in the form "provider/model", e.g. "openai/gpt-4o-mini", '
            f'"anthropic/claude-sonnet-4-5", "ollama/llama3.1" or "baseline/lexical"'
        )
    return provider.lower(), name


def check_base_url(base_url: str) -> str:
    """A base URL must be http(s)://host[:port][/path]; say how to fix it otherwise."""
    u = urlparse(base_url)
    try:
        u.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        u = u._replace(netloc="")
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ConfigError(f"--base-url {base_url!r} is not a valid URL: give http(s)://host:port/path, e.g. "
                          "http://127.0.0.1:8000/v1 for a local OpenAI-compatible server")
    return base_url


def deadline(provider: str, base_url: str | None, timeout: float | None) -> tuple[bool, float]:
    """(local, seconds per request): DEFAULT_TIMEOUT, or LOCAL_TIMEOUT for a local endpoint
    (`is_local`), whose SDK also gets no retries: a timed-out request is never sent again while the
    server may still be computing it (the client retries other transient errors itself)."""
    local = is_local(provider, base_url)
    return local, timeout if timeout is not None else LOCAL_TIMEOUT if local else DEFAULT_TIMEOUT


def make_client(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    temperature: float | None = 0.0,
    max_retries: int = 2,
    provider_retries: int = 4,
    timeout: float | None = None,
    http_client: Any = None,
    structured: str = "auto",
    max_tokens: int | None = None,
    max_tokens_cap: int = DEFAULT_MAX_TOKENS_CAP,
    api_version: str | None = None,
    http_transport: str = "auto",
    rpm: float | None = None,
    tpm: float | None = None,
    max_wait: float = DEFAULT_MAX_WAIT,
) -> LLMClient:
    """Build an LLMClient for "provider/model".

    Args:
        model: "openai/gpt-4o-mini", "anthropic/claude-...", "ollama/llama3.1", "azure/<deployment>",
            "google/gemini-2.5-flash", "bedrock/<model id>", "mistral/mistral-large-latest".
        base_url: an OpenAI- or Anthropic-compatible endpoint (vLLM, llama.cpp, LM Studio, proxies);
            for azure/, the resource endpoint (else $AZURE_OPENAI_ENDPOINT).
        api_key: defaults to the provider's usual environment variable.
        temperature: 0 by default, so verdicts are as repeatable as the provider allows. For
            anthropic/ it is sent only to a custom base_url (Anthropic's own API has no sampling
            parameters for current models); pass None to never send it.
        max_retries: Instructor re-asks after an invalid structured reply.
        provider_retries: SDK retries on 429/5xx/timeouts (backoff with jitter, honours retry-after).
        timeout: seconds per HTTP request; None: the endpoint's default (`deadline`).
        http_client: an httpx2 client for the SDK (tests use a MockTransport).
        structured: auto | tools | tools_strict | json_schema | json (see the module docstring).
        max_tokens, max_tokens_cap: a fixed max_tokens for every call (None: sized), and the largest.
        api_version: Azure OpenAI API version (else $OPENAI_API_VERSION, else a recent GA one).
        http_transport: auto | aiohttp | httpx: the SDK's HTTP stack (see `connections`); auto
            takes aiohttp when installed (less client CPU per request). Ignored with http_client.
        rpm, tpm, max_wait: the endpoint's limits per minute when its replies carry no rate-limit
            headers (see `limits`), and the seconds an item may wait on them before it is unscored.
    """
    provider, name = parse_model(model)
    base_url = _checked(structured, base_url or os.environ.get("JUDGEFLOW_BASE_URL") or None, max_tokens)
    common: dict[str, Any] = {"model": model, "provider": provider, "max_retries": max_retries,
                              "provider_retries": provider_retries, "local": is_local(provider, base_url),
                              "max_tokens": max_tokens, "max_tokens_cap": max(max_tokens_cap, 16)}
    if provider in _FROM_PROVIDER:
        if base_url:  # from_provider would hand it to the create call, not the SDK client (STYLE.md)
            raise ConfigError(f"--base-url is not supported for {provider}/ models (configure the endpoint "
                              f"through the {provider} SDK's own settings), or use openai/<model> with --base-url "
                              "for an OpenAI-compatible gateway")
        return _from_provider(name, structured=structured, api_key=api_key, temperature=temperature, **common)
    local, common["timeout"] = deadline(provider, base_url, timeout)
    sdk_kwargs: dict[str, Any] = {"max_retries": 0 if local else provider_retries, "timeout": common["timeout"],
                                  "transport": check_transport(http_transport)}
    if http_client is not None:
        sdk_kwargs["http_client"] = http_client
    limits = {"rpm": rpm, "tpm": tpm, "max_wait": max_wait}
    return _sdk_client(base_url, api_key, api_version, structured, temperature, sdk_kwargs, common, limits)


def _checked(structured: str, base_url: str | None, max_tokens: int | None) -> str | None:
    """The base URL, once the settings every provider shares are known to be usable."""
    if structured not in STRUCTURED:
        raise ConfigError(f"--structured {structured!r} is not one of {', '.join(STRUCTURED)}")
    if base_url:
        check_base_url(base_url)
    if max_tokens is not None and max_tokens < 16:
        raise ConfigError(f"--max-tokens must be at least 16, got {max_tokens}")
    return base_url


def _sdk_client(base_url: str | None, api_key: str | None, api_version: str | None, structured: str,
                temperature: float | None, sdk_kwargs: dict[str, Any], common: dict[str, Any],
                limits: dict[str, Any]) -> LLMClient:
    """An LLMClient over the provider's own SDK client (openai/, ollama/, azure/, anthropic/)."""
    model, provider = common["model"], common["provider"]
    sdk = _SDK_CLIENTS.get(provider)
    if sdk is None:
        raise ConfigError(
            f"unknown provider {provider!r} in model {model!r}; use one of "
            f"{', '.join(PROVIDERS)} (any OpenAI-compatible server: openai/<model> with --base-url), "
            "or baseline/lexical, baseline/rouge-l for offline judges"
        )
    wire = WIRES[provider]
    mode = wire.auto_structured(base_url) if structured == "auto" else structured
    if provider == "anthropic" and mode == "tools_strict":
        raise ConfigError("--structured tools_strict is for OpenAI-wire models; anthropic/ supports "
                          "tools, json_schema and json")
    raw, base_url = sdk(model, base_url, api_key, api_version=api_version, **sdk_kwargs)
    if provider == "anthropic" and base_url is None:
        temperature = None  # Anthropic's own API takes no sampling parameters for current models
    limiter = limiter_for(provider, base_url, raw.keywords.get("api_key"), model)
    limiter.configure(limits["rpm"], limits["tpm"], wire=wire.name)
    return LLMClient(sdk=LoopClient(partial(raw, limiter=limiter)), temperature=temperature, base_url=base_url,
                     structured=mode, auto=structured == "auto", wire=wire, limiter=limiter,
                     max_wait=limits["max_wait"], **common)


def _missing_key(model: str, env: str) -> ConfigError:
    return ConfigError(f"model {model!r} needs an API key: set the {env} environment variable, "
                       "or use --model baseline/lexical to judge offline")


def _openai_sdk(model: str, base_url: str | None, api_key: str | None, *, api_version: str | None,
                **kwargs: Any) -> tuple[Callable[[], Any], str | None]:
    """openai/ and ollama/: AsyncOpenAI (a local server without a key gets a placeholder)."""
    if parse_model(model)[0] == "ollama":
        base_url = base_url or os.environ.get("OLLAMA_BASE_URL") or DEFAULT_OLLAMA_URL
        api_key = api_key or "ollama"
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if base_url is None:
            raise _missing_key(model, "OPENAI_API_KEY")
        key = "not-needed"  # local OpenAI-compatible servers usually ignore the key
    return partial(sdk_client, "openai", "AsyncOpenAI", api_key=key, base_url=base_url, **kwargs), base_url


def _azure_sdk(model: str, base_url: str | None, api_key: str | None, *, api_version: str | None,
               **kwargs: Any) -> tuple[Callable[[], Any], str | None]:
    """azure/: AsyncAzureOpenAI on the resource endpoint (--base-url or $AZURE_OPENAI_ENDPOINT)."""
    endpoint = base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
    key = api_key or os.environ.get("AZURE_OPENAI_API_KEY")
    if not endpoint or not key:
        raise ConfigError(f"model {model!r} needs an Azure endpoint and key: set AZURE_OPENAI_ENDPOINT "
                          "(or --base-url https://<resource>.openai.azure.com) and AZURE_OPENAI_API_KEY")
    version = api_version or os.environ.get("OPENAI_API_VERSION") or "2024-10-21"
    return partial(sdk_client, "openai", "AsyncAzureOpenAI", api_key=key, azure_endpoint=endpoint,
                   api_version=version, **kwargs), endpoint


def _anthropic_sdk(model: str, base_url: str | None, api_key: str | None, *, api_version: str | None,
                   **kwargs: Any) -> tuple[Callable[[], Any], str | None]:
    """anthropic/: AsyncAnthropic (a custom base URL without a key gets a placeholder)."""
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        if base_url is None:
            raise _missing_key(model, "ANTHROPIC_API_KEY")
        key = "not-needed"
    return partial(sdk_client, "anthropic", "AsyncAnthropic", api_key=key, base_url=base_url, **kwargs), base_url


#: provider -> (model, base_url, api_key, api_version=, **SDK kwargs) -> (SDK client factory, effective base URL)
_SDK_CLIENTS: dict[str, Callable[..., tuple[Callable[[], Any], str | None]]] = {
    "openai": _openai_sdk, "ollama": _openai_sdk, "azure": _azure_sdk, "anthropic": _anthropic_sdk,
}


def _from_provider(name: str, *, provider: str, structured: str, api_key: str | None,
                   temperature: float | None, **common: Any) -> LLMClient:
    """Gemini, Bedrock and Mistral through Instructor's own `from_provider` (their SDKs are optional).

    No base_url is passed on: from_provider hands unknown keyword arguments to the create call,
    not to the SDK client (see STYLE.md)."""
    module, extra = _FROM_PROVIDER[provider]
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise ConfigError(f"{provider}/ models need the {module.split('.')[0]} SDK: pip install 'judgeflow[{extra}]'")
    if structured == "tools_strict":
        raise ConfigError(f"--structured tools_strict is for OpenAI-wire models; {provider}/ supports "
                          "auto, tools, json_schema and json")
    mode_arg: dict[str, Any] = {}
    if structured != "auto":
        mode_arg["mode"] = instructor_mode(structured)
    if api_key:
        mode_arg["api_key"] = api_key
    for secret in (api_key, *map(os.environ.get, _KEY_ENV[provider])):
        remember_secret(secret)  # masked by value in everything judgeflow records
    import instructor

    try:
        client = instructor.from_provider(f"{provider}/{name}", async_client=True, **mode_arg)
    except Exception as e:  # noqa: BLE001 - the SDK's own configuration errors (credentials, region)
        raise ConfigError(f"cannot set up {provider}/{name}: {_short(e, 200)}") from None
    return LLMClient(client=client, provider=provider, temperature=temperature, wire=wire_of(provider, given_client=True),
                     structured="tools" if structured == "auto" else structured, **common)
