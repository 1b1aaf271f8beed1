"""Backends: what the graph's decompose / check / single nodes call.

A registry of LAZY entries (in the style of inspect_ai's providers): each factory imports its
implementation inside the function body, so importing judgeflow never loads the provider SDKs,
and implementations import only the protocol (`backends/base.py`), so no cycle can form. This
table is the one way from a model name to a backend; the core (`Judge`) reads it here.
`llm` is the Instructor seam, `llm_judge` the LLM backend, `lexical` / `rouge` the offline judges,
`passages` cuts long sources to relevant passages.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from ..errors import ConfigError
from .base import Backend, single_from_steps
from .llm_judge import DEFAULT_MODEL_ENV, OFFLINE_MODEL, LLMJudge, default_model, prompt_fields

#: the provider table: "provider" or "provider/model" -> a factory that imports its implementation lazily
PROVIDERS: dict[str, Callable[..., Backend]] = {}

# the options `make_client` takes (kept equal to its signature by a test: importing llm is slow)
LLM_OPTIONS = {"base_url", "api_key", "temperature", "max_retries", "provider_retries", "timeout",
               "http_client", "structured", "max_tokens", "max_tokens_cap", "api_version", "max_claims_per_check",
               "http_transport", "rpm", "tpm", "max_wait"}
OFFLINE_OPTIONS = {"threshold"}
# an option of one family given to the other is ignored (the CLI passes --base-url, --temperature
# whatever the model); a name no backend knows is an error
OPTIONS = LLM_OPTIONS | OFFLINE_OPTIONS | {"max_source_chars"}


def check_options(options: dict[str, Any]) -> None:
    """Raise ConfigError for an option no backend takes, suggesting the nearest known one."""
    for name in options:
        if name not in OPTIONS:
            near = difflib.get_close_matches(name, sorted(OPTIONS), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise ConfigError(f"unknown option {name!r} for a judge backend{hint} "
                              f"(options: {', '.join(sorted(OPTIONS))})")


def backend(name: str) -> Callable[[Callable[..., Backend]], Callable[..., Backend]]:
    """Register a factory for "name" ("openai") or "name/model" ("baseline/lexical")."""

    def register(factory: Callable[..., Backend]) -> Callable[..., Backend]:
        PROVIDERS[name] = factory
        return factory

    return register


def _llm(model: str, **options: Any) -> Backend:
    from .llm import make_client

    chunk = options.pop("max_claims_per_check", 25)
    options.pop("threshold", None)
    return LLMJudge(make_client(model, **options), max_claims_per_check=chunk)


@backend("openai")
def openai(model: str, **options: Any) -> Backend:
    return _llm(model, **options)


@backend("anthropic")
def anthropic(model: str, **options: Any) -> Backend:
    return _llm(model, **options)


@backend("ollama")
def ollama(model: str, **options: Any) -> Backend:
    return _llm(model, **options)


@backend("azure")
def azure(model: str, **options: Any) -> Backend:
    """Azure OpenAI: azure/<deployment> (AZURE_OPENAI_ENDPOINT / --base-url, AZURE_OPENAI_API_KEY)."""
    return _llm(model, **options)


@backend("google")
def google(model: str, **options: Any) -> Backend:
    """Gemini through Instructor's from_provider (pip install 'judgeflow[google]')."""
    return _llm(model, **options)


@backend("bedrock")
def bedrock(model: str, **options: Any) -> Backend:
    """AWS Bedrock through Instructor's from_provider (pip install 'judgeflow[bedrock]')."""
    return _llm(model, **options)


@backend("mistral")
def mistral(model: str, **options: Any) -> Backend:
    """Mistral through Instructor's from_provider (pip install 'judgeflow[mistral]')."""
    return _llm(model, **options)


def _baseline(name: str, options: dict[str, Any]) -> Backend:
    from .lexical import make_baseline

    return make_baseline(name, **{k: v for k, v in options.items() if k in ("threshold",)})


@backend("baseline/lexical")
def lexical(model: str, **options: Any) -> Backend:
    return _baseline("lexical", options)


@backend("baseline/rouge-l")
def rouge_l(model: str, **options: Any) -> Backend:
    return _baseline(model.partition("/")[2], options)


#: an LLM judge cuts sources longer than this (characters, all documents together) to the passages
#: most relevant to the claims, up to this size, unless told otherwise (`max_source_chars`): the
#: evidence passage of 100% of claims is kept at this budget in sources of 16k and 64k characters
#: (`python benchmarks/long_sources.py`), and a 64k-character source costs about a third of the tokens
DEFAULT_MAX_SOURCE_CHARS = 16_000


def make_backend(model: str | None = None, *, max_source_chars: int | None = None, **options: Any) -> Backend:
    """A backend for "provider/model": baseline/* offline judges, or an LLM via `llm.make_client`.

    With `max_source_chars`, sources longer than that are cut to the passages relevant to the
    claims and evidence is cited by passage (`passages.PassageJudge`); 0 sends sources whole.
    None: an LLM judge cuts sources longer than DEFAULT_MAX_SOURCE_CHARS (and cites passages only
    in those); the offline judges send them whole.
    """
    check_options(options)
    model = model or default_model()
    provider, sep, name = model.partition("/")
    factory = PROVIDERS.get(model.lower()) or PROVIDERS.get(provider.lower())
    if provider.lower() == "baseline" and factory is None and name.lower() in ("rougel", "rouge"):
        factory = PROVIDERS["baseline/rouge-l"]
    if factory is None:
        if provider.lower() == "baseline" and sep and name:
            return _baseline(name, options)  # raises the "unknown offline judge" error
        _llm(model, **options)  # raises the "bad model name" / "unknown provider" error
        raise ConfigError(f"unknown backend {model!r}")
    made = factory(model, **options)
    if max_source_chars == 0 or (max_source_chars is None and not isinstance(made, LLMJudge)):
        return made
    from .passages import PassageJudge

    if max_source_chars is None:
        return PassageJudge(made, max_source_chars=DEFAULT_MAX_SOURCE_CHARS, cite_short=False)
    return PassageJudge(made, max_source_chars=max_source_chars)


__all__ = [
    "DEFAULT_MAX_SOURCE_CHARS",
    "DEFAULT_MODEL_ENV",
    "LLM_OPTIONS",
    "OFFLINE_MODEL",
    "Backend",
    "LLMJudge",
    "backend",
    "check_options",
    "default_model",
    "make_backend",
    "prompt_fields",
    "single_from_steps",
]
