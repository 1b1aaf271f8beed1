"""Issue 35, items 3 and 4: 429 storms and hostile rate-limit headers, at the HTTP boundary (the real
openai SDK and Instructor over a MockTransport with a provider-like limiter, tests/fakes/limited.py).

Every re-send of a 429 waits a growing minimum (even when told `retry-after: 0`) up to a cap, and
`--max-wait` bounds the wall-clock time a call spends on the limit; a believed wait or limit from
one reply is capped and re-probed, never trusted for the life of the process."""

from __future__ import annotations

import asyncio
import time

import pytest
from fakes import MOSCOW_RIGHT, LimitedLLM, ProviderLimit, moscow, moscow_checks, moscow_claims

from judgeflow import Judge
from judgeflow.backends import limits

ITEM = moscow(answer=MOSCOW_RIGHT, reference="1147")
CLAIMS = moscow_claims(MOSCOW_RIGHT)
CHECKS = moscow_checks("supported")


def scripted(llm: LimitedLLM, replies: list[tuple[int, dict[str, str]]]) -> LimitedLLM:
    """The first len(replies) requests get these (status, headers); later ones the limit's own answer."""
    admit, left = llm.limit.admit, list(replies)

    def admitting(wire: str, raw: bytes):  # type: ignore[no-untyped-def]
        if left:
            status, headers = left.pop(0)
            return status, headers, "rate limited" if status == 429 else None
        return admit(wire, raw)

    llm.limit.admit = admitting  # type: ignore[method-assign]
    return llm


def always_429(headers: dict[str, str]) -> LimitedLLM:
    llm = LimitedLLM("openai", [CLAIMS, CHECKS] * 50, limit=ProviderLimit(headers=False))
    return scripted(llm, [(429, headers)] * 10**5)


@pytest.mark.parametrize("told", [{"retry-after": "0"}, {"retry-after-ms": "0"}, {}])
def test_a_429_told_to_retry_at_once_is_resent_with_a_growing_back_off(told: dict[str, str]) -> None:
    llm = always_429(told)
    times: list[float] = []
    inner = llm.handler
    llm.handler = lambda request: (times.append(time.monotonic()), inner(request))[1]  # type: ignore[method-assign]
    result = Judge(backend=llm.backend(provider_retries=0, max_wait=3.0)).judge(ITEM)
    assert result.status == "unscored" and "rate limited" in result.error and "max-wait" in result.error
    # before: 2,391 requests for 6 items in 168 s at --max-wait 10 (retry-after: 0 was obeyed at once)
    assert 2 <= len(llm.statuses) <= 5, len(llm.statuses)
    gaps = [b - a for a, b in zip(times, times[1:])]
    floors = [limits.backoff_floor(n) for n in range(1, len(gaps) + 1)]
    assert all(g >= f for g, f in zip(gaps, floors)), (gaps, floors)  # each re-send waited at least its floor
    assert floors == sorted(floors) and floors[0] > 0


def test_the_back_off_has_a_cap() -> None:
    assert limits.backoff_floor(1) > 0
    assert all(limits.backoff_floor(n) <= limits.MAX_BACKOFF for n in range(1, 200))
    assert limits.backoff_floor(100) == limits.MAX_BACKOFF


def test_max_wait_counts_the_wall_clock_not_only_the_limiters_sleeps() -> None:
    """The 429 round trips count too: a slow endpoint answering 429 is not re-sent for ever."""
    llm = always_429({"retry-after": "0"})
    inner = llm.handler
    llm.handler = lambda request: (time.sleep(0.4), inner(request))[1]  # type: ignore[method-assign]
    start = time.monotonic()
    result = Judge(backend=llm.backend(provider_retries=0, max_wait=1.5)).judge(ITEM)
    assert result.status == "unscored" and "rate limited" in result.error
    assert time.monotonic() - start < 1.5 + 0.4 * 2 + 2.0  # bounded by max-wait (+ one round trip), not the sleeps
    assert len(llm.statuses) <= 3, len(llm.statuses)


