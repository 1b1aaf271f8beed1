"""Issue 25, item 1: what a caller of the served graph (graphs/judge.py) may choose.

The graph is invoked as LangGraph's server invokes it (the context as a JSON dict); the endpoints
are real servers on 127.0.0.1 (tests/fakes) reached by the real openai SDK. The same checks over
`langgraph dev` itself are in test_langgraph_server.py.
"""

from __future__ import annotations

import asyncio
import json
import runpy
from pathlib import Path

import pytest
from fakes import MOSCOW_REFERENCE, MOSCOW_WRONG, FakeProvider
from fakes.hostile import HostileServer, echoing
from pydantic import ValidationError

from judgeflow.backends.llm import make_client
from judgeflow.backends.llm_judge import LLMJudge
from judgeflow.workflow import JudgeContext

ROOT = Path(__file__).resolve().parents[2]
ITEM = {"id": "q1", "question": "When was Moscow founded?", "answer": MOSCOW_WRONG, "reference": MOSCOW_REFERENCE}
SERVER_KEY = "AIzaSyD-server-key-0123456789abcdef"


@pytest.fixture(scope="module")
def graph():
    return runpy.run_path(str(ROOT / "graphs" / "judge.py"))["graph"]


def invoke(graph, context) -> dict:
    return asyncio.run(graph.ainvoke({"item": ITEM}, context=context))


