"""An OTLP/HTTP trace receiver on 127.0.0.1: applications (or a collector) send their traces to judgeflow.

    with Receiver(port=4318) as rx:     # POST http://127.0.0.1:4318/v1/traces
        spans = rx.take()                # the spans received since the last take

It takes OTLP JSON (`Content-Type: application/json`) and OTLP protobuf (`application/x-protobuf`,
what the OpenTelemetry SDKs' HTTP exporters send by default; decoding it needs `opentelemetry-proto`,
part of `pip install judgeflow[otel]`), gzip or not. It listens on the loopback interface only. A
body that cannot be read gets 400 with the reason (and is counted in `rejected`); nothing is kept of it.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import ConfigError, InvalidItemError
from .otlp import Span, spans_of

PATH = "/v1/traces"
MAX_BODY = 64 * 1024 * 1024


def protobuf_request(body: bytes) -> dict[str, Any]:
    """An ExportTraceServiceRequest in protobuf as its OTLP JSON form (ids as hex)."""
    try:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise ConfigError("OTLP protobuf needs the otel extra: pip install 'judgeflow[otel]' (or send "
                          "OTLP JSON: OTEL_EXPORTER_OTLP_PROTOCOL=http/json)") from None
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    doc = MessageToDict(request)
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if s.get(key):
                        s[key] = base64.b64decode(s[key]).hex()
    return doc


class Receiver:
    """A threaded OTLP/HTTP server on 127.0.0.1 that keeps the spans it receives until taken."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1") -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ConfigError(f"the OTLP receiver listens on the loopback interface only, not {host!r}")
        self._spans: list[Span] = []
        self._lock = threading.Lock()
        self.received = self.rejected = 0
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self._thread: threading.Thread | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                kind = (self.headers.get("Content-Type") or "").split(";")[0].strip()
                try:
                    spans = receiver._read(self.path, kind, self._body())
                except (InvalidItemError, ValueError, ConfigError) as e:
                    receiver.rejected += 1
                    self._reply(400, json.dumps({"message": str(e)}).encode(), "application/json")
                    return
                with receiver._lock:
                    receiver._spans.extend(spans)
                    receiver.received += len(spans)
                self._reply(200, b"{}" if kind == "application/json" else b"", kind or "application/json")

            def _body(self) -> bytes:
                size = int(self.headers.get("Content-Length") or 0)
                if size > MAX_BODY:
                    raise ValueError(f"a request of {size:,} bytes is over the receiver's {MAX_BODY:,}")
                body = self.rfile.read(size)
                return gzip.decompress(body) if self.headers.get("Content-Encoding") == "gzip" else body

            def _reply(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def _read(self, path: str, kind: str, body: bytes) -> list[Span]:
        if path.split("?")[0].rstrip("/") != PATH:
            raise ValueError(f"POST {path}: the receiver takes traces at {PATH}")
        if kind == "application/x-protobuf":
            doc = protobuf_request(body)
        else:
            try:
                doc = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                raise ValueError(f"the body is not OTLP JSON ({e}); send Content-Type application/json or "
                                 "application/x-protobuf") from None
        return spans_of(doc, path=f"POST {PATH}")

    def take(self) -> list[Span]:
        """The spans received since the last take (each span is given once)."""
        with self._lock:
            spans, self._spans = self._spans, []
        return spans

    def spans(self) -> list[Span]:
        """The spans waiting, without taking them."""
        with self._lock:
            return list(self._spans)

    def start(self) -> Receiver:
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def protobuf_body(doc: dict[str, Any]) -> bytes:
    """OTLP JSON trace data (ids as hex) as an ExportTraceServiceRequest in protobuf (what Phoenix's
    /v1/traces takes); the inverse of `protobuf_request`."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    doc = json.loads(json.dumps(doc))
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if s.get(key):
                        s[key] = base64.b64encode(bytes.fromhex(s[key])).decode()
    return ParseDict(doc, ExportTraceServiceRequest()).SerializeToString()
