"""Where `judgeflow watch` reads new traces from: a Phoenix project, an OTLP receiver, a growing file.

    source = open_source("http://127.0.0.1:6006", project="shop")   # Phoenix's REST API
    source = open_source("otlp://127.0.0.1:4318")                    # judgeflow listens (io/receiver.py)
    source = open_source("traces.jsonl")                              # an OTLP JSON file that grows
    for spans in source.poll(): ...                                   # the traces complete since the last poll

A trace is complete once its root span (no parent) is in: an SDK exports a span when it ends, and
the root ends last. Spans of a trace given already are dropped (each trace is given once); a
trace whose root has not come `settle` seconds after its last span is given as it is.

`poll` is blocking (a file read, an HTTP request), bounded in size and time: the watch loop runs
it in a daemon thread it does not wait for on a stop. A poll that fails raises (SourceError: the
watch backs off and polls again); input it cannot read is an InvalidItemError in its list, which
the watch writes as an invalid row.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError, InvalidItemError
from ..redact import mask_url
from .bounded import loads, read_capped
from .openinference import cyclic
from .otlp import Span, otlp_text

#: seconds a trace without its root span waits for more spans before it is given as it is
SETTLE = 30.0


class Source(Protocol):
    """A place new traces come from."""

    name: str
    project: str | None
    """The Phoenix project (OTel resource `openinference.project.name`) the traces belong to, if known."""

    def poll(self) -> list[list[Span] | InvalidItemError]:
        """The traces complete since the last poll (each trace's spans), and what could not be read."""
        ...

    def close(self) -> None: ...


class SourceError(RuntimeError):
    """A poll that failed (a server error, a timeout, a reply over its bounds): the watch backs off
    and polls again; it never ends on one."""


#: a poll of a Phoenix source: pages it reads at most (the rest next poll), its total seconds, a reply's bytes
MAX_PAGES, DEADLINE, MAX_REPLY = 50, 60.0, 64 * 1024 * 1024
#: bytes a file source reads a poll (the rest next poll); a line longer is an invalid row
MAX_READ = 64 * 1024 * 1024


#: traces an Assembler holds waiting for their root (more: the oldest are given as they are), and trace ids it
#: remembers as given (more: the oldest forgotten; the watch's run still skips what it judged)
MAX_PENDING, MAX_GIVEN = 100_000, 1_000_000


class Assembler:
    """Spans in, complete traces out (each trace once). Bounded in count: MAX_PENDING, MAX_GIVEN."""

    def __init__(self, settle: float = SETTLE, clock: Callable[[], float] = time.monotonic) -> None:
        self.settle, self.clock = settle, clock
        self.pending: dict[str, list[Span]] = {}
        self.last: dict[str, float] = {}
        self.rooted: set[str] = set()
        self.given: dict[str, None] = {}  # insertion-ordered: the oldest are forgotten first

    def add(self, spans: list[Span]) -> list[list[Span]]:
        """The traces complete now: their root is in, their parents form a cycle (no root can come:
        given at once, `trace_record` makes it an invalid row), or `settle` passed. Linear in the
        spans added plus the traces pending."""
        now = self.clock()
        touched: set[str] = set()
        for s in spans:
            if (
                s.trace_id in self.given or "gen_ai.evaluation.name" in s.attributes
            ):  # a verdict's own span
                continue
            self.pending.setdefault(s.trace_id, []).append(s)
            self.last[s.trace_id] = now
            touched.add(s.trace_id)
            if s.parent_id is None:
                self.rooted.add(s.trace_id)
        ready = [
            t
            for t in self.pending
            if t in self.rooted
            or now - self.last[t] >= self.settle
            or (t in touched and cyclic(self.pending[t]))
        ]
        over = len(self.pending) - len(ready) - MAX_PENDING
        if over > 0:  # too many traces waiting for a root: the oldest are given as they are
            chosen = set(ready)
            waiting = sorted(
                (t for t in self.pending if t not in chosen), key=self.last.__getitem__
            )
            ready += waiting[:over]
        out = []
        for t in ready:
            out.append(self.pending.pop(t))
            del self.last[t]
            self.rooted.discard(t)
            self.given[t] = None
        if (
            len(self.given) > MAX_GIVEN
        ):  # forget the oldest half at once (amortised: not a pass per add)
            for t in list(self.given)[: len(self.given) - MAX_GIVEN // 2]:
                del self.given[t]
        return out


def _flush(traces: Assembler) -> list[list[Span]]:
    """Every trace still waiting for its root, given as it is (a watch with --once ends here)."""
    out = list(traces.pending.values())
    traces.given.update(dict.fromkeys(traces.pending))
    traces.pending.clear()
    traces.last.clear()
    traces.rooted.clear()
    return out


class FileSource:
    """An OTLP JSON file (one request a line) read on as it grows; only whole lines are read. A line
    that cannot be read is an invalid row (its file and line named) and the reading goes on. The
    file is followed through rotation: truncated in place (copytruncate) it is read again from its
    start; renamed away and created anew, the old file is read to its end, then the new one."""

    def __init__(self, path: Path, *, settle: float = SETTLE) -> None:
        if not path.exists():
            raise ConfigError(
                f"{path}: no such file; give an OTLP JSON file (one ExportTraceServiceRequest a line), "
                "an otlp://127.0.0.1:PORT receiver, or a Phoenix server's URL"
            )
        self.path, self.name, self.project = path, str(path), None
        self.offset = self.line = 0
        self._f: Any = None
        self.traces = Assembler(settle)

    def _open(self) -> bool:
        try:
            self._f = open(self.path, "rb")  # noqa: SIM115 - held across polls to follow a rename
        except FileNotFoundError:
            return False
        self.offset = self.line = 0
        return True

    def poll(self) -> list[list[Span] | InvalidItemError]:
        if self._f is None and not self._open():
            return list(self.traces.add([]))
        if (
            os.fstat(self._f.fileno()).st_size < self.offset
        ):  # truncated in place (copytruncate): from the start
            self.offset = self.line = 0
        spans, bad = self._read()
        try:
            moved = os.stat(self.path).st_ino != os.fstat(self._f.fileno()).st_ino
        except FileNotFoundError:
            moved = False  # renamed away, the new one not created yet: keep the old one open
        if moved:  # renamed away and a new file in its place: the old one was read to its end above
            self._f.close()
            if self._open():
                more, worse = self._read()
                spans, bad = spans + more, bad + worse
        return [*self.traces.add(spans), *bad]

    def _read(self) -> tuple[list[Span], list[InvalidItemError]]:
        self._f.seek(self.offset)
        data = self._f.read(MAX_READ)
        end = data.rfind(b"\n") + 1  # a line still being written waits for its newline
        if end == 0:
            if len(data) < MAX_READ:
                return [], []
            end = len(data)  # one line longer than a poll reads: an invalid row, and on
            self.offset += end
            self.line += 1
            return [], [
                InvalidItemError(
                    f"a line over {MAX_READ:,} bytes; write one request a line",
                    path=self.name,
                    line=self.line,
                    field="resourceSpans",
                )
            ]
        spans: list[Span] = []
        bad: list[InvalidItemError] = []
        for got in otlp_text(
            data[:end].decode("utf-8", errors="replace"), name=self.name, first=self.line + 1
        ):
            if isinstance(got, InvalidItemError):
                bad.append(got)
            else:
                spans.append(got)
        self.offset += end
        self.line += data[:end].count(b"\n")
        return spans, bad

    def flush(self) -> list[list[Span]]:
        """The traces still waiting for their root, as they are (`watch --once` at its end)."""
        return _flush(self.traces)

    def close(self) -> None:
        if self._f is not None:
            self._f.close()


class ReceiverSource:
    """Traces sent to judgeflow's own OTLP/HTTP receiver on 127.0.0.1. With `spool`, each accepted
    body is fsync'd to that file before its 200 and the traces are read from it (a restart reads
    it again: what was acknowledged is never lost, and the run skips what it judged)."""

    def __init__(self, port: int, *, settle: float = SETTLE, spool: Path | None = None) -> None:
        from .receiver import Receiver

        if spool is not None:
            spool.touch(mode=0o600, exist_ok=True)
        self.receiver = Receiver(port, spool=spool).start()
        self.name, self.project = f"otlp://127.0.0.1:{self.receiver.port}", None
        self.traces = Assembler(settle)
        self.spooled = FileSource(spool, settle=settle) if spool is not None else None

    def poll(self) -> list[list[Span] | InvalidItemError]:
        if self.spooled is not None:
            return self.spooled.poll()
        return list(self.traces.add(self.receiver.take()))

    def flush(self) -> list[list[Span]]:
        return self.spooled.flush() if self.spooled is not None else _flush(self.traces)

    def close(self) -> None:
        self.receiver.close()
        if self.spooled is not None:
            self.spooled.close()


class PhoenixSource:
    """A Phoenix project's traces, through Phoenix's REST API: its new root spans, then those traces' spans.

    `keep(trace_id)` decides before a trace's spans are fetched (the watch's sampling and the store:
    a trace not sampled, or judged already, costs one root span's read).

    A poll is bounded: at most `max_pages` pages (a walk of more roots goes on from its cursor next
    poll), a cursor Phoenix gives twice ends the walk with a SourceError, the whole poll has
    `deadline` seconds (a reply read byte by byte is cut there), and a reply at most MAX_REPLY bytes.
    A root span that is not a span (no `context`, an id that is not hex) is an invalid row."""

    def __init__(
        self,
        url: str,
        project: str,
        *,
        keep: Callable[[str], bool] = lambda t: True,
        client: Any = None,
        page: int = 100,
        max_pages: int = MAX_PAGES,
        deadline: float = DEADLINE,
    ) -> None:
        import httpx

        self.url, self.project, self.keep, self.page = url.rstrip("/"), project, keep, page
        self.max_pages, self.deadline = max_pages, deadline
        self.name = f"{mask_url(self.url)} (project {project})"
        self.client = client or httpx.Client(
            base_url=self.url, timeout=httpx.Timeout(min(deadline, 10.0))
        )
        self.given: dict[
            str, None
        ] = {}  # bounded like an Assembler's (MAX_GIVEN, the oldest forgotten)
        self.since: str | None = None
        self._walk: tuple[dict[str, Any], str, list[str]] | None = (
            None  # roots' params, next cursor, start times
        )
        self._until = 0.0

    def _page(self, params: dict[str, Any]) -> Any:
        path = f"/v1/projects/{self.project}/spans"
        left = self._until - time.monotonic()
        if left <= 0:
            raise SourceError(
                f"{self.name}: the poll's deadline of {self.deadline:g} seconds passed"
            )
        import httpx

        try:
            with self.client.stream(
                "GET", path, params=params, timeout=httpx.Timeout(min(left, 10.0))
            ) as r:
                raw = read_capped(
                    r.iter_bytes(),
                    limit=MAX_REPLY,
                    deadline=self._until,
                    what=f"{self.name}: the answer to GET {path}",
                )
                status, kind = r.status_code, r.headers.get("content-type")
        except httpx.HTTPError as e:
            raise SourceError(
                f"{self.name}: GET {path} failed: {type(e).__name__}: {mask_url(str(e))[:200]}"
            ) from None
        except ValueError as e:
            raise SourceError(f"{e} ({self.deadline:g} seconds a poll)") from None
        if status == 404:
            return None  # no such project yet: nothing has been sent to it
        if status >= 400:
            raise SourceError(
                f"{self.name}: Phoenix answered {status} for the spans: {raw[:200].decode(errors='replace')}"
            )
        try:
            body = loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            raise ConfigError(
                f"{self.name}: the answer to GET {path} is not Phoenix's span list ({kind}); is "
                f"{mask_url(self.url)} a Phoenix server's base URL (e.g. http://127.0.0.1:6006)? "
                "It looks like not a Phoenix server"
            )
        return body

    def _get(
        self, params: dict[str, Any], cursor: str | None = None
    ) -> tuple[list[Any], str | None]:
        """The rows of a walk from `cursor`, and the cursor to go on from (None: the walk is done)."""
        out: list[Any] = []
        seen: set[str] = set()
        for _ in range(self.max_pages):
            body = self._page(
                {**params, "limit": self.page, **({"cursor": cursor} if cursor else {})}
            )
            if body is None:
                return out, None
            out.extend(body["data"])
            nxt = body.get("next_cursor")
            if not nxt or not body["data"]:
                return out, None
            if not isinstance(nxt, str) or nxt in seen or nxt == cursor:
                raise SourceError(
                    f"{self.name}: Phoenix gave the cursor {str(nxt)[:40]!r} twice; the walk of "
                    "its pages stops here (a server bug, or not Phoenix)"
                )
            seen.add(nxt)
            cursor = nxt
        return out, cursor  # the page budget: the rest next poll

    def poll(self) -> list[list[Span] | InvalidItemError]:
        self._until = time.monotonic() + self.deadline
        if self._walk is None:
            params = {"parent_id": "null", **({"start_time": self.since} if self.since else {})}
            raw, cursor = self._get(params)
            starts: list[str] = []
        else:
            params, cursor, starts = self._walk
            raw, cursor = self._get(params, cursor)
        bad: list[InvalidItemError] = []
        roots: list[dict[str, Any]] = []
        for r in raw:
            tid = _trace_id(r)
            if tid is None:
                err = _not_a_span(r)
                if err.item_id not in self.given:
                    self.given[str(err.item_id)] = None
                    bad.append(err)
            elif tid not in self.given and "gen_ai.evaluation.name" not in (
                r.get("attributes") or {}
            ):
                roots.append(r)
                if isinstance(r.get("start_time"), str):
                    starts.append(r["start_time"])
        self._walk = (params, cursor, starts) if cursor else None
        if cursor is None and starts:
            self.since = min(starts) if self.since is None else max(self.since, max(starts))
        wanted, left = (
            [],
            [],
        )  # a trace left out is given as its root span alone (it is counted, not fetched)
        for r in roots:
            tid = r["context"]["trace_id"]
            self.given[tid] = None
            (wanted if self.keep(tid) else left).append(r)
        if len(self.given) > MAX_GIVEN:
            for t in list(self.given)[: len(self.given) - MAX_GIVEN // 2]:
                del self.given[t]
        ids = [r["context"]["trace_id"] for r in wanted]
        out = self._traces(ids)
        for r in left:
            try:
                out.append([phoenix_span(r, self.project)])
            except InvalidItemError as e:
                e.item_id = r["context"]["trace_id"]
                out.append(e)
        return out + bad

    def _traces(self, ids: list[str]) -> list[list[Span] | InvalidItemError]:
        """The spans of these traces (20 a request); a trace with a span that is not one: its error."""
        traces: dict[str, list[Span]] = {}
        broken: dict[str, InvalidItemError] = {}
        for i in range(0, len(ids), 20):
            got, _ = self._get({"trace_id": ids[i : i + 20]})
            for one in got:
                try:
                    span = phoenix_span(one, self.project)
                except InvalidItemError as e:
                    tid = _trace_id(one)
                    if tid is not None:
                        e.item_id = tid
                        broken.setdefault(tid, e)
                    continue
                if "gen_ai.evaluation.name" not in span.attributes:
                    traces.setdefault(span.trace_id, []).append(span)
        out: list[list[Span] | InvalidItemError] = []
        for t in ids:
            if t in broken:
                out.append(broken[t])
            elif t in traces:
                out.append(traces[t])
        return out

    def close(self) -> None:
        self.client.close()


def _trace_id(raw: Any) -> str | None:
    """The trace id of a span as Phoenix gives it, if it has a well-formed one (32 hex digits)."""
    ctx = raw.get("context") if isinstance(raw, dict) else None
    tid = ctx.get("trace_id") if isinstance(ctx, dict) else None
    if isinstance(tid, str) and len(tid) == 32 and all(c in "0123456789abcdefABCDEF" for c in tid):
        return tid.lower()
    return None


def _not_a_span(raw: Any) -> InvalidItemError:
    ident = (
        "phoenix-"
        + hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()[:16]
    )
    return InvalidItemError(
        "a root span from Phoenix without a well-formed context.trace_id (32 hex digits): "
        "it cannot be judged; is the URL a Phoenix server?",
        path="phoenix",
        field="context.trace_id",
        item_id=ident,
    )


def _nanos(stamp: str | None) -> int:
    if not stamp:
        return 0
    return int(
        datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(timezone.utc).timestamp()
        * 1e9
    )


def phoenix_span(raw: dict[str, Any], project: str | None = None) -> Span:
    """A span as Phoenix's REST API gives it, as a `Span` (its kind put back as `openinference.span.kind`)."""
    try:
        ctx = raw["context"]
        attrs = dict(raw.get("attributes") or {})
        if raw.get("span_kind"):
            attrs.setdefault("openinference.span.kind", raw["span_kind"])
        return Span(
            trace_id=ctx["trace_id"],
            span_id=ctx["span_id"],
            parent_id=raw.get("parent_id") or None,
            name=str(raw.get("name") or ""),
            start=_nanos(raw.get("start_time")),
            end=_nanos(raw.get("end_time")),
            attributes=attrs,
            resource={"openinference.project.name": project} if project else {},
            error=(raw.get("status_message") or "") if raw.get("status_code") == "ERROR" else None,
            path="phoenix",
        )
    except (KeyError, TypeError, ValueError) as e:
        raise InvalidItemError(
            f"a span from Phoenix lacks {e} (context.trace_id, context.span_id, start_time); "
            "is the URL a Phoenix server?",
            path="phoenix",
            field=str(e),
        ) from None


def open_source(
    spec: str,
    *,
    project: str | None = None,
    keep: Callable[[str], bool] = lambda t: True,
    settle: float = SETTLE,
    spool: Path | None = None,
) -> Source:
    """The source SPEC names: an http(s) URL (a Phoenix server; `project` default "default"),
    otlp://127.0.0.1:PORT (a receiver judgeflow starts), or a file path."""
    if spec.startswith(("http://", "https://")):
        return PhoenixSource(spec, project or "default", keep=keep)
    if spec.startswith("otlp://"):
        host, _, port = spec.removeprefix("otlp://").rstrip("/").rpartition(":")
        if host not in ("127.0.0.1", "localhost") or not port.isdigit():
            raise ConfigError(
                f"watch {spec}: the receiver listens on 127.0.0.1 only; write otlp://127.0.0.1:PORT "
                "(e.g. otlp://127.0.0.1:4318)"
            )
        return ReceiverSource(int(port), settle=settle, spool=spool)
    return FileSource(Path(spec), settle=settle)
