"""With a hung collector every verdict span is either sent or counted as not taken (issue 46, F26)."""

from __future__ import annotations

import time

import pytest
from fakes.hostile import HostileServer

from judgeflow.results import Judgment

pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")


def _hangs(conn, headers, raw):
    time.sleep(20)  # never answers in time; the exporter's timeout gives up first


def test_a_hung_collector_leaves_no_span_uncounted(monkeypatch):
    from judgeflow.integrations.otel import VerdictExporter

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1")
    with HostileServer(_hangs) as collector:
        exporter = VerdictExporter(endpoint=collector.url)
        for n in range(3000):  # more than the batch processor's queue (2,048): some are dropped
            exporter.export(Judgment.invalid(f"i{n}", "no answer"))
        t0 = time.monotonic()
        ok = exporter.close()
        took = time.monotonic() - t0
    assert not ok
    assert exporter.sent + exporter.failed == 3000 and exporter.failed > 0
    assert took < 60
