"""Verdicts as Phoenix span annotations (judgeflow/integrations/phoenix.py): the request body Phoenix's REST API
takes, and what happens when it refuses. The real server is in test_phoenix.py."""

from __future__ import annotations

import json

import httpx

from judgeflow.integrations.phoenix import PhoenixAnnotator, annotation
from judgeflow.results import ClaimResult, Judgment

TRACE, SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


def _judged(label, model="openai/gpt-4o-mini", **extra):
    claims = [ClaimResult(id="c1", text="The capital is Atlantis", verdict="contradicted", error=bool(label))]
    return Judgment(id="q1", label=label, criterion="source_faithfulness", model=model,
                    reason="claim c1 is contradicted" if label else "all claims supported", claims=claims,
                    extra={"trace_id": TRACE, "span_id": SPAN, **extra})


def test_a_verdict_is_a_label_a_score_and_an_explanation_by_an_llm_annotator():
    a = annotation(_judged(1))
    assert a["span_id"] == SPAN and a["name"] == "hallucination" and a["annotator_kind"] == "LLM"
    assert a["result"] == {"label": "hallucination", "score": 1.0, "explanation": "claim c1 is contradicted"}
    assert a["metadata"]["deciding_claim"] == "The capital is Atlantis" and a["metadata"]["criterion"] == "source_faithfulness"
    assert annotation(_judged(0, model="baseline/lexical"))["annotator_kind"] == "CODE"  # the offline judge is code


def test_unscored_has_no_score_and_an_item_without_a_span_is_skipped():
    j = Judgment.unscored("q2", "budget: 20 of 20 call(s) spent", extra={"trace_id": TRACE, "span_id": SPAN})
    assert annotation(j)["result"] == {"label": "unscored", "explanation": "budget: 20 of 20 call(s) spent"}
    assert annotation(Judgment(id="q3", label=0)) is None


def test_phoenix_refusing_a_batch_is_counted_not_raised():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        assert request.url.path == "/v1/span_annotations" and request.url.params["sync"] == "true"
        return httpx.Response(404, json={"detail": f"Spans with IDs {SPAN} do not exist."})

    client = httpx.Client(base_url="http://phoenix.test", transport=httpx.MockTransport(handler))
    out = PhoenixAnnotator("http://phoenix.test", client=client, batch=2)
    out.export(_judged(1))
    out.export(Judgment(id="nospan", label=0))
    assert not seen  # one queued, one skipped
    assert out.close() is False
    assert out.failed == 1 and out.sent == 0 and out.skipped == 1 and "do not exist" in out.errors[0]
    assert [d["span_id"] for d in seen[0]["data"]] == [SPAN]
    assert "1 not taken" in out.describe()


def test_phoenix_api_key_is_sent_as_phoenixs_client_sends_it(monkeypatch):
    monkeypatch.setenv("PHOENIX_API_KEY", "px-secret-key")
    out = PhoenixAnnotator("http://phoenix.test")
    assert out.client.headers["authorization"] == "Bearer px-secret-key"
    out.client.close()
