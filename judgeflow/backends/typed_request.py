"""One typed request through Instructor's mode handlers, with the per-call preparation done once.

Instructor's `client.create(response_model=..., ...)` prepares the reply model on every call:
it walks the model for async validators three times, normalises it, and the OpenAI SDK then
walks the whole request (tool schema included) against its TypedDicts. For a judge that sends
the same few reply models thousands of times, that was over half of the client's CPU per call.

`typed_request` takes the same steps with what repeats done once: the reply model is prepared
once per class (`_ready`), and an OpenAI TOOLS request's tool fields once per class (by
Instructor's own request handler, `_tool_fields`); other modes run the mode's request handler
on every call (they rewrite the messages). Then Instructor's message converter, and
Instructor's retry loop run by `_attempts` with Instructor's own steps (the mode's response
parser, validation re-asks with its reask handler, `InstructorRetryException`,
`IncompleteOutputException`), as `create` would, without the loop's per-call walks and copies.
An OpenAI request body is posted as is with the SDK's own client, headers, retries and error
classes (`sdk_post`), skipping its re-walk of a body that is already plain JSON; the reply is
validated by pydantic in one pass (`_chat_completion`) instead of the SDK's field-by-field
construction. Anthropic requests go through the SDK's `messages.create` unchanged.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

from .sdk_post import prepared_post


@lru_cache(maxsize=1024)
def _ready(response_model: type[BaseModel]) -> Any:
    """Instructor's normalised reply model, prepared (and checked for async validators) once."""
    from instructor.v2.core.response_model import prepare_response_model

    return prepare_response_model(response_model)


@lru_cache(maxsize=1024)
def _tool_fields(provider: Any, response_model: type[BaseModel]) -> tuple[Any, dict[str, Any]]:
    """(prepared model, the `tools`/`tool_choice` fields) of an OpenAI-compatible TOOLS request,
    built once per reply model by Instructor's own request handler. Its TOOLS handler adds only
    these two fields, whatever the messages (its JSON modes and Anthropic's rewrite the messages,
    so those run the handler on every call)."""
    from instructor import Mode
    from instructor.v2.core.registry import mode_registry

    handlers = mode_registry.get_handlers(provider, Mode.TOOLS)
    model, request = handlers.request_handler(response_model=_ready(response_model), kwargs={"messages": []})
    return model, {k: v for k, v in request.items() if k != "messages"}


def _openai_post(raw: Any) -> Any:
    """The SDK's chat-completions call for a body that is already plain JSON (prepared once per
    client by `sdk_post` where the SDK allows it, else the SDK's `post`); the reply is read by
    `_chat_completion`."""

    async def send(**request: Any) -> Any:
        extra = request.pop("extra_body", None) or {}
        options: dict[str, Any] = {}
        if "extra_headers" in request:
            options["headers"] = request.pop("extra_headers")
        if "timeout" in request:
            options["timeout"] = request.pop("timeout")
        body = {**request, **extra}
        post = None if options else prepared_post(raw, "/chat/completions")
        if post is None:
            return _chat_completion(await raw.post("/chat/completions", body=body, cast_to=bytes, options=options))
        return _chat_completion(await post(body))

    return send


def _chat_completion(body: bytes) -> Any:
    """A reply body as the SDK's `ChatCompletion`, validated by pydantic in one pass (about a
    tenth of the CPU of the SDK's field-by-field `construct`, the same object for a conforming
    reply). A reply that does not validate (a local server's missing or extra-typed fields) is
    built leniently as the SDK does (`construct`), and a body that is not JSON is returned as
    text, as the SDK returns it; Instructor's parser then rejects or re-asks it."""
    from openai.types.chat import ChatCompletion

    try:
        return without_thinking(ChatCompletion.model_validate_json(body))
    except ValidationError:
        pass
    try:
        data = json.loads(body)
    except ValueError:
        return body.decode("utf-8", errors="replace")
    return without_thinking(ChatCompletion.construct(**data)) if isinstance(data, dict) else data


