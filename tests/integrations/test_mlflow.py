"""judgeflow as an MLflow 3 scorer in `mlflow.genai.evaluate`, on rows and on traces (#37).

A local tracking store (sqlite, one per module, an experiment per test), offline (MLflow's telemetry off); the judge is the
offline baseline judge or the in-repo schema fake behind the real openai SDK and Instructor. An
unscored verdict is MLflow's error (an AssessmentError), never a value: the mean counts only
verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

mlflow = pytest.importorskip("mlflow", reason="the mlflow extra is not installed (pip install 'judgeflow[mlflow]')")
from fakes import SchemaProvider  # noqa: E402

from judgeflow import Budget, Judge  # noqa: E402
from judgeflow.integrations.mlflow import judgeflow_scorer, to_record  # noqa: E402

SOURCE = "Moscow was founded in 1147 by Yuri Dolgoruky."
ROWS = [
    {"inputs": {"question": "When was Moscow founded?", "context": SOURCE}, "outputs": "Moscow was founded in 1147.",
     "expectations": {"expected_response": "1147"}},
    {"inputs": {"question": "When was Moscow founded?", "context": SOURCE},
     "outputs": {"response": "Moscow was founded in 1300 by Napoleon."}},
    {"inputs": {"question": "When was Moscow founded?"}, "outputs": ""},  # no answer: invalid, an error
]


@pytest.fixture(scope="module")
def tracking_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One tracking database for the module: creating one (MLflow's migrations) cost several seconds
    per test. Each test still has its own experiment, so no test sees another's runs or traces."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.fixture
def store(tracking_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    monkeypatch.setenv("DO_NOT_TRACK", "true")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    uri = tracking_db
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment(f"judgeflow-{tmp_path.name}")
    yield uri
    mlflow.set_tracking_uri(None)


def feedback(result: Any, name: str = "judgeflow_hallucination") -> list[dict[str, Any]]:
    """Each row's judgeflow assessment, in input order (as MLflow logged it)."""
    out = []
    for assessments in result.result_df["assessments"]:
        out.append(next(a for a in assessments if a["assessment_name"] == name))
    return out


def test_rows_get_labels_reasons_and_errors_never_a_zero(store: str) -> None:
    result = mlflow.genai.evaluate(data=ROWS, scorers=[judgeflow_scorer(model="baseline/lexical")])
    rows = feedback(result)
    assert [r["feedback"].get("value") for r in rows] == [0, 1, None]
    assert rows[1]["rationale"].startswith("claim") and rows[1]["metadata"]["deciding_claim"]
    assert rows[1]["metadata"]["status"] == "judged" and rows[1]["metadata"]["model"] == "baseline/lexical"
    error = rows[2]["feedback"]["error"]
    assert error["error_code"] == "JUDGEFLOW_INVALID" and "no 'answer'" in error["error_message"]
    assert result.metrics["judgeflow_hallucination/mean"] == pytest.approx(0.5)  # the error is not a 0


def test_traces_with_retrieved_documents_are_judged_through_the_schema_fake(store: str) -> None:
    from mlflow.entities import SpanType

    @mlflow.trace(span_type=SpanType.RETRIEVER)
    def retrieve(question: str) -> list[dict[str, Any]]:
        return [{"page_content": SOURCE, "metadata": {"doc": 1}}]

    @mlflow.trace
    def app(question: str) -> str:
        retrieve(question)
        return "Moscow was founded in 1147."

    for _ in range(3):
        app("When was Moscow founded?")
    mlflow.flush_trace_async_logging()
    traces = mlflow.search_traces(return_type="list")
    assert len(traces) == 3 and to_record(None, "x", None, traces[0])["source"] == [SOURCE]
    with SchemaProvider(seed=3) as fake:
        scorer = judgeflow_scorer(Judge("openai/x", base_url=fake.base_url + "/v1"))
        result = mlflow.genai.evaluate(data=traces, scorers=[scorer])
        sent = list(fake.requests)
    rows = feedback(result)
    assert len(rows) == 3 and sent  # judged by the fake through the real SDK
    assert any(SOURCE in str(body) for body in sent)  # the retriever span's document is the source
    for r in rows:
        value, error = r["feedback"].get("value"), r["feedback"].get("error")
        assert (value in (0, 1)) != bool(error), r  # a verdict or an error, never both, never neither
        if error:
            assert error["error_code"] == "JUDGEFLOW_UNSCORED"


def test_a_spend_cap_surfaces_as_errors_not_scores(store: str) -> None:
    budget = Budget(calls=3)  # a call holds its 3 attempts: the first row's first call fits, no more
    rows = [ROWS[0], ROWS[1], ROWS[0]]
    with SchemaProvider(seed=1) as fake:
        scorer = judgeflow_scorer(model="openai/x", base_url=fake.base_url + "/v1", budget=budget)
        result = mlflow.genai.evaluate(data=rows, scorers=[scorer])
        sent = len(fake.requests)
    errors = [r["feedback"]["error"] for r in feedback(result) if r["feedback"].get("error")]
    assert sent <= 3 and budget.denied >= 1
    assert errors and all(e["error_code"] == "JUDGEFLOW_UNSCORED" and e["error_message"].startswith("budget")
                          for e in errors)


def test_an_expected_response_means_a_correctness_check_whatever_else_the_row_carries(store: str) -> None:
    """The docs' own row: a question, a retrieved context and MLflow's expected answer (#47)."""
    docs_row = {"inputs": {"question": "When was Moscow founded?", "context": "Moscow was founded in 1147."},
                "outputs": "Moscow was founded in 1300.", "expectations": {"expected_response": "1147"}}
    facts_row = {"inputs": {"question": "When was Moscow founded?", "context": SOURCE},
                 "outputs": "Moscow was founded in 1147.", "expectations": {"expected_facts": ["1147"]}}
    result = mlflow.genai.evaluate(data=[docs_row, facts_row, ROWS[1]], scorers=[judgeflow_scorer(model="baseline/lexical")])
    rows = feedback(result)
    assert [r["metadata"]["criterion"] for r in rows] == ["factual_correctness", "factual_correctness",
                                                          "source_faithfulness"]
    assert rows[0]["feedback"]["value"] == 1 and "criterion factual_correctness" in rows[0]["rationale"]
    assert "criterion source_faithfulness" in rows[2]["rationale"] and rows[2]["metadata"]["routed_by"]
    assert to_record({"question": "q"}, "a", {"expected_response": "r"})["criterion"] == "factual_correctness"
    assert "criterion" not in to_record({"question": "q", "context": "c"}, "a", None)
