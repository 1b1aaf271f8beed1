"""The one seam to LLM providers, built on Instructor.

`make_client("provider/model", base_url=..., api_key=...)` returns an `LLMClient`; everything
else receives it. `LLMClient.ask()` sends typed requests (Instructor validates and re-asks on a
`ValidationError`), counts calls, tokens, repairs and re-asks, and turns every provider or
parsing failure into `LLMError`. This is the only module that imports instructor, openai or
anthropic, and it imports them only when a request is really sent: an openai/ model never loads
anthropic, and a run served entirely from the response cache loads neither (seconds at start-up).

Providers: `openai/<model>`, `anthropic/<model>`, `ollama/<model>`, `azure/<deployment>`;
through Instructor's `from_provider`: `google/<model>` (Gemini), `bedrock/<model>`,
`mistral/<model>`. With `base_url`, `openai/` speaks to any OpenAI-compatible server (vLLM,
llama.cpp, LM Studio) and `anthropic/` to any Anthropic-compatible endpoint.

What the boundary does for the caller:
- **Structured output mode** (`structured=`): `tools_strict` (OpenAI strict function calling),
  `tools` (forced tool call), `json_schema` (the `response_format` JSON schema that OpenAI, vLLM
  and Ollama turn into constrained decoding), `json` (`json_object` with the schema attached,
  which llama.cpp constrains). `auto` picks per endpoint; if the endpoint rejects that request
  shape, it falls back once to the next mode (and says so in `notes`).
- **Sized requests**: `max_tokens` per call from what the step needs (`ask(max_tokens=...)`),
  capped; a reply cut off at the limit is asked again once with twice the budget. A fixed
  `max_tokens` overrides the sizing. A context-length error is not retried: LLMError names the fix.
- **Loud systemic failures**: until the endpoint has answered once, calls go one at a time and
  without SDK retries; the same systemic failure (authentication, refused connection, unknown
  model or path, rejected request shape) `SYSTEMIC_LIMIT` times in a row raises
  `ProviderUnavailable` and every later call fails at once, without a request.
- **Rate limits**: the endpoint's process-wide `limits.Limiter` sits under the SDK (`paced`): it
  paces requests to the limits set (`rpm=`, `tpm=`) or learned from reply headers, and waits out
  429s itself (not counted against the SDK's retries) for up to `max_wait` seconds an item; then
  the item is unscored with a "rate limited" reason.
Transport retries (5xx, timeouts; backoff with jitter) are the SDKs' own; schema re-asks are
Instructor's.
"""

from __future__ import annotations

import asyncio
import errno
import importlib.util
import json
import logging
import os
import re
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any, TypeVar
from urllib.parse import urlparse

from pydantic import BaseModel, ValidationError

from ..errors import ConfigError, LLMError, ProviderUnavailable
from ..redact import install_log_filter, redact, redact_data, remember_secret
from ..results import TraceEntry, Usage
from ..schemas import counting_repairs
from ..validation import using_validation_context
from .connections import LoopClient, check_transport, sdk_client
from .limits import CALL, DEFAULT_MAX_WAIT, Call, Limiter, RateLimited, limiter_for

T = TypeVar("T", bound=BaseModel)
PROVIDERS = ("openai", "anthropic", "ollama", "azure", "google", "bedrock", "mistral")
DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"
STRUCTURED = ("auto", "tools", "tools_strict", "json_schema", "json")
#: the mode tried next when an endpoint rejects a request shape (auto only)
FALLBACK = {"tools_strict": "tools", "tools": "json", "json_schema": "json"}
#: the same systemic failure this many times in a row stops the run
SYSTEMIC_LIMIT = 3
#: the largest max_tokens a sized request asks for (unless --max-tokens says otherwise)
DEFAULT_MAX_TOKENS_CAP = 4096
#: optional SDKs for the providers reached through Instructor's from_provider: (module, pip extra)
_FROM_PROVIDER = {"google": ("google.genai", "google"), "bedrock": ("boto3", "bedrock"),
                  "mistral": ("mistralai", "mistral")}