#: a local reasoning model's think block at the start of its content (Qwen3, DeepSeek-R1, QwQ)
_THINK = re.compile(r"\A\s*<think>.*?</think>\s*", re.S)


def without_thinking(completion: Any) -> Any:
    """The reply with a closed `<think>...</think>` block removed from the front of its content, so that
    its text (which may hold JSON-looking drafts) is never read as the answer. An unclosed block (the
    budget ran out while thinking) is left for the ask loop to see (`client.reasoning_ate`)."""
    for choice in getattr(completion, "choices", None) or ():
        message = getattr(choice, "message", None)
        content = getattr(message, "content", None)
        if isinstance(content, str) and content.lstrip().startswith("<think>"):
            message.content = _THINK.sub("", content, count=1)
    return completion


async def typed_request(instructor_client: Any, response_model: type[BaseModel], *,
                        messages: list[dict[str, Any]], max_retries: int,
                        on_response: Callable[[Any], None] | None = None, **kwargs: Any) -> Any:
    """What `instructor_client.create(response_model=..., messages=..., ...)` returns, for a
    client made by `instructor.from_openai` / `from_anthropic` (mode TOOLS, JSON or JSON_SCHEMA).

    on_response: called with each provider response, valid or not, before it is parsed (what an
    Instructor `completion:response` hook receives). A callback rather than Instructor hooks: with
    hooks, its retry loop also deep-copies the running token usage after every response."""
    from instructor import Mode
    from instructor.utils.providers import Provider
    from instructor.v2.core.registry import mode_registry

    ic = instructor_client
    handlers = mode_registry.get_handlers(ic.provider, ic.mode)
    if ic.mode == Mode.TOOLS and ic.provider != Provider.ANTHROPIC:
        model, tool = _tool_fields(ic.provider, response_model)
        request = {**ic.kwargs, **kwargs, **tool, "messages": list(messages)}
    else:
        model, request = handlers.request_handler(response_model=_ready(response_model),
                                                  kwargs={**ic.kwargs, **kwargs, "messages": list(messages)})
    if handlers.message_converter and "messages" in request:
        request["messages"] = handlers.message_converter(request["messages"], autodetect_images=False)
    raw = ic.client
    responses = ic.mode == Mode.RESPONSES_TOOLS
    send = raw.messages.create if ic.provider == Provider.ANTHROPIC else _responses(raw) if responses else _openai_post(raw)
    if on_response is not None:
        send = _observed(send, on_response)
    return await _attempts(_incomplete_raises(send) if responses else send, handlers, model, request, max_retries,
                           ic.provider)


def _responses(raw: Any) -> Callable[..., Awaitable[Any]]:
    """The SDK's Responses call, the messages sent as its `input` (as Instructor's from_openai does)."""
    async def send(**request: Any) -> Any:
        return await raw.responses.create(input=request.pop("messages"), **request)

    return send


