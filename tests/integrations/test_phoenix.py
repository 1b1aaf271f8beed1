"""#37's done-when, against a real Phoenix server (the `arize-phoenix` package, started here on 127.0.0.1,
offline: telemetry and external resources off, a free port, a temporary working dir).

Traces are sent to Phoenix over OTLP, `judgeflow watch` reads them from Phoenix's REST API with a
sampling rate and a call budget, judges them with the in-repository schema fake (the real openai SDK
and Instructor), and writes its verdicts back as span annotations on the judged spans (#47: where a
Phoenix user looks) and as OTel spans in traces of their own, linked to the judged spans; the test
reads both back through Phoenix's own client (`phoenix.client.Client`) and checks that no judged
trace got longer.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("phoenix.client")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

#: the Python that runs the Phoenix server: its own venv in CI (arize-phoenix's dependencies conflict with
#: instructor's pins, so the server is not installed beside judgeflow), else this one
PHOENIX_PYTHON = os.environ.get("JUDGEFLOW_PHOENIX_PYTHON") or sys.executable
if subprocess.run([PHOENIX_PYTHON, "-c", "import phoenix.server.main"], capture_output=True).returncode != 0:
    pytest.skip(f"no Phoenix server importable by {PHOENIX_PYTHON}: pip install 'arize-phoenix>=20.26' "
                "(or set JUDGEFLOW_PHOENIX_PYTHON to a Python that has it)", allow_module_level=True)

from judgeflow.cli import main  # noqa: E402
from judgeflow.io.receiver import protobuf_body  # noqa: E402
from judgeflow.runs.watch import sampled  # noqa: E402
from tests.fakes.otel_traces import agent_trace, rag_trace, request, span_id, trace_id  # noqa: E402
from tests.fakes.schema_provider import SchemaProvider  # noqa: E402

pytestmark = pytest.mark.slow
N = 48


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(_free_port()),
           "PHOENIX_WORKING_DIR": str(work), "PHOENIX_TELEMETRY_ENABLED": "false",
           "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false"}
    log = open(work / "phoenix.log", "w")
    proc = subprocess.Popen([PHOENIX_PYTHON, "-m", "phoenix.server.main", "serve"], cwd=work, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"Phoenix exited with {proc.returncode}: {(work / 'phoenix.log').read_text()[-2000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail(f"Phoenix did not start in 180 s: {(work / 'phoenix.log').read_text()[-2000:]}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _send(url: str, project: str, traces: list[list[dict]]) -> None:
    for spans in traces:
        r = httpx.post(f"{url}/v1/traces", content=protobuf_body(request(spans, project=project)),
                       headers={"Content-Type": "application/x-protobuf"}, timeout=30)
        assert r.status_code == 200, r.text


def _durations(spans: list[dict]) -> dict[str, tuple[str, str]]:
    """trace id -> (first start, last end) of its spans: what a backend measures as the trace's latency."""
    out: dict[str, tuple[str, str]] = {}
    for s in spans:
        t = s["context"]["trace_id"]
        start, end = out.get(t, (s["start_time"], s["end_time"]))
        out[t] = (min(start, s["start_time"]), max(end, s["end_time"]))
    return out


def _annotations(url: str, project: str, span_ids: list[str], expect: int) -> list[dict]:
    from phoenix.client import Client

    client = Client(base_url=url)
    deadline = time.monotonic() + 30
    while True:
        got = client.spans.get_span_annotations(span_ids=span_ids, project_identifier=project, limit=1000)
        if len(got) >= expect or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def _spans(url: str, project: str, expect: int) -> list[dict]:
    """The project's spans through Phoenix's own client, once at least `expect` are in (ingest is async)."""
    from phoenix.client import Client

    client = Client(base_url=url)
    deadline = time.monotonic() + 60
    while True:
        try:
            spans = client.spans.get_spans(project_identifier=project, limit=10_000)
        except httpx.HTTPStatusError:  # the project is made as its first spans are ingested
            spans = []
        if len(spans) >= expect or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


