"""Provider prompt caching, at the HTTP boundary (real openai/anthropic SDKs + Instructor over an
httpx MockTransport): requests put static instructions and schema first, then the shared source,
then the item's own text; Anthropic gets a cache_control breakpoint after a long enough source;
cached-token counts are read into usage and priced at the cached rate; items sharing a source are
sent together and results still come back in input order."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from fakes import FakeLLM

from judgeflow import Judge
from judgeflow.results import Usage
from judgeflow.runs.pricing import Price, estimate_cost
from judgeflow.scheduling import by_evidence

LONG_SOURCE = " ".join(f"Sentence {i} of the shared article says the bridge opened in {1900 + i}." for i in range(90))


def items(source: str) -> list[dict[str, Any]]:
    return [{"id": "a", "question": "When did it open?", "answer": "The bridge opened in 1901.", "source": [source]},
            {"id": "b", "question": "Who built it?", "answer": "Engineers built the bridge. It opened in 1950.",
             "source": [source]}]


def script(n_claims: tuple[int, ...]) -> list[Any]:
    out: list[Any] = []
    for n in n_claims:
        # each claim carries the years of both answers in items(), so no detail is left to add (check_dropped)
        out.append({"claims": [{"text": f"claim {k}: it opened in 1901, or in 1950", "kind": "date"} for k in range(n)]})
        out.append({f"c{k + 1}": {"evidence": "", "reason": "r", "basis": "source", "verdict": "supported"}
                    for k in range(n)})
    return out


def user_text(req: dict[str, Any]) -> str:
    c = [m for m in req["messages"] if m["role"] == "user"][-1]["content"]
    return c if isinstance(c, str) else "".join(p["text"] for p in c)


def prefix(req: dict[str, Any]) -> str:
    """What a provider's prefix cache sees first: tools, system, then the user message."""
    system = req.get("system") or [m["content"] for m in req["messages"] if m["role"] == "system"]
    return json.dumps(req["tools"], sort_keys=True) + json.dumps(system) + user_text(req)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_two_items_sharing_a_source_share_the_prefix_up_to_the_end_of_the_source(provider: str) -> None:
    llm = FakeLLM(provider, script((2, 2)))
    results = Judge(backend=llm.backend()).judge_many(items(LONG_SOURCE), concurrency=1)
    assert [r.status for r in results] == ["judged", "judged"]
    check_a, check_b = llm.requests[1], llm.requests[3]
    a, b = prefix(check_a), prefix(check_b)
    common = len(next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))) * "x")
    end_of_source = a.index("</source>") + len("</source>")
    assert common >= end_of_source  # tools, system, instructions and the whole source are shared
    ua = user_text(check_a)
    assert ua.index("</source>") < ua.index("<claims>")  # the item's own text comes after the evidence
    assert "When did it open?" not in a[:end_of_source] and "Who built it?" not in b[:end_of_source]
    # the decompose step has its own short system message, the check step the criterion's
    assert prefix(llm.requests[0]) != a and len(json.dumps(llm.requests[0].get("system") or llm.requests[0]["messages"][0])) \
        < len(json.dumps(check_a.get("system") or check_a["messages"][0]))


def test_anthropic_gets_a_cache_breakpoint_after_a_long_source_only() -> None:
    llm = FakeLLM("anthropic", script((1, 1)))
    Judge(backend=llm.backend()).judge_many(items(LONG_SOURCE)[:1] + [dict(items("A short source.")[1])], concurrency=1)
    long_check, short_check = llm.requests[1], llm.requests[3]
    blocks = long_check["messages"][-1]["content"]
    assert isinstance(blocks, list) and [b.get("cache_control") for b in blocks] == [{"type": "ephemeral"}, None]
    assert blocks[0]["text"].endswith("</source>") and "<claims>" in blocks[1]["text"]
    assert isinstance(short_check["messages"][-1]["content"], str)  # too short to be cached: no breakpoint
    assert all(isinstance(r["messages"][-1]["content"], str) for r in (llm.requests[0], llm.requests[2]))  # decompose
    # the trace keeps the prompt as sent to the judge, not the provider's block form
    r = Judge(backend=FakeLLM("anthropic", script((1,))).backend()).judge(items(LONG_SOURCE)[0])
    assert isinstance(r.trace[1].messages[-1]["content"], str)


