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
        extra = client._shape(model)
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


@pytest.mark.parametrize(("provider", "structured"), CASES)
@pytest.mark.parametrize("step", ["claims", "checks"])
def test_same_request_and_reply_as_instructor_create(provider, structured, step):
    if provider == "anthropic" and structured == "json" and step == "checks":
        pytest.skip("one anthropic json case is enough")
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
