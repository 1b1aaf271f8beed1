"""The ask loop: `LLMClient.ask()` sends one typed request through Instructor (which validates and
re-asks on a `ValidationError`), counts calls, tokens, repairs and re-asks, and turns every provider
or parsing failure into `LLMError`. The provider's differences are its `Wire`'s hooks (wire.py).
instructor, openai and anthropic are imported only when a request is really sent.

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
Instructor's. A local endpoint (`local`: ollama/, a base URL on localhost) gets no SDK retries: a
request that timed out is never sent again (a single-slot server is likely still computing it, and a
re-send only queues behind it); other transient errors are retried here. Every request sent counts
in `usage.calls`, one that timed out included (a provider may bill it).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ...config.client import (
    DEFAULT_MAX_TOKENS_CAP,  # the largest max_tokens a sized request asks for
)
from ...errors import LLMError, ProviderUnavailable
from ...redact import install_log_filter, mask_url, redact, redact_data
from ...results import TraceEntry, Usage
from ...schemas import counting_repairs
from ...validation import using_validation_context
from ..connections import LoopClient
from ..limits import CALL, DEFAULT_MAX_WAIT, Call, Limiter, RateLimited
from ..providers import wire_of
from ..providers.profiles import PLAIN, Profile
from ..providers.wire import Wire
from ..reply_budgets import ReplyBudgets
from .failures import (
    SHAPE_WORDS,
    ProviderFailure,
    asked_wait,
    classify,
    connect_failure,
    is_context_length,
    is_provider_error,
    local_failure,
    short,
    status_of,
)

T = TypeVar("T", bound=BaseModel)
STRUCTURED = ("auto", "tools", "tools_strict", "json_schema", "json")
#: the mode tried next when an endpoint rejects a request shape (auto only)
FALLBACK = {"tools_strict": "tools", "tools": "json", "json_schema": "json"}
#: the same systemic failure this many times in a row stops the run
SYSTEMIC_LIMIT = 3

# Instructor logs every failed attempt at ERROR; judgeflow reports the failure itself (the item
# becomes unscored with the reason), so keep Python's last-resort handler from printing them.
# Applications that configure logging still receive these records.
logging.getLogger("instructor").addHandler(logging.NullHandler())
install_log_filter()  # SDK debug logs can hold headers and URLs with credentials
log = logging.getLogger("judgeflow")


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
    return type(response_model.__name__, (response_model, instructor.ResponseSchema),
                {"__doc__": response_model.__doc__, "__module__": response_model.__module__,
                 "__qualname__": response_model.__qualname__})


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
    """The SDK's own retries on 429/5xx/timeouts (as configured on `raw`; a local endpoint's SDK has none)."""
    local: bool = False
    """A local endpoint (`providers.is_local`): timeouts are not re-sent, other transient errors are retried here."""
    timeout: float | None = None
    """Seconds per request (for the messages that say what to change)."""
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
    wire: Wire | None = None
    """How this provider's requests differ from the OpenAI wire (wire.py); by default its provider's."""
    limiter: Limiter | None = None
    """The endpoint's rate limiter (shared with every client of the same endpoint, key and model)."""
    pace: Any = None
    """A local endpoint's `local_pace.LocalPace` (requests in flight, each one's deadline); None elsewhere."""
    max_wait: float = DEFAULT_MAX_WAIT
    """Seconds an item may wait on the rate limit in all before it is given up (--max-wait)."""
    budgets: ReplyBudgets = field(default_factory=ReplyBudgets, repr=False)
    """Each step's max_tokens learned from its replies' use, sent while a token limit is known (reply_budgets.py)."""
    budget: Any = None
    """The spend cap shared by every client of a run (`runs.budget.Budget`): each request reserves its
    bound before it is sent and settles to what it used; None: no cap."""
    profile: Profile = field(default=PLAIN, repr=False)
    """What the model's family accepts (providers/profiles.py): the token-limit parameter, the reasoning knob."""
    effort: str | None = None
    """The reasoning effort sent (--reasoning-effort, or the family's default; None: no knob sent)."""
    stopped: str | None = None
    """Why the provider is considered unavailable (set after SYSTEMIC_LIMIT identical failures)."""
    sdk: LoopClient | None = field(default=None, repr=False)
    """The provider SDK's async client (openai.AsyncOpenAI, anthropic.AsyncAnthropic, ...) of the
    running event loop, built on the first request; None when `client` is given."""
    _clients: dict[tuple[int, str, int | None], tuple[Any, Any]] = field(default_factory=dict, repr=False)
    _healthy: bool = field(default=False, repr=False)
    _gates: dict[int, asyncio.Lock] = field(default_factory=dict, repr=False)
    _streak: tuple[str, int] = field(default=("", 0), repr=False)
    _fell_back: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.wire is None:  # a client built by hand: its provider's hooks
            self.wire = wire_of(self.provider, given_client=self.client is not None)

    @property
    def prompt_caching(self) -> bool:
        """True when this client's requests can carry a hint where the shared prefix ends (the wire's)."""
        return self.wire is not None and self.wire.prompt_caching

    def _instructor(self, raw: Any, retries: int | None) -> Any:
        """The Instructor client over `raw` for the current mode; `retries` overrides the SDK's retries."""
        key = (id(raw), self.structured, retries)  # one SDK client per event loop (connections.LoopClient)
        hit = self._clients.get(key)
        if hit is None or hit[0] is not raw:
            if len(self._clients) >= 16:  # clients of loops that have ended
                self._clients.clear()
            sdk = raw if retries is None else raw.with_options(max_retries=retries)
            hit = self._clients[key] = (raw, self.wire.instructor(sdk, self.structured))
        return hit[1]

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
            made: T = await self.client.create(response_model=response_model, hooks=hooks, **kwargs)
            return made
        from ..typed_request import typed_request

        raw = await self.sdk.get()
        typed: T = await typed_request(self._instructor(raw, retries), response_model, on_response=on_response,
                                       **kwargs)
        return typed

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
        if cache_prefix is not None:
            send = self.wire.with_cache_breakpoint(messages, cache_prefix, self.model, response_model)
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
        cut_off, full, widened, extra = False, False, False, self._allowance()  # extra: reasoning's, on top of the reply
        # Before the endpoint has answered once, the first try goes without the SDK's retries, so a
        # refused connection or a bad key fails in milliseconds; a transient error (429, 5xx,
        # timeout) is then retried as usual (the same number of requests in all).
        first = probe and self.client is None and self.provider_retries > 0 and not self.local
        retries: int | None = 0 if first or self.local else None
        left = self.provider_retries  # a local endpoint's transient (not timeout) retries, counted here
        while True:
            sent = budget if full or cut_off or not self._learning() else self.budgets.budget(step, budget)
            try:
                result = await self._once(response_model, messages, context, usage, trace, step, sent + extra, retries,
                                          send=send, sized=budget)
            except IncompleteOutputException as e:
                if reasoning_ate(e.last_completion):  # asked once more with twice the allowance, else unscored
                    extra, widened = self._widened(e, extra, widened, sent, usage, trace, step, messages), True
                    continue
                if sent < budget:  # cut off at a learned budget: asked again at the sized one
                    self.budgets.cut(step)
                    full = True
                    if usage is not None:
                        usage.reasks += 1
                    continue
                if cut_off or self.max_tokens or budget >= self.max_tokens_cap:
                    _record(trace, step, messages, {"error": f"reply cut off at max_tokens={budget}"})
                    raise LLMError(f"the reply was cut off at max_tokens={budget}; raise --max-tokens "
                                   "(or shorten the input with --max-source-chars)") from None
                cut_off, budget = True, min(budget * 2, self.max_tokens_cap)
                if usage is not None:
                    usage.reasks += 1
                continue
            except ProviderFailure as p:
                e = p.error
                if self.local and self.client is None and classify(e) is None and not is_context_length(e):
                    if _timed_out(e):
                        raise self._local_timeout(e, step, messages, usage, trace) from e
                    if left > 0 and not self._rejected_shape(e) and status_of(e) not in (400, 422):
                        left -= 1
                        await asyncio.sleep(asked_wait(e))
                        continue
                if first and classify(e) is None and not is_context_length(e) and not self._rejected_shape(e) \
                        and status_of(e) not in (400, 422):
                    first, retries = False, self.provider_retries - 1  # transient before the first answer: retry as the SDK would
                    await asyncio.sleep(asked_wait(e))
                    continue
                if self._rejected_shape(e) and self.auto and not self._fell_back and self.structured in FALLBACK:
                    old, self.structured, self._fell_back = self.structured, FALLBACK[self.structured], True
                    note = (f"{self.base_url or self.provider} rejected the {old!r} request shape "
                            f"({short(e, 160)}); falling back to --structured {self.structured}")
                    self.notes.append(note)
                    log.warning(note)
                    continue
                raise self._failed(e, step, messages, trace) from e
            self._healthy, self._streak = True, ("", 0)
            return result

    def _allowance(self) -> int:
        """Reasoning tokens allowed on top of a step's reply budget: 0 for a model that does not reason, or
        under a fixed --max-tokens (the whole completion budget); doubled once when reasoning empties a reply."""
        return 0 if self.max_tokens else self.profile.allowance(self.effort)

    def _widened(self, e: Any, extra: int, widened: bool, sent: int, usage: Usage | None,
                 trace: list[TraceEntry] | None, step: str, messages: list[dict[str, Any]]) -> int:
        """The reasoning allowance for asking again a reply that reasoning emptied (twice the last, once);
        a second one, or one with no allowance to widen (a fixed --max-tokens), is an LLMError naming the fix."""
        if widened or not extra:
            ate, total = reasoning_ate(e.last_completion), sent + extra
            _record(trace, step, messages, {"error": f"reasoning used {ate} of {total} tokens"})
            raise LLMError(f"reasoning used the whole budget: raise --max-tokens or lower --reasoning-effort "
                           f"({ate} reasoning tokens of the {total} the reply was given at effort {self.effort})") from None
        if usage is not None:
            usage.reasks += 1
        return extra * 2

    def _learning(self) -> bool:
        """Learned reply budgets are sent only under a known token limit, and never over --max-tokens."""
        lim = self.limiter
        return not self.max_tokens and lim is not None and ("tokens" in lim.buckets or "output" in lim.buckets)

    def _replied(self, step: str, sized: int, budget: int, u: Any) -> None:
        """A reply's usage: what the step's replies use, and the unused reply budget given back."""
        used = output_tokens(u)
        self.budgets.record(step, sized, used - reasoning_tokens(u))  # the reply's own tokens
        if self.limiter is not None and used:
            self.limiter.give_back("output", budget - used)
    async def _reserve(self, response_model: type[BaseModel], messages: list[dict[str, Any]], max_tokens: int) -> Any:
        """Hold the most this request can cost on the shared budget (None: no budget); raises
        BudgetExceeded (an LLMError: the item ends unscored) when it cannot fit."""
        if self.budget is None:
            return None
        size = len(json.dumps(messages, default=str).encode()) + _schema_bytes(response_model)
        amount = self.budget.bound(self.model, attempts=self.max_retries + 1, request_bytes=size, max_tokens=max_tokens)
        return await self.budget.reserve(amount)

    def _request_kwargs(self, response_model: type[BaseModel]) -> dict[str, Any]:
        """The create call's other arguments: the client's extras, sampling and the request shape (hooks)."""
        kwargs = dict(self.extra_kwargs)
        self.wire.sampling(kwargs, self.temperature)
        if self.effort is not None:
            self.wire.reasoning(kwargs, self.profile, self.effort)
        shape = self.wire.request_shape(response_model, self.structured, self.base_url is not None)
        if shape:
            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), **shape}
        return kwargs

    def _exhausted(self, e: Any, usage: Usage | None, repairs: list[Any], trace: list[TraceEntry] | None,
                   step: str, messages: list[dict[str, Any]], replies: list[Any]) -> Exception:
        """What Instructor's retries ending means: a provider error it wrapped (raised on the first failing
        attempt), a reply emptied by reasoning (Gemini's has no parts, so it fails to parse rather than
        being cut off), or replies that never parsed (the endpoint answered: it is healthy)."""
        from instructor.core.exceptions import IncompleteOutputException

        last_reply = e.last_completion or (replies[-1] if replies else None)
        if reasoning_ate(last_reply):
            return IncompleteOutputException(last_completion=last_reply)
        cause = e.__cause__
        if isinstance(cause, RateLimited):
            _record(trace, step, messages, {"error": str(cause)})
            return LLMError(str(cause))
        if is_provider_error(cause):
            return ProviderFailure(cause)
        self._healthy, self._streak = True, ("", 0)
        if usage is not None:
            usage.reasks += max(e.n_attempts - 1, 0)
            usage.repairs += len(repairs)
        last = _reply_text(e.last_completion)
        last_error = e.failed_attempts[-1].exception if e.failed_attempts else (cause or e)
        _record(trace, step, messages, {"error": str(last_error)[:2000], "last_reply": last})
        return LLMError(f"unparseable judge output after {e.n_attempts} attempt(s): {short(last_error)}",
                        attempts=e.n_attempts, last_reply=last)

    def _local_timeout(self, e: BaseException, step: str, messages: list[dict[str, Any]], usage: Usage | None,
                       trace: list[TraceEntry] | None) -> LLMError:
        """A local endpoint did not answer within the deadline: counted, not re-sent, and the fix named."""
        if usage is not None:
            usage.calls += 1  # sent and possibly computed: it counts like any other request
        pace = self.pace
        seconds = pace.last_deadline if pace is not None and pace.last_deadline else self.timeout or 0
        _record(trace, step, messages, {"error": f"timed out after {seconds:g} s"})
        where = self.base_url or self.provider
        shown = f"; it showed {pace.describe()}" if pace is not None else ""
        return LLMError(f"timed out: the local endpoint {where} did not answer within {seconds:g} s "
                        f"(not sent again: the server may still be computing it{shown}); raise --timeout (e.g. "
                        f"--timeout {max(2 * seconds, 900):g}) and use --concurrency 1 for a single-slot server, "
                        "or a smaller model")

    def _rejected_shape(self, e: BaseException) -> bool:
        return status_of(e) in (400, 422, 500, 501) and bool(SHAPE_WORDS.search(str(e))) and not is_context_length(e)

    def _failed(self, e: BaseException, step: str, messages: list[dict[str, Any]],
                trace: list[TraceEntry] | None) -> Exception:
        _record(trace, step, messages, {"error": f"{type(e).__name__}: {e}"[:2000]})
        if is_context_length(e):
            return LLMError(f"the request does not fit the model's context ({short(e, 200)}); lower --max-tokens "
                            "or cut long sources with --max-source-chars")
        systemic = classify(e)
        if systemic is None and self._rejected_shape(e):
            systemic = (f"shape {self.structured}", f"the endpoint rejects the {self.structured!r} request shape: "
                        f"choose another --structured ({', '.join(m for m in STRUCTURED[1:] if m != self.structured)})")
        if systemic is None:
            self._streak = ("", 0)
            return LLMError(f"provider error after retries: {type(e).__name__}: {short(e)}")
        kind, fix = systemic
        n = self._streak[1] + 1 if self._streak[0] == kind else 1
        self._streak = (kind, n)
        where = mask_url(self.base_url) if self.base_url else f"{self.provider}'s API"
        line = f"{fix} ({kind} from {where} for {self.model}: {short(local_failure(e) or connect_failure(e) or e, 160)})"
        if n >= SYSTEMIC_LIMIT:
            self.stopped = f"stopped after {n} identical provider failures in a row: {line}"
            return ProviderUnavailable(self.stopped)
        return LLMError(f"provider error: {line}")

    async def _once(self, response_model: type[T], messages: list[dict[str, Any]], context: dict[str, Any] | None,
                    usage: Usage | None, trace: list[TraceEntry] | None, step: str, budget: int,
                    retries: int | None, *, send: list[dict[str, Any]] | None = None, sized: int = 0) -> T:
        from instructor.core.exceptions import (
            IncompleteOutputException,
            InstructorError,
            InstructorRetryException,
        )

        replies: list[Any] = []

        spent = Usage()  # this request's replies, for the spend cap

        def on_response(response: Any) -> None:
            replies.append(response)
            self._replied(step, sized or budget, budget, usage_of(response))
            spent.calls += 1
            count_usage(spent, usage_of(response), reply=response)
            if usage is not None:
                usage.calls += 1
                count_usage(usage, usage_of(response), reply=response)

        repairs: list[Any] = []
        held = await self._reserve(response_model, messages if send is None else send, budget)
        limit = CALL.set(Call(max_tokens=budget, max_wait=self.max_wait, account=usage)) if self.limiter else None
        try:
            with using_validation_context(context), counting_repairs() as repairs:
                # never Instructor's context=: it runs Jinja on messages
                result = await self._settled(held, spent, retries, self._create(
                    retries, response_model=prepared(response_model), on_response=on_response,
                    messages=messages if send is None else send,  # send: with cache breakpoints
                    max_retries=self.max_retries, model=self.model.partition("/")[2],
                    **{self.profile.token_param: budget}, **self._request_kwargs(response_model),
                ))
        except IncompleteOutputException:
            raise
        except InstructorRetryException as e:
            raise self._exhausted(e, usage, repairs, trace, step, messages, replies) from e
        except Exception as e:
            if isinstance(e, RateLimited):
                _record(trace, step, messages, {"error": str(e)})
                raise LLMError(str(e)) from e
            if is_provider_error(e):
                if _timed_out(e) and usage is not None and not self.local:
                    usage.calls += 1 + (self.provider_retries if retries is None else retries)  # each attempt was sent
                raise ProviderFailure(e) from e
            if isinstance(e, (InstructorError, ValidationError)):
                _record(trace, step, messages, {"error": f"{type(e).__name__}: {e}"[:2000]})
                raise LLMError(f"judge output rejected: {type(e).__name__}: {short(e)}") from e
            raise
        finally:
            if limit is not None:
                CALL.reset(limit)
        if usage is not None:
            usage.reasks += max(len(replies) - 1, 0)
            usage.repairs += len(repairs)
        _record(trace, step, messages, _dump(result), rejected=[_reply_text(r) or "" for r in replies[:-1]])
        return result

    async def _settled(self, held: Any, spent: Usage, retries: int | None, create: Any) -> Any:
        """Await the request; then settle its spend-cap hold to what it used, or, when it was sent and
        got no reply (timed out, cancelled), at its whole reservation: the provider may bill it."""
        from instructor.core.exceptions import InstructorRetryException

        lost = 0
        try:
            return await create
        except asyncio.CancelledError:
            lost = 1
            raise
        except Exception as e:
            cause = e.__cause__ if isinstance(e, InstructorRetryException) else e
            if is_provider_error(cause) and _timed_out(cause):
                lost = 1 + (self.provider_retries if retries is None else retries)  # each attempt was sent
            raise
        finally:
            if held is not None:
                held.settle(spent, self.model, unanswered=lost)