#: where those SDKs read their keys: judgeflow masks them by value (`redact.remember_secret`)
_KEY_ENV = {"google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"), "mistral": ("MISTRAL_API_KEY",),
            "bedrock": ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")}

#: Anthropic's minimum cacheable prefix (tokens) by model name prefix; 1024 for the others
ANTHROPIC_CACHE_MINIMUM = (("claude-opus-4-5", 4096), ("claude-opus-4-6", 4096), ("claude-haiku-4-5", 4096),
                           ("claude-sonnet-4-6", 2048), ("claude-3-5-haiku", 2048), ("claude-3-haiku", 2048))

_CONTEXT_LENGTH = re.compile(
    r"maximum context length|context[_ ]length|context window|too many tokens|prompt is too long|"
    r"input is too long|reduce the length|exceeds? the (?:model'?s? )?(?:maximum|context)", re.IGNORECASE)
_SHAPE = re.compile(r"response_format|json_schema|json_object|tool_choice|\btools?\b|function|strict|schema",
                    re.IGNORECASE)

# Instructor logs every failed attempt at ERROR; judgeflow reports the failure itself (the item
# becomes unscored with the reason), so keep Python's last-resort handler from printing them.
# Applications that configure logging still receive these records.
logging.getLogger("instructor").addHandler(logging.NullHandler())
install_log_filter()  # SDK debug logs can hold headers and URLs with credentials
log = logging.getLogger("judgeflow")


def parse_model(model: str) -> tuple[str, str]:
    """Split "provider/model" (the model part may itself contain slashes)."""
    provider, sep, name = model.partition("/")
    if not sep or not provider or not name:
        raise ConfigError(
            f'model {model!r} must be in the form "provider/model", e.g. "openai/gpt-4o-mini", '
            f'"anthropic/claude-sonnet-4-5", "ollama/llama3.1" or "baseline/lexical"'
        )
    return provider.lower(), name


def auto_structured(provider: str, base_url: str | None) -> str:
    """The structured-output mode `auto` picks for an endpoint."""
    if provider == "azure":
        return "tools_strict"
    if provider == "openai":
        return "tools_strict" if base_url is None else "tools"  # local servers: llama.cpp rejects json_schema
    if provider == "ollama":
        return "json_schema"
    return "tools"


@lru_cache(maxsize=1024)
def prepared(response_model: type[T]) -> type[T]:
    """The reply model as an Instructor `ResponseSchema`, built once per reply model.

    Instructor wraps any other model in a new class on every call (`response_schema()`), so
    pydantic rebuilds the JSON schema each time and Instructor's own cache of the tool definition
    (`generate_openai_schema`, keyed by class) never hits. A `ResponseSchema` subclass is used as
    is: the tool definition is built once per reply model. Same name, docstring and behaviour."""
    import instructor

    if issubclass(response_model, instructor.ResponseSchema):
        return response_model
    return type(response_model.__name__, (response_model, instructor.ResponseSchema),  # type: ignore[return-value]
                {"__doc__": response_model.__doc__, "__module__": response_model.__module__,
                 "__qualname__": response_model.__qualname__})


def _sdk_errors(name: str) -> tuple[type[BaseException], ...]:
    """The exception class `name` (APIError, APITimeoutError, ...) of each provider SDK that is
    loaded: an SDK that was never imported cannot have raised anything."""
    return tuple(getattr(m, name) for m in (sys.modules.get("openai"), sys.modules.get("anthropic")) if m is not None)


def _instructor_mode(provider: str, structured: str) -> Any:
    import instructor

    if structured in ("tools", "tools_strict"):
        return instructor.Mode.TOOLS
    return instructor.Mode.JSON_SCHEMA if structured == "json_schema" else instructor.Mode.JSON


def _status(e: BaseException) -> int | None:
    return getattr(e, "status_code", None)


def _causes(e: BaseException) -> list[BaseException]:
    """`e` and what caused it (`__cause__`, else `__context__`), outermost first."""
    seen: list[BaseException] = []
    cause: BaseException | None = e
    while cause is not None and all(cause is not s for s in seen):
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__
    return seen


