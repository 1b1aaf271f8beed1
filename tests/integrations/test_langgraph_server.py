"""`langgraph dev` serves graphs/judge.py (langgraph.json) and judges an item over HTTP.

The context travels as JSON, so it is plain data (a model name, ...); the server builds the
backend from it. Offline judge, loopback only, telemetry and version checks off.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import FakeProvider
from fakes.hostile import HostileServer, echoing

pytest.importorskip("langgraph_api", reason="langgraph-cli[inmem] is not installed")
sdk = pytest.importorskip("langgraph_sdk", reason="langgraph-sdk is not installed")

ROOT = Path(__file__).resolve().parents[2]
SERVER_KEY = "tgp_v1_server-key-0123456789abcdef"
CLI = Path(sys.executable).with_name("langgraph")
WRONG_YEAR = {"id": "moscow-wrong-year", "question": "When was Moscow founded, and by whom?",
              "answer": "Moscow was founded in 1247 by Yuri Dolgorukiy.",
              "reference": "In 1147, by Yuri Dolgorukiy."}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def operator_endpoint():
    """The endpoint the operator configured for the served models (JUDGEFLOW_BASE_URL)."""
    with FakeProvider() as fake:
        yield fake


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, operator_endpoint: FakeProvider):
    if not CLI.exists():
        pytest.skip(f"no langgraph command next to {sys.executable}")
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "ANTHROPIC_", "JUDGEFLOW_"))}
    env |= {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true",
            "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false", "NO_COLOR": "1",
            # the operator's configuration: one model a caller may choose, its endpoint and key
            "JUDGEFLOW_ALLOWED_MODELS": "openai/judge-small", "OPENAI_API_KEY": SERVER_KEY,
            "JUDGEFLOW_BASE_URL": operator_endpoint.base_url + "/v1"}
    # run outside the repo (the in-memory server writes .langgraph_api/ into its working directory):
    # the project's own langgraph.json, with its relative paths resolved against the repo
    cwd = tmp_path_factory.mktemp("langgraph-dev")
    config = json.loads((ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str((ROOT / d).resolve()) for d in config["dependencies"]]
    config["graphs"] = {name: str((ROOT / spec.rpartition(":")[0]).resolve()) + ":" + spec.rpartition(":")[2]
                        for name, spec in config["graphs"].items()}
    config.pop("env", None)
    (cwd / "langgraph.json").write_text(json.dumps(config))
    log = (cwd / "server.log").open("wb")
    proc = subprocess.Popen(
        [str(CLI), "dev", "--config", str(cwd / "langgraph.json"), "--host", "127.0.0.1",
         "--port", str(port), "--no-browser", "--no-reload"],
        cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    client = sdk.get_sync_client(url=url, api_key=None)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if client.http.get("/ok"):
                    break
            except Exception:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("langgraph dev did not start:\n" + (cwd / "server.log").read_text(errors="replace")[-3000:])
            time.sleep(0.3)
        yield client
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.mark.slow
def test_langgraph_dev_judges_an_item_over_http(server) -> None:
    client = server
    [assistant] = client.assistants.search(graph_id="judge")
    out = client.runs.wait(None, assistant["assistant_id"], input={"item": WRONG_YEAR},
                           context={"model": "baseline/lexical"})
    assert out["label"] == 1, out
    assert out["routed_by"] == "reference present"
    assert out["criterion"]["name"] == "factual_correctness"
    # aliases are read as in a file (a RAGAS-style row), and a criterion is forced by name
    row = {"id": "r", "user_input": WRONG_YEAR["question"], "response": WRONG_YEAR["answer"],
           "reference": WRONG_YEAR["reference"]}
    out = client.runs.wait(None, "judge", input={"item": row},
                           context={"model": "baseline/lexical", "criterion": "reference_faithfulness"})
    assert out["label"] == 1 and out["criterion"]["name"] == "reference_faithfulness", out


@pytest.mark.slow
def test_langgraph_dev_serves_the_context_schema(server) -> None:
    client = server
    [assistant] = client.assistants.search(graph_id="judge")
    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    props = schemas["context_schema"]["properties"]
    assert {"model", "criterion", "strategy", "mode"} <= props.keys()
    assert "backend" not in props  # a live object cannot travel as JSON


@pytest.mark.slow
def test_langgraph_dev_takes_no_endpoint_or_path_from_the_caller(server, operator_endpoint) -> None:
    """Issue 25 item 1: a caller of the served graph names an allowed model and a criterion, nothing
    more; the server's key goes only to the operator's endpoint (see test_served_graph.py)."""
    client = server
    with HostileServer(echoing(401)) as attacker:
        out = run(client, {"model": "openai/judge-small", "base_url": attacker.url + "/v1"})
        assert attacker.requests == []  # refused, or the field dropped: never sent there
    assert "label" not in out or operator_endpoint.requests, out
    for context, says in (({"model": "openai/gpt-4o"}, "not served here"),
                          ({"criterion": "/etc/passwd"}, "a name, never a path")):
        out = run(client, context)
        assert "label" not in out and says in json.dumps(out), out
    calls = len(operator_endpoint.requests)
    out = run(client, {"model": "openai/judge-small", "criterion": "factual_correctness"})
    assert out["label"] == 1 and len(operator_endpoint.requests) == calls + 2


def run(client, context: dict) -> dict:
    try:
        return client.runs.wait(None, "judge", input={"item": WRONG_YEAR}, context=context, raise_error=False)
    except Exception as e:  # noqa: BLE001 - an SDK that raises the run's error
        return {"__error__": str(e)}
