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


class Exporters:
    """Several verdict sinks as one (OTel spans, Phoenix annotations): each judgment goes to every one."""

    def __init__(self, sinks: list[Any]) -> None:
        self.sinks = sinks

    def export(self, j: Any) -> None:
        for s in self.sinks:
            s.export(j)

    def close(self) -> bool:
        return all([s.close() for s in self.sinks])


def exporters(*sinks: Any) -> Any:
    """The sinks given (None: not asked for) as one exporter, or None when there is none."""
    given = [s for s in sinks if s is not None]
    return None if not given else given[0] if len(given) == 1 else Exporters(given)


def describe_all(exporter: Any) -> list[str]:
    """A summary line per sink."""
    sinks = exporter.sinks if isinstance(exporter, Exporters) else [exporter]
    return [s.describe() if hasattr(s, "describe") else describe(s) for s in sinks]


def exporter_of(args: argparse.Namespace, *, project: str | None = None) -> Any:
    """The VerdictExporter the flags ask for, or None (no OTel flag given)."""
    endpoint = getattr(args, "otel_endpoint", None)
    if not endpoint and not getattr(args, "otel", False):
        return None
    from ..integrations.otel import VerdictExporter

    return VerdictExporter(endpoint=endpoint or None, project=getattr(args, "otel_project", None) or project)


DEFAULT_ENDPOINT = "http://localhost:4318"


def target(endpoint: str | None) -> str:
    """Where verdict spans go: --otel-endpoint, else the standard variables' endpoint, else the default."""
    return endpoint or next((os.environ[v] for v in ENDPOINT_VARIABLES if os.environ.get(v)), DEFAULT_ENDPOINT)


def loops_back(args: argparse.Namespace, source_name: str) -> str | None:
    """Why the verdict spans would go to `watch`'s own OTLP receiver (`source_name` otlp://HOST:PORT)
    when nobody asked for that, else None. An --otel-endpoint naming the receiver is asked for."""
    from urllib.parse import urlsplit

    if not getattr(args, "otel", False) or not source_name.startswith("otlp://") or getattr(args, "otel_endpoint", None):
        return None
    where = target(None)
    own, sent = urlsplit(source_name.replace("otlp://", "http://", 1)), urlsplit(where)
    local = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
    same_host = own.hostname == sent.hostname or {own.hostname, sent.hostname} <= local
    if not same_host or own.port != (sent.port or (443 if sent.scheme == "https" else 80)):
        return None
    named = next((v for v in ENDPOINT_VARIABLES if os.environ.get(v)), None)
    how = f"${named} is {where}" if named else f"the default endpoint is {DEFAULT_ENDPOINT}"
    return (f"--otel would send the verdict spans to this watch's own receiver {source_name} ({how}): they would "
            "come back as traces. Name your collector: --otel-endpoint URL (e.g. Phoenix's http://127.0.0.1:6006) "
            "or OTEL_EXPORTER_OTLP_ENDPOINT; or let the receiver listen on another port (otlp://127.0.0.1:4319)")


def describe(exporter: Any) -> str:
    """Where the verdicts went, for the summary."""
    where = target(exporter.endpoint)
    failed = f"; {exporter.failed} not taken by the collector" if exporter.failed else ""
    return f"{exporter.sent} verdict span(s) sent to {mask_url(where)}{failed}"
