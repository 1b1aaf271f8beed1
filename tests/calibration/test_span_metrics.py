"""Span metrics (#38): character-overlap precision/recall/F1 against human spans, checked by hand."""

from __future__ import annotations

import json

import pytest

from judgeflow.calibration.agreement import calibrate
from judgeflow.calibration.span_metrics import human_spans, span_metrics
from judgeflow.cli import main
from judgeflow.results import Judgment

# item a: judge 0-10, people 5-15 -> 10 marked, 10 human, 5 shared
# item b: judge nothing, people 0-4 -> 0, 4, 0
# item c: judge 0-3 and 2-6 (one run of 6 characters), people nothing -> 6, 0, 0
# totals 16 marked, 14 human, 5 shared: P = 5/16, R = 5/14, F1 = 2*5/(16+14) = 1/3
PAIRS = [([(0, 10)], [(5, 15)]), ([], [(0, 4)]), ([(0, 3), (2, 6)], [])]


def test_span_scores_match_the_hand_computation() -> None:
    m = span_metrics(PAIRS, n_boot=0)
    assert (m.judge_chars, m.human_chars, m.overlap_chars) == (16, 14, 5)
    assert m.precision == pytest.approx(5 / 16) and m.recall == pytest.approx(5 / 14)
    assert m.f1 == pytest.approx(1 / 3)


def test_intervals_are_seeded_and_hold_the_estimate() -> None:
    pairs = PAIRS * 10
    a, b = span_metrics(pairs, seed=3), span_metrics(pairs, seed=3)
    assert a.f1_ci == b.f1_ci and a.f1_ci is not None
    assert a.f1_ci[0] <= a.f1 <= a.f1_ci[1] and a.f1_ci[0] < a.f1_ci[1]  # type: ignore[operator]
    assert span_metrics(pairs, seed=4).f1_ci != a.f1_ci


def test_human_spans_read_both_forms_and_drop_benign_ones() -> None:
    assert human_spans({"spans": [[0, 4], {"start": 5, "end": 9}]}) == [(0, 4), (5, 9)]
    meta = {"meta": {"spans": [{"start": 0, "end": 9, "labels": ["Unwanted", "Unwanted.Extrinsic"]},
                               {"start": 20, "end": 30, "labels": ["Benign"]}]}}
    assert human_spans(meta) == [(0, 9)]
    assert human_spans({"spans": []}) == [] and human_spans({"id": "x"}) is None
    assert human_spans({"spans": [[5, 2], "x", {"start": "a", "end": 3}]}) == []


def _rows(tmp_path):
    results = [Judgment(id="a", label=1, human_label=1, spans=[{"start": 0, "end": 10, "claim": "c1", "text": ""}]),
               Judgment(id="b", label=0, human_label=1, spans=[]),
               Judgment(id="c", label=1, human_label=0, spans=[{"start": 0, "end": 3, "claim": "c1", "text": ""},
                                                               {"start": 2, "end": 6, "claim": "c2", "text": ""}]),
               Judgment.unscored("d", "boom", human_label=1)]
    rp = tmp_path / "results.jsonl"
    rp.write_text("".join(json.dumps(j.to_row()) + "\n" for j in results))
    labels = [{"id": "a", "label": 1, "spans": [[5, 15]]}, {"id": "b", "label": 1, "spans": [[0, 4]]},
              {"id": "c", "label": 0, "spans": []}, {"id": "d", "label": 1, "spans": [[0, 1]]}]
    lp = tmp_path / "labels.jsonl"
    lp.write_text("".join(json.dumps(r) + "\n" for r in labels))
    return rp, lp


def test_calibrate_reports_span_scores_beside_kappa(tmp_path, capsys) -> None:
    rp, lp = _rows(tmp_path)
    r = calibrate(rp, lp)
    assert r.spans is not None and r.spans.items == 3  # the unscored row is left out
    assert r.spans.f1 == pytest.approx(1 / 3)
    assert calibrate(rp).spans is None  # no human spans anywhere: nothing reported
    assert main(["calibrate", str(rp), "--labels", str(lp)]) == 0
    assert "span precision 0.31" in capsys.readouterr().out


def test_compare_reports_both_runs_span_scores_and_their_paired_difference(tmp_path, capsys) -> None:
    from judgeflow.calibration.comparison import compare

    rp, lp = _rows(tmp_path)
    # run B marks exactly the people's spans: a 5-15, b 0-4, c nothing -> P = R = F1 = 14/14 = 1
    b = [Judgment(id="a", label=1, human_label=1, spans=[{"start": 5, "end": 15, "claim": "c1", "text": ""}]),
         Judgment(id="b", label=1, human_label=1, spans=[{"start": 0, "end": 4, "claim": "c1", "text": ""}]),
         Judgment(id="c", label=0, human_label=0, spans=[]), Judgment.unscored("d", "boom", human_label=1)]
    bp = tmp_path / "b.jsonl"
    bp.write_text("".join(json.dumps(j.to_row()) + "\n" for j in b))
    r = compare(rp, bp, lp, n_boot=200)
    assert r.spans is not None and r.spans.items == 3
    assert r.spans.a.f1 == pytest.approx(1 / 3) and r.spans.a.precision == pytest.approx(5 / 16)
    assert r.spans.b.f1 == pytest.approx(1.0) and r.spans.f1_diff == pytest.approx(2 / 3)
    assert compare(rp, bp).spans is None  # no human spans in the rows or a labels file
    assert main(["compare", str(rp), str(bp), "--labels", str(lp)]) == 0
    out = capsys.readouterr().out
    assert "span precision 0.31" in out and "span F1(B) - F1(A): +0.67" in out
