"""The OpenTelemetry flags of the commands that judge (`run`, `watch`): where verdicts are sent."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..redact import mask_url

#: the standard variables that name an OTLP endpoint (`--otel` uses them)
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--otel-endpoint", metavar="URL",
                   help="send each verdict as an OpenTelemetry span (GenAI evaluation result) to this OTLP/HTTP "
                        "collector, e.g. http://127.0.0.1:4318 or Phoenix's http://127.0.0.1:6006 (needs "
                        "`pip install judgeflow[otel]`; headers and timeout from the OTEL_EXPORTER_OTLP_* variables)")
    p.add_argument("--otel", action="store_true",
                   help="send verdicts as with --otel-endpoint, to the endpoint the standard variables name "
                        f"({' or '.join(ENDPOINT_VARIABLES)}; default http://localhost:4318)")
    p.add_argument("--otel-project", metavar="NAME",
                   help="the Phoenix project the verdict spans are filed under (resource attribute "
                        "openinference.project.name; default: OTEL_RESOURCE_ATTRIBUTES, else Phoenix's default)")


def exporter_of(args: argparse.Namespace, *, project: str | None = None) -> Any:
    """The VerdictExporter the flags ask for, or None (no OTel flag given)."""
    endpoint = getattr(args, "otel_endpoint", None)
    if not endpoint and not getattr(args, "otel", False):
        return None
    from ..integrations.otel import VerdictExporter

    return VerdictExporter(endpoint=endpoint or None, project=getattr(args, "otel_project", None) or project)


def describe(exporter: Any) -> str:
    """Where the verdicts went, for the summary."""
    where = exporter.endpoint or next((os.environ[v] for v in ENDPOINT_VARIABLES if os.environ.get(v)),
                                      "http://localhost:4318")
    failed = f"; {exporter.failed} not taken by the collector" if exporter.failed else ""
    return f"{exporter.sent} verdict span(s) sent to {mask_url(where)}{failed}"
