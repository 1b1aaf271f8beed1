"""The judge's typed request (backends/typed_request.py) sends what Instructor's own `create`
sends, in every structured mode and on both wire formats, re-asks included, and returns the same
parsed reply: it only skips the per-call preparation, never changes the request."""

from __future__ import annotations

import asyncio
import json

import pytest

from judgeflow.backends.llm import prepared
from judgeflow.schemas import checks_reply, claims_reply
from judgeflow.validation import using_validation_context
from tests.fakes import FakeLLM, RawArgs

CLAIMS = claims_reply(("entity", "number", "date", "other"), 4)
CHECKS = checks_reply(("reference", "knowledge", "none"), ("supported", "contradicted", "unverifiable"), ("c1", "c2"))
MESSAGES = [{"role": "system", "content": "Split the answer into claims."},
            {"role": "user", "content": "<answer>Moscow is the capital of Russia. It has 13 million people.</answer>"}]
CONTEXT = {"verdicts": ["supported", "contradicted", "unverifiable"], "bases": ["reference", "knowledge", "none"],
           "fact_kinds": ["entity", "number", "date", "other"], "claim_ids": ["c1", "c2"]}


def _claims_reply():
    return CLAIMS.model_validate({"claims": [{"text": "Moscow is the capital of Russia.", "kind": "entity"},
                                             {"text": "Moscow has 13 million people.", "kind": "number"}]})


def _checks_reply():
    entry = {"verdict": "supported", "basis": "reference", "evidence": "", "reason": "stated"}
    return CHECKS.model_validate({"c1": entry, "c2": {**entry, "verdict": "contradicted"}})


def _send(provider: str, structured: str, fast: bool, model, replies):
    llm = FakeLLM(provider, replies)
    client = llm.client(structured=structured)

    async def ask():
        if fast:
            return await client.ask(model, MESSAGES, context=CONTEXT, max_tokens=300)
        # Instructor's own create, the way the client called it before typed_request
        from instructor.core.hooks import Hooks

        kwargs = {"temperature": client.temperature} if provider == "openai" else {}
        extra = client.wire.request_shape(model, client.structured, client.base_url is not None)
        if extra:
            kwargs["extra_body"] = extra
        if provider == "anthropic" and client.temperature is not None:
            kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "temperature": client.temperature}
        with using_validation_context(CONTEXT):
            return await client._instructor(await client.sdk.get(), None).create(
                response_model=prepared(model), messages=MESSAGES, max_retries=client.max_retries, hooks=Hooks(),
                model=client.model.partition("/")[2], max_tokens=300, **kwargs)

    result = asyncio.run(ask())
    return result, llm.requests


CASES = [("openai", "tools"), ("openai", "tools_strict"), ("openai", "json_schema"), ("openai", "json"),
         ("anthropic", "tools"), ("anthropic", "json")]


@pytest.mark.parametrize(("provider", "structured", "step"), [
    (provider, structured, step) for step in ("claims", "checks") for provider, structured in CASES
    if (provider, structured, step) != ("anthropic", "json", "checks")])  # one anthropic json case
def test_same_request_and_reply_as_instructor_create(provider, structured, step):
    model, make = (CLAIMS, _claims_reply) if step == "claims" else (CHECKS, _checks_reply)
    if structured.startswith("json"):  # JSON modes: the reply is text
        reply = lambda: make().model_dump_json(by_alias=True)  # noqa: E731
    else:  # a tool call (the checks reply's keys are aliases: c1, c2)
        reply = lambda: json.loads(make().model_dump_json(by_alias=True))  # noqa: E731
    fast, fast_requests = _send(provider, structured, True, model, [reply()])
    slow, slow_requests = _send(provider, structured, False, model, [reply()])
    assert fast_requests == slow_requests
    assert fast.model_dump() == slow.model_dump()
    assert len(fast_requests) == 1


@pytest.mark.parametrize("structured", ["tools", "tools_strict"])
def test_a_reask_sends_the_same_follow_up(structured):
    """A broken reply, then a valid one: both paths re-ask with the same messages."""
    broken = RawArgs('{"claims": [{"text": "Moscow is the capital of Russia."')  # cut JSON, no kind
    replies = lambda: [broken, _claims_reply()]  # noqa: E731
    fast, fast_requests = _send("openai", structured, True, CLAIMS, replies())
    slow, slow_requests = _send("openai", structured, False, CLAIMS, replies())
    assert len(fast_requests) == len(slow_requests) == 2
    assert json.dumps(fast_requests, sort_keys=True) == json.dumps(slow_requests, sort_keys=True)
    assert fast.model_dump() == slow.model_dump()


def test_tool_fields_are_built_once_per_reply_model():
    from judgeflow.backends import typed_request

    typed_request._tool_fields.cache_clear()
    for _ in range(3):
        _send("openai", "tools", True, CLAIMS, [_claims_reply()])
    info = typed_request._tool_fields.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def _raw_client(handler):
    """An LLMClient whose HTTP replies come from `handler` (the real SDK and Instructor run)."""
    import httpx2

    from judgeflow.backends.llm import make_client

    return make_client("openai/gpt-fake", api_key="test-key", base_url="http://llm.test/v1", provider_retries=0,
                       http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))


