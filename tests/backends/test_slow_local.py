"""Slow local judges (#41): a local endpoint (a loopback server, like llama.cpp or ollama on a laptop)
that answers slowly gets a deadline that fits it, a request that timed out is never sent again while the
server may still be computing it, and every request sent is counted, timed out or not.

The server is tests/fakes/schema_provider.py on 127.0.0.1 with a per-request latency; the module's
deadlines are scaled down by the test (providers.LOCAL_TIMEOUT / DEFAULT_TIMEOUT), not waited out."""

from __future__ import annotations

import pytest
from fakes.schema_provider import SchemaProvider

from judgeflow import Judge
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
