"""Provider rate limits at the HTTP boundary (the real openai/anthropic SDKs and Instructor over a
MockTransport or a loopback server with a provider-like limiter): headers learned and obeyed on
both wires, retry-after honoured, a 429 not counted against --retries, the --max-wait deadline, a
request too large for the limit, one budget for a panel's members, an unlimited endpoint untouched,
and the exit code of a run that lost items to the limit."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from fakes import (
    MOSCOW_RIGHT,
    FakeProvider,
    LimitedLLM,
    ProviderLimit,
    moscow,
    moscow_checks,
    moscow_claims,
)

from judgeflow import Judge, Judgment, judge_stream
from judgeflow.backends.limits import Limiter, limiter_for
from judgeflow.cli import main
from judgeflow.ensembles import Panel

ITEM = moscow(answer=MOSCOW_RIGHT, reference="1147")
CLAIMS = moscow_claims(MOSCOW_RIGHT)
CHECKS = moscow_checks("supported")


def items(n: int) -> list[dict]:
    return [{**ITEM, "id": f"i{k}", "answer": f"Moscow was founded in 1147. Fact {k}."} for k in range(n)]


async def judge_all(judge: Judge, rows: list[dict], concurrency: int = 8) -> list[Judgment]:
    try:
        return [j async for _, j in judge_stream(judge, rows, concurrency=concurrency)]
    finally:
        await judge.aclose()


def limiter_of(judge: Judge) -> Limiter:
    return judge.backend.client.limiter  # type: ignore[attr-defined]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_headers_are_learned_and_obeyed(provider: str) -> None:
    # 8 requests a second on the OpenAI wire; 2,000 input tokens a second on the Anthropic wire (whose
    # reset header has whole seconds: a window of a few seconds, as a minute is to real limits)
    limit = ProviderLimit(rpm=8, window=1.0) if provider == "openai" else ProviderLimit(tpm=4000, window=2.0)
    llm = LimitedLLM(provider, limit=limit)
    judge = Judge(backend=llm.backend(provider_retries=0))
    results = asyncio.run(judge_all(judge, items(16)))
    assert all(j.status == "judged" for j in results), [j.error for j in results if j.error]
    sent = len(llm.statuses)
    assert llm.statuses.count(429) <= max(3, sent // 10), llm.statuses  # a first burst, then paced
    dim = "requests" if provider == "openai" else "input"
    bucket = limiter_of(judge).buckets[dim]
    assert bucket.source == "learned" and bucket.limit == (8 if provider == "openai" else 4000)
    assert bucket.rate == pytest.approx(8 if provider == "openai" else 2000, rel=0.3)  # the window was learned too


def test_retry_after_is_honoured_with_jitter_and_not_counted_against_retries() -> None:
    # no limit headers at all: only a 429 with retry-after-ms, twice, then replies
    limit = ProviderLimit(headers=False)
    llm = LimitedLLM("openai", [CLAIMS, CHECKS], limit=limit)
    llm.limit.admit = _refuse_first(llm.limit.admit, 2, retry_ms=300)  # type: ignore[method-assign]
    times: list[float] = []
    inner = llm.handler
    llm.handler = lambda request: (times.append(time.monotonic()), inner(request))[1]  # type: ignore[method-assign]
    result = Judge(backend=llm.backend(provider_retries=0)).judge(ITEM)  # --retries 0
    assert result.status == "judged", result.error
    assert llm.statuses == [429, 429, 200, 200]
    assert times[1] - times[0] >= 0.3 and times[2] - times[1] >= 0.3  # waited as told, each time


def _refuse_first(admit, n: int, retry_ms: int):  # type: ignore[no-untyped-def]
    left = [n]

    def refusing(wire: str, raw: bytes):  # type: ignore[no-untyped-def]
        if left[0] > 0:
            left[0] -= 1
            return 429, {"retry-after-ms": str(retry_ms)}, "rate limited"
        return admit(wire, raw)

    return refusing


def test_an_item_gives_up_after_max_wait_with_a_rate_limit_reason() -> None:
    llm = LimitedLLM("openai", [CLAIMS, CHECKS], limit=ProviderLimit(headers=False))
    llm.limit.admit = _refuse_first(llm.limit.admit, 10**6, retry_ms=200)  # type: ignore[method-assign]
    start = time.monotonic()
    result = Judge(backend=llm.backend(provider_retries=3, max_wait=0.7)).judge(ITEM)
    elapsed = time.monotonic() - start
    assert result.status == "unscored" and result.label is None
    assert "rate limited" in result.error and "--max-wait" in result.error
    assert elapsed < 3.0 and 2 <= len(llm.statuses) <= 6  # waited about max-wait, not the SDK's retries


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_request_larger_than_the_limit_is_not_sent_again(provider: str) -> None:
    llm = LimitedLLM(provider, [CLAIMS, CHECKS], limit=ProviderLimit(tpm=60, window=60.0))
    result = Judge(backend=llm.backend(provider_retries=4)).judge(ITEM)
    assert result.status == "unscored"
    assert "request too large" in result.error and "--max-source-chars" in result.error
    assert llm.statuses == [429]  # once, never again
    # the limit is known now: the next item is refused before anything is sent
    again = Judge(backend=llm.backend(provider_retries=4)).judge(ITEM)
    assert "request too large" in again.error and "60" in again.error and llm.statuses == [429]


def test_a_set_tpm_refuses_a_too_large_request_without_sending_it() -> None:
    llm = LimitedLLM("openai", [CLAIMS, CHECKS])
    result = Judge(backend=llm.backend(tpm=100)).judge(ITEM)
    assert result.status == "unscored" and "request too large" in result.error and "--max-tokens" in result.error
    assert llm.statuses == []


def test_panel_members_on_one_endpoint_share_one_budget() -> None:
    limit = ProviderLimit(rpm=6, window=1.0)
    llm = LimitedLLM("openai", limit=limit)
    members = [Judge(backend=llm.backend(provider_retries=0)), Judge(backend=llm.backend(provider_retries=0))]
    assert limiter_of(members[0]) is limiter_of(members[1])
    panel = Panel(members)
    results = asyncio.run(judge_all(panel, items(8)))  # type: ignore[arg-type]
    assert all(j.status == "judged" for j in results), [j.error for j in results if j.error]
    assert len(llm.statuses) >= 32  # 8 items x 2 members x 2 calls
    assert llm.statuses.count(429) <= max(3, len(llm.statuses) // 10)  # paced as one: the limit hardly had to refuse


def test_the_limiter_key_is_endpoint_key_and_model() -> None:
    a = limiter_for("openai", "http://x/v1", "k1", "openai/m")
    assert limiter_for("openai", "http://x/v1", "k1", "openai/m") is a
    assert limiter_for("openai", "http://x/v1", "k2", "openai/m") is not a
    assert limiter_for("openai", "http://y/v1", "k1", "openai/m") is not a
    assert limiter_for("openai", "http://x/v1", "k1", "openai/n") is not a
    assert "k1" not in repr(a)
    assert "secret" not in limiter_for("openai", "http://u:secret@x/v1", "k1", "openai/m").name  # shown in summaries


def test_an_unlimited_endpoint_is_not_slowed() -> None:
    llm = LimitedLLM("openai")  # no headers, no limit
    judge = Judge(backend=llm.backend(provider_retries=0))
    results = asyncio.run(judge_all(judge, items(20), concurrency=10))
    assert all(j.status == "judged" for j in results)
    limiter = limiter_of(judge)
    assert limiter.idle and limiter.waited == 0 and limiter.rate_limited == 0 and limiter.sent == 40


def test_a_run_that_lost_items_to_the_rate_limit_does_not_exit_0(tmp_path) -> None:
    rows = tmp_path / "items.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in items(4)))
    out = tmp_path / "out.jsonl"
    with FakeProvider(limit=ProviderLimit(rpm=2, window=60.0)) as fake:  # 2 requests a minute: one item
        code = main(["run", str(rows), "-o", str(out), "--model", "openai/gpt-4o-mini", "--base-url",
                     f"{fake.base_url}/v1", "--store", str(tmp_path / "s.sqlite"), "--max-wait", "1",
                     "--no-progress", "--max-unscored", "0.9"])
    results = [json.loads(line) for line in out.read_text().splitlines()]
    lost = [r for r in results if r["label"] is None]
    assert lost and all("rate limited" in r["error"] for r in lost)
    assert len(results) == 4 and code == 1  # under --max-unscored 0.9, still not a success


def test_ray_actors_each_pace_to_their_part_of_a_limit() -> None:
    from judgeflow.backends.limits import split

    limiter = limiter_for("openai", "http://x/v1", "k", "openai/m")
    limiter.configure(rpm=60)
    split(2)  # what each of 2 Ray actors does before building its judge
    assert limiter.buckets["requests"].limit == 30 and limiter.buckets["requests"].rate == pytest.approx(0.5)
    later = limiter_for("openai", "http://x/v1", "k", "openai/n")
    later.configure(tpm=1000)
    assert later.buckets["tokens"].limit == 500
    assert later.too_large((1.0, 800.0, 0.0, 0.0)) is None  # the whole limit decides what can never pass
    assert "1,000" in (later.too_large((1.0, 1200.0, 0.0, 0.0)) or "")
