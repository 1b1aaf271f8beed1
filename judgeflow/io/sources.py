"""Where `judgeflow watch` reads new traces from: a Phoenix project, an OTLP receiver, a growing file.

    source = open_source("http://127.0.0.1:6006", project="shop")   # Phoenix's REST API
    source = open_source("otlp://127.0.0.1:4318")                    # judgeflow listens (io/receiver.py)
    source = open_source("traces.jsonl")                              # an OTLP JSON file that grows
    for spans in source.poll(): ...                                   # the traces complete since the last poll

A trace is complete once its root span (no parent) is in: an SDK exports a span when it ends, and
the root ends last. Spans of a trace given already are dropped (each trace is given once); a
trace whose root has not come `settle` seconds after its last span is given as it is.

`poll` is blocking (a file read, an HTTP request): the watch loop runs it in a thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError, InvalidItemError
from .otlp import Span, read_otlp

#: seconds a trace without its root span waits for more spans before it is given as it is
SETTLE = 30.0


class Source(Protocol):
    """A place new traces come from."""

    name: str
    project: str | None
    """The Phoenix project (OTel resource `openinference.project.name`) the traces belong to, if known."""

    def poll(self) -> list[list[Span]]:
        """The traces complete since the last poll (each trace's spans)."""
        ...

    def close(self) -> None: ...


class Assembler:
    """Spans in, complete traces out (each trace once)."""

    def __init__(self, settle: float = SETTLE, clock: Callable[[], float] = time.monotonic) -> None:
        self.settle, self.clock = settle, clock
        self.pending: dict[str, list[Span]] = {}
        self.last: dict[str, float] = {}
        self.given: set[str] = set()

    def add(self, spans: list[Span]) -> list[list[Span]]:
        now = self.clock()
        for s in spans:
            if s.trace_id in self.given or "gen_ai.evaluation.name" in s.attributes:  # a verdict's own span
                continue
            self.pending.setdefault(s.trace_id, []).append(s)
            self.last[s.trace_id] = now
        ready = [t for t, group in self.pending.items()
                 if any(s.parent_id is None for s in group) or now - self.last[t] >= self.settle]
        out = []
        for t in ready:
            out.append(self.pending.pop(t))
            del self.last[t]
            self.given.add(t)
        return out


class FileSource:
    """An OTLP JSON file (one request a line) read on as it grows; only whole lines are read."""

    def __init__(self, path: Path, *, settle: float = SETTLE) -> None:
        if not path.exists():
            raise ConfigError(f"{path}: no such file; give an OTLP JSON file (one ExportTraceServiceRequest a line), "
                              "an otlp://127.0.0.1:PORT receiver, or a Phoenix server's URL")
        self.path, self.name, self.project = path, str(path), None
        self.offset = 0
        self.traces = Assembler(settle)

    def poll(self) -> list[list[Span]]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line still being written waits for its newline
        if end == 0:
            return self.traces.add([])
        spans = list(read_otlp(self.path, start=self.offset, end=self.offset + end))
        self.offset += end
        return self.traces.add(spans)

    def close(self) -> None:
        pass


class ReceiverSource:
    """Traces sent to judgeflow's own OTLP/HTTP receiver on 127.0.0.1."""

    def __init__(self, port: int, *, settle: float = SETTLE) -> None:
        from .receiver import Receiver

        self.receiver = Receiver(port).start()
        self.name, self.project = f"otlp://127.0.0.1:{self.receiver.port}", None
        self.traces = Assembler(settle)

    def poll(self) -> list[list[Span]]:
        return self.traces.add(self.receiver.take())

    def close(self) -> None:
        self.receiver.close()


class PhoenixSource:
    """A Phoenix project's traces, through Phoenix's REST API: its new root spans, then those traces' spans.

    `keep(trace_id)` decides before a trace's spans are fetched (the watch's sampling and the store:
    a trace not sampled, or judged already, costs one root span's read)."""

    def __init__(self, url: str, project: str, *, keep: Callable[[str], bool] = lambda t: True,
                 client: Any = None, page: int = 100) -> None:
        import httpx

        self.url, self.project, self.keep, self.page = url.rstrip("/"), project, keep, page
        self.name = f"{self.url} (project {project})"
        self.client = client or httpx.Client(base_url=self.url, timeout=30.0)
        self.given: set[str] = set()
        self.since: str | None = None

    def _get(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        cursor = None
        while True:
            r = self.client.get(f"/v1/projects/{self.project}/spans",
                                params={**params, "limit": self.page, **({"cursor": cursor} if cursor else {})})
            if r.status_code == 404:
                return out  # no such project yet: nothing has been sent to it
            if r.status_code >= 400:
                raise ConfigError(f"{self.url}: Phoenix answered {r.status_code} for project {self.project!r}'s spans: "
                                  f"{r.text[:200]}")
            try:
                body = r.json()
            except ValueError:
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("data"), list):
                raise ConfigError(f"{self.url}: the answer to GET /v1/projects/{self.project}/spans is not Phoenix's "
                                  f"span list ({r.headers.get('content-type')}); is {self.url} a Phoenix server's "
                                  "base URL (e.g. http://127.0.0.1:6006)? It looks like not a Phoenix server")
            out.extend(body["data"])
            cursor = body.get("next_cursor")
            if not cursor or not body.get("data"):
                return out

    def poll(self) -> list[list[Span]]:
        roots = [r for r in self._get({"parent_id": "null", **({"start_time": self.since} if self.since else {})})
                 if r["context"]["trace_id"] not in self.given and "gen_ai.evaluation.name" not in (r.get("attributes") or {})]
        wanted, left = [], []  # a trace left out is given as its root span alone (it is counted, not fetched)
        for r in roots:
            self.given.add(r["context"]["trace_id"])
            (wanted if self.keep(r["context"]["trace_id"]) else left).append(r)
        wanted = [r["context"]["trace_id"] for r in wanted]
        if roots:
            self.since = min(r["start_time"] for r in roots) if self.since is None else max(
                self.since, max(r["start_time"] for r in roots))
        traces: dict[str, list[Span]] = {}
        for i in range(0, len(wanted), 20):
            for raw in self._get({"trace_id": wanted[i:i + 20]}):
                span = phoenix_span(raw, self.project)
                if "gen_ai.evaluation.name" not in span.attributes:
                    traces.setdefault(span.trace_id, []).append(span)
        return [traces[t] for t in wanted if t in traces] + [[phoenix_span(r, self.project)] for r in left]

    def close(self) -> None:
        self.client.close()


def _nanos(stamp: str | None) -> int:
    if not stamp:
        return 0
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(timezone.utc).timestamp() * 1e9)