def _connect_failure(e: BaseException) -> BaseException | None:
    """The failed connect (refused, no such host) behind `e`, if any: the SDKs' aiohttp transport
    reports aiohttp's ClientConnectorError as a connect timeout. A connection dropped after it was
    made (mid-body) is not one: the server is there."""
    aiohttp = sys.modules.get("aiohttp")
    for cause in _causes(e):
        httpx_connect = type(cause).__name__ == "ConnectError" and \
            type(cause).__module__.split(".")[0] in ("httpx2", "httpx", "httpcore")
        if httpx_connect or isinstance(cause, (ConnectionRefusedError, socket.gaierror)) or (
                aiohttp is not None and isinstance(cause, aiohttp.ClientConnectorError)):
            return cause
    return None


def _local_failure(e: BaseException) -> BaseException | None:
    """Out of file descriptors (EMFILE, ENFILE) behind `e`: this machine's limit, not the endpoint's."""
    for cause in _causes(e):
        if isinstance(cause, OSError) and cause.errno in (errno.EMFILE, errno.ENFILE):
            return cause
    return None


def classify(e: BaseException) -> tuple[str, str] | None:
    """(kind, what to do) for a systemic provider error that will fail every call alike, else None."""
    status = _status(e)
    if _local_failure(e) is not None:
        return ("too many open files", "judgeflow ran out of file descriptors (a limit of this machine, not the "
                                       "endpoint's): raise it (`ulimit -n 4096`) or lower --concurrency")
    if isinstance(e, _sdk_errors("APITimeoutError")) and _connect_failure(e) is None:
        return None  # slow, not broken: the SDK's retries handle it
    if isinstance(e, _sdk_errors("APIConnectionError")) and _connect_failure(e) is not None:
        return ("connection", "cannot connect: check --base-url (host, port, scheme) and that the server is running")
    if status in (401, 403):
        return (f"HTTP {status}", "authentication failed: check the API key (OPENAI_API_KEY / ANTHROPIC_API_KEY) "
                                  "and its permissions")
    if status == 404:
        if type(e).__module__.startswith("anthropic"):
            return ("HTTP 404", "not found: check the model name and --base-url (an Anthropic-compatible base URL "
                                "has no /v1: the SDK adds /v1/messages itself)")
        return ("HTTP 404", "not found: check the model name and --base-url (OpenAI-compatible servers "
                            "usually end in /v1)")
    return None


