"""`Wire`: how a provider's requests differ on the wire, as hooks (in the way of inspect_ai's `ModelAPI`):
the ask loop (backends/llm/client.py) calls them and never branches on the provider.

`Wire` is the OpenAI wire (openai/ and any OpenAI-compatible server), the defaults every hook falls back
to; a provider whose wire differs overrides the hooks in its own module (`anthropic.AnthropicWire`,
`ollama.OllamaWire`, `azure.AzureWire`), returned by its `Provider.make_wire`; `ResponsesWire` is
OpenAI's Responses API, for the models served only there (`Provider.wire_for`). `GivenClient` wraps a
ready Instructor client (Gemini, Bedrock and Mistral through Instructor's `from_provider`, or one given
by a test), which builds its own requests.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .profiles import Profile


def instructor_mode(structured: str) -> Any:
    """Instructor's mode for a --structured choice."""
    import instructor

    if structured in ("tools", "tools_strict"):
        return instructor.Mode.TOOLS
    return instructor.Mode.JSON_SCHEMA if structured == "json_schema" else instructor.Mode.JSON


class Wire:
    """The OpenAI wire: the defaults every hook falls back to."""

    #: the wire format (the rate limiter reads its headers and counts its tokens by it)
    name = "openai"
    #: requests can mark where their shared prefix ends (`with_cache_breakpoint`); the OpenAI wire
    #: caches common prefixes by itself
    prompt_caching = False

    def auto_structured(self, base_url: str | None) -> str:
        """The structured-output mode `auto` picks for this endpoint."""
        return "tools_strict" if base_url is None else "tools"  # local servers: llama.cpp rejects json_schema

    def sampling(self, kwargs: dict[str, Any], temperature: float | None) -> None:
        """Put the sampling temperature (None: not sent) into the create call's arguments."""
        if temperature is not None:
            kwargs["temperature"] = temperature

    def reasoning(self, kwargs: dict[str, Any], profile: Profile, effort: str) -> None:
        """Put the reasoning knob for `effort` into the create call's arguments: OpenAI's `reasoning_effort`
        (https://platform.openai.com/docs/api-reference/chat/create); other knobs are other wires'."""
        if profile.knob == "reasoning_effort":
            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "reasoning_effort": effort}

    def request_shape(self, response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
        """Request fields that Instructor's own request lacks for this mode (sent as extra_body)."""
        return request_fields(response_model, structured, custom_url)

    def with_cache_breakpoint(self, messages: list[dict[str, Any]], prefix: int, model: str,
                              response_model: type[BaseModel]) -> list[dict[str, Any]]:
        """The messages marked where the prefix shared with other requests ends; the OpenAI wire caches
        common prefixes by itself (unchanged)."""
        return messages

    def instructor(self, sdk: Any, structured: str) -> Any:
        """The Instructor client over the SDK client `sdk` for a mode: `instructor.from_openai`'s, step
        for step, except that the SDK's `chat.completions.create` is looked up when Instructor calls it
        instead of when the client is made. judgeflow's own requests never call it (`typed_request`
        posts the body with the SDK's client), and looking it up imports every resource module of the
        OpenAI SDK: about 0.8 s of CPU in each process that judged through OpenAI's wire."""
        import instructor
        import openai

        mode = instructor_mode(structured)
        if not isinstance(sdk, openai.AsyncOpenAI):
            return instructor.from_openai(sdk, mode=mode)
        from instructor.v2.core.client import AsyncInstructor
        from instructor.v2.core.patch import patch_v2
        from instructor.v2.core.providers import Provider
        from instructor.v2.core.registry import normalize_mode

        async def create(*args: Any, **kwargs: Any) -> Any:
            return await sdk.chat.completions.create(*args, **kwargs)

        mode = normalize_mode(Provider.OPENAI, mode)
        return AsyncInstructor(client=sdk, create=patch_v2(func=create, provider=Provider.OPENAI, mode=mode),
                               provider=Provider.OPENAI, mode=mode)


class GivenClient(Wire):
    """A ready Instructor client (from_provider's, or a test's): it builds its own requests."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire

    prompt_caching = False

    def auto_structured(self, base_url: str | None) -> str:
        return "tools"

    def sampling(self, kwargs: dict[str, Any], temperature: float | None) -> None:
        self.wire.sampling(kwargs, temperature)

    def reasoning(self, kwargs: dict[str, Any], profile: Profile, effort: str) -> None:
        self.wire.reasoning(kwargs, profile, effort)

    def request_shape(self, response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
        return {}


class ResponsesWire(Wire):
    """OpenAI's Responses API (/v1/responses) for the models served only there (profiles: api "responses"):
    Instructor's RESPONSES_TOOLS mode (a function tool, `max_tokens` sent as `max_output_tokens`), the
    reasoning knob as `reasoning.effort` (https://platform.openai.com/docs/api-reference/responses/create)."""

    def auto_structured(self, base_url: str | None) -> str:
        return "tools"

    def reasoning(self, kwargs: dict[str, Any], profile: Profile, effort: str) -> None:
        kwargs["reasoning"] = {"effort": effort}

    def request_shape(self, response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
        return {}

    def instructor(self, sdk: Any, structured: str) -> Any:
        import instructor

        return instructor.from_openai(sdk, mode=instructor.Mode.RESPONSES_TOOLS)


@lru_cache(maxsize=1024)
def request_fields(response_model: type[BaseModel], structured: str, custom_url: bool) -> dict[str, Any]:
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
