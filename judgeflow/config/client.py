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


def option(
    default: Any,
    doc: str,
    *,
    flag: str | None,
    results: bool,
    cli: dict[str, Any] | None = None,
    **kw: Any,
) -> Any:
    """A spec field with its CLI flag (None: Python only) and whether it changes results.

    `cli`: how the command line says it, where the field's own type and `doc` do not: `help` (the
    flag's help, `%(default)s` its default), `type` (an argparse value type by name: positive_int,
    count, seconds, rate, temperature, share, path, delimiter), `choices`, `metavar`, `default` (the
    command line's, where it differs), `group` (its heading in --help). `cli.flags` builds the flag
    from these: a new option needs none of them.
    """
    extra = {"flag": flag, "affects_results": results, **({"cli": cli} if cli else {})}
    return Field(default, description=doc, json_schema_extra=extra, **kw)


def option_cli(model: type[BaseModel], name: str) -> dict[str, Any]:
    """How the command line says a spec field (`option(cli=...)`); {}: from the field alone."""
    extra = model.model_fields[name].json_schema_extra
    cli = extra.get("cli") if isinstance(extra, dict) else None
    return dict(cli) if isinstance(cli, dict) else {}


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

    base_url: str | None = option(
        None,
        "An OpenAI- or Anthropic-compatible endpoint; azure/: the resource endpoint.",
        flag="--base-url",
        results=False,
        cli={"help": "an OpenAI- or Anthropic-compatible endpoint (vLLM, llama.cpp, LM Studio)"},
    )
    api_key: str | None = option(
        None,
        "The key (default: the provider's environment variable); never recorded.",
        flag=None,
        results=False,
        exclude=True,
        repr=False,
    )
    temperature: float | None = option(
        0.0,
        "Sampling temperature (None: never sent).",
        flag="--temperature",
        results=True,
        cli={
            "type": "temperature",
            "help": "sampling temperature of the judge model (default 0: the same "
            "item gets the same verdict; above 0 with --samples for self-consistency)",
        },
    )
    max_retries: int = option(
        2,
        "Re-asks after an invalid structured reply.",
        flag="--reasks",
        results=False,
        cli={
            "type": "count",
            "group": "provider",
            "help": "re-asks after an invalid structured reply (default 2)",
        },
    )
    provider_retries: int = option(
        4,
        "SDK retries on 5xx/timeouts (429s are waited out up to max_wait).",
        flag="--retries",
        results=False,
        cli={
            "type": "count",
            "group": "provider",
            "help": "provider retries on 5xx/timeouts, "
            "with backoff and jitter (default 4); 429s are waited out up to --max-wait instead",
        },
    )
    timeout: float | None = option(
        None,
        "Seconds per HTTP request (None: the endpoint's default: 120 s, 900 s for a local one).",
        flag="--timeout",
        results=False,
        cli={
            "type": "seconds",
            "group": "provider",
            "help": "seconds per request, in all: connect, headers "
            "and the whole reply (default 120; 900 for a local endpoint, ollama/ or a --base-url on "
            "localhost, where a request that timed out is not sent again while the server may still be "
            "computing it)",
        },
    )
    http_client: Any = option(
        None,
        "A ready httpx2 client for the SDK (tests: a MockTransport); never recorded.",
        flag=None,
        results=False,
        exclude=True,
        repr=False,
    )
    structured: str = option(
        "auto",
        "auto | tools | tools_strict | json_schema | json.",
        flag="--structured",
        results=True,
        cli={
            "choices": ["auto", "tools", "tools_strict", "json_schema", "json"],
            "group": "provider",
            "help": "how the model is asked for structured output (default auto: OpenAI tools_strict, "
            "Anthropic tools, Ollama json_schema, other --base-url servers tools; falls back once if the "
            "endpoint rejects the request shape)",
        },
    )
    max_tokens: int | None = option(
        None,
        "A fixed max_tokens for every call (None: sized to each step).",
        flag="--max-tokens",
        results=True,
        cli={
            "type": "positive_int",
            "group": "provider",
            "help": "max_tokens for every call "
            "(default: sized to each step, e.g. a budget per claim)",
        },
    )
    reasoning_effort: str | None = option(
        None,
        "Reasoning effort for reasoning models (none | minimal | low | medium | high | xhigh, as the "
        "model's family accepts; None: judgeflow's default for the family, docs/reasoning.md).",
        flag="--reasoning-effort",
        results=True,
        cli={
            "choices": ["none", "minimal", "low", "medium", "high", "xhigh"],
            "group": "provider",
            "help": "reasoning effort of a reasoning judge (gpt-5*, o-series, Claude thinking, Gemini 2.5+; "
            "default: low for OpenAI reasoning models, thinking off for Claude; see docs/reasoning.md)",
        },
    )
    profile: str | None = option(
        None,
        "The model family whose rules a model name judgeflow cannot know follows (an Azure "
        "deployment, a model behind --base-url), e.g. openai/gpt-5.1.",
        flag="--profile",
        results=True,
        cli={
            "metavar": "PROVIDER/MODEL",
            "group": "provider",
            "help": "the model family a name judgeflow "
            "cannot know follows (an Azure deployment, a model behind --base-url), e.g. --model "
            "azure/my-deploy --profile openai/gpt-5.1",
        },
    )
    max_tokens_cap: int = option(
        DEFAULT_MAX_TOKENS_CAP,
        "The largest max_tokens a sized call asks for.",
        flag=None,
        results=True,
    )
    api_version: str | None = option(None, "Azure OpenAI API version.", flag=None, results=False)
    max_claims_per_check: int = option(
        DEFAULT_MAX_CLAIMS_PER_CHECK, "Claims checked in one call at most.", flag=None, results=True
    )
    http_transport: str = option(
        "auto",
        "auto | aiohttp | httpx: the SDK's HTTP stack.",
        flag="--http-transport",
        results=False,
        cli={
            "choices": ["auto", "aiohttp", "httpx"],
            "group": "provider",
            "help": "the provider SDK's HTTP "
            "stack (default auto: aiohttp when installed, which spends less client CPU per request; httpx "
            "is the SDKs' default)",
        },
    )
    rpm: float | None = option(
        None,
        "Requests per minute, for an endpoint without rate-limit headers.",
        flag="--rpm",
        results=False,
        cli={
            "type": "rate",
            "metavar": "N",
            "group": "provider",
            "help": "requests per "
            "minute the endpoint allows, for one that sends no rate-limit headers (default: "
            "learned from the replies' headers)",
        },
    )
    tpm: float | None = option(
        None,
        "Tokens per minute, for an endpoint without rate-limit headers.",
        flag="--tpm",
        results=False,
        cli={
            "type": "rate",
            "metavar": "N",
            "group": "provider",
            "help": "tokens per minute "
            "the endpoint allows (input tokens on the Anthropic wire), for one that sends no "
            "rate-limit headers (default: learned from the replies' headers)",
        },
    )
    max_wait: float = option(
        DEFAULT_MAX_WAIT,
        "Seconds an item may wait on the rate limit before it is unscored.",
        flag="--max-wait",
        results=False,
        cli={
            "type": "seconds",
            "metavar": "SECONDS",
            "group": "provider",
            "help": "the longest an item waits "
            "on the rate limit before it is unscored as rate limited (default %(default)g; a 429 is waited "
            "out, not counted against --retries)",
        },
    )
    threshold: float | None = option(
        None,
        "The offline judges' (baseline/*) decision threshold.",
        flag="--threshold",
        results=True,
        cli={
            "type": "float",
            "help": "offline judges only: baseline/lexical content-overlap or "
            "baseline/rouge-l F-measure threshold",
        },
    )
    max_source_chars: int | None = option(
        None,
        "Sources longer than this are cut to relevant passages (0: whole).",
        flag="--max-source-chars",
        results=True,
        cli={
            "type": "positive_int",
            "help": "cut sources longer than this to the passages relevant to the "
            "claims; cite passages",
        },
    )

    budget: Any = option(
        None,
        "A spend cap shared by every call of the judge (`judgeflow.Budget`; panels: one "
        "for all members); never recorded.",
        flag=None,
        results=False,
        exclude=True,
        repr=False,
    )

    @field_validator("budget")
    @classmethod
    def _a_budget(cls, value: Any) -> Any:
        if value is not None and not callable(getattr(value, "reserve", None)):
            raise ConfigError(
                f"budget={value!r} is not a Budget: pass judgeflow.Budget(calls=200), "
                "Budget(usd=1.5) or Budget.parse('$1.50')"
            )
        return value

    @classmethod
    def of(
        cls, config: ClientConfig | None = None, options: dict[str, Any] | None = None
    ) -> ClientConfig:
        """`config` with `options` (keyword arguments) on top; an unknown name is a ConfigError that
        names the nearest known option."""
        options = options or {}
        for name in options:
            if name not in cls.model_fields:
                near = difflib.get_close_matches(name, sorted(cls.model_fields), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else ""
                raise ConfigError(
                    f"unknown option {name!r} for a judge backend{hint} "
                    f"(options: {', '.join(sorted(cls.model_fields))})"
                )
        if config is None:
            return cls(**options)
        return config.model_copy(update=options) if options else config

    def given(self) -> dict[str, Any]:
        """The options set away from their defaults (what a member or a record needs to say)."""
        return {k: v for k, v in self.model_dump(exclude_defaults=True).items()}
