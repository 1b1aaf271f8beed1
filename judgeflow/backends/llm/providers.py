"""Per-provider construction: `make_client("provider/model", ...)` builds the SDK client and the
`LLMClient`; a provider's differences from the OpenAI wire are the hooks of its `Wire` (backends/providers/),
never branches in the ask loop (client.py).

Providers: `openai/<model>`, `anthropic/<model>`, `ollama/<model>`, `azure/<deployment>`;
through Instructor's `from_provider`: `google/<model>` (Gemini), `bedrock/<model>`,
`mistral/<model>`. With `base_url`, `openai/` speaks to any OpenAI-compatible server (vLLM,
llama.cpp, LM Studio) and `anthropic/` to any Anthropic-compatible endpoint.
"""

from __future__ import annotations

import importlib.util
import os
from functools import partial
from typing import Any
from urllib.parse import urlparse

from ...config.client import ClientConfig
from ...errors import ConfigError
from ...redact import remember_secret
from ..connections import LoopClient, check_transport, sdk_client
from ..limits import limiter_for
from ..local_pace import CAP as PACE_CAP
from ..local_pace import pace_for
from ..providers import (
    PROVIDERS,  # noqa: F401 - re-exported by backends.llm (the one table)
    wire_of,
)
from ..providers import provider as provider_named
from ..providers.base import Provider
from ..providers.profiles import profile_of
from ..providers.wire import instructor_mode
from .client import STRUCTURED, LLMClient
from .failures import short

#: seconds per request to a provider's API (the default --timeout)
DEFAULT_TIMEOUT = 120.0
#: seconds per request to a local endpoint (ollama/, a --base-url on localhost): a 7B model on a
#: laptop CPU takes 90-170 s a call, and a single-slot server queues the rest behind it
LOCAL_TIMEOUT = 900.0
_LOOPBACK = ("localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0")


def is_local(provider: str, base_url: str | None) -> bool:
    """A local provider (ollama/) with no base URL, or a base URL on this machine: an endpoint that
    computes each request itself (a request that timed out is likely still being computed, so it is
    not sent again)."""
    if not base_url:
        return provider_named(provider).local
    host = urlparse(base_url).hostname or ""
    return host in _LOOPBACK or host.endswith(".localhost")


def deadline(provider: str, base_url: str | None, timeout: float | None) -> tuple[bool, float]:
    """(local, seconds per request): DEFAULT_TIMEOUT, or LOCAL_TIMEOUT for a local endpoint
    (`is_local`), whose SDK also gets no retries: a timed-out request is never sent again while the
    server may still be computing it (the client retries other transient errors itself)."""
    local = is_local(provider, base_url)
    return local, timeout if timeout is not None else LOCAL_TIMEOUT if local else DEFAULT_TIMEOUT


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


def make_client(model: str, config: ClientConfig | None = None, **options: Any) -> LLMClient:
    """Build an LLMClient for "provider/model" with `config` (every client option, see
    `judgeflow.config.ClientConfig`), or its fields as keyword arguments.

    Args:
        model: "openai/gpt-4o-mini", "anthropic/claude-...", "ollama/llama3.1", "azure/<deployment>",
            "google/gemini-2.5-flash", "bedrock/<model id>", "mistral/mistral-large-latest".
        config: base_url, api_key, temperature (0 by default, so verdicts are as repeatable as the
            provider allows; for anthropic/ sent only to a custom base_url), max_retries (re-asks),
            provider_retries, timeout, http_client (tests: a MockTransport), structured, max_tokens,
            max_tokens_cap, api_version, http_transport, rpm, tpm, max_wait, budget: each field documented
            there. A `budget` (`runs.budget.Budget`) is shared by every client given it: each call
            reserves its bound before it is sent (BudgetExceeded when it cannot fit).
    """
    c = ClientConfig.of(config, options)
    provider, name = parse_model(model)
    p = provider_named(provider)
    base_url = _checked(c.structured, c.base_url or os.environ.get("JUDGEFLOW_BASE_URL") or None, c.max_tokens)
    common: dict[str, Any] = {"model": model, "provider": provider, "max_retries": c.max_retries,
                              "provider_retries": c.provider_retries, "local": is_local(provider, base_url),
                              "max_tokens": c.max_tokens, "max_tokens_cap": max(c.max_tokens_cap, 16),
                              "budget": c.budget}
    profile = profile_of(model, c.profile)
    if profile.refused:  # before any call
        raise ConfigError(f"model {model!r} {profile.refused}")
    common.update(profile=profile, effort=profile.effort(c.reasoning_effort))
    if c.budget is not None:  # a dollar cap with no price for the model: refused now, before any call
        c.budget.check_model(model)
    if p.from_provider:
        if base_url and not getattr(p, "takes_base_url", False):
            # from_provider would hand it to the create call, not the SDK client (STYLE.md)
            raise ConfigError(f"--base-url is not supported for {provider}/ models (configure the endpoint "
                              f"through the {provider} SDK's own settings), or use openai/<model> with --base-url "
                              "for an OpenAI-compatible gateway")
        common["timeout"] = deadline(provider, base_url, c.timeout)[1]
        return _from_provider(p, name, structured=c.structured, api_key=c.api_key, temperature=c.temperature,
                              base_url=base_url, **common)
    local, common["timeout"] = deadline(provider, base_url, c.timeout)
    # requests in flight and the deadline follow the endpoint's replies (local_pace; the deadline is set
    # per request on the Deadline transport, which a caller's own http_client does not have); a given
    # --timeout keeps both as set (a localhost proxy to a hosted API, say)
    adaptive = local and c.timeout is None and c.http_client is None
    sdk_kwargs: dict[str, Any] = {"max_retries": 0 if local else c.provider_retries,
                                  "timeout": PACE_CAP if adaptive else common["timeout"],
                                  "transport": check_transport(c.http_transport)}
    if c.http_client is not None:
        sdk_kwargs["http_client"] = c.http_client
    limits = {"rpm": c.rpm, "tpm": c.tpm, "max_wait": c.max_wait,
              "pace": (common["timeout"], adaptive) if adaptive else None}
    return _sdk_client(p, base_url, c.api_key, c.api_version, c.structured, c.temperature, sdk_kwargs, common, limits)


