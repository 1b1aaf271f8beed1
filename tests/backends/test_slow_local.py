"""Slow local judges (#41): a local endpoint (a loopback server, like llama.cpp or ollama on a laptop)
that answers slowly gets a deadline that fits it, a request that timed out is never sent again while the
server may still be computing it, and every request sent is counted, timed out or not.

The server is tests/fakes/schema_provider.py on 127.0.0.1 with a per-request latency; the module's
deadlines are scaled down by the test (providers.LOCAL_TIMEOUT / DEFAULT_TIMEOUT), not waited out."""

from __future__ import annotations

import threading

import pytest
from fakes.schema_provider import SchemaProvider

from judgeflow import Judge
from judgeflow.backends import local_pace
from judgeflow.backends.llm import providers

ITEM = {"id": "m", "question": "When was Moscow founded?", "answer": "Moscow was founded in 1147.", "reference": "1147"}


def test_a_timed_out_local_request_is_sent_once_counted_and_the_fix_named() -> None:
    with SchemaProvider(latency=1.0) as server:
        judge = Judge("openai/local-model", base_url=f"{server.base_url}/v1", api_key="k", timeout=0.2)
        row = judge.judge(ITEM)
        sent = server.received
    assert sent == 1, "a local request that timed out must not be sent again"
    assert row.status == "unscored" and row.usage.calls == 1
    assert "--timeout" in (row.error or "") and "not sent again" in (row.error or "")


def test_a_local_endpoint_slower_than_the_paced_deadline_says_what_it_showed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(providers, "LOCAL_TIMEOUT", 0.2)  # scaled: the floor, shorter than the call
    with SchemaProvider(latency=1.0) as server:
        row = Judge("openai/local-model", base_url=f"{server.base_url}/v1", api_key="k").judge(ITEM)
        sent = server.received
    assert sent == 1 and row.status == "unscored" and row.usage.calls == 1
    assert "within 0.2 s" in (row.error or "") and "1 request(s) in flight at most" in (row.error or "")
    assert "--timeout" in (row.error or "") and local_pace.stats()[0]["deadline"] >= 0.4  # doubled for later requests


def test_a_slow_local_endpoint_scores_at_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    # scaled: the provider default (120 s) is shorter than a call, the local default (900 s) longer
    monkeypatch.setattr(providers, "DEFAULT_TIMEOUT", 0.1)
    monkeypatch.setattr(providers, "LOCAL_TIMEOUT", 5.0)
    with SchemaProvider(latency=0.3) as server:
        judge = Judge("openai/local-model", base_url=f"{server.base_url}/v1", api_key="k")
        row = judge.judge(ITEM)
        sent = server.received
    assert judge.backend.client.local and judge.backend.client.timeout == 5.0
    assert row.status in ("judged", "unscored") and row.usage.calls == sent >= 1
    assert "did not answer" not in (row.error or "")


def test_local_endpoints_are_recognised() -> None:
    assert providers.is_local("ollama", None)
    assert providers.is_local("openai", "http://127.0.0.1:8080/v1") and providers.is_local("openai", "http://localhost:1/v1")
    assert not providers.is_local("openai", None) and not providers.is_local("openai", "https://api.example.com/v1")


class LocalServer(SchemaProvider):
    """The schema fake as a local model server: one slot (`slots=1`: requests wait their turn, as in
    llama.cpp with one slot), latencies by arrival (`first` for the first request, then `latency`),
    and the most requests it ever held at once (waiting or computing)."""

    def __init__(self, *, latency: float, first: float | None = None, slots: int | None = None) -> None:
        super().__init__(seed=1)
        self._latency, self._first = latency, first
        self.slot = threading.Semaphore(slots) if slots else None
        self.held = self.most_held = 0
        self._lock = threading.Lock()

    @property  # type: ignore[override]
    def latency(self) -> float:
        return self._first if self._first is not None and self.received == 1 else self._latency

    @latency.setter
    def latency(self, value: float) -> None:
        pass

    def _handler(self) -> type:
        base, fake = super()._handler(), self

        class Handler(base):  # type: ignore[misc, valid-type]
            def do_POST(self) -> None:
                with fake._lock:
                    fake.held += 1
                    fake.most_held = max(fake.most_held, fake.held)
                try:
                    if fake.slot is None:
                        super().do_POST()
                    else:
                        with fake.slot:
                            super().do_POST()
                finally:
                    with fake._lock:
                        fake.held -= 1

        return Handler


def items(n: int) -> list[dict[str, str]]:
    return [dict(ITEM, id=f"m{i}") for i in range(n)]


def test_a_single_slot_local_server_is_not_sent_a_queue_of_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(providers, "LOCAL_TIMEOUT", 30.0)  # no timeouts here: this is about the queue
    with LocalServer(latency=0.1, slots=1) as server:
        judge = Judge("openai/local-model", base_url=f"{server.base_url}/v1", api_key="k")  # concurrency 16
        rows = judge.judge_many(items(8))
        sent, held = server.received, server.most_held
    # a queued request sent just before the one ahead of it ends can look flat, so the pace may probe one
    # more; never the 8 the items alone would send
    assert held <= 3, f"a single-slot server was sent {held} requests at once (was 8: one per item)"
    assert all(r.status == "judged" for r in rows), [r.error for r in rows]
    assert sum(r.usage.calls for r in rows) == sent  # every request sent is counted
    assert local_pace.stats()[0]["peak"] <= 3


def test_a_local_server_that_keeps_latency_flat_gets_more_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(providers, "LOCAL_TIMEOUT", 30.0)
    with LocalServer(latency=0.5) as server:  # as many slots as requests: latency stays flat
        rows = Judge("openai/local-model", base_url=f"{server.base_url}/v1", api_key="k").judge_many(items(12))
        sent, held = server.received, server.most_held
    assert all(r.status == "judged" for r in rows) and sum(r.usage.calls for r in rows) == sent
    assert held >= 3, "concurrency grows while the endpoint's latency stays flat"


def test_the_local_deadline_follows_the_replies_above_its_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    # scaled: the floor (0.6 s) is shorter than the later calls (1.0 s); the first reply (0.3 s) shows
    # the endpoint's speed, and each later request may take 4x the slowest reply seen
    monkeypatch.setattr(providers, "LOCAL_TIMEOUT", 0.6)
    with LocalServer(latency=1.0, first=0.3) as server:
        rows = Judge("openai/local-model", base_url=f"{server.base_url}/v1", api_key="k").judge_many(items(2))
        sent = server.received
    assert [r.status for r in rows] == ["judged", "judged"], [r.error for r in rows]
    assert sum(r.usage.calls for r in rows) == sent == 4
    assert local_pace.stats()[0]["deadline"] >= 4.0 and local_pace.stats()[0]["timeouts"] == 0
