"""One typed request through Instructor's mode handlers, with the per-call preparation done once.

Instructor's `client.create(response_model=..., ...)` prepares the reply model on every call:
it walks the model for async validators three times, normalises it, and the OpenAI SDK then
walks the whole request (tool schema included) against its TypedDicts. For a judge that sends
the same few reply models thousands of times, that was over half of the client's CPU per call.

`typed_request` takes the same steps with what repeats done once: the reply model is prepared
once per class (`_ready`), and an OpenAI TOOLS request's tool fields once per class (by
Instructor's own request handler, `_tool_fields`); other modes run the mode's request handler
on every call (they rewrite the messages). Then Instructor's message converter and its
retry loop (`retry_async`: parsing, validation re-asks with the mode's reask handler,
`InstructorRetryException`, `IncompleteOutputException`), exactly as `create` would. An OpenAI
request body is then posted as is through the SDK's own `post` (headers, retries, error
classes and response parsing are the SDK's), skipping only its re-walk of a body that is already
plain JSON. Anthropic requests go through the SDK's `messages.create` unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel


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
    """The SDK's chat-completions call for a body that is already plain JSON."""
    from openai.types.chat import ChatCompletion

    async def send(**request: Any) -> Any:
        extra = request.pop("extra_body", None) or {}
        options: dict[str, Any] = {}
        if "extra_headers" in request:
            options["headers"] = request.pop("extra_headers")
        if "timeout" in request:
            options["timeout"] = request.pop("timeout")
        return await raw.post("/chat/completions", body={**request, **extra}, cast_to=ChatCompletion,
                              options=options)

    return send


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
    from instructor.v2.core.retry import retry_async

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
    send = raw.messages.create if ic.provider == Provider.ANTHROPIC else _openai_post(raw)
    if on_response is not None:
        send = _observed(send, on_response)
    return await retry_async(func=send, response_model=model, args=(), kwargs=request, max_retries=max_retries,
                             strict=True, mode=ic.mode, provider=ic.provider)


def _observed(send: Callable[..., Awaitable[Any]], on_response: Callable[[Any], None]) -> Callable[..., Awaitable[Any]]:
    async def observed(**request: Any) -> Any:
        response = await send(**request)
        on_response(response)
        return response

    return observed