def _timed_out(e: BaseException) -> bool:
    """The request was sent and no reply came within the deadline (not a refused connection)."""
    from .failures import sdk_errors

    return isinstance(e, sdk_errors("APITimeoutError")) and connect_failure(e) is None


@lru_cache(maxsize=1024)
def _schema_bytes(response_model: type[BaseModel]) -> int:
    """The size of the reply model's JSON schema (sent as the tool or response format)."""
    try:
        return len(json.dumps(response_model.model_json_schema()).encode())
    except Exception:  # noqa: BLE001 - a schema pydantic cannot render: a generous allowance
        return 16_000


def _int(obj: Any, name: str) -> int:
    try:
        return int(getattr(obj, name, None) or 0)
    except (TypeError, ValueError):
        return 0


def count_usage(usage: Usage, u: Any, *, reply: Any = None) -> None:
    """Add a provider reply's token counts to `usage`, prompt-cache counts included.

    OpenAI: prompt_tokens holds all prompt tokens, prompt_tokens_details.cached_tokens those served
    from cache. Anthropic: input_tokens counts only the tokens after the last cache breakpoint;
    cache_read_input_tokens and cache_creation_input_tokens are the rest. `usage.input_tokens` is
    always all prompt tokens."""
    if u is None:
        return
    if getattr(u, "prompt_token_count", None) is not None:  # Gemini's usage_metadata: thoughts billed as output
        usage.input_tokens += _int(u, "prompt_token_count")
        usage.output_tokens += output_tokens(u)
        usage.reasoning_tokens += reasoning_tokens(u)
        usage.cached_tokens += _int(u, "cached_content_token_count")
        return
    if getattr(u, "prompt_tokens", None) is not None:  # OpenAI wire
        usage.input_tokens += _int(u, "prompt_tokens")
        usage.output_tokens += _int(u, "completion_tokens")  # reasoning tokens included (billed as output)
        usage.reasoning_tokens += reasoning_tokens(u)
        usage.cached_tokens += _int(getattr(u, "prompt_tokens_details", None), "cached_tokens")
        return
    read, written = _int(u, "cache_read_input_tokens"), _int(u, "cache_creation_input_tokens")
    usage.input_tokens += _int(u, "input_tokens") + read + written
    usage.output_tokens += _int(u, "output_tokens")
    usage.reasoning_tokens += reasoning_tokens(u)
    usage.cached_tokens += 0 if read else _int(getattr(u, "input_tokens_details", None), "cached_tokens")  # Responses
    if not reasoning_tokens(u) and {getattr(b, "type", None) for b in getattr(reply, "content", None) or []} & {
            "thinking", "redacted_thinking"}:
        usage.reasoning_unreported += 1  # thinking billed in output_tokens, with no count apart: not estimated
    usage.cached_tokens += read
    usage.cache_write_tokens += written


