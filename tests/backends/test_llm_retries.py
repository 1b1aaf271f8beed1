"""Faults: provider 429/5xx are retried (honouring retry-after; 429s by the rate limiter, without
using the retries), invalid output is re-asked, and an
item still failing after that is unscored with the reason while the run goes on."""

from __future__ import annotations

import asyncio
import json
import time

import httpx2
import pytest
from fakes import MOSCOW_RIGHT, FakeLLM, moscow, moscow_checks, moscow_claims

from judgeflow import Judge, Judgment, judge_stream
from judgeflow.results import Usage
from judgeflow.runs.pricing import Price, estimate_cost, load_prices, price_for
from judgeflow.runs.summary import summarize

ITEM = moscow(answer=MOSCOW_RIGHT, reference="1147")
CLAIMS = moscow_claims(MOSCOW_RIGHT)
CHECKS = moscow_checks("supported")


class RetryAfterLLM(FakeLLM):
    """FakeLLM whose error responses carry `retry-after-ms`, as rate-limited providers send."""

    def __init__(self, *args, retry_after_ms: int = 1, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after_ms = retry_after_ms
        self.times: list[float] = []

    def handler(self, request: httpx2.Request) -> httpx2.Response:
        self.times.append(time.monotonic())
        response = super().handler(request)
        if response.status_code >= 400:
            return httpx2.Response(response.status_code, json=json.loads(response.content),
                                   headers={"retry-after-ms": str(self.retry_after_ms)})
        return response


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_429_and_500_are_retried_then_the_item_is_judged(provider: str) -> None:
    llm = RetryAfterLLM(provider, [429, 500, CLAIMS, 503, CHECKS])
    result = Judge(backend=llm.backend(provider_retries=2)).judge(ITEM)
    assert result.status == "judged" and result.label == 0
    assert len(llm.requests) == 5
    assert result.usage.calls == 2  # the failed attempts returned no completion


def test_retry_after_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    llm = RetryAfterLLM("openai", [429, CLAIMS, CHECKS], retry_after_ms=300)
    result = Judge(backend=llm.backend(provider_retries=1)).judge(ITEM)
    assert result.label == 0
    assert llm.times[1] - llm.times[0] >= 0.29  # waited as the provider asked, not the SDK's default


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_still_failing_after_the_retries_is_unscored_with_the_reason(provider: str) -> None:
    llm = RetryAfterLLM(provider, [500, 500, 500])
    result = Judge(backend=llm.backend(provider_retries=2)).judge(ITEM)
    assert result.status == "unscored" and result.label is None
    assert "decompose" in result.error and "500" in result.error
    assert len(llm.requests) == 3


def test_the_run_goes_on_after_an_item_fails() -> None:
    items = [ITEM, {**ITEM, "id": "second"}]
    llm = RetryAfterLLM("openai", [500, 503, CLAIMS, CHECKS])  # item 1 exhausts its retries (a 429 would not:
    # it is waited out, see test_limits)

    async def go() -> list[Judgment]:
        judge = Judge(backend=llm.backend(provider_retries=1), concurrency=1)
        return [j async for _, j in judge_stream(judge, items, concurrency=1)]

    results = {j.id: j for j in asyncio.run(go())}
    assert results["moscow"].status == "unscored" and "InternalServerError" in results["moscow"].error
    assert results["second"].status == "judged" and results["second"].label == 0


def test_invalid_structured_output_is_re_asked() -> None:
    bad = {"checks": [{"claim_id": "c9", "verdict": "supported", "basis": "reference"}]}  # unknown id
    llm = FakeLLM("openai", [CLAIMS, bad, CHECKS])
    result = Judge(backend=llm.backend(max_retries=1)).judge(ITEM)
    assert result.status == "judged" and result.label == 0
    assert len(llm.requests) == 3
    assert "c9" in json.dumps(llm.requests[2]["messages"])  # the error went back to the model


def test_invalid_output_after_all_re_asks_is_unscored() -> None:
    bad = {"checks": [{"claim_id": "c1", "verdict": "maybe", "basis": "reference"}]}
    llm = FakeLLM("openai", [CLAIMS, bad, bad])
    result = Judge(backend=llm.backend(max_retries=1)).judge(ITEM)
    assert result.status == "unscored" and result.label is None
    assert "check" in result.error and "maybe" in result.error


def test_summary_counts_labels_unscored_tokens_and_cost() -> None:
    results = [
        Judgment(id="a", label=1, usage=Usage(calls=2, input_tokens=1_000_000, output_tokens=0)),
        Judgment(id="b", label=0, usage=Usage(calls=2, input_tokens=0, output_tokens=1_000_000)),
        Judgment(id="c", label=None, status="unscored", error="boom", usage=Usage(calls=1)),
        Judgment(id="d", label=0, cached=True),
    ]
    lines = summarize(results, model="openai/gpt-4o-mini", prices=None, elapsed=0, session=Usage(), session_items=0)
    assert lines[0] == "4 rows: label 1: 1, label 0: 2; unscored: 1; invalid: 0; served from cache: 1"
    assert lines[1] == "most common unscored reason (1 of 1 unscored rows): boom"  # whatever the row count
    assert "tokens in 1,000,000, out 1,000,000 in 5 calls" in lines[2]
    assert lines[3].startswith("estimated cost: $0.7500 at list prices for openai/gpt-4o-mini (prices: ")
    unknown = summarize(results, model="openai/my-finetune", prices=None, elapsed=0, session=Usage(), session_items=0)
    assert "unknown (no price for openai/my-finetune; add it with --prices FILE)" in unknown[3]


def test_prices_can_be_overridden_from_a_file(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "prices.toml"
    f.write_text('["openai/my-finetune"]\ninput = 1.0\noutput = 2.0\n')
    monkeypatch.setenv("JUDGEFLOW_PRICES", str(f))
    prices = load_prices()
    assert price_for("openai/my-finetune", prices) == Price(input=1.0, output=2.0, source=str(f))
    assert price_for("openai/gpt-4o-mini-2024-07-18", prices) == price_for("openai/gpt-4o-mini", prices)
    assert estimate_cost("ollama/llama3.1", Usage(input_tokens=10**6), prices=prices) == 0.0
    usage = Usage(input_tokens=10**6, output_tokens=10**6)
    assert estimate_cost("openai/my-finetune", usage, prices=prices, batch=True) == pytest.approx(1.5)
    bad = tmp_path / "bad.json"
    bad.write_text('{"openai/x": {"input": "cheap"}}')
    with pytest.raises(Exception, match='bad.json: entry .openai/x. must have numeric "input" and "output"'):
        load_prices(bad)