@dataclass
class LLMClient:
    """Instructor clients bound to one model, with the settings every call uses."""

    model: str
    """The full "provider/model" string."""
    provider: str
    temperature: float | None = 0.0
    """None: not sent (Anthropic's current Messages API takes no sampling parameters)."""
    max_tokens: int | None = None
    """A fixed max_tokens for every call (--max-tokens); None sizes each call to its step."""
    max_tokens_cap: int = DEFAULT_MAX_TOKENS_CAP
    max_retries: int = 2
    """Instructor re-asks after an invalid reply (attempts = max_retries + 1)."""
    provider_retries: int = 0
    """The SDK's own retries on 429/5xx/timeouts (as configured on `raw`)."""
    extra_kwargs: dict[str, Any] = field(default_factory=dict)
    base_url: str | None = None
    """The endpoint, if not the provider's own (part of the cache fingerprint; never the key)."""
    structured: str = "tools"
    """The structured-output mode in use (see STRUCTURED); `auto` is resolved at construction."""
    auto: bool = False
    """True when `structured` was chosen automatically: a rejected shape may then fall back."""
    client: Any = None
    """A fixed instructor client (tests, from_provider providers); else built from `raw` per mode."""
    notes: list[str] = field(default_factory=list)
    """Things the user should know about this client's run (a fallback taken)."""
    limiter: Limiter | None = None
    """The endpoint's rate limiter (shared with every client of the same endpoint, key and model)."""
    max_wait: float = DEFAULT_MAX_WAIT
    """Seconds an item may wait on the rate limit in all before it is given up (--max-wait)."""
    stopped: str | None = None
    """Why the provider is considered unavailable (set after SYSTEMIC_LIMIT identical failures)."""
    sdk: LoopClient | None = field(default=None, repr=False)
    """The provider SDK's async client (openai.AsyncOpenAI, anthropic.AsyncAnthropic, ...) of the
    running event loop, built on the first request; None when `client` is given."""
    _clients: dict[tuple[str, int | None], Any] = field(default_factory=dict, repr=False)
    _clients_of: Any = field(default=None, repr=False)
    _healthy: bool = field(default=False, repr=False)
    _gates: dict[int, asyncio.Lock] = field(default_factory=dict, repr=False)
    _streak: tuple[str, int] = field(default=("", 0), repr=False)
    _fell_back: bool = field(default=False, repr=False)

    @property
    def prompt_caching(self) -> bool:
        """True when this client can use a hint where the shared prefix ends (Anthropic breakpoints)."""
        return self.provider == "anthropic" and self.client is None

    def _cache_minimum(self) -> int:
        name = self.model.partition("/")[2]
        return next((n for prefix, n in ANTHROPIC_CACHE_MINIMUM if name.startswith(prefix)), 1024)

    def _instructor(self, raw: Any, retries: int | None) -> Any:
        """The Instructor client over `raw` for the current mode; `retries` overrides the SDK's retries."""
        if self._clients_of is not raw:
            self._clients.clear()
            self._clients_of = raw
        key = (self.structured, retries)
        if key not in self._clients:
            import instructor

            sdk = raw if retries is None else raw.with_options(max_retries=retries)
            mode = _instructor_mode(self.provider, self.structured)
            wrap = instructor.from_anthropic if self.provider == "anthropic" else instructor.from_openai
            self._clients[key] = wrap(sdk, mode=mode)
        return self._clients[key]

    async def aclose(self) -> None:
        """Close the SDK client this LLMClient built (its HTTP connections belong to the running
        event loop); the next call builds a new one. A client given by the caller is left open."""
        if self.sdk is not None:
            await self.sdk.aclose()

    async def _create(self, retries: int | None, response_model: type[T], on_response: Callable[[Any], None],
                      **kwargs: Any) -> T:
        """Instructor's typed create: a given client's own `create` (`on_response` as a hook); for a
        client built here, `typed_request` (the same handlers and retry loop, with the reply model
        prepared once)."""
        if self.client is not None or self.sdk is None:
            from instructor.core.hooks import Hooks

            hooks = Hooks()
            hooks.on("completion:response", on_response)
            return await self.client.create(response_model=response_model, hooks=hooks, **kwargs)  # type: ignore[no-any-return]
        from .typed_request import typed_request

        raw = await self.sdk.get()
        return await typed_request(self._instructor(raw, retries), response_model,  # type: ignore[no-any-return]
                                   on_response=on_response, **kwargs)

    def _shape(self, response_model: type[BaseModel]) -> dict[str, Any]:
        """Request fields that Instructor's own request lacks for this mode (sent as extra_body)."""
        if self.provider == "anthropic" or self.client is not None:
            return {}
        return _shape(response_model, self.structured, self.base_url is not None)


    def _gate(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._gates.get(id(loop))
        if lock is None:
            lock = self._gates[id(loop)] = asyncio.Lock()
        return lock

    async def ask(
        self,
        response_model: type[T],
        messages: list[dict[str, Any]],
        *,
        context: dict[str, Any] | None = None,
        usage: Usage | None = None,
        trace: list[TraceEntry] | None = None,
        step: str = "ask",
        max_tokens: int | None = None,
        cache_prefix: int | None = None,
    ) -> T:
        """One typed request. Raises LLMError after provider retries or re-asks are exhausted,
        ProviderUnavailable once the provider has failed systemically SYSTEMIC_LIMIT times in a row.

        max_tokens: what this step needs (sized by the caller); capped at max_tokens_cap and
        replaced by the client's fixed max_tokens when one is set.
        cache_prefix: how many characters of the last (user) message other requests share (the
            instructions and the evidence): Anthropic gets a `cache_control` breakpoint there when
            the prefix is long enough to be cached. OpenAI caches common prefixes by itself.
        """
        send = messages
        if cache_prefix is not None and self.prompt_caching:
            send = _with_breakpoint(messages, cache_prefix, self._cache_minimum(), _schema_chars(response_model))
        budget = self.max_tokens or min(max_tokens or self.max_tokens_cap, self.max_tokens_cap)
        if self._healthy:
            return await self._ask(response_model, messages, context, usage, trace, step, budget, probe=False, send=send)
        async with self._gate():  # until the endpoint has answered once, one call at a time
            if not self._healthy:
                return await self._ask(response_model, messages, context, usage, trace, step, budget, probe=True, send=send)
        # it answered while this call waited at the gate: go on without holding it (a slow or hung
        # call must never block the calls queued behind it)
        return await self._ask(response_model, messages, context, usage, trace, step, budget, probe=False, send=send)

    async def _ask(self, response_model: type[T], messages: list[dict[str, Any]], context: dict[str, Any] | None,
                   usage: Usage | None, trace: list[TraceEntry] | None, step: str, budget: int, *,
                   probe: bool, send: list[dict[str, Any]] | None = None) -> T:
        from instructor.core.exceptions import IncompleteOutputException

        if self.stopped:
            raise ProviderUnavailable(self.stopped)
        cut_off = False
        # Before the endpoint has answered once, the first try goes without the SDK's retries, so a
        # refused connection or a bad key fails in milliseconds; a transient error (429, 5xx,
        # timeout) is then retried as usual (the same number of requests in all).
        first = probe and self.client is None and self.provider_retries > 0
        retries: int | None = 0 if first else None
        while True:
            try:
                result = await self._once(response_model, messages, context, usage, trace, step, budget, retries,
                                          send=send)
            except IncompleteOutputException:
                if cut_off or self.max_tokens or budget >= self.max_tokens_cap:
                    _record(trace, step, messages, {"error": f"reply cut off at max_tokens={budget}"})
                    raise LLMError(f"the reply was cut off at max_tokens={budget}; raise --max-tokens "
                                   "(or shorten the input with --max-source-chars)") from None
                cut_off, budget = True, min(budget * 2, self.max_tokens_cap)
                if usage is not None:
                    usage.reasks += 1
                continue
            except _Provider as p:
                e = p.error
                if first and classify(e) is None and not _context_length(e) and not self._rejected_shape(e) \
                        and _status(e) not in (400, 422):
                    first, retries = False, self.provider_retries - 1  # transient before the first answer: retry as the SDK would
                    await asyncio.sleep(_retry_wait(e))
                    continue
                if self._rejected_shape(e) and self.auto and not self._fell_back and self.structured in FALLBACK:
                    old, self.structured, self._fell_back = self.structured, FALLBACK[self.structured], True
                    note = (f"{self.base_url or self.provider} rejected the {old!r} request shape "
                            f"({_short(e, 160)}); falling back to --structured {self.structured}")
                    self.notes.append(note)
                    log.warning(note)
                    continue
                raise self._failed(e, step, messages, trace) from e
            self._healthy, self._streak = True, ("", 0)
            return result

    def _rejected_shape(self, e: BaseException) -> bool:
        return _status(e) in (400, 422, 500, 501) and bool(_SHAPE.search(str(e))) and not _context_length(e)

    def _failed(self, e: BaseException, step: str, messages: list[dict[str, Any]],
                trace: list[TraceEntry] | None) -> Exception:
        _record(trace, step, messages, {"error": f"{type(e).__name__}: {e}"[:2000]})
        if _context_length(e):
            return LLMError(f"the request does not fit the model's context ({_short(e, 200)}); lower --max-tokens "
                            "or cut long sources with --max-source-chars")
        systemic = classify(e)
        if systemic is None and self._rejected_shape(e):
            systemic = (f"shape {self.structured}", f"the endpoint rejects the {self.structured!r} request shape: "
                        f"choose another --structured ({', '.join(m for m in STRUCTURED[1:] if m != self.structured)})")
        if systemic is None:
            self._streak = ("", 0)
            return LLMError(f"provider error after retries: {type(e).__name__}: {_short(e)}")
        kind, fix = systemic
        n = self._streak[1] + 1 if self._streak[0] == kind else 1
        self._streak = (kind, n)
        where = self.base_url or f"{self.provider}'s API"
        line = f"{fix} ({kind} from {where} for {self.model}: {_short(_local_failure(e) or _connect_failure(e) or e, 160)})"
        if n >= SYSTEMIC_LIMIT:
            self.stopped = f"stopped after {n} identical provider failures in a row: {line}"
            return ProviderUnavailable(self.stopped)
        return LLMError(f"provider error: {line}")

    async def _once(self, response_model: type[T], messages: list[dict[str, Any]], context: dict[str, Any] | None,
                    usage: Usage | None, trace: list[TraceEntry] | None, step: str, budget: int,
                    retries: int | None, *, send: list[dict[str, Any]] | None = None) -> T:
        from instructor.core.exceptions import IncompleteOutputException, InstructorError, InstructorRetryException

        replies: list[Any] = []

        def on_response(response: Any) -> None:
            replies.append(response)
            if usage is not None:
                usage.calls += 1
                count_usage(usage, getattr(response, "usage", None))

        kwargs = dict(self.extra_kwargs)
        if self.temperature is not None:
            if self.provider == "anthropic":
                kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "temperature": self.temperature}
            else:
                kwargs["temperature"] = self.temperature
        shape = self._shape(response_model)
        if shape:
            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), **shape}
        limit = CALL.set(Call(max_tokens=budget, max_wait=self.max_wait, account=usage)) if self.limiter else None
        try:
            with using_validation_context(context), counting_repairs() as repairs:
                # never Instructor's context=: it runs Jinja on messages
                result = await self._create(
                    retries,
                    response_model=prepared(response_model),
                    on_response=on_response,
                    messages=messages if send is None else send,  # send: with cache breakpoints
                    max_retries=self.max_retries,
                    model=self.model.partition("/")[2],
                    max_tokens=budget,
                    **kwargs,
                )
        except IncompleteOutputException:
            raise
        except InstructorRetryException as e:
            # Instructor wraps provider errors (raised on the first failing attempt) too.
            cause = e.__cause__
            if isinstance(cause, RateLimited):
                _record(trace, step, messages, {"error": str(cause)})
                raise LLMError(str(cause)) from e
            if _is_provider_error(cause):
                raise _Provider(cause) from e  # type: ignore[arg-type]
            self._healthy, self._streak = True, ("", 0)  # the endpoint answered; the replies were bad
            if usage is not None:
                usage.reasks += max(e.n_attempts - 1, 0)
                usage.repairs += len(repairs)
            last = _reply_text(e.last_completion)
            last_error = e.failed_attempts[-1].exception if e.failed_attempts else (cause or e)
            _record(trace, step, messages, {"error": str(last_error)[:2000], "last_reply": last})
            raise LLMError(
                f"unparseable judge output after {e.n_attempts} attempt(s): {_short(last_error)}",
                attempts=e.n_attempts, last_reply=last,
            ) from e
        except Exception as e:
            if isinstance(e, RateLimited):
                _record(trace, step, messages, {"error": str(e)})
                raise LLMError(str(e)) from e
            if _is_provider_error(e):
                raise _Provider(e) from e
            if isinstance(e, (InstructorError, ValidationError)):
                _record(trace, step, messages, {"error": f"{type(e).__name__}: {e}"[:2000]})
                raise LLMError(f"judge output rejected: {type(e).__name__}: {_short(e)}") from e
            raise
        finally:
            if limit is not None:
                CALL.reset(limit)
        if usage is not None:
            usage.reasks += max(len(replies) - 1, 0)
            usage.repairs += len(repairs)
        _record(trace, step, messages, _dump(result), rejected=[_reply_text(r) or "" for r in replies[:-1]])
        return result