def _checked(structured: str, base_url: str | None, max_tokens: int | None) -> str | None:
    """The base URL, once the settings every provider shares are known to be usable."""
    if structured not in STRUCTURED:
        raise ConfigError(f"--structured {structured!r} is not one of {', '.join(STRUCTURED)}")
    if base_url:
        check_base_url(base_url)
    if max_tokens is not None and max_tokens < 16:
        raise ConfigError(f"--max-tokens must be at least 16, got {max_tokens}")
    return base_url


def _sdk_client(p: Provider, base_url: str | None, api_key: str | None, api_version: str | None, structured: str,
                temperature: float | None, sdk_kwargs: dict[str, Any], common: dict[str, Any],
                limits: dict[str, Any]) -> LLMClient:
    """An LLMClient over the provider's own SDK client (openai/, ollama/, azure/, anthropic/)."""
    model, provider = common["model"], common["provider"]
    wire = p.wire_for(common["profile"].api)
    mode = wire.auto_structured(base_url) if structured == "auto" else structured
    if common["profile"].api == "responses" and mode != "tools":
        raise ConfigError(f"--structured {mode}: {model} is judged through OpenAI's Responses API, with a function "
                          "tool; use --structured auto or tools")
    if mode in p.refuses:
        raise ConfigError(f"--structured {mode} " + p.refuses[mode].format(name=p.name))
    args, base_url = p.sdk_client(model, base_url, api_key, api_version=api_version, **sdk_kwargs)
    raw = partial(sdk_client, args.module, args.cls, **args.kwargs)
    temperature = p.temperature(temperature, base_url)
    if not common["profile"].takes_temperature(common["effort"]):
        temperature = None  # the model takes only its default (profiles.py)
    limiter = limiter_for(provider, base_url, raw.keywords.get("api_key"), model)
    limiter.configure(limits["rpm"], limits["tpm"], wire=wire.name)
    local = limits.get("pace")
    pace = pace_for(limiter, floor=local[0], adaptive=local[1]) if local else None
    return LLMClient(sdk=LoopClient(partial(raw, limiter=limiter, pace=pace)), temperature=temperature,
                     base_url=base_url, structured=mode, auto=structured == "auto" and common["profile"].api == "chat",
                     wire=wire, limiter=limiter,
                     max_wait=limits["max_wait"], pace=pace, **common)


def _from_provider(p: Provider, name: str, *, provider: str, structured: str, api_key: str | None,
                   temperature: float | None, base_url: str | None, **common: Any) -> LLMClient:
    """Gemini, Bedrock and Mistral through Instructor (their SDKs are optional): the provider's own
    `instructor_client` (Gemini: google-genai's client, which takes the base URL), else `from_provider`.

    No base_url is passed to from_provider: it hands unknown keyword arguments to the create call,
    not to the SDK client (see STYLE.md)."""
    assert p.from_provider is not None
    module, extra = p.from_provider
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise ConfigError(f"{provider}/ models need the {module.split('.')[0]} SDK: pip install 'judgeflow[{extra}]'")
    if structured in p.refuses:
        raise ConfigError(f"--structured {structured} " + p.refuses[structured].format(name=provider))
    mode_arg: dict[str, Any] = {}
    if structured != "auto":
        mode_arg["mode"] = instructor_mode(structured)
    if api_key:
        mode_arg["api_key"] = api_key
    for secret in (api_key, *map(os.environ.get, p.key_env)):
        remember_secret(secret)  # masked by value in everything judgeflow records
    import instructor

    try:
        client = p.instructor_client(f"{provider}/{name}", base_url, api_key, structured, common.get("timeout"))
        if client is None:
            client = instructor.from_provider(f"{provider}/{name}", async_client=True, **mode_arg)
    except ConfigError:
        raise
    except Exception as e:  # noqa: BLE001 - the SDK's own configuration errors (credentials, region)
        raise ConfigError(f"cannot set up {provider}/{name}: {short(e, 200)}") from None
    return LLMClient(client=client, provider=provider, temperature=temperature, wire=wire_of(provider, given_client=True),
                     base_url=base_url,
                     structured="tools" if structured == "auto" else structured, **common)