def usage_of(response: Any) -> Any:
    """A reply's token counts: `usage` (OpenAI, Anthropic) or `usage_metadata` (Gemini)."""
    u = getattr(response, "usage", None)
    return u if u is not None else getattr(response, "usage_metadata", None)


def output_tokens(u: Any) -> int:
    """A reply's output tokens, reasoning included (Gemini: candidates_token_count + thoughts_token_count,
    both billed as output: https://ai.google.dev/gemini-api/docs/thinking#pricing)."""
    return (_int(u, "completion_tokens") or _int(u, "output_tokens")
            or _int(u, "candidates_token_count") + _int(u, "thoughts_token_count"))


def reasoning_tokens(u: Any) -> int:
    """Reasoning tokens a reply reports apart (OpenAI wire: completion_tokens_details.reasoning_tokens, a part
    of completion_tokens; Gemini: usage_metadata.thoughts_token_count; Anthropic:
    usage.output_tokens_details.thinking_tokens, a part of output_tokens, in the current Messages API (the
    anthropic SDK's `OutputTokensDetails`); 0 where the provider does not report them apart)."""
    details = getattr(u, "output_tokens_details", None)  # Anthropic's thinking_tokens; OpenAI Responses' reasoning_tokens
    return (_int(getattr(u, "completion_tokens_details", None), "reasoning_tokens") or _int(u, "thoughts_token_count")
            or _int(details, "thinking_tokens") or _int(details, "reasoning_tokens"))