def _incomplete_raises(send: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """A Responses reply stopped at `max_output_tokens` (status "incomplete") raises Instructor's
    IncompleteOutputException, as a chat reply with finish_reason "length" does (never re-asked as is)."""
    async def checked(**request: Any) -> Any:
        response = await send(**request)
        reason = getattr(getattr(response, "incomplete_details", None), "reason", None)
        if getattr(response, "status", None) == "incomplete" and reason == "max_output_tokens":
            from instructor.core.exceptions import IncompleteOutputException

            raise IncompleteOutputException(last_completion=response)
        return response

    return checked


async def _attempts(send: Callable[..., Awaitable[Any]], handlers: Any, model: Any, request: dict[str, Any],
                    max_retries: int, provider: Any) -> Any:
    """Instructor's retry loop (`retry_async_v2`) for a prepared reply model, without its per-call
    overhead: the reply model was checked for async validators once (`_ready`), and the running
    token usage is summed only for the exception that needs it (Instructor deep-copies it after
    every response, successful ones included). The steps are Instructor's own: the mode's
    response parser, its re-ask handler on a parse error, `IncompleteOutputException` raised as is,
    everything else (provider errors included) wrapped in `InstructorRetryException` with the
    failed attempts, as `retry_async_v2` does; re-asks stop after `timeout` seconds when the
    request has one, as its `stop_after_delay` does."""
    from instructor.v2.core.errors import (
        FailedAttempt,
        IncompleteOutputException,
        InstructorRetryException,
    )
    from instructor.v2.core.messages import extract_messages
    from instructor.v2.core.retry import _RETRYABLE_PARSE_ERRORS, _finalize_parsed_response

    attempts = max(max_retries, 0) + 1
    timeout = request.get("timeout")
    deadline = time.monotonic() + timeout if isinstance(timeout, (int, float)) else None
    failed: list[FailedAttempt] = []
    responses: list[Any] = []
    number = 0

    def spent() -> bool:  # no attempt left, or the request's time is up
        return number >= attempts or (deadline is not None and time.monotonic() >= deadline)

    try:
        while True:
            number += 1
            try:
                response = await send(**request)
            except _RETRYABLE_PARSE_ERRORS:
                # raised by the call itself: Instructor's loop repeats the same request
                if spent():
                    raise
                continue
            responses.append(response)
            try:
                _same_tool(response, request)
                parsed = handlers.response_parser(response=response, response_model=model, validation_context=None,
                                                  strict=True, stream=False, is_async=True)
            except IncompleteOutputException:
                raise
            except _RETRYABLE_PARSE_ERRORS as e:
                failed.append(FailedAttempt(attempt_number=number, exception=e, completion=response))
                if spent():
                    raise
                request = handlers.reask_handler(kwargs=request, response=response, exception=e)
                continue
            return _finalize_parsed_response(parsed, response)
    except IncompleteOutputException:
        raise
    except Exception as e:
        raise InstructorRetryException(
            str(e), last_completion=failed[-1].completion if failed else None, n_attempts=number,
            total_usage=_total_usage(provider, responses), messages=extract_messages(request),
            create_kwargs=request, failed_attempts=failed,
        ) from e


def _same_tool(response: Any, request: dict[str, Any]) -> None:
    """Raise Instructor's ResponseParsingError (re-asked like any unreadable reply) when the reply
    calls a tool the request did not offer: its arguments answer some other question (Instructor
    1.17's parsers read the first tool call whatever its name)."""
    offered = {t.get("function", t).get("name") for t in request.get("tools") or () if isinstance(t, dict)}
    if not offered:
        return
    choices = getattr(response, "choices", None)
    if choices:  # OpenAI wire
        calls = [getattr(c.function, "name", None) for c in getattr(choices[0].message, "tool_calls", None) or ()]
    else:  # Anthropic wire
        calls = [c.name for c in getattr(response, "content", None) or () if getattr(c, "type", None) == "tool_use"]
    other = [name for name in calls if name not in offered]
    if other:
        from instructor.v2.core.errors import ResponseParsingError

        raise ResponseParsingError(f"the reply called the tool {other[0]!r}; call {min(offered)!r} instead",
                                   mode="TOOLS", raw_response=response)


def _total_usage(provider: Any, responses: list[Any]) -> Any:
    """The usage summed over `responses`, as Instructor's retry loop reports it on failure."""
    from instructor.v2.core.retry import _initialize_usage
    from instructor.v2.core.usage import update_total_usage

    total = _initialize_usage(provider)
    for response in responses:
        update_total_usage(response=response, total_usage=total)
    return total


def _observed(send: Callable[..., Awaitable[Any]], on_response: Callable[[Any], None]) -> Callable[..., Awaitable[Any]]:
    async def observed(**request: Any) -> Any:
        response = await send(**request)
        on_response(response)
        return response

    return observed
