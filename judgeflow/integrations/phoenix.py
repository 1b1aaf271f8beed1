"""Verdicts as Phoenix span annotations: where a Phoenix user looks (the annotations column, filters, charts).

    annotator = PhoenixAnnotator("http://127.0.0.1:6006")   # $PHOENIX_API_KEY is sent as a bearer token
    for j in judgments: annotator.export(j)                 # judgments of items read from Phoenix traces
    annotator.close()                                       # sends what is queued; False if some were refused

Each judgment of an item that names its span (`trace_id` and `span_id`, as `watch` and
`judgeflow.io.otlp` give them) becomes one annotation on that span, as Phoenix's own evaluations
are (its client's `log_span_annotations`, `POST /v1/span_annotations`):

- name "hallucination" (`name=`), `annotator_kind` "LLM" (a model judged; "CODE" for judgeflow's
  offline baseline), `identifier` "judgeflow" (a later verdict on the same span replaces it);
- result: `label` "hallucination" / "no_hallucination" with `score` 1.0 / 0.0 (1 = hallucination
  found, judgeflow's label), `explanation` the reason; a row without a verdict gets the label
  "unscored" or "invalid", no score (never 0) and why as its explanation;
- metadata: the judge (`model`, `criterion`, `status`), claims checked and in error, the deciding
  claim, `score_means`.

Judgments whose item names no span are skipped (counted in `skipped`). Annotations go in batches
(`batch`), synchronously, so Phoenix answers for each: a span it does not have (404) or any other
refusal counts the batch's annotations in `failed` with the reason in `errors`, never raises.
Only httpx (a judgeflow dependency) is used: Phoenix's client is not needed to write.
"""

from __future__ import annotations

import os
from typing import Any

from ..redact import mask_url, mask_urls
from ..results import Judgment
from .otel import EVALUATION_NAME, SCORE_LABELS, judged_span

#: the identifier of judgeflow's annotations: one per (span, name), replaced by a later verdict
IDENTIFIER = "judgeflow"
SCORE_MEANS = "1 = hallucination found, 0 = none found"
_MAX_TEXT = 4000  # an explanation or deciding claim longer than this is cut (judged text is untrusted)


def annotation(j: Judgment, *, name: str = EVALUATION_NAME) -> dict[str, Any] | None:
    """The span annotation (Phoenix's `SpanAnnotationData`) of one judgment, or None if it names no span."""
    ids = judged_span(j)
    if ids is None:
        return None
    result: dict[str, Any]
    if j.status == "judged" and j.label is not None:
        result = {"label": SCORE_LABELS[j.label], "score": float(j.label), "explanation": _cut(j.reason or "")}
    else:
        result = {"label": j.status, "explanation": _cut(j.error or j.reason or "no verdict")}
    deciding = next((c for c in j.claims if c.error), None) if j.label == 1 else None
    metadata: dict[str, Any] = {"judge": "judgeflow", "model": j.model, "criterion": j.criterion, "status": j.status,
                                "claims": len(j.claims), "claims_in_error": sum(c.error for c in j.claims),
                                "score_means": SCORE_MEANS, "item_id": j.id}
    if deciding is not None:
        metadata["deciding_claim"] = _cut(deciding.text)
    offline = (j.model or "").startswith("baseline/")
    return {"name": name, "annotator_kind": "CODE" if offline else "LLM", "span_id": format(ids[1], "016x"),
            "identifier": IDENTIFIER, "result": result, "metadata": {k: v for k, v in metadata.items() if v is not None}}


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + " [cut]"


class PhoenixAnnotator:
    """Writes each judgment as a span annotation on its judged span in a Phoenix server."""

    def __init__(self, url: str, *, name: str = EVALUATION_NAME, headers: dict[str, str] | None = None,
                 client: Any = None, batch: int = 50, timeout: float = 30.0) -> None:
        import httpx

        self.url, self.name, self.batch = url.rstrip("/"), name, max(1, batch)
        if headers is None and os.environ.get("PHOENIX_API_KEY"):  # as Phoenix's own client authenticates
            headers = {"authorization": f"Bearer {os.environ['PHOENIX_API_KEY']}"}
        self.client = client or httpx.Client(base_url=self.url, headers=headers or {}, timeout=timeout)
        self.sent = self.failed = self.skipped = 0
        self.errors: list[str] = []
        self._queue: list[dict[str, Any]] = []

    def export(self, j: Judgment) -> None:
        """Queue one judgment's annotation (sent once `batch` are queued, and at `flush`)."""
        data = annotation(j, name=self.name)
        if data is None:
            self.skipped += 1
            return
        self._queue.append(data)
        if len(self._queue) >= self.batch:
            self.flush()

    def flush(self) -> bool:
        """Send what is queued; False if Phoenix refused some of it (see `errors`)."""
        import httpx

        queued, self._queue = self._queue, []
        if not queued:
            return not self.failed
        try:
            r = self.client.post("/v1/span_annotations", params={"sync": "true"}, json={"data": queued})
            if r.status_code >= 400:
                raise httpx.HTTPStatusError(f"Phoenix answered {r.status_code}: {r.text[:300]}", request=r.request,
                                            response=r)
            self.sent += len(queued)
        except httpx.HTTPError as e:
            self.failed += len(queued)
            self.errors.append(mask_urls(f"{self.url}: {len(queued)} annotation(s) not taken: {e}"))
        return not self.failed

    def close(self) -> bool:
        """Flush and close the connection; False if some annotations were not taken."""
        ok = self.flush()
        self.client.close()
        return ok

    def describe(self) -> str:
        """What was written, for a summary line."""
        out = f"{self.sent} verdict annotation(s) written to Phoenix at {mask_url(self.url)}"
        if self.failed:
            out += f"; {self.failed} not taken ({self.errors[-1]})"
        if self.skipped:
            out += f"; {self.skipped} verdict(s) of items that name no span not annotated"
        return out
