"""Citations marked in the HTML report and the review page, with precision and recall in calibrate (#53)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow import Judge
from judgeflow.calibration.agreement import calibrate
from judgeflow.calibration.report_html import calibration_html

SOURCES = ["Paris is the capital of France.", "Berlin is the capital of Germany."]
#: id -> (answer, human label): the people missed the bad citations, so each is a judge 1 / human 0
ROWS = {"ok": ("Paris is the capital of France [1].", 0),
        "mis": ("Paris is the capital of France [1]. Berlin is the capital of Germany [1].", 0),
        "fab": ("Berlin is the capital of Germany [7].", 0)}


def _files(tmp_path: Path) -> tuple[Path, Path]:
    items = [{"id": k, "user_input": "Capitals?", "retrieved_contexts": SOURCES, "response": a, "label": h}
             for k, (a, h) in ROWS.items()]
    items_path, results_path = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    items_path.write_text("".join(json.dumps(i) + "\n" for i in items))
    results = Judge("baseline/lexical").judge_many(items)
    results_path.write_text("".join(json.dumps(r.to_row()) + "\n" for r in results))
    return items_path, results_path


def test_the_report_marks_each_citation_by_what_it_is(tmp_path: Path) -> None:
    items, results = _files(tmp_path)
    report = calibrate(results, labels=items)
    assert report.citations is not None and report.citations["answers"] == 3
    assert (report.citations["fabricated"], report.citations["misattributed"]) == (1, 1)
    page = calibration_html(report)
    assert "<h2>Citations</h2>" in page and "citation precision <b>50%</b>" in page
    assert '<mark class="cite fabricated" title="citation [7]: fabricated (c1)">[7]</mark>' in page
    assert '<mark class="cite misattributed" title="citation [1]: misattributed (c2)">[1]</mark>' in page
    assert '<mark class="cite supported" title="citation [1]: supported (c1)">[1]</mark>' in page
    assert '<div class="cite fabricated">cites [7]: fabricated</div>' in page
    # the error claim's own mark stops short of the marker, which keeps its mark
    assert '<mark class="decides" title="c2 misattributed_citation: Berlin is the capital of Germany.">' in page


def test_the_review_page_gets_the_markers(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from judgeflow.calibration.label_app.session import ReviewSession

    items, results = _files(tmp_path)
    s = ReviewSession(results, tmp_path / "labels.jsonl", items=items, reveal=True)
    seen = {}
    for i in range(len(s)):
        item = s.item(i)
        seen[item["id"]] = [(m["text"], m["status"]) for m in item["judge"]["citations"]]
    assert seen == {"ok": [("[1]", "supported")], "mis": [("[1]", "supported"), ("[1]", "misattributed")],
                    "fab": [("[7]", "fabricated")]}
