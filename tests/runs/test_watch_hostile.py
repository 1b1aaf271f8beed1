"""`judgeflow watch` against hostile sources (issue 46): one bad span, a lying Phoenix or a stalled
server cannot stop it, and the good traces of the same poll are judged (F15-F17, F19-F20, F22-F23).
Every server here is on 127.0.0.1 and every wait is bounded."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from judgeflow.cli import main
from judgeflow.io.otlp import read_otlp, spans_of
from judgeflow.io.sources import FileSource, PhoenixSource
from tests.fakes.otel_traces import rag_trace, request, span_id, trace_id, write_jsonl


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _watch(tmp_path, source, *flags):
    return main(["watch", str(source), "--once", "--model", "baseline/lexical", "--store", str(tmp_path / "s.sqlite"),
                 *flags])


def _with_attr(n: int, key: str, value: dict) -> dict:
    doc = request(rag_trace(n))
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["attributes"].append({"key": key, "value": value})
    return doc


HOSTILE_LINES = {
    "100k-deep JSON": "[" * 100_000 + "]" * 100_000,
    "5,000-dot key": json.dumps(_with_attr(90, "a." * 5000 + "b", {"stringValue": "x"})),
    "doubleValue abc": json.dumps(_with_attr(91, "x", {"doubleValue": "abc"})),
    "doubleValue null": json.dumps(_with_attr(92, "x", {"doubleValue": None})),
    "deep arrayValue": json.dumps(_with_attr(93, "x", {"stringValue": "DEEP"})).replace(
        '{"stringValue": "DEEP"}', '{"arrayValue": {"values": [' * 250 + "]}}" * 250),
    "resource a list": json.dumps({"resourceSpans": [{"resource": [1], "scopeSpans": []}]}),
    "scopeSpans a string": json.dumps({"resourceSpans": [{"scopeSpans": "abc"}]}),
    "spans an int": json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": 5}]}]}),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_LINES))
def test_one_hostile_otlp_line_is_an_invalid_row_and_the_rest_is_judged(tmp_path, name):
    """F15/F17: a hostile line among good ones: watch exits 0, judges both good traces and writes the
    bad one as an invalid row (a restart does the same, not a traceback)."""
    path = tmp_path / "t.jsonl"
    write_jsonl(path, [request(rag_trace(1))])
    with open(path, "a") as f:
        f.write(HOSTILE_LINES[name] + "\n")
    write_jsonl(path, [request(rag_trace(2))], mode="a")
    out = tmp_path / "o.jsonl"
    assert _watch(tmp_path, path, "-o", str(out)) == 0
    rows = _rows(out)
    judged = {r["id"] for r in rows if r["status"] == "judged"}
    assert {trace_id(1), trace_id(2)} <= judged
    assert len(rows) == 3  # the hostile line has its row too
    invalid = [r for r in rows if r["status"] == "invalid"]
    if name == "5,000-dot key":  # a key nested only 32 deep, the rest of it one key: its trace is judged
        assert not invalid
    else:
        assert len(invalid) == 1 and invalid[0]["error"]
    assert _watch(tmp_path, path, "-o", str(out)) == 0  # a restart: nothing new, no crash


def test_read_otlp_turns_a_100k_deep_line_into_an_invalid_item_error(tmp_path):
    from judgeflow.errors import InvalidItemError

    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(InvalidItemError, match="nested"):
        list(read_otlp(path))


def test_a_trace_whose_parents_form_a_cycle_gets_an_invalid_row(tmp_path):
    """F20: two spans, each the other's parent: no root ever comes; the trace is an invalid row naming
    the cycle, at once (not dropped after the settle time, not dropped by --once)."""
    spans = rag_trace(5)
    spans[0]["parentSpanId"] = span_id(5, 2)  # root -> the LLM span, whose parent is the root
    path = write_jsonl(tmp_path / "t.jsonl", [request(spans), request(rag_trace(6))])
    out = tmp_path / "o.jsonl"
    assert _watch(tmp_path, path, "-o", str(out)) == 0
    rows = {r["id"]: r for r in _rows(out)}
    assert rows[trace_id(6)]["status"] == "judged"
    assert rows[trace_id(5)]["status"] == "invalid" and "cycle" in rows[trace_id(5)]["error"]


# -- a Phoenix that lies or stalls ---------------------------------------------------------------------


class _Phoenix:
    """A fake Phoenix REST API on 127.0.0.1; `answer(handler, params)` writes each reply."""

    def __init__(self, answer):
        self.gets = 0
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                outer.gets += 1
                try:
                    answer(self)
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _send(h, code, body: bytes, kind="application/json"):
    h.send_response(code)
    h.send_header("Content-Type", kind)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def test_a_phoenix_repeating_its_cursor_is_read_a_bounded_number_of_pages():
    """F16: next_cursor forever (the same one, or a new one each page): the poll stops at its page
    budget, in bounded time, and says why."""
    root = {"context": {"trace_id": trace_id(1), "span_id": span_id(1, 0)}, "name": "rag", "parent_id": None,
            "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:01Z", "attributes": {}}

    def forever(h):
        _send(h, 200, json.dumps({"data": [root], "next_cursor": "again"}).encode())

    phx = _Phoenix(forever)
    try:
        src = PhoenixSource(phx.url, "p")
        t0 = time.monotonic()
        with pytest.raises(Exception, match="cursor"):
            src.poll()
        assert time.monotonic() - t0 < 10 and phx.gets < 5
        src.close()
    finally:
        phx.close()


def test_a_phoenix_dripping_bytes_is_cut_at_the_poll_deadline():
    """F16: a reply that sends a byte every 0.3 s (never idle long enough for a read timeout) is cut
    by the total deadline of the poll."""
    def drip(h):
        body = json.dumps({"data": [], "next_cursor": None}).encode() + b" " * 1000
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        for i in range(len(body)):
            h.wfile.write(body[i:i + 1])
            h.wfile.flush()
            time.sleep(0.3)

    phx = _Phoenix(drip)
    try:
        src = PhoenixSource(phx.url, "p", deadline=2.0)
        t0 = time.monotonic()
        with pytest.raises(Exception, match="deadline|seconds"):
            src.poll()
        assert time.monotonic() - t0 < 6
        src.close()
    finally:
        phx.close()


def test_a_phoenix_with_a_new_cursor_each_page_is_read_a_page_budget_a_poll():
    """F16: a new cursor and a new root on every page: each poll reads at most its page budget."""
    n = [0]

    def endless(h):
        n[0] += 1
        root = {"context": {"trace_id": trace_id(1000 + n[0]), "span_id": span_id(1, 0)}, "name": "rag",
                "parent_id": None, "start_time": "2026-01-01T00:00:00Z", "attributes": {}}
        _send(h, 200, json.dumps({"data": [root], "next_cursor": f"c{n[0]}"}).encode())

    phx = _Phoenix(endless)
    try:
        src = PhoenixSource(phx.url, "p", keep=lambda t: False, max_pages=7)
        got = src.poll()
        assert phx.gets == 7 and len(got) == 7
        src.poll()  # goes on from the cursor where the last poll stopped
        assert phx.gets == 14
        src.close()
    finally:
        phx.close()


def test_phoenix_spans_without_context_are_invalid_rows_not_the_end():
    """F17: a root span without `context` is an invalid row; the well-formed root beside it is read."""
    good = {"context": {"trace_id": trace_id(1), "span_id": span_id(1, 0)}, "name": "rag", "parent_id": None,
            "start_time": "2026-01-01T00:00:00Z", "end_time": "2026-01-01T00:00:01Z", "span_kind": "CHAIN",
            "attributes": {"output.value": "x"}}

    def answer(h):
        _send(h, 200, json.dumps({"data": [{"name": "no context"}, good], "next_cursor": None}).encode())

    phx = _Phoenix(answer)
    try:
        src = PhoenixSource(phx.url, "p")
        got = src.poll()
        src.close()
    finally:
        phx.close()
    from judgeflow.errors import InvalidItemError

    assert any(isinstance(t, InvalidItemError) for t in got)
    assert [t[0].trace_id for t in got if not isinstance(t, InvalidItemError)] == [trace_id(1)]


class _Failing:
    """A source whose polls fail (a Phoenix 500, a timeout) before it gives traces."""

    name, project = "failing", None

    def __init__(self, fails: int, traces):
        self.fails, self.traces, self.polls = fails, traces, 0

    def poll(self):
        self.polls += 1
        if self.polls <= self.fails:
            raise OSError("Phoenix answered 500")
        out, self.traces = self.traces, []
        return out

    def close(self):
        pass


def _watch_object(tmp_path, source, **kw):
    from judgeflow.build import build
    from judgeflow.config.judging import JudgeSpec
    from judgeflow.config.run import RunSpec
    from judgeflow.runs.run import Run
    from judgeflow.runs.store import RunStore
    from judgeflow.runs.watch import Watch

    settings = RunSpec(judging=JudgeSpec(model="baseline/lexical"), input="x", output="x")
    judge = build(settings.judging)
    store = RunStore(tmp_path / "s.sqlite")
    run = Run.online(store, settings, judging=judge, key="watch:x")
    return store, Watch(source, run, judge, settings=settings, **kw)


def test_watch_survives_source_errors_with_backoff(tmp_path):
    """F17: three failed polls in a row do not end the watch: it backs off and judges what comes next."""
    src = _Failing(3, [spans_of(request(rag_trace(1)))])
    store, watch = _watch_object(tmp_path, src, poll=0.01, backoff=0.01)
    stop = asyncio.Event()

    async def go():
        task = asyncio.create_task(watch.loop(stop))
        for _ in range(200):
            await asyncio.sleep(0.02)
            if watch.summary.judged:
                break
        stop.set()
        return await asyncio.wait_for(task, 10)

    summary = asyncio.run(go())
    store.close()
    assert summary.judged == 1 and summary.source_errors == 3


def test_a_poll_that_hangs_does_not_hold_up_a_stop(tmp_path):
    """F16: SIGTERM (the stop event) ends the loop within seconds even while a poll is stuck."""
    class Hung:
        name, project = "hung", None

        def poll(self):
            time.sleep(30)
            return []

        def close(self):
            pass

    store, watch = _watch_object(tmp_path, Hung())
    stop = asyncio.Event()

    async def go():
        task = asyncio.create_task(watch.loop(stop))
        await asyncio.sleep(0.3)
        stop.set()
        t0 = time.monotonic()
        await asyncio.wait_for(task, 10)
        return time.monotonic() - t0

    assert asyncio.run(go()) < 3
    store.close()


def test_a_file_source_keeps_reading_after_a_bad_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("not json\n")
    src = FileSource(path)
    first = src.poll()
    write_jsonl(path, [request(rag_trace(1))], mode="a")
    second = src.poll()
    from judgeflow.errors import InvalidItemError

    assert len(first) == 1 and isinstance(first[0], InvalidItemError) and first[0].line == 1
    assert [t[0].trace_id for t in second] == [trace_id(1)]


# -- the receiver: bounded bodies, durable before 200 -----------------------------------------------


def _raw_post(port: int, head: str, body: bytes = b"") -> int:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head.encode() + b"\r\n\r\n" + body)
        reply = s.recv(4096)
    return int(reply.split(b" ", 2)[1])


def test_the_receiver_refuses_a_negative_or_huge_content_length_and_a_gzip_bomb(tmp_path):
    """F28-F29: Content-Length -1 is a 400, one over the bound a 413 (nothing read), a gzip body that
    inflates past the bound a 413 (decompression stops there), and the receiver still takes good bodies."""
    import gzip

    from judgeflow.io.receiver import Receiver

    with Receiver(max_body=1 << 20) as rx:
        base = "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        assert _raw_post(rx.port, base + "Content-Length: -1") == 400
        assert _raw_post(rx.port, base + "Content-Length: 99999999999") == 413
        bomb = gzip.compress(b" " * (50 << 20))  # 50 MB of spaces in about 50 KB
        assert len(bomb) < (1 << 20)
        assert _raw_post(rx.port, base + f"Content-Encoding: gzip\r\nContent-Length: {len(bomb)}", bomb) == 413
        deep = b"[" * 100_000 + b"]" * 100_000
        assert _raw_post(rx.port, base + f"Content-Length: {len(deep)}", deep) == 400
        good = json.dumps(request(rag_trace(1))).encode()
        assert _raw_post(rx.port, base + f"Content-Length: {len(good)}", good) == 200
        assert {s.trace_id for s in rx.take()} == {trace_id(1)}


def test_the_receiver_cuts_a_body_that_drips(tmp_path):
    import socket

    from judgeflow.io.receiver import Receiver

    with Receiver(body_seconds=1.0) as rx:
        t0 = time.monotonic()
        with socket.create_connection(("127.0.0.1", rx.port), timeout=10) as s:
            s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
            reply = b""
            for _ in range(40):
                try:
                    s.sendall(b" ")
                except OSError:
                    break
                s.settimeout(0.1)
                try:
                    reply = s.recv(4096)
                    if reply:
                        break
                except socket.timeout:
                    pass
        assert time.monotonic() - t0 < 5 and (not reply or b" 400 " in reply)


def test_a_body_answered_200_survives_a_kill(tmp_path):
    """F19: with a spool, the 200 comes after the body is fsync'd; a new source on the same spool
    (the watch after kill -9) reads the acknowledged traces."""
    import httpx

    from judgeflow.io.sources import ReceiverSource

    spool = tmp_path / "s.spool.jsonl"
    src = ReceiverSource(0, spool=spool)
    r = httpx.post(f"http://127.0.0.1:{src.receiver.port}/v1/traces", content=json.dumps(request(rag_trace(1))),
                   headers={"Content-Type": "application/json"}, timeout=5)
    assert r.status_code == 200
    src.receiver.close()  # killed before any poll took the spans
    again = ReceiverSource(0, spool=spool)
    got = again.poll()
    again.close()
    assert [t[0].trace_id for t in got] == [trace_id(1)]


def test_a_watched_file_is_followed_through_copytruncate_and_rename_rotation(tmp_path):
    """F19: 8 traces across two rotations: every one is read once."""
    import os

    path = tmp_path / "t.jsonl"
    write_jsonl(path, [request(rag_trace(1)), request(rag_trace(2))])
    src = FileSource(path)
    seen = [t[0].trace_id for t in src.poll()]
    write_jsonl(path, [request(rag_trace(3))], mode="a")
    seen += [t[0].trace_id for t in src.poll()]
    path.write_text("")  # copytruncate: copied away, then cut to 0 in place
    write_jsonl(path, [request(rag_trace(4))], mode="a")
    seen += [t[0].trace_id for t in src.poll()]
    write_jsonl(path, [request(rag_trace(5))], mode="a")
    os.rename(path, tmp_path / "t.jsonl.1")  # rename rotation: the old file gets one more line, then a new file
    write_jsonl(tmp_path / "t.jsonl.1", [request(rag_trace(6))], mode="a")
    write_jsonl(path, [request(rag_trace(7)), request(rag_trace(8))])
    seen += [t[0].trace_id for t in src.poll()]
    src.close()
    assert sorted(seen) == sorted(trace_id(n) for n in range(1, 9)) and len(seen) == 8


def test_the_period_budget_survives_a_restart(tmp_path, monkeypatch):
    """F23: a watch with --budget 4 an hour, stopped and started again in the same hour: both
    processes together send at most 4 requests (the spent part of the period is in the run store)."""
    from tests.fakes.schema_provider import SchemaProvider

    path = write_jsonl(tmp_path / "t.jsonl", [request(rag_trace(n)) for n in range(2)])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-watch-period")
    args = ["watch", str(path), "--once", "--budget", "4", "--period", "3600", "--model", "openai/gpt-4o-mini",
            "--store", str(tmp_path / "s.sqlite"), "--no-cache", "--concurrency", "1", "--reasks", "0", "--retries", "0"]
    with SchemaProvider(seed=3) as fake:
        assert main([*args, "--base-url", fake.base_url + "/v1"]) == 0
        first = fake.received
        write_jsonl(path, [request(rag_trace(n)) for n in range(2, 12)], mode="a")
        assert main([*args, "--base-url", fake.base_url + "/v1"]) == 0
        total = fake.received
    assert 1 <= first <= 4 and total <= 4, (first, total)


def test_watch_once_reads_the_runs_results_once_not_once_a_chunk(tmp_path, monkeypatch):
    """F22: 300 traces with nothing to judge (no output: invalid rows), judged 2 at a time: the run's
    finished ids are read from the store at most once (each read was O(results): quadratic in all)."""
    from judgeflow.runs.store import RunStore
    from tests.fakes.otel_traces import span

    reads = [0]
    real = RunStore.finished_ids

    def counting(self, run_id):
        reads[0] += 1
        return real(self, run_id)

    monkeypatch.setattr(RunStore, "finished_ids", counting)
    path = write_jsonl(tmp_path / "t.jsonl", [request([span(n, 0, "root", "CHAIN", {"input.value": "q"})])
                                              for n in range(300)])
    out = tmp_path / "o.jsonl"
    assert _watch(tmp_path, path, "--concurrency", "1", "-o", str(out)) == 0
    assert len(_rows(out)) == 300 and reads[0] <= 1


@pytest.mark.slow
def test_sigterm_stops_a_watch_whose_phoenix_poll_hangs(tmp_path):
    """F16: a Phoenix that never answers: SIGTERM ends the watch process within seconds, exit 0."""
    import os
    import signal
    import subprocess
    import sys

    def hang(h):
        time.sleep(30)

    phx = _Phoenix(hang)
    root = Path(__file__).resolve().parents[2]
    cmd = [sys.executable, "-m", "judgeflow", "watch", phx.url, "--project", "p", "--model", "baseline/lexical",
           "--store", str(tmp_path / "s.sqlite")]
    proc = subprocess.Popen(cmd, cwd=root, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(root)})
    try:
        deadline = time.monotonic() + 30
        while phx.gets == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert phx.gets >= 1  # the poll is under way, stuck in the server
        proc.send_signal(signal.SIGTERM)
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=15)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
        phx.close()
    assert proc.returncode == 0, err
    assert took < 5 and "traces seen 0" in err


def test_the_receiver_cuts_a_client_that_never_finishes_its_headers():
    import socket

    from judgeflow.io.receiver import Receiver

    with Receiver(body_seconds=1.0) as rx:
        t0 = time.monotonic()
        with socket.create_connection(("127.0.0.1", rx.port), timeout=10) as s:
            s.sendall(b"POST /v1/traces HTTP/1.1\r\nHost: x\r\n")  # and nothing more
            closed = s.recv(4096) == b""
        assert closed and time.monotonic() - t0 < 5


def test_the_receiver_serves_a_bounded_number_of_connections(monkeypatch):
    """F29: connections past the bound are answered 503 at once, not given a thread each."""
    import socket

    from judgeflow.io import receiver as rmod

    monkeypatch.setattr(rmod, "MAX_CONNECTIONS", 4)
    with rmod.Receiver(body_seconds=5.0) as rx:
        idle = [socket.create_connection(("127.0.0.1", rx.port), timeout=5) for _ in range(4)]
        time.sleep(0.3)
        with socket.create_connection(("127.0.0.1", rx.port), timeout=5) as extra:
            assert extra.recv(64).startswith(b"HTTP/1.1 503")
        for s in idle:
            s.close()
        time.sleep(0.3)
        good = json.dumps(request(rag_trace(1))).encode()
        assert _raw_post(rx.port, "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(good)}", good) == 200


def test_watch_once_gives_a_trace_whose_root_never_came_a_row(tmp_path):
    """A trace exported without its root span (the root was lost upstream): --once judges it as it
    is at its end instead of dropping it without a row."""
    spans = rag_trace(9)[1:]  # the retriever and the LLM span, their parent (the root) missing
    path = write_jsonl(tmp_path / "t.jsonl", [request(spans), request(rag_trace(10))])
    out = tmp_path / "o.jsonl"
    assert _watch(tmp_path, path, "-o", str(out)) == 0
    rows = {r["id"]: r for r in _rows(out)}
    assert set(rows) == {trace_id(9), trace_id(10)} and rows[trace_id(9)]["status"] == "judged"


def test_the_assembler_is_bounded_in_count(monkeypatch):
    """F15 (count): spans of many rootless traces: at most MAX_PENDING wait (the oldest are given as
    they are), and the ids remembered as given stay under MAX_GIVEN."""
    from judgeflow.io import sources
    from judgeflow.io.otlp import Span

    monkeypatch.setattr(sources, "MAX_PENDING", 50)
    monkeypatch.setattr(sources, "MAX_GIVEN", 100)
    now = [0.0]
    asm = sources.Assembler(settle=1e9, clock=lambda: now[0])
    given = 0
    for n in range(400):
        now[0] += 1
        given += len(asm.add([Span(trace_id=f"{n:032x}", span_id=f"{n:016x}", name="child", parent_id="f" * 16)]))
        assert len(asm.pending) <= 50 and len(asm.given) <= 100
    assert given == 350
