"""#47: judgeflow's internal graph runs (prompts, judged texts, replies) are never sent to LangSmith unless asked
(`trace_internal=True`). A local capture server is LANGSMITH_ENDPOINT, tracing is on by the environment, the
key is fake; the real langsmith and langchain-core clients post whatever they trace to it."""

from __future__ import annotations

import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

langsmith = pytest.importorskip("langsmith")
pytest.importorskip("langchain_core")

from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.tracers.langchain import wait_for_all_tracers  # noqa: E402
from langsmith import run_trees  # noqa: E402
from langsmith.schemas import Example  # noqa: E402
from langsmith.utils import get_env_var  # noqa: E402

from judgeflow.integrations.langsmith import langsmith_evaluator  # noqa: E402
from judgeflow.integrations.runnable import as_runnable  # noqa: E402
from judgeflow.integrations.trace_callback import TraceJudgeCallback  # noqa: E402
from tests.fakes.traces import weather_agent  # noqa: E402

#: run names only judgeflow's graph has: the judge's internal runs
INTERNAL = {"route", "decompose", "check", "single", "aggregate"}
SECRET = "Moscow was founded in 1247 by the private-marker-7781."


class Capture:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        capture = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n)
                if self.command != "GET":
                    capture.bodies.append(body)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            do_POST = do_PATCH = do_PUT = do_GET = _any

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def run_names(self) -> set[str]:
        wait_for_all_tracers()
        return {m.decode() for b in self.bodies for m in re.findall(rb'"name":\s*"([^"]{1,60})"', b)}

    def sent(self, text: str) -> bool:
        return any(text.encode() in b for b in self.bodies)


@pytest.fixture
def capture(monkeypatch):
    cap = Capture()
    for name, value in {"LANGSMITH_ENDPOINT": cap.url, "LANGSMITH_TRACING": "true", "LANGCHAIN_TRACING_V2": "true",
                        "LANGSMITH_API_KEY": "lsv2_pt_fake", "LANGSMITH_PROJECT": "capture"}.items():
        monkeypatch.setenv(name, value)
    get_env_var.cache_clear()
    monkeypatch.setattr(run_trees, "_CLIENT", None)  # the tracers' client, made anew for the capture endpoint
    yield cap
    wait_for_all_tracers()
    cap.server.shutdown()
    get_env_var.cache_clear()


def _examples(n: int = 2) -> list:
    return [Example(id=uuid.uuid4(), dataset_id=uuid.uuid4(), inputs={"question": "When was Moscow founded?"},
                    outputs={"answer": "Moscow was founded in 1147."}) for _ in range(n)]


def test_evaluate_with_upload_results_false_sends_nothing(capture):
    client = langsmith.Client(api_url=capture.url, api_key="lsv2_pt_fake")
    results = langsmith.evaluate(lambda inputs: {"answer": SECRET}, data=_examples(),
                                 evaluators=[langsmith_evaluator(model="baseline/lexical")], upload_results=False,
                                 client=client)
    assert [r["evaluation_results"]["results"][0].score for r in results] == [1, 1]
    client.flush()
    assert capture.run_names() == set() and capture.bodies == []  # 0 uploads
    assert not capture.sent(SECRET)


@pytest.mark.parametrize("trace_internal", [False, True])
def test_a_traced_chain_shows_the_judge_but_never_its_internal_runs(capture, trace_internal):
    app = RunnableLambda(lambda q: {"question": q, "answer": SECRET, "reference": "Moscow was founded in 1147."})
    chain = app | as_runnable(model="baseline/lexical", trace_internal=trace_internal)
    assert chain.invoke("When was Moscow founded?").label == 1
    names = capture.run_names()
    assert names  # the user's chain is traced, as they asked
    assert bool(names & INTERNAL) is trace_internal  # the judge's graph only when asked for


@pytest.mark.parametrize("trace_internal", [False, True])
def test_the_trace_callback_keeps_the_judges_runs_out_of_the_agents_trace(capture, trace_internal):
    judged = TraceJudgeCallback(model="baseline/lexical", trace_internal=trace_internal)
    agent = RunnableLambda(weather_agent)
    agent.invoke({"q": "Weather in Paris?"}, config={"callbacks": [judged]})
    assert [j.label for j in judged.judgments] == [1]  # 25 C and sunny against the tool's 18 C, rain
    assert bool(capture.run_names() & INTERNAL) is trace_internal
