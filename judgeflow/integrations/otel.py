"""Judgments as OpenTelemetry data: the GenAI semantic conventions' evaluation result.

    exporter = VerdictExporter(endpoint="http://127.0.0.1:4318")   # or the OTEL_EXPORTER_OTLP_* variables
    for j in judgments: exporter.export(j)
    exporter.close()                                                # flushes; False if some were not sent

Each judgment becomes one span, `evaluate hallucination`, that carries the semantic conventions'
`gen_ai.evaluation.result` event; the span and its event have the same attributes:

- `gen_ai.evaluation.name`: "hallucination" (what was evaluated; low cardinality);
- `gen_ai.evaluation.score.value`: 1.0 (a hallucination or error found) or 0.0 (none found); a row
  that is not judged has no score value: unscored is never 0;
- `gen_ai.evaluation.score.label`: "hallucination", "no_hallucination", or for rows without a
  verdict "unscored" / "invalid", with `error.type` the same word;
- `gen_ai.evaluation.explanation`: the judgment's reason (the deciding claim), or for an unscored
  or invalid row why it has no verdict;
- judgeflow's own: `judgeflow.item.id`, `judgeflow.status`, `judgeflow.criterion`, `judgeflow.model`,
  `judgeflow.claims.count`, `judgeflow.claims.errors`, `judgeflow.deciding_claim` (and `.id`); for a
  reasoning judge, `judgeflow.usage.output_tokens` and `judgeflow.usage.reasoning_tokens` (part of it).

When the item came from a trace (its row has `trace_id`, 32 hex digits, and `span_id`, 16, as
`judgeflow.io.otlp` gives them) the span links to the judged span (and names it:
`judgeflow.judged.trace_id`, `judgeflow.judged.span_id`) but is the root of a trace of its own. A
child in the judged trace, as the conventions suggest, would lengthen that trace by the time the
judge took: 43 ms traces showed a p50 of 29 s in Phoenix once judged, in any backend that measures
whole traces. Phoenix users get the verdict where they look, as a span annotation on the judged
span (`integrations.phoenix`).

Every verdict span is an OpenInference `EVALUATOR` span (`openinference.span.kind`), and a row
without a verdict (unscored, invalid) ends with span status ERROR and its reason as the status
description, so error-rate views count judge failures.

The exporter is OTLP over HTTP (`opentelemetry-exporter-otlp-proto-http`: `pip install
judgeflow[otel]`; imported only when an exporter is made). The endpoint is `endpoint` (a collector's
base URL; `/v1/traces` is added unless given) or, without one, the standard variables
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `..._HEADERS`, `..._TIMEOUT`).
The resource is read from `OTEL_RESOURCE_ATTRIBUTES` / `OTEL_SERVICE_NAME` (service.name defaults
to "judgeflow"); `project` sets `openinference.project.name`, the Phoenix project the spans land in.
The exporter has its own tracer provider: an application's global one is left alone.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ConfigError
from ..results import Judgment

EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "hallucination"
SCORE_LABELS = {1: "hallucination", 0: "no_hallucination"}
#: the resource attribute Phoenix files spans under (its project)
PROJECT_ATTRIBUTE = "openinference.project.name"
INSTALL = "OpenTelemetry export needs the otel extra: pip install 'judgeflow[otel]'"
#: OpenInference's span kind attribute and the kind of a verdict span
SPAN_KIND_ATTRIBUTE, SPAN_KIND = "openinference.span.kind", "EVALUATOR"
_TRACE_ID = re.compile(r"^(0x)?[0-9a-fA-F]{32}$")
_SPAN_ID = re.compile(r"^(0x)?[0-9a-fA-F]{16}$")


def evaluation_attributes(j: Judgment, *, name: str = EVALUATION_NAME) -> dict[str, Any]:
    """The attributes of one judgment's evaluation result (see the module docstring)."""
    attrs: dict[str, Any] = {"gen_ai.evaluation.name": name}
    if j.status == "judged" and j.label is not None:
        attrs["gen_ai.evaluation.score.value"] = float(j.label)
        attrs["gen_ai.evaluation.score.label"] = SCORE_LABELS[j.label]
        explanation = j.reason
    else:
        attrs["gen_ai.evaluation.score.label"] = j.status
        attrs["error.type"] = j.status
        explanation = j.error or j.reason
    if explanation:
        attrs["gen_ai.evaluation.explanation"] = explanation
    attrs.update({"judgeflow.item.id": j.id, "judgeflow.status": j.status, "judgeflow.claims.count": len(j.claims),
                  "judgeflow.claims.errors": sum(c.error for c in j.claims)})
    for key, value in (("judgeflow.criterion", j.criterion), ("judgeflow.model", j.model)):
        if value:
            attrs[key] = value
    if j.usage.reasoning_tokens:  # a reasoning judge: what its verdict cost, hidden reasoning included
        attrs.update({"judgeflow.usage.output_tokens": j.usage.output_tokens,
                      "judgeflow.usage.reasoning_tokens": j.usage.reasoning_tokens})
    deciding = next((c for c in j.claims if c.error), None) if j.label == 1 else None
    if deciding is not None:
        attrs["judgeflow.deciding_claim"] = deciding.text
        attrs["judgeflow.deciding_claim.id"] = deciding.id
    return attrs