@pytest.mark.parametrize("hostile", [{"retry-after": "1e9"}, {"retry-after-ms": "1e12"}])
def test_a_huge_retry_after_is_capped_and_the_endpoint_is_probed_again(hostile, monkeypatch) -> None:
    monkeypatch.setattr(limits, "MAX_BELIEVED_WAIT", 0.3)
    llm = scripted(LimitedLLM("openai", [CLAIMS, CHECKS] * 3, limit=ProviderLimit(headers=False)), [(429, hostile)])
    judge = Judge(backend=llm.backend(provider_retries=0))
    first = judge.judge(ITEM)
    assert first.status == "judged", first.error  # before: unscored after 1 request, and so was every later item
    second = judge.judge({**ITEM, "id": "q2"})
    assert second.status == "judged", second.error
    assert llm.statuses == [429, 200, 200, 200, 200]


@pytest.mark.parametrize("hostile", [
    {"x-ratelimit-limit-tokens": "1", "x-ratelimit-remaining-tokens": "0"},
    {"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "9999999h"},
    {"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "0",
     "x-ratelimit-reset-requests": "2999-01-01T00:00:00Z"},
])
def test_one_hostile_limit_header_is_not_believed_for_the_life_of_the_process(hostile, monkeypatch) -> None:
    monkeypatch.setattr(limits, "MAX_BELIEVED_WAIT", 0.3)
    monkeypatch.setattr(limits, "BELIEVE_FOR", 0.3)
    llm = scripted(LimitedLLM("openai", [CLAIMS, CHECKS] * 3, limit=ProviderLimit(headers=False)), [(200, hostile)])
    judge = Judge(backend=llm.backend(provider_retries=0))
    results = [judge.judge(ITEM)]
    time.sleep(0.35)  # the endpoint recovered; a believed limit is re-probed after BELIEVE_FOR at most
    results.append(judge.judge({**ITEM, "id": "q2"}))
    assert results[-1].status == "judged", [r.error for r in results]
    assert len(llm.statuses) >= 3  # before: later items unscored with 0 requests sent


def test_served_callers_are_not_given_cli_advice() -> None:
    from judgeflow.served import api_message

    text = ("rate limited: m at the served endpoint would make this item wait more than --max-wait 600s in all "
            "(limit unknown); lower --concurrency, raise --max-wait, or --resume later")
    assert "--" not in api_message(text) and "rate limited" in api_message(text)
    too_large = ("rate limited: request too large for m: about 9 tokens against a limit of 1 per window (learned); "
                 "it can never pass: shorten it with --max-source-chars or --max-tokens")
    assert "--" not in api_message(too_large) and "request too large" in api_message(too_large)


def test_a_served_graph_caller_gets_no_cli_advice_and_the_endpoint_recovers(monkeypatch) -> None:
    """The served graph (its backend and limiter live for the life of the server process)."""
    import runpy
    from pathlib import Path

    from judgeflow import served

    monkeypatch.setattr(limits, "MAX_BELIEVED_WAIT", 0.3)
    llm = scripted(LimitedLLM("openai", [CLAIMS, CHECKS] * 3, limit=ProviderLimit(headers=False)),
                   [(429, {"retry-after": "1e9"})] * 10**5)
    backend = llm.backend(provider_retries=0, max_wait=0.5)
    monkeypatch.setattr(served, "make_backend", lambda model, **kw: backend)
    monkeypatch.setenv("JUDGEFLOW_ALLOWED_MODELS", "openai/fake-hostile")
    monkeypatch.setenv("JUDGEFLOW_BASE_URL", "http://127.0.0.1:9/v1")
    served._served_backend.cache_clear()
    served._judge_context.cache_clear()
    graph = runpy.run_path(str(Path(__file__).resolve().parents[2] / "graphs" / "judge.py"))["graph"]
    out = asyncio.run(graph.ainvoke({"item": ITEM}, context={"model": "openai/fake-hostile"}))
    served._served_backend.cache_clear()
    served._judge_context.cache_clear()
    assert out["status"] == "unscored" and "rate limited" in out["error"], out.get("error")
    assert "--max-wait" not in out["error"] and "--resume" not in out["error"] and "--concurrency" not in out["error"]