@lru_cache(maxsize=1024)
def _shape(response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
    """The extra request fields for a reply model and mode, built once (never mutated by callers)."""
    schema = response_model.model_json_schema()
    name, description = schema.get("title", response_model.__name__), schema.get("description", "")
    params = {k: v for k, v in schema.items() if k not in ("title", "description")}
    if structured == "tools_strict":
        return {"tools": [{"type": "function", "function": {
            "name": name, "description": description, "parameters": params, "strict": True}}]}
    if structured == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "schema": params, "strict": True}}}
    if structured == "json" and custom_url:
        # llama.cpp and others constrain decoding to a schema given with json_object
        return {"response_format": {"type": "json_object", "schema": params}}
    return {}


@lru_cache(maxsize=1024)
def _schema_chars(response_model: type[BaseModel]) -> int:
    """Characters of a reply model's schema (the tool definition is part of the cached prefix)."""
    return len(json.dumps(response_model.model_json_schema()))


def _with_breakpoint(messages: list[dict[str, Any]], prefix: int, minimum: int,
                     extra_chars: int = 0) -> list[dict[str, Any]]:
    """The messages with the last one split at `prefix` characters into two text blocks, the first
    marked `cache_control: ephemeral` (Anthropic caches tools, system and that block), if the part
    up to there is at least `minimum` tokens (chars / 4); else the messages unchanged."""
    *head, last = messages
    text = last["content"]
    if not isinstance(text, str) or not 0 < prefix < len(text):
        return messages
    if (extra_chars + sum(len(m["content"]) for m in head if isinstance(m["content"], str)) + prefix) / 4 < minimum:
        return messages
    blocks = [{"type": "text", "text": text[:prefix], "cache_control": {"type": "ephemeral"}},
              {"type": "text", "text": text[prefix:]}]
    return [*head, {**last, "content": blocks}]