def test_a_caller_cannot_send_the_servers_key_to_its_own_endpoint(graph, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("JUDGEFLOW_ALLOWED_MODELS", "openai/gpt-4o-mini")
    with HostileServer(echoing(401)) as attacker:
        with pytest.raises(ValidationError, match="base_url") as refused:
            invoke(graph, {"model": "openai/gpt-4o-mini", "base_url": attacker.url + "/v1"})
        assert attacker.requests == []  # nothing was sent, so no key either
    assert "Extra inputs are not permitted" in str(refused.value)


def test_a_caller_chooses_only_among_the_allowed_models(graph, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.delenv("JUDGEFLOW_ALLOWED_MODELS", raising=False)
    with pytest.raises(ValidationError, match="not served here"):
        invoke(graph, {"model": "openai/gpt-4o"})  # the operator allowed none: offline judges only
    assert invoke(graph, {"model": "baseline/lexical"})["label"] == 1
    with FakeProvider() as fake:
        monkeypatch.setenv("JUDGEFLOW_ALLOWED_MODELS", "openai/judge-small, openai/judge-large")
        monkeypatch.setenv("JUDGEFLOW_BASE_URL", fake.base_url + "/v1")  # the operator's endpoint
        with pytest.raises(ValidationError, match=r"choose one of \['baseline/lexical', 'openai/judge-large'"):
            invoke(graph, {"model": "openai/gpt-4o"})
        out = invoke(graph, {"model": "openai/judge-small"})
        assert out["label"] == 1 and "error" not in out
        assert [r["model"] for r in fake.requests] == ["judge-small", "judge-small"]


def test_a_criterion_is_chosen_by_name_and_a_path_tells_nothing_about_the_disk(graph, tmp_path, monkeypatch) -> None:
    out = invoke(graph, {"model": "baseline/lexical", "criterion": "reference_faithfulness"})
    assert out["criterion"].name == "reference_faithfulness"
    shipped = str(ROOT / "criteria" / "factual_correctness.toml")
    errors = []
    for name in (shipped, str(tmp_path / "missing.toml"), "/etc/passwd", "../../criteria/factual_correctness"):
        with pytest.raises(ValidationError) as refused:
            invoke(graph, {"criterion": name})
        errors.append(refused.value.errors()[0]["msg"].replace(repr(name[:80]), "NAME"))
    assert len(set(errors)) == 1 and "a name, never a path" in errors[0], errors
    # the operator registers its own criteria by directory; callers name them
    mine = tmp_path / "house"
    mine.mkdir()
    (mine / "house_rules.toml").write_text((ROOT / "criteria" / "factual_correctness.toml").read_text()
                                           .replace('name = "factual_correctness"', 'name = "house_rules"'))
    monkeypatch.setenv("JUDGEFLOW_CRITERIA_DIR", str(mine))
    assert invoke(graph, {"model": "baseline/lexical", "criterion": "house_rules"})["criterion"].name == "house_rules"


def test_the_endpoints_error_reaches_the_caller_without_the_key_or_the_endpoint(graph, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("JUDGEFLOW_ALLOWED_MODELS", "openai/judge-small")
    with HostileServer(echoing(401)) as endpoint:
        monkeypatch.setenv("JUDGEFLOW_BASE_URL", endpoint.url + "/v1")
        out = invoke(graph, {"model": "openai/judge-small"})
        host = endpoint.url.removeprefix("http://")
        assert endpoint.requests[0][2]["authorization"] == f"Bearer {SERVER_KEY}"  # the real key was sent
    assert out["status"] == "unscored" and "authentication failed" in out["error"]
    returned = out["error"] + json.dumps([t.model_dump() for t in out["trace"]])
    assert "Incorrect API key provided" in returned  # the endpoint's message is there
    assert SERVER_KEY[:12] not in returned and host not in returned and "127.0.0.1" not in returned


def test_a_python_caller_with_a_judge_context_keeps_full_control(graph) -> None:
    with FakeProvider() as fake:
        client = make_client("openai/any-model", base_url=fake.base_url + "/v1", api_key="sk-python-caller")
        out = invoke(graph, JudgeContext(backend=LLMJudge(client), criterion=str(ROOT / "criteria" / "factual_correctness.toml")))
        assert out["label"] == 1 and len(fake.requests) == 2
        out = invoke(graph, JudgeContext(model="openai/other-model", base_url=fake.base_url + "/v1"))
        assert out["label"] == 1 and fake.requests[-1]["model"] == "other-model"


def test_a_run_without_a_context_gets_the_operators_defaults_and_hides_the_endpoint(graph, monkeypatch) -> None:
    assert asyncio.run(graph.ainvoke({"item": ITEM}))["label"] == 1  # JUDGEFLOW_MODEL unset: offline
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("JUDGEFLOW_MODEL", "openai/judge-small")
    with HostileServer(echoing(401)) as endpoint:
        monkeypatch.setenv("JUDGEFLOW_BASE_URL", endpoint.url + "/v1")
        out = asyncio.run(graph.copy().ainvoke({"item": ITEM}))  # the server runs a copy
        assert len(endpoint.requests) == 1
    assert out["status"] == "unscored" and "127.0.0.1" not in out["error"] + json.dumps(
        [t.model_dump() for t in out["trace"]]), out["error"]


def test_an_items_own_criterion_field_is_a_name_too_and_tells_nothing_about_the_disk(graph, tmp_path, monkeypatch) -> None:
    """Issue 35, item 1: the item's `criterion` field (not only the context's) names a criterion."""
    planted = tmp_path / "planted.toml"  # a valid criterion file on the server's disk, not the operator's
    planted.write_text((ROOT / "criteria" / "factual_correctness.toml").read_text())
    (tmp_path / "broken.toml").write_text("name = \n")
    errors = []
    for name in (str(planted), str(tmp_path / "broken.toml"), str(tmp_path / "missing.toml"), "/etc/passwd",
                 "/proc/self/environ", "../../criteria/factual_correctness", str(ROOT / "criteria" / "factual_correctness.toml")):
        out = asyncio.run(graph.ainvoke({"item": {**ITEM, "criterion": name}}, context={"model": "baseline/lexical"}))
        assert out["status"] == "invalid" and out.get("criterion") is None, (name, out.get("error"))
        errors.append(out["error"].replace(repr(name[:80]), "NAME"))
    assert len(set(errors)) == 1 and "a name, never a path" in errors[0], errors
    assert "/proc" not in errors[0] and str(tmp_path) not in errors[0]
    out = asyncio.run(graph.ainvoke({"item": {**ITEM, "criterion": "reference_faithfulness"}}, context={}))
    assert out["criterion"].name == "reference_faithfulness"  # a shipped name in the item is fine
    mine = tmp_path / "house"
    mine.mkdir()
    (mine / "house_rules.toml").write_text(planted.read_text().replace('name = "factual_correctness"', 'name = "house_rules"'))
    monkeypatch.setenv("JUDGEFLOW_CRITERIA_DIR", str(mine))
    out = asyncio.run(graph.ainvoke({"item": {**ITEM, "criterion": "house_rules"}}, context={}))
    assert out["criterion"].name == "house_rules"  # and so is the operator's own


def test_a_criterion_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path) -> None:
    """Issue 35, item 1: a criterion file is size-capped (a 300 MB file took 10 s and +600 MB)."""
    from judgeflow.criteria import MAX_CRITERION_BYTES, load_criterion
    from judgeflow.errors import CriterionError

    big = tmp_path / "big.toml"
    text = (ROOT / "criteria" / "factual_correctness.toml").read_text()
    big.write_text(text + "# " + "x" * MAX_CRITERION_BYTES + "\n")
    with pytest.raises(CriterionError, match="over the .* cap"):
        load_criterion(str(big))
    (tmp_path / "ok.toml").write_text(text)
    assert load_criterion(str(tmp_path / "ok.toml")).name == "factual_correctness"
