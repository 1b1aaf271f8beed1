"""The one seam to LLM providers, built on Instructor.

`make_client("provider/model", base_url=..., api_key=...)` returns an `LLMClient`; everything
else receives it. `LLMClient.ask()` sends typed requests (Instructor validates and re-asks on a
`ValidationError`), counts calls and tokens, and turns every provider or parsing failure into
`LLMError`. This is the only module that imports instructor, openai or anthropic.

Providers: `openai/<model>`, `anthropic/<model>`, `ollama/<model>`; with `base_url`, `openai/`
speaks to any OpenAI-compatible server (vLLM, llama.cpp, LM Studio) and `anthropic/` to any
Anthropic-compatible endpoint. Transport retries (429, 5xx, timeouts; exponential backoff with
jitter, honouring retry-after) are the SDKs' own; schema re-asks are Instructor's.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anthropic
import instructor
import openai
from instructor.core.exceptions import InstructorError, InstructorRetryException
from instructor.core.hooks import Hooks
from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, LLMError
from ..redact import install_log_filter, redact, redact_data
from ..results import TraceEntry, Usage
from ..validation import using_validation_context

T = TypeVar("T", bound=BaseModel)
PROVIDERS = ("openai", "anthropic", "ollama")
DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"

# Instructor logs every failed attempt at ERROR; judgeflow reports the failure itself (the item
# becomes unscored with the reason), so keep Python's last-resort handler from printing them.
# Applications that configure logging still receive these records.
logging.getLogger("instructor").addHandler(logging.NullHandler())
install_log_filter()  # SDK debug logs can hold headers and URLs with credentials


def parse_model(model: str) -> tuple[str, str]:
    """Split "provider/model" (the model part may itself contain slashes)."""
    provider, sep, name = model.partition("/")
    if not sep or not provider or not name:
        raise ConfigError(
            f'model {model!r} must be in the form "provider/model", e.g. "openai/gpt-4o-mini", '
            f'"anthropic/claude-sonnet-4-5", "ollama/llama3.1" or "baseline/lexical"'
        )
    return provider.lower(), name


@dataclass
class LLMClient:
    """An Instructor client bound to one model, with the settings every call uses."""

    client: Any
    """instructor.AsyncInstructor."""
    model: str
    """The full "provider/model" string."""
    provider: str
    temperature: float | None = 0.0
    """None: not sent (Anthropic's current Messages API takes no sampling parameters)."""
    max_tokens: int = 4096
    max_retries: int = 2
    """Instructor re-asks after an invalid reply (attempts = max_retries + 1)."""
    extra_kwargs: dict[str, Any] = field(default_factory=dict)
    base_url: str | None = None
    """The endpoint, if not the provider's own (part of the cache fingerprint; never the key)."""

    async def ask(
        self,
        response_model: type[T],
        messages: list[dict[str, Any]],
        *,
        context: dict[str, Any] | None = None,
        usage: Usage | None = None,
        trace: list[TraceEntry] | None = None,
        step: str = "ask",
    ) -> T:
        """One typed request. Raises LLMError after provider retries or re-asks are exhausted."""
        hooks = Hooks()
        replies: list[Any] = []

        def on_response(response: Any) -> None:
            replies.append(response)
            if usage is not None:
                usage.calls += 1
                u = getattr(response, "usage", None)
                usage.input_tokens += int(getattr(u, "prompt_tokens", None) or getattr(u, "input_tokens", 0) or 0)
                usage.output_tokens += int(getattr(u, "completion_tokens", None) or getattr(u, "output_tokens", 0) or 0)

        hooks.on("completion:response", on_response)
        kwargs = dict(self.extra_kwargs)
        if self.temperature is not None:
            if self.provider == "anthropic":
                kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "temperature": self.temperature}
            else:
                kwargs["temperature"] = self.temperature
        try:
            with using_validation_context(context):  # never Instructor's context=: it runs Jinja on messages
                result = await self.client.create(
                    response_model=response_model,
                    messages=messages,
                    max_retries=self.max_retries,
                    hooks=hooks,
                    model=self.model.partition("/")[2],
                    max_tokens=self.max_tokens,
                    **kwargs,
                )
        except InstructorRetryException as e:
            # Instructor wraps provider errors (raised on the first failing attempt) too.
            cause = e.__cause__
            if isinstance(cause, (openai.APIError, anthropic.APIError)):
                _record(trace, step, messages, {"error": f"{type(cause).__name__}: {cause}"[:2000]})
                raise LLMError(
                    f"provider error after retries: {type(cause).__name__}: {_short(cause)}",
                    attempts=e.n_attempts,
                ) from e
            last = _reply_text(e.last_completion)
            last_error = e.failed_attempts[-1].exception if e.failed_attempts else (cause or e)
            _record(trace, step, messages, {"error": str(last_error)[:2000], "last_reply": last})
            raise LLMError(
                f"unparseable judge output after {e.n_attempts} attempt(s): {_short(last_error)}",
                attempts=e.n_attempts, last_reply=last,
            ) from e
        except (openai.APIError, anthropic.APIError) as e:
            _record(trace, step, messages, {"error": f"{type(e).__name__}: {e}"[:2000]})
            raise LLMError(f"provider error after retries: {type(e).__name__}: {_short(e)}") from e
        except (InstructorError, ValidationError) as e:
            _record(trace, step, messages, {"error": f"{type(e).__name__}: {e}"[:2000]})
            raise LLMError(f"judge output rejected: {type(e).__name__}: {_short(e)}") from e
        _record(trace, step, messages, result.model_dump(), rejected=[_reply_text(r) or "" for r in replies[:-1]])
        return result


