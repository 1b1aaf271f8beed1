"""Backends: what the graph's decompose / check / single nodes call.

A registry of LAZY entries (in the style of inspect_ai's providers): each factory imports its
implementation inside the function body, so importing judgeflow never loads the provider SDKs,
and implementations import only the protocol (`backends/base.py`), so no cycle can form. This
table is the one way from a model name to a backend; the core (`Judge`) reads it here.
`llm` is the Instructor seam, `llm_judge` the LLM backend, `lexical` / `rouge` the offline judges,
`passages` cuts long sources to relevant passages, `retrieval` gives the knowledge step evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config.client import ClientConfig
from ..errors import ConfigError
from .base import Backend, Offline, single_from_steps
from .llm_judge import DEFAULT_MODEL_ENV, OFFLINE_MODEL, LLMJudge, default_model, prompt_fields
from .passages import cite
from .providers import known
from .retrieval import Evidence

#: the backend table: "provider" or "provider/model" -> a factory that imports its implementation lazily
#: (the providers themselves, with their hooks, are `backends.providers.PROVIDERS`)
BACKENDS: dict[str, Callable[..., Backend]] = {}

#: the options an LLM client takes (every field of ClientConfig but the offline judges' and the passage cutter's)
LLM_OPTIONS = frozenset(ClientConfig.model_fields) - {"threshold", "max_source_chars"}


def backend(name: str) -> Callable[[Callable[..., Backend]], Callable[..., Backend]]:
    """Register a factory for "name" ("openai") or "name/model" ("baseline/lexical")."""

    def register(factory: Callable[..., Backend]) -> Callable[..., Backend]:
        BACKENDS[name] = factory
        return factory

    return register


def _llm(model: str, config: ClientConfig) -> Backend:
    from .llm import make_client

    return LLMJudge(make_client(model, config), max_claims_per_check=config.max_claims_per_check)


def _baseline(name: str, config: ClientConfig) -> Backend:
    from .lexical import make_baseline

    return make_baseline(name, **({"threshold": config.threshold} if config.threshold is not None else {}))


@backend("baseline/lexical")
def lexical(model: str, config: ClientConfig) -> Backend:
    return _baseline("lexical", config)


@backend("baseline/rouge-l")
def rouge_l(model: str, config: ClientConfig) -> Backend:
    return _baseline(model.partition("/")[2], config)


#: an LLM judge cuts sources longer than this (characters, all documents together) to the passages
#: most relevant to the claims, up to this size, unless told otherwise (`max_source_chars`): the
#: evidence passage of 100% of claims is kept at this budget in sources of 16k and 64k characters
#: (`python benchmarks/long_sources.py`), and a 64k-character source costs about a third of the tokens
DEFAULT_MAX_SOURCE_CHARS = 16_000


def member_reasoning(model: str, effort: str | None, profile: str | None) -> tuple[str | None, str | None]:
    """(--reasoning-effort, --profile) as they apply to one member of a panel or cascade: a profile only to
    a member on its wire (azure/ and openai/ share one), an effort only to a member that reasons."""
    provider = model.partition("/")[0].lower()
    if not known(provider):
        return None, None
    from .providers.profiles import WIRE_OF, profile_of

    if profile is not None:
        wire = WIRE_OF.get(provider, provider)
        if WIRE_OF.get(profile.partition("/")[0].lower(), profile.partition("/")[0].lower()) != wire:
            profile = None
    return (effort if profile_of(model, profile).reasons else None), profile


def make_backend(model: str | None = None, config: ClientConfig | None = None, **options: Any) -> Backend:
    """A backend for "provider/model": baseline/* offline judges, or an LLM via `llm.make_client`,
    with `config` (every client option, `judgeflow.config.ClientConfig`) or its fields as keywords.

    With `max_source_chars`, sources longer than that are cut to the passages relevant to the
    claims and evidence is cited by passage (`passages.PassageJudge`); 0 sends sources whole.
    None: an LLM judge cuts sources longer than DEFAULT_MAX_SOURCE_CHARS (and cites passages only
    in those); the offline judges send them whole.
    """
    config = ClientConfig.of(config, options)
    model = model or default_model()
    provider, sep, name = model.partition("/")
    factory = BACKENDS.get(model.lower()) or BACKENDS.get(provider.lower())
    if provider.lower() == "baseline" and factory is None and name.lower() in ("rougel", "rouge"):
        factory = BACKENDS["baseline/rouge-l"]
    if factory is None and known(provider):  # every provider in backends/providers/ is an LLM judge
        factory = _llm
    if factory is None:
        if provider.lower() == "baseline" and sep and name:
            return _baseline(name, config)  # raises the "unknown offline judge" error
        _llm(model, config)  # raises the "bad model name" / "unknown provider" error
        raise ConfigError(f"unknown backend {model!r}")
    made = factory(model, config)
    max_source_chars = config.max_source_chars
    if max_source_chars == 0 or (max_source_chars is None and not isinstance(made, LLMJudge)):
        return made
    from .passages import PassageJudge

    if max_source_chars is None:
        return PassageJudge(made, max_source_chars=DEFAULT_MAX_SOURCE_CHARS, cite_short=False)
    return PassageJudge(made, max_source_chars=max_source_chars)


__all__ = [
    "Evidence",
    "cite",
    "DEFAULT_MAX_SOURCE_CHARS",
    "DEFAULT_MODEL_ENV",
    "LLM_OPTIONS",
    "OFFLINE_MODEL",
    "Backend",
    "LLMJudge",
    "Offline",
    "backend",
    "default_model",
    "make_backend",
    "prompt_fields",
    "member_reasoning",
    "single_from_steps",
]