def test_openai_gets_no_cache_control() -> None:
    llm = FakeLLM("openai", script((1,)))
    Judge(backend=llm.backend()).judge(items(LONG_SOURCE)[0])
    assert "cache_control" not in json.dumps(llm.requests)


def with_usage(llm: FakeLLM, usage: dict[str, Any]) -> httpx2.AsyncClient:
    def handler(request: httpx2.Request) -> httpx2.Response:
        response = llm.handler(request)
        body = json.loads(response.content)
        body["usage"] = usage
        return httpx2.Response(response.status_code, json=body)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def test_openai_cached_tokens_are_read_and_priced() -> None:
    llm = FakeLLM("openai", script((1,)))
    usage = {"prompt_tokens": 2000, "completion_tokens": 50, "total_tokens": 2050,
             "prompt_tokens_details": {"cached_tokens": 1536}}
    from judgeflow.backends.llm import make_client
    from judgeflow.backends.llm_judge import LLMJudge

    client = make_client("openai/gpt-4o-mini", api_key="k", base_url="http://llm.test/v1", provider_retries=0,
                         http_client=with_usage(llm, usage))
    r = Judge(backend=LLMJudge(client)).judge(items(LONG_SOURCE)[0])
    assert (r.usage.input_tokens, r.usage.cached_tokens, r.usage.cache_write_tokens) == (4000, 3072, 0)
    price = Price(input=1.0, output=10.0, cached_input=0.5)
    assert estimate_cost("openai/x", r.usage, prices={"openai/x": price}) == pytest.approx(
        (928 * 1.0 + 3072 * 0.5 + 100 * 10.0) / 1e6)
    # a price without a cached rate charges cached tokens at the input price
    assert estimate_cost("openai/x", r.usage, prices={"openai/x": Price(input=1.0, output=10.0)}) == pytest.approx(
        (4000 * 1.0 + 100 * 10.0) / 1e6)


def test_anthropic_cache_reads_and_writes_are_read_and_priced() -> None:
    llm = FakeLLM("anthropic", script((1,)))
    usage = {"input_tokens": 40, "output_tokens": 30, "cache_read_input_tokens": 1200,
             "cache_creation_input_tokens": 300}
    from judgeflow.backends.llm import make_client
    from judgeflow.backends.llm_judge import LLMJudge

    client = make_client("anthropic/claude-sonnet-4-5", api_key="k", base_url="http://llm.test", provider_retries=0,
                         http_client=with_usage(llm, usage))
    r = Judge(backend=LLMJudge(client)).judge(items(LONG_SOURCE)[0])
    u = r.usage
    assert (u.input_tokens, u.cached_tokens, u.cache_write_tokens, u.output_tokens) == (3080, 2400, 600, 60)
    cost = estimate_cost("anthropic/claude-sonnet-4-5", u)
    assert cost == pytest.approx((80 * 3.00 + 2400 * 0.30 + 600 * 3.75 + 60 * 15.00) / 1e6)
    total = Usage()
    total.add(u)
    total.add(u)
    assert (total.cached_tokens, total.cache_write_tokens) == (4800, 1200)


def test_items_sharing_a_source_are_sent_together_and_results_keep_input_order() -> None:
    from judgeflow.items import Item

    rows = [Item(id=str(i), answer="x", source=[f"S{i % 3}"]) for i in range(7)] + [Item(id="q", answer="y", reference="r")]

    async def order() -> list[int]:
        async def pairs() -> Any:
            for n, it in enumerate(rows):
                yield n, it
        return [seq async for seq, _ in by_evidence(pairs())]

    assert asyncio.run(order()) == [0, 3, 6, 1, 4, 2, 5, 7]  # stable: first appearance, then input order
    llm = FakeLLM("openai", script((1,) * 4))
    got = Judge(backend=llm.backend()).judge_many(
        [dict(items(LONG_SOURCE)[0], id="1"), dict(items("Other.")[0], id="2"), dict(items(LONG_SOURCE)[1], id="3"),
         dict(items("Other.")[1], id="4")], concurrency=1)
    assert [r.id for r in got] == ["1", "2", "3", "4"]
    answers = [u for u in llm.user_prompts() if "<answer>" in u]  # decompose prompts, in the order sent
    assert ["Engineers" in a for a in answers] == [False, True, False, True]  # 1, 3 (same source), then 2, 4
    sources = [("Sentence 0" in u) for u in llm.user_prompts() if "<claims>" in u]
    assert sources == [True, True, False, False]