def judged_span(j: Judgment) -> tuple[int, int] | None:
    """(trace id, span id) of the span this judgment's item came from, if its row names one."""
    trace, span = j.extra.get("trace_id"), j.extra.get("span_id")
    if isinstance(trace, str) and isinstance(span, str) and _TRACE_ID.match(trace) and _SPAN_ID.match(span):
        t, s = int(trace.removeprefix("0x"), 16), int(span.removeprefix("0x"), 16)
        return (t, s) if t and s else None
    return None


def traces_endpoint(endpoint: str) -> str:
    """A collector's base URL -> its OTLP/HTTP traces URL (`/v1/traces` added unless there)."""
    if not re.match(r"^https?://[^/\s]+", endpoint):
        raise ConfigError(f"--otel-endpoint {endpoint!r} is not an http(s) URL; give the collector's OTLP/HTTP "
                          "address, e.g. --otel-endpoint http://127.0.0.1:4318")
    base = endpoint.rstrip("/")
    return base if base.endswith("/v1/traces") else f"{base}/v1/traces"


class VerdictExporter:
    """Sends each judgment as an evaluation-result span (and event) to an OTLP collector."""

    def __init__(self, *, endpoint: str | None = None, span_exporter: Any = None, name: str = EVALUATION_NAME,
                 project: str | None = None) -> None:
        """
        Args:
            endpoint: the collector's base URL; None: the OTEL_EXPORTER_OTLP_* variables decide.
            span_exporter: any OpenTelemetry SpanExporter instead of OTLP (tests: InMemorySpanExporter);
                spans are then sent one by one as they end, not batched.
            name: `gen_ai.evaluation.name`.
            project: the Phoenix project (`openinference.project.name`) the spans are filed under.
        Raises:
            ConfigError: the otel extra is not installed, or the endpoint is not a URL.
        """
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
        except ImportError:
            raise ConfigError(INSTALL) from None
        self.name, self.sent, self.failed, self.made = name, 0, 0, 0
        """`sent`: spans the collector took; `failed`: spans it refused, and (counted at `close`) those
        dropped from a full queue or not taken before the flush's deadline: every span made is one
        or the other once closed."""
        self.endpoint = traces_endpoint(endpoint) if endpoint else None
        resource = Resource.create({PROJECT_ATTRIBUTE: project} if project else {})
        if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
            resource = resource.merge(Resource({"service.name": "judgeflow"}))
        self.provider = TracerProvider(resource=resource)
        if span_exporter is None:
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ImportError:
                raise ConfigError(INSTALL) from None
            self.provider.add_span_processor(BatchSpanProcessor(_counting(OTLPSpanExporter(endpoint=self.endpoint), self)))
        else:
            self.provider.add_span_processor(SimpleSpanProcessor(_counting(span_exporter, self)))
        self.tracer = self.provider.get_tracer("judgeflow")

    def export(self, j: Judgment) -> None:
        """One judgment as a root span with the result event, linked to the judged span when known."""
        from opentelemetry.context import Context
        from opentelemetry.trace import Link, SpanContext, Status, StatusCode, TraceFlags

        attrs = evaluation_attributes(j, name=self.name)
        span_attrs: dict[str, Any] = {SPAN_KIND_ATTRIBUTE: SPAN_KIND, **attrs}
        links = []
        ids = judged_span(j)
        if ids is not None:
            judged = SpanContext(trace_id=ids[0], span_id=ids[1], is_remote=True,
                                 trace_flags=TraceFlags(TraceFlags.SAMPLED))
            links = [Link(judged, {"judgeflow.link": "judged span"})]
            span_attrs["judgeflow.judged.trace_id"] = format(ids[0], "032x")
            span_attrs["judgeflow.judged.span_id"] = format(ids[1], "016x")
        # an empty Context: a root span in a trace of its own, whatever span is current in the caller
        span = self.tracer.start_span(f"evaluate {self.name}", context=Context(), links=links, attributes=span_attrs,
                                      record_exception=False, set_status_on_exception=False)
        span.add_event(EVENT, attributes=attrs)
        if "error.type" in attrs:
            span.set_status(Status(StatusCode.ERROR, attrs.get("gen_ai.evaluation.explanation") or j.status))
        span.end()
        self.made += 1

    def flush(self) -> bool:
        """Send what is waiting; False if the collector did not take all of it (in time)."""
        return bool(self.provider.force_flush()) and not self.failed

    def close(self) -> bool:
        """Flush and shut down; False if some spans could not be sent. A span neither taken nor
        refused by then (a full queue dropped it, a hung collector never answered) is counted in
        `failed`, so `sent + failed` is every span made."""
        ok = self.flush()
        self.provider.shutdown()
        self.failed += max(self.made - self.sent - self.failed, 0)
        return ok and not self.failed


def _counting(inner: Any, owner: VerdictExporter) -> Any:
    """`inner` (a SpanExporter) counting into `owner.failed` the spans the collector did not take."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Counting(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            try:
                result = inner.export(spans)
            except Exception:  # noqa: BLE001 - an exporter that raises: these spans were not taken
                result = SpanExportResult.FAILURE
            if result is SpanExportResult.SUCCESS:
                owner.sent += len(spans)
            else:
                owner.failed += len(spans)
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(inner.force_flush(timeout_millis))

    return Counting()