@pytest.mark.parametrize("concurrency", [4, 16])
def test_watch_judges_the_sampled_share_within_the_budget_and_phoenix_shows_the_verdicts(phoenix, tmp_path, monkeypatch,
                                                                                         concurrency):
    project, rate, budget = f"shop-{concurrency}", 0.5, 30
    base = 1000 * concurrency  # trace ids are Phoenix-wide: each project gets its own traces
    traces = [rag_trace(base + n, wrong=n % 4 == 0) for n in range(N - 4)] + [agent_trace(base + n) for n in range(N - 4, N)]
    _send(phoenix, project, traces)
    before = _spans(phoenix, project, sum(map(len, traces)))
    assert len(before) == sum(map(len, traces))
    sampled_ids = {trace_id(base + n) for n in range(N) if sampled(trace_id(base + n), rate)}
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake-phoenix")
    with SchemaProvider(seed=concurrency) as fake:
        rc = main(["watch", phoenix, "--project", project, "--once", "--sample-rate", str(rate), "--budget", str(budget),
                   "--concurrency", str(concurrency), "--model", "openai/gpt-4o-mini", "--base-url", fake.base_url + "/v1",
                   "--retries", "0", "--reasks", "0", "--store", str(tmp_path / "s.sqlite"), "--otel-endpoint", phoenix,
                   "--no-cache", "-o", str(tmp_path / "out.jsonl")])  # no cache hits: every item spends
        calls = fake.received
    assert rc == 0
    assert calls <= budget  # the fake counts every request it answered: the cap held
    after = _spans(phoenix, project, sum(map(len, traces)) + len(sampled_ids))
    verdicts = [s for s in after if s["name"] == "evaluate hallucination"]
    by_trace = {s["attributes"]["judgeflow.judged.trace_id"]: s for s in verdicts}
    assert set(by_trace) == sampled_ids and len(verdicts) == len(sampled_ids)  # the sampled share, each once
    assert abs(len(sampled_ids) / N - rate) < 0.2
    scored = [s for s in verdicts if "gen_ai.evaluation.score.value" in s["attributes"]]
    unscored = [s for s in verdicts if s["attributes"]["gen_ai.evaluation.score.label"] == "unscored"]
    over = [s for s in unscored if s["attributes"]["gen_ai.evaluation.explanation"].startswith("budget")]
    assert over and len(scored) + len(unscored) == len(sampled_ids)  # the budget ran out, nothing lost
    assert calls >= budget - 1  # and it was spent, not left idle
    for s in unscored:  # over the budget (or the fake's reply unusable): unscored, never 0
        a = s["attributes"]
        assert "gen_ai.evaluation.score.value" not in a and a["error.type"] == "unscored"
        assert s["status_code"] == "ERROR"  # Phoenix's error views count the judge's failures
    for s in scored:
        a = s["attributes"]
        assert a["gen_ai.evaluation.score.value"] in (0.0, 1.0)
        assert a["gen_ai.evaluation.score.label"] in ("hallucination", "no_hallucination")
    judged_span = {}
    for s in verdicts:  # each linked to its judged span (the last LLM span of its trace), in a trace of its own
        n = next(k for k in range(N) if trace_id(base + k) == s["attributes"]["judgeflow.judged.trace_id"])
        judged_span[trace_id(base + n)] = span_id(base + n, 3 if n >= N - 4 else 2)
        assert s["attributes"]["judgeflow.judged.span_id"] == judged_span[trace_id(base + n)]
        assert s["attributes"]["judgeflow.item.id"] == trace_id(base + n)
        assert s["context"]["trace_id"] not in {trace_id(base + k) for k in range(N)} and not s.get("parent_id")
        assert s["span_kind"] == "EVALUATOR"  # OpenInference's kind, as Phoenix reads it
    judged_traces = {t: d for t, d in _durations(after).items() if t in sampled_ids}
    assert judged_traces == {t: d for t, d in _durations(before).items() if t in sampled_ids}  # no trace got longer
    # the verdicts as Phoenix's own evaluations are: span annotations on the judged spans, one each
    notes = _annotations(phoenix, project, list(judged_span.values()), len(judged_span))
    assert len(notes) == len(judged_span) and {a["span_id"] for a in notes} == set(judged_span.values())
    span_of = {v: k for k, v in judged_span.items()}
    for a in notes:
        v = by_trace[span_of[a["span_id"]]]["attributes"]
        assert a["name"] == "hallucination" and a["annotator_kind"] == "LLM" and a["identifier"] == "judgeflow"
        assert a["result"]["label"] == v["gen_ai.evaluation.score.label"]
        assert a["result"].get("score") == v.get("gen_ai.evaluation.score.value")  # None when unscored, never 0
        assert a["result"]["explanation"] == v["gen_ai.evaluation.explanation"]
        assert a["metadata"]["model"] == "openai/gpt-4o-mini" and a["metadata"]["judge"] == "judgeflow"
    # a restart of the same watch judges nothing again, and writes nothing more back
    with SchemaProvider(seed=concurrency) as fake:
        assert main(["watch", phoenix, "--project", project, "--once", "--sample-rate", str(rate), "--budget", str(budget),
                     "--model", "openai/gpt-4o-mini", "--base-url", fake.base_url + "/v1", "--retries", "0", "--reasks", "0",
                     "--store", str(tmp_path / "s.sqlite"), "--otel-endpoint", phoenix]) == 0
        assert fake.received == 0
    time.sleep(1)
    again = [s for s in _spans(phoenix, project, 0) if s["name"] == "evaluate hallucination"]
    assert len(again) == len(verdicts)
    assert len(_annotations(phoenix, project, list(judged_span.values()), 0)) == len(notes)


def test_phoenix_source_errors_name_the_server(phoenix):
    from judgeflow.errors import ConfigError
    from judgeflow.io.sources import PhoenixSource

    src = PhoenixSource(phoenix, "no-such-project")
    assert src.poll() == []  # a project nothing was sent to yet
    src.close()
    src = PhoenixSource(phoenix + "/nowhere", "x")
    with pytest.raises(ConfigError, match="not a Phoenix server"):
        src.poll()
    src.close()


def test_no_trace_is_read_twice_when_new_ones_arrive(phoenix, tmp_path):
    project = "arrivals"
    _send(phoenix, project, [rag_trace(n) for n in range(200, 204)])
    _spans(phoenix, project, 12)
    out = tmp_path / "o.jsonl"
    args = ["watch", phoenix, "--project", project, "--once", "--model", "baseline/lexical", "--store",
            str(tmp_path / "s.sqlite"), "-o", str(out)]
    assert main(args) == 0
    _send(phoenix, project, [rag_trace(n) for n in range(204, 207)])
    _spans(phoenix, project, 21)
    assert main(args) == 0
    ids = [line.split('"id": "')[1].split('"')[0] for line in Path(out).read_text().splitlines()]
    assert sorted(ids) == sorted(trace_id(n) for n in range(200, 207))