def test_a_reply_that_does_not_validate_is_read_leniently_as_the_sdk_reads_it():
    """A local server's reply that is not a valid ChatCompletion (no id/created, an odd `object`,
    usage without total_tokens, an extra field) is still read: the SDK's
    lenient construction, not a rejection."""
    import httpx2
    from openai._models import construct_type
    from openai.types.chat import ChatCompletion
    from pydantic import ValidationError

    from judgeflow.backends.typed_request import _chat_completion
    from judgeflow.results import Usage
    from tests.fakes import openai_body

    def body_for(request_body):
        out = openai_body(_claims_reply(), request_body, (321, 45))
        del out["id"], out["created"], out["usage"]["total_tokens"]
        out["object"] = "text_completion"  # not the Literal the SDK's model declares
        out["timings"] = {"predicted_ms": 12.5}  # llama.cpp adds this
        return out

    raw = json.dumps(body_for({"model": "m"})).encode()
    with pytest.raises(ValidationError):
        ChatCompletion.model_validate_json(raw)  # the fast path cannot take it ...
    lenient = _chat_completion(raw)  # ... so it is built as the SDK builds it
    assert lenient.model_dump() == construct_type(type_=ChatCompletion, value=json.loads(raw)).model_dump()

    client = _raw_client(lambda r: httpx2.Response(200, json=body_for(json.loads(r.content))))
    usage = Usage()
    reply = asyncio.run(client.ask(CLAIMS, MESSAGES, context=CONTEXT, max_tokens=300, usage=usage))
    assert reply.model_dump() == _claims_reply().model_dump()
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 321, 45)


def test_a_conforming_reply_is_the_object_the_sdk_builds():
    from openai._models import construct_type
    from openai.types.chat import ChatCompletion

    from judgeflow.backends.typed_request import _chat_completion
    from tests.fakes import openai_body

    body = openai_body(_claims_reply(), {"model": "m"})
    body["usage"]["prompt_tokens_details"] = {"cached_tokens": 64}
    raw = json.dumps(body).encode()
    fast = _chat_completion(raw)
    assert fast == construct_type(type_=ChatCompletion, value=json.loads(raw))
    assert fast.usage.prompt_tokens_details.cached_tokens == 64


def test_a_body_that_is_not_json_is_re_asked_then_unscored():
    """An HTML error page with status 200 (a proxy in front of a local server) is not a crash and
    not a provider error: every attempt is a reply the parser rejects, then the judge gives up."""
    import httpx2

    from judgeflow.errors import LLMError

    sent = []

    def handler(request):
        sent.append(request)
        return httpx2.Response(200, text="<html><body>502 Bad Gateway</body></html>",
                               headers={"content-type": "text/html"})

    client = _raw_client(handler)
    with pytest.raises(LLMError, match="unparseable judge output after 3 attempt"):
        asyncio.run(client.ask(CLAIMS, MESSAGES, context=CONTEXT, max_tokens=300))
    assert len(sent) == client.max_retries + 1 == 3


@pytest.mark.parametrize(("timeout", "attempts"), [(0.0, 1), (60.0, 3)])
def test_reasks_stop_at_the_request_timeout_as_in_instructors_loop(timeout, attempts):
    """A request with a `timeout` re-asks only while that many seconds have not passed, the same
    number of attempts as Instructor's own retry loop makes (its stop_after_delay)."""
    from instructor import Mode
    from instructor.core.exceptions import InstructorRetryException
    from instructor.utils.providers import Provider
    from instructor.v2.core.registry import mode_registry
    from instructor.v2.core.retry import retry_async

    from judgeflow.backends.typed_request import _attempts, _chat_completion, _tool_fields
    from tests.fakes import openai_body

    model, tool = _tool_fields(Provider.OPENAI, prepared(CLAIMS))
    handlers = mode_registry.get_handlers(Provider.OPENAI, Mode.TOOLS)
    sent: list[dict] = []

    async def send(**request):
        sent.append(request)
        body = openai_body({}, request)
        body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = '{"claims": ['  # cut off
        return _chat_completion(json.dumps(body).encode())

    request = {"messages": list(MESSAGES), "timeout": timeout, **tool}
    counts = []
    for loop in ("ours", "instructor"):
        sent.clear()
        with pytest.raises(InstructorRetryException) as caught:
            if loop == "ours":
                asyncio.run(_attempts(send, handlers, model, dict(request), 2, Provider.OPENAI))
            else:
                asyncio.run(retry_async(func=send, response_model=model, args=(), kwargs=dict(request), max_retries=2,
                                        strict=True, mode=Mode.TOOLS, provider=Provider.OPENAI))
        counts.append((len(sent), caught.value.n_attempts, len(caught.value.failed_attempts)))
    assert counts[0] == counts[1] == (attempts, attempts, attempts)


@pytest.mark.parametrize("structured", ["tools", "tools_strict", "json_schema", "json"])
def test_the_openai_wire_makes_the_client_from_openai_makes(structured: str) -> None:
    """The wire builds Instructor's client as `instructor.from_openai` does (the same SDK client,
    provider and mode), only without looking up `chat.completions.create` until it is called (the
    cases above call it: Instructor's own create answers as the fast path does)."""
    import instructor
    import openai

    from judgeflow.backends.providers.wire import Wire, instructor_mode

    sdk = openai.AsyncOpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    ours, theirs = Wire().instructor(sdk, structured), instructor.from_openai(sdk, mode=instructor_mode(structured))
    assert type(ours) is type(theirs)
    assert (ours.client, ours.provider, ours.mode, ours.kwargs) == (theirs.client, theirs.provider, theirs.mode,
                                                                    theirs.kwargs)