def reasoning_ate(completion: Any) -> int:
    """The reasoning tokens of a reply cut off at its limit with nothing of the answer in it (0: not so)."""
    u = usage_of(completion)
    if getattr(completion, "status", None) == "incomplete":  # OpenAI Responses: stopped at max_output_tokens
        kinds = {getattr(item, "type", None) for item in getattr(completion, "output", None) or []}
        return reasoning_tokens(u) if not kinds & {"function_call", "message"} else 0
    candidates = getattr(completion, "candidates", None)
    if isinstance(candidates, list):  # Gemini: MAX_TOKENS with thoughts and no part of the answer
        finish = str(getattr(candidates[0], "finish_reason", "") or "") if candidates else ""
        parts = getattr(getattr(candidates[0], "content", None), "parts", None) if candidates else None
        answered = any(not getattr(p, "thought", False) for p in parts or [])
        return _int(u, "thoughts_token_count") if finish.endswith("MAX_TOKENS") and not answered else 0
    blocks = getattr(completion, "content", None)
    if isinstance(blocks, list):  # Anthropic: thinking blocks and no answer block
        kinds = {getattr(b, "type", None) for b in blocks}
        return _int(u, "output_tokens") if kinds & {"thinking", "redacted_thinking"} and not kinds & {
            "tool_use", "text"} else 0
    spent = reasoning_tokens(u)
    choices = getattr(completion, "choices", None)
    if not choices:
        return 0
    message = choices[0].message
    content = getattr(message, "content", None) or ""
    if not spent and (content.lstrip().startswith("<think>") or getattr(message, "reasoning_content", None)):
        # a local reasoning model: its thinking is in the content (unclosed: cut off) or reasoning_content
        if "</think>" not in content and not content.lstrip().startswith("{"):
            return _int(u, "completion_tokens") or 1
    if not spent:
        return 0
    answered = (getattr(message, "content", None) or "").strip() or getattr(message, "tool_calls", None)
    # nothing answered, or the answer's share of the completion too small to be one (a few tokens)
    return spent if not answered or _int(u, "completion_tokens") - spent < 16 else 0


def _dump(result: BaseModel) -> Any:
    return result.model_dump(by_alias=True)


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