def _short(e: Exception, n: int = 300) -> str:
    s = redact(" ".join(str(e).split()))  # a provider may echo the Authorization header back
    return s if len(s) <= n else s[: n - 1] + "…"


def _record(
    trace: list[TraceEntry] | None, step: str, messages: list[dict[str, Any]], reply: Any,
    *, rejected: list[str] | None = None,
) -> None:
    if trace is not None:
        trace.append(TraceEntry(step=step, messages=messages, reply=redact_data(reply),
                                rejected=[redact(r) for r in rejected or []]))


def _reply_text(completion: Any) -> str | None:
    if completion is None:
        return None
    try:
        return json.dumps(completion.model_dump(), default=str)[:4000]
    except Exception:  # noqa: BLE001 - best effort for an error message only
        return str(completion)[:4000]


def make_client(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    temperature: float | None = 0.0,
    max_retries: int = 2,
    provider_retries: int = 4,
    timeout: float = 120.0,
    http_client: Any = None,
    mode: str | None = None,
) -> LLMClient:
    """Build an LLMClient for "provider/model".

    Args:
        model: "openai/gpt-4o-mini", "anthropic/claude-...", "ollama/llama3.1".
        base_url: an OpenAI- or Anthropic-compatible endpoint (vLLM, llama.cpp, LM Studio, proxies).
        api_key: defaults to the provider's usual environment variable.
        temperature: 0 by default, so verdicts are as repeatable as the provider allows. For
            anthropic/ it is sent only to a custom base_url (Anthropic's own API has no sampling
            parameters for current models); pass None to never send it.
        max_retries: Instructor re-asks after an invalid structured reply.
        provider_retries: SDK retries on 429/5xx/timeouts (backoff with jitter, honours retry-after).
        timeout: seconds per HTTP request.
        http_client: an httpx2 client for the SDK (tests use a MockTransport).
        mode: an instructor.Mode value ("tool_call", "json_mode", ...) to override the default.
    """
    provider, name = parse_model(model)
    base_url = base_url or os.environ.get("JUDGEFLOW_BASE_URL") or None
    kwargs: dict[str, Any] = {"max_retries": provider_retries, "timeout": timeout}
    if http_client is not None:
        kwargs["http_client"] = http_client
    if provider in ("openai", "ollama"):
        if provider == "ollama":
            base_url = base_url or os.environ.get("OLLAMA_BASE_URL") or DEFAULT_OLLAMA_URL
            api_key = api_key or "ollama"
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None:
                raise ConfigError(
                    f"model {model!r} needs an API key: set OPENAI_API_KEY (or pass api_key=...), "
                    "or use --model baseline/lexical to judge offline"
                )
            key = "not-needed"  # local OpenAI-compatible servers usually ignore the key
        raw = openai.AsyncOpenAI(api_key=key, base_url=base_url, **kwargs)
        default_mode = instructor.Mode.JSON if provider == "ollama" else instructor.Mode.TOOLS
        client = instructor.from_openai(raw, mode=instructor.Mode(mode) if mode else default_mode)
    elif provider == "anthropic":
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            if base_url is None:
                raise ConfigError(
                    f"model {model!r} needs an API key: set ANTHROPIC_API_KEY (or pass api_key=...), "
                    "or use --model baseline/lexical to judge offline"
                )
            key = "not-needed"
        raw = anthropic.AsyncAnthropic(api_key=key, base_url=base_url, **kwargs)
        client = instructor.from_anthropic(raw, mode=instructor.Mode(mode) if mode else instructor.Mode.TOOLS)
        if base_url is None:
            temperature = None
    else:
        raise ConfigError(
            f"unknown provider {provider!r} in model {model!r}; use one of "
            f"{', '.join(PROVIDERS)} (any OpenAI-compatible server: openai/<model> with --base-url), "
            "or baseline/lexical, baseline/rouge-l for offline judges"
        )
    return LLMClient(
        client=client, model=model, provider=provider, temperature=temperature,
        max_retries=max_retries, base_url=base_url,
    )
