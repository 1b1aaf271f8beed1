"""Judgments as OpenTelemetry spans (judgeflow/integrations/otel.py), read back from the in-memory exporter."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("opentelemetry.sdk")
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from judgeflow.errors import ConfigError  # noqa: E402
from judgeflow.integrations.otel import (  # noqa: E402
    EVENT,
    VerdictExporter,
    evaluation_attributes,
    traces_endpoint,
)
from judgeflow.results import ClaimResult, Judgment  # noqa: E402

TRACE, SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


def _judged(label, **extra):
    claims = [ClaimResult(id="c1", text="Paris is in France", verdict="supported"),
              ClaimResult(id="c2", text="The capital is Atlantis", verdict="contradicted", error=bool(label))]
    return Judgment(id="q1", label=label, criterion="source_faithfulness", model="openai/gpt-4o-mini",
                    reason="claim c2 is contradicted by the source" if label else "all 2 claims supported",
                    claims=claims, extra=extra)


def _export(*judgments, **kw):
    mem = InMemorySpanExporter()
    exporter = VerdictExporter(span_exporter=mem, **kw)
    for j in judgments:
        exporter.export(j)
    assert exporter.close()
    return mem.get_finished_spans()


def test_a_hallucination_is_an_evaluation_result_with_judgeflows_fields():
    [span] = _export(_judged(1))
    assert span.name == "evaluate hallucination"
    want = {"gen_ai.evaluation.name": "hallucination", "gen_ai.evaluation.score.value": 1.0,
            "gen_ai.evaluation.score.label": "hallucination",
            "gen_ai.evaluation.explanation": "claim c2 is contradicted by the source",
            "judgeflow.item.id": "q1", "judgeflow.status": "judged", "judgeflow.criterion": "source_faithfulness",
            "judgeflow.model": "openai/gpt-4o-mini", "judgeflow.claims.count": 2, "judgeflow.claims.errors": 1,
            "judgeflow.deciding_claim": "The capital is Atlantis", "judgeflow.deciding_claim.id": "c2"}
    assert dict(span.attributes) == {"openinference.span.kind": "EVALUATOR", **want}  # Phoenix shows its kind
    assert span.status.is_ok
    [event] = span.events
    assert event.name == EVENT == "gen_ai.evaluation.result" and dict(event.attributes) == want
    assert span.resource.attributes["service.name"] == "judgeflow"


def test_none_found_scores_zero_with_no_deciding_claim():
    [span] = _export(_judged(0))
    a = span.attributes
    assert a["gen_ai.evaluation.score.value"] == 0.0 and a["gen_ai.evaluation.score.label"] == "no_hallucination"
    assert "judgeflow.deciding_claim" not in a and "error.type" not in a


@pytest.mark.parametrize("status", ["unscored", "invalid"])
def test_a_row_without_a_verdict_stays_unscored_with_its_reason(status):
    """Unscored is never 0: no score value at all; the label says so and the explanation says why."""
    j = getattr(Judgment, status)("q2", "budget: 20 of 20 call(s) spent", criterion="source_faithfulness")
    [span] = _export(j)
    a = span.attributes
    assert "gen_ai.evaluation.score.value" not in a
    assert a["gen_ai.evaluation.score.label"] == status and a["error.type"] == status
    assert a["gen_ai.evaluation.explanation"] == "budget: 20 of 20 call(s) spent"
    assert a["judgeflow.status"] == status and a["judgeflow.claims.count"] == 0
    assert span.status.status_code.name == "ERROR"  # error-rate views count judge failures
    assert span.status.description == "budget: 20 of 20 call(s) spent"


def test_a_judgment_of_a_traced_item_links_to_the_judged_span_from_a_trace_of_its_own():
    """Never a child in the judged trace: that would lengthen it by the judge's time (#47)."""
    [span] = _export(_judged(1, trace_id=TRACE, span_id=SPAN))
    assert format(span.context.trace_id, "032x") != TRACE and span.parent is None
    [link] = span.links
    assert format(link.context.span_id, "016x") == SPAN and format(link.context.trace_id, "032x") == TRACE
    assert span.attributes["judgeflow.judged.trace_id"] == TRACE and span.attributes["judgeflow.judged.span_id"] == SPAN