def _int(obj: Any, name: str) -> int:
    try:
        return int(getattr(obj, name, None) or 0)
    except (TypeError, ValueError):
        return 0


def count_usage(usage: Usage, u: Any) -> None:
    """Add a provider reply's token counts to `usage`, prompt-cache counts included.

    OpenAI: prompt_tokens holds all prompt tokens, prompt_tokens_details.cached_tokens those served
    from cache. Anthropic: input_tokens counts only the tokens after the last cache breakpoint;
    cache_read_input_tokens and cache_creation_input_tokens are the rest. `usage.input_tokens` is
    always all prompt tokens."""
    if u is None:
        return
    if getattr(u, "prompt_tokens", None) is not None:  # OpenAI wire
        usage.input_tokens += _int(u, "prompt_tokens")
        usage.output_tokens += _int(u, "completion_tokens")
        usage.cached_tokens += _int(getattr(u, "prompt_tokens_details", None), "cached_tokens")
        return
    read, written = _int(u, "cache_read_input_tokens"), _int(u, "cache_creation_input_tokens")
    usage.input_tokens += _int(u, "input_tokens") + read + written
    usage.output_tokens += _int(u, "output_tokens")
    usage.cached_tokens += read
    usage.cache_write_tokens += written


class _Provider(Exception):
    """Internal: a provider (HTTP/transport) error, to be classified by LLMClient._ask."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        super().__init__(str(error))


def _is_provider_error(e: BaseException | None) -> bool:
    if isinstance(e, _sdk_errors("APIError")) or (e is not None and _local_failure(e) is not None):
        return True  # an SDK error, or out of file descriptors (classified as a local systemic failure)
    from instructor.core.exceptions import InstructorError

    # SDKs reached through from_provider (google-genai, boto3, mistralai): their HTTP errors
    return e is not None and type(e).__module__.split(".")[0] in ("google", "botocore", "mistralai") \
        and not isinstance(e, (ValidationError, InstructorError))


def _retry_wait(e: BaseException) -> float:
    """Seconds to wait before retrying, as the provider asked (retry-after), else half a second."""
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name)) * scale
        except (TypeError, ValueError):
            continue
        if 0 <= value <= 60:
            return value
    return 0.5


def _context_length(e: BaseException) -> bool:
    return _status(e) in (400, 413, 422, None) and bool(_CONTEXT_LENGTH.search(str(e)))


def _dump(result: BaseModel) -> Any:
    return result.model_dump(by_alias=True)


def _short(e: BaseException | str, n: int = 300) -> str:
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
        timeout: seconds per HTTP request.
        http_client: an httpx2 client for the SDK (tests use a MockTransport).
        structured: auto | tools | tools_strict | json_schema | json (see the module docstring).
        max_tokens: a fixed max_tokens for every call; None sizes each call to its step.
        max_tokens_cap: the largest max_tokens a sized call asks for.
        api_version: Azure OpenAI API version (else $OPENAI_API_VERSION, else a recent GA one).
        http_transport: auto | aiohttp | httpx: the SDK's HTTP stack (see `connections`); auto
            takes aiohttp when installed (less client CPU per request). Ignored with http_client.
        rpm, tpm: the endpoint's limits per minute (requests; tokens, or input tokens on the
            Anthropic wire) when its replies carry no rate-limit headers; see `limits`.
        max_wait: seconds an item may wait on rate limits in all before it is unscored.
    """
    provider, name = parse_model(model)
    if structured not in STRUCTURED:
        raise ConfigError(f"--structured {structured!r} is not one of {', '.join(STRUCTURED)}")
    base_url = base_url or os.environ.get("JUDGEFLOW_BASE_URL") or None
    if base_url:
        check_base_url(base_url)
    if max_tokens is not None and max_tokens < 16:
        raise ConfigError(f"--max-tokens must be at least 16, got {max_tokens}")
    kwargs: dict[str, Any] = {"max_retries": provider_retries, "timeout": timeout,
                              "transport": check_transport(http_transport)}
    if http_client is not None:
        kwargs["http_client"] = http_client
    common: dict[str, Any] = {"model": model, "provider": provider, "max_retries": max_retries,
                              "provider_retries": provider_retries,
                              "max_tokens": max_tokens, "max_tokens_cap": max(max_tokens_cap, 16)}
    if provider in _FROM_PROVIDER:
        if base_url:  # from_provider would hand it to the create call, not the SDK client (STYLE.md)
            raise ConfigError(f"--base-url is not supported for {provider}/ models (configure the endpoint "
                              f"through the {provider} SDK's own settings), or use openai/<model> with --base-url "
                              "for an OpenAI-compatible gateway")
        return _from_provider(name, structured=structured, api_key=api_key, temperature=temperature, **common)
    mode = auto_structured(provider, base_url) if structured == "auto" else structured
    if provider == "anthropic" and mode == "tools_strict":
        raise ConfigError("--structured tools_strict is for OpenAI-wire models; anthropic/ supports "
                          "tools, json_schema and json")
    sdk = _SDK_CLIENTS.get(provider)
    if sdk is None:
        raise ConfigError(
            f"unknown provider {provider!r} in model {model!r}; use one of "
            f"{', '.join(PROVIDERS)} (any OpenAI-compatible server: openai/<model> with --base-url), "
            "or baseline/lexical, baseline/rouge-l for offline judges"
        )
    raw, base_url = sdk(model, base_url, api_key, api_version=api_version, **kwargs)
    if provider == "anthropic" and base_url is None:
        temperature = None  # Anthropic's own API takes no sampling parameters for current models
    limiter = limiter_for(provider, base_url, raw.keywords.get("api_key"), model)
    limiter.configure(rpm, tpm, wire="anthropic" if provider == "anthropic" else "openai")
    return LLMClient(sdk=LoopClient(partial(raw, limiter=limiter)), temperature=temperature, base_url=base_url,
                     structured=mode, auto=structured == "auto", limiter=limiter, max_wait=max_wait, **common)


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
        mode_arg["mode"] = _instructor_mode(provider, structured)
    if api_key:
        mode_arg["api_key"] = api_key
    for secret in (api_key, *map(os.environ.get, _KEY_ENV[provider])):
        remember_secret(secret)
    import instructor

    try:
        client = instructor.from_provider(f"{provider}/{name}", async_client=True, **mode_arg)
    except Exception as e:  # noqa: BLE001 - the SDK's own configuration errors (credentials, region)
        raise ConfigError(f"cannot set up {provider}/{name}: {_short(e, 200)}") from None
    return LLMClient(client=client, provider=provider, temperature=temperature,
                     structured="tools" if structured == "auto" else structured, **common)
