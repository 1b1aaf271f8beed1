"""An OTLP/HTTP trace receiver on 127.0.0.1: applications (or a collector) send their traces to judgeflow.

    with Receiver(port=4318) as rx:     # POST http://127.0.0.1:4318/v1/traces
        spans = rx.take()                # the spans received since the last take

It takes OTLP JSON (`Content-Type: application/json`) and OTLP protobuf (`application/x-protobuf`,
what the OpenTelemetry SDKs' HTTP exporters send by default; decoding it needs `opentelemetry-proto`,
part of `pip install judgeflow[otel]`), gzip or not. It listens on the loopback interface only. A
body that cannot be read gets 400 with the reason (and is counted in `rejected`); nothing is kept of it.

Bounded: a body is at most MAX_BODY bytes, compressed or not (a negative, missing-but-chunked or
larger Content-Length is refused, 400 or 413, before anything is read; a gzip bomb stops at MAX_BODY
decompressed bytes), and must arrive within BODY_SECONDS. With `spool=PATH` a body is durable
before its 200: appended to PATH as one OTLP JSON line and fsync'd (`ReceiverSource` reads the
spool as a growing file, so a kill loses nothing that was acknowledged).
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InvalidItemError
from .bounded import gunzip_capped, loads
from .otlp import Span, spans_of

PATH = "/v1/traces"
MAX_BODY = 64 * 1024 * 1024
#: seconds a request's body may take to arrive (a client that drips it is cut)
BODY_SECONDS = 30.0
#: connections served at once; one more is answered 503 at once (a client that opens thousands)
MAX_CONNECTIONS = 64


class _BoundedServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer with at most `limit` connections (threads) at once."""

    daemon_threads = True

    def __init__(self, address: Any, handler: Any, limit: int) -> None:
        super().__init__(address, handler)
        self.slots = threading.BoundedSemaphore(limit)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            try:
                request.sendall(b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n")
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()


class TooLarge(ValueError):
    """A body over the receiver's bound (413)."""


def protobuf_request(body: bytes) -> dict[str, Any]:
    """An ExportTraceServiceRequest in protobuf as its OTLP JSON form (ids as hex)."""
    try:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
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

    def __init__(self, port: int = 0, host: str = "127.0.0.1", *, spool: Path | None = None,
                 max_body: int = MAX_BODY, body_seconds: float = BODY_SECONDS) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ConfigError(f"the OTLP receiver listens on the loopback interface only, not {host!r}")
        self._spans: list[Span] = []
        self._lock = threading.Lock()
        self.spool, self.max_body, self.body_seconds = spool, max_body, body_seconds
        self.received = self.rejected = 0
        self._server = _BoundedServer((host, port), self._handler(), MAX_CONNECTIONS)
        self.port = self._server.server_address[1]
        self.url = f"http://{host}:{self.port}"
        self._thread: threading.Thread | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            timeout = receiver.body_seconds  # a client that sends its headers a byte at a time is cut too

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                kind = (self.headers.get("Content-Type") or "").split(";")[0].strip()
                try:
                    doc, spans = receiver._read(self.path, kind, self._body())
                    receiver._keep(doc, spans)  # durable (the spool fsync'd) before the 200
                except TooLarge as e:
                    self._refuse(413, e)
                    return
                except (InvalidItemError, ValueError, ConfigError, RecursionError) as e:
                    self._refuse(400, e)
                    return
                except OSError as e:  # the spool could not be written: not acknowledged, the sender retries
                    self._refuse(503, e)
                    return
                self._reply(200, b"{}" if kind == "application/json" else b"", kind or "application/json")

            def _refuse(self, code: int, e: BaseException) -> None:
                receiver.rejected += 1
                self.close_connection = True
                self._reply(code, json.dumps({"message": str(e)[:1000]}).encode(), "application/json")

            def _body(self) -> bytes:
                return receiver._body(self.headers, self.rfile, self.connection)

            def _reply(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def _body(self, headers: Any, rfile: Any, connection: Any) -> bytes:
        """A request's body, bounded in size (compressed and not) and in time."""
        if headers.get("Transfer-Encoding"):
            raise ValueError("send the body with a Content-Length (no Transfer-Encoding)")
        raw = (headers.get("Content-Length") or "0").strip()
        if not raw.isdigit():
            raise ValueError(f"Content-Length {raw[:40]!r} is not a size in bytes")
        size = int(raw)
        if size > self.max_body:
            raise TooLarge(f"a request of {size:,} bytes is over the receiver's {self.max_body:,}")
        deadline = time.monotonic() + self.body_seconds
        connection.settimeout(max(self.body_seconds, 0.1))
        body = bytearray()
        while len(body) < size:
            chunk = rfile.read1(min(size - len(body), 1 << 20))
            if not chunk:
                raise ValueError(f"the body ended after {len(body):,} of {size:,} bytes")
            body += chunk
            if time.monotonic() > deadline:
                raise ValueError(f"the body took over {self.body_seconds:g} seconds to arrive")
        if headers.get("Content-Encoding") == "gzip":
            try:
                return gunzip_capped(bytes(body), limit=self.max_body)
            except ValueError as e:
                raise (TooLarge(str(e)) if "over" in str(e) else e) from None
        return bytes(body)

    def _read(self, path: str, kind: str, body: bytes) -> tuple[Any, list[Span]]:
        if path.split("?")[0].rstrip("/") != PATH:
            raise ValueError(f"POST {path}: the receiver takes traces at {PATH}")
        if kind == "application/x-protobuf":
            try:
                doc = protobuf_request(body)
            except ConfigError:
                raise
            except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and its kin: a bad body
                raise ValueError(f"the body is not an OTLP protobuf ExportTraceServiceRequest ({type(e).__name__})") from None
        else:
            try:
                doc = loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise ValueError(f"the body is not OTLP JSON ({e}); send Content-Type application/json or "
                                 "application/x-protobuf") from None
        try:
            return doc, spans_of(doc, path=f"POST {PATH}")
        except (TypeError, AttributeError) as e:
            raise ValueError(f"the body is not OTLP JSON trace data ({type(e).__name__}: {str(e)[:200]})") from None

    def _keep(self, doc: Any, spans: list[Span]) -> None:
        """Keep an accepted body: appended to the spool and fsync'd (then a kill loses nothing
        acknowledged), or held in memory until taken."""
        if self.spool is not None:
            line = (json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
            with self._lock:
                fd = os.open(self.spool, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    view = memoryview(line)
                    while view:
                        view = view[os.write(fd, view):]
                    os.fsync(fd)
                finally:
                    os.close(fd)
                self.received += len(spans)
            return
        with self._lock:
            self._spans.extend(spans)
            self.received += len(spans)

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