def test_a_current_span_in_the_caller_does_not_become_the_verdicts_parent():
    from opentelemetry.sdk.trace import TracerProvider

    app = TracerProvider().get_tracer("app")
    with app.start_as_current_span("request"):
        [span] = _export(_judged(0, trace_id=TRACE, span_id=SPAN))
    assert span.parent is None


@pytest.mark.parametrize("extra", [{}, {"trace_id": TRACE}, {"trace_id": "xyz", "span_id": SPAN},
                                   {"trace_id": "0" * 32, "span_id": SPAN}])
def test_without_a_valid_judged_span_the_verdict_starts_its_own_trace(extra):
    [span] = _export(_judged(0, **extra))
    assert span.parent is None and not span.links


def test_each_verdict_is_its_own_span_and_the_project_is_the_resource():
    spans = _export(_judged(1), _judged(0), Judgment.unscored("q3", "rate limited"), project="shop")
    assert len({s.context.span_id for s in spans}) == 3
    assert {s.resource.attributes["openinference.project.name"] for s in spans} == {"shop"}


def test_the_evaluation_name_can_be_set():
    assert evaluation_attributes(_judged(1), name="faithfulness")["gen_ai.evaluation.name"] == "faithfulness"


def test_the_standard_variables_set_the_service_name(monkeypatch):
    monkeypatch.setenv("OTEL_SERVICE_NAME", "judge-prod")
    [span] = _export(_judged(0))
    assert span.resource.attributes["service.name"] == "judge-prod"


def test_endpoints():
    assert traces_endpoint("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_endpoint("http://h:6006/v1/traces/") == "http://h:6006/v1/traces"
    with pytest.raises(ConfigError, match="--otel-endpoint 'localhost:4318' is not an http"):
        traces_endpoint("localhost:4318")


def test_a_collector_that_refuses_is_counted_not_raised():
    from opentelemetry.sdk.trace.export import SpanExportResult

    class Refusing(InMemorySpanExporter):
        def export(self, spans):
            return SpanExportResult.FAILURE

    exporter = VerdictExporter(span_exporter=Refusing())
    exporter.export(_judged(1))
    assert exporter.close() is False and exporter.failed == 1


def test_run_sends_every_verdict_to_the_otlp_endpoint(tmp_path):
    """`judgeflow run --otel-endpoint` through the real OTLP/HTTP exporter (protobuf) into judgeflow's own
    receiver on 127.0.0.1, which reads the spans back."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    from judgeflow.cli import main
    from judgeflow.io.receiver import Receiver
    from tests.fakes.otel_traces import rag_trace, request, span_id, trace_id, write_jsonl

    path = write_jsonl(tmp_path / "traces.jsonl", [request(rag_trace(1)), request(rag_trace(2, wrong=True))])
    with Receiver() as rx:
        rc = main(["run", str(path), "-o", str(tmp_path / "out.jsonl"), "--model", "baseline/lexical",
                   "--no-progress", "--store", str(tmp_path / "s.sqlite"), "--otel-endpoint", rx.url])
        spans = rx.spans()
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())}
    assert rc in (0, 1) and len(spans) == 2
    by_trace = {s.attributes["judgeflow.judged.trace_id"]: s for s in spans}
    assert set(by_trace) == {trace_id(1), trace_id(2)}
    for n in (1, 2):
        s, row = by_trace[trace_id(n)], rows[trace_id(n)]
        assert s.parent_id is None and s.name == "evaluate hallucination"  # a trace of its own, linked
        assert s.attributes["judgeflow.judged.span_id"] == span_id(n, 2)
        assert s.attributes["judgeflow.item.id"] == row["id"]
        assert s.attributes.get("gen_ai.evaluation.score.value") == (None if row["label"] is None else float(row["label"]))
