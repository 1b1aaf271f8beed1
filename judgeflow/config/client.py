"""`ClientConfig`: every option of a judge's client as one typed object (in the way of inspect_ai's
`GenerateConfig`), passed whole from `Judge` to `make_backend` to `make_client`.

    config = ClientConfig(temperature=0.2, provider_retries=2, rpm=60)
    Judge("openai/gpt-4o-mini", config=config)          # or Judge(..., temperature=0.2, ...): the same
    ClientConfig.of(None, {"temprature": 0.2})          # ConfigError: did you mean 'temperature'?

Each field says what its `judgeflow run` flag is and whether it changes a run's results
(`option_flag`, `affects_results`): the CLI's flags, the resume command and the run's record are
drawn from these, and `tests/config/test_flags.py` checks every flag against them. An API key and
a ready HTTP client are never serialised (`exclude=True`): a spec is safe to record.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import ConfigError

#: the default rate-limit wait (seconds) an item may spend before it is unscored (backends/limits.py)
DEFAULT_MAX_WAIT = 600.0
#: claims checked in one call at most; longer lists are split (backends/llm_judge.py). 40, the most a
#: decomposition lists, since the check schema grows by a reference per claim (was 25: #40)
DEFAULT_MAX_CLAIMS_PER_CHECK = 40
#: the largest max_tokens a sized call asks for (backends/llm/client.py)
DEFAULT_MAX_TOKENS_CAP = 4096


def option(default: Any, doc: str, *, flag: str | None, results: bool, **kw: Any) -> Any:
    """A spec field with its CLI flag (None: Python only) and whether it changes results."""
    return Field(default, description=doc, json_schema_extra={"flag": flag, "affects_results": results}, **kw)


def option_flag(model: type[BaseModel], name: str) -> str | None:
    """The `judgeflow run` flag of a spec field (None: set from Python only)."""
    extra = model.model_fields[name].json_schema_extra
    flag = extra.get("flag") if isinstance(extra, dict) else None
    return flag if isinstance(flag, str) else None


def affects_results(model: type[BaseModel], name: str) -> bool:
    """Whether a spec field changes what a run's results are (a resume must match it)."""
    extra = model.model_fields[name].json_schema_extra
    return bool(extra.get("affects_results")) if isinstance(extra, dict) else False


class Spec(BaseModel):
    """A spec: frozen, and a misspelt field is an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ClientConfig(BaseModel):
    """How a judge's client talks to its model: every option, LLM and offline. Never records a key."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    base_url: str | None = option(None, "An OpenAI- or Anthropic-compatible endpoint; azure/: the resource endpoint.",
                                  flag="--base-url", results=False)
    api_key: str | None = option(None, "The key (default: the provider's environment variable); never recorded.",
                                 flag=None, results=False, exclude=True, repr=False)
    temperature: float | None = option(0.0, "Sampling temperature (None: never sent).", flag="--temperature",
                                       results=True)
    max_retries: int = option(2, "Re-asks after an invalid structured reply.", flag="--reasks", results=False)
    provider_retries: int = option(4, "SDK retries on 5xx/timeouts (429s are waited out up to max_wait).",
                                   flag="--retries", results=False)
    timeout: float | None = option(None, "Seconds per HTTP request (None: the endpoint's default: 120 s, 900 s for a "
                                   "local one).", flag="--timeout", results=False)
    http_client: Any = option(None, "A ready httpx2 client for the SDK (tests: a MockTransport); never recorded.",
                              flag=None, results=False, exclude=True, repr=False)
    structured: str = option("auto", "auto | tools | tools_strict | json_schema | json.", flag="--structured",
                             results=True)
    max_tokens: int | None = option(None, "A fixed max_tokens for every call (None: sized to each step).",
                                    flag="--max-tokens", results=True)
    reasoning_effort: str | None = option(None, "Reasoning effort for reasoning models (none | minimal | low | "
                                          "medium | high | xhigh, as the model's family accepts; None: judgeflow's "
                                          "default for the family, docs/reasoning.md).", flag="--reasoning-effort",
                                          results=True)
    profile: str | None = option(None, "The model family whose rules a model name judgeflow cannot know follows "
                                 "(an Azure deployment, a model behind --base-url), e.g. openai/gpt-5.1.",
                                 flag="--profile", results=True)
    max_tokens_cap: int = option(DEFAULT_MAX_TOKENS_CAP, "The largest max_tokens a sized call asks for.",
                                 flag=None, results=True)
    api_version: str | None = option(None, "Azure OpenAI API version.", flag=None, results=False)
    max_claims_per_check: int = option(DEFAULT_MAX_CLAIMS_PER_CHECK, "Claims checked in one call at most.",
                                       flag=None, results=True)
    http_transport: str = option("auto", "auto | aiohttp | httpx: the SDK's HTTP stack.", flag="--http-transport",
                                 results=False)
    rpm: float | None = option(None, "Requests per minute, for an endpoint without rate-limit headers.",
                               flag="--rpm", results=False)
    tpm: float | None = option(None, "Tokens per minute, for an endpoint without rate-limit headers.",
                               flag="--tpm", results=False)
    max_wait: float = option(DEFAULT_MAX_WAIT, "Seconds an item may wait on the rate limit before it is unscored.",
                             flag="--max-wait", results=False)
    threshold: float | None = option(None, "The offline judges' (baseline/*) decision threshold.", flag="--threshold",
                                     results=True)
    max_source_chars: int | None = option(None, "Sources longer than this are cut to relevant passages (0: whole).",
                                          flag="--max-source-chars", results=True)

    budget: Any = option(None, "A spend cap shared by every call of the judge (`judgeflow.Budget`; panels: one "
                         "for all members); never recorded.", flag=None, results=False, exclude=True, repr=False)

    @field_validator("budget")
    @classmethod
    def _a_budget(cls, value: Any) -> Any:
        if value is not None and not callable(getattr(value, "reserve", None)):
            raise ConfigError(f"budget={value!r} is not a Budget: pass judgeflow.Budget(calls=200), "
                              "Budget(usd=1.5) or Budget.parse('$1.50')")
        return value

    @classmethod
    def of(cls, config: ClientConfig | None = None, options: dict[str, Any] | None = None) -> ClientConfig:
        """`config` with `options` (keyword arguments) on top; an unknown name is a ConfigError that
        names the nearest known option."""
        options = options or {}
        for name in options:
            if name not in cls.model_fields:
                near = difflib.get_close_matches(name, sorted(cls.model_fields), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                raise ConfigError(f"unknown option {name!r} for a judge backend{hint} "
                                  f"(options: {', '.join(sorted(cls.model_fields))})")
        if config is None:
            return cls(**options)
        return config.model_copy(update=options) if options else config

    def given(self) -> dict[str, Any]:
        """The options set away from their defaults (what a member or a record needs to say)."""
        return {k: v for k, v in self.model_dump(exclude_defaults=True).items()}