def phoenix_span(raw: dict[str, Any], project: str | None = None) -> Span:
    """A span as Phoenix's REST API gives it, as a `Span` (its kind put back as `openinference.span.kind`)."""
    try:
        ctx = raw["context"]
        attrs = dict(raw.get("attributes") or {})
        if raw.get("span_kind"):
            attrs.setdefault("openinference.span.kind", raw["span_kind"])
        return Span(trace_id=ctx["trace_id"], span_id=ctx["span_id"], parent_id=raw.get("parent_id") or None,
                    name=str(raw.get("name") or ""), start=_nanos(raw.get("start_time")), end=_nanos(raw.get("end_time")),
                    attributes=attrs, resource={"openinference.project.name": project} if project else {},
                    error=(raw.get("status_message") or "") if raw.get("status_code") == "ERROR" else None,
                    path="phoenix")
    except (KeyError, TypeError, ValueError) as e:
        raise InvalidItemError(f"a span from Phoenix lacks {e} (context.trace_id, context.span_id, start_time); "
                               "is the URL a Phoenix server?", path="phoenix", field=str(e)) from None


def open_source(spec: str, *, project: str | None = None, keep: Callable[[str], bool] = lambda t: True,
                settle: float = SETTLE) -> Source:
    """The source SPEC names: an http(s) URL (a Phoenix server; `project` default "default"),
    otlp://127.0.0.1:PORT (a receiver judgeflow starts), or a file path."""
    if spec.startswith(("http://", "https://")):
        return PhoenixSource(spec, project or "default", keep=keep)
    if spec.startswith("otlp://"):
        host, _, port = spec.removeprefix("otlp://").rstrip("/").rpartition(":")
        if host not in ("127.0.0.1", "localhost") or not port.isdigit():
            raise ConfigError(f"watch {spec}: the receiver listens on 127.0.0.1 only; write otlp://127.0.0.1:PORT "
                              "(e.g. otlp://127.0.0.1:4318)")
        return ReceiverSource(int(port), settle=settle)
    return FileSource(Path(spec), settle=settle)
