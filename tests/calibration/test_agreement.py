"""calibrate: statistics checked against scikit-learn on fixed data, edge cases, labels files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import (
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    precision_score,
    recall_score,
)

from judgeflow.calibration.agreement import agreement, bootstrap_indices, calibrate, kappa_of
from judgeflow.calibration.labels import read_labels
from judgeflow.cli import main
from judgeflow.errors import InvalidItemError
from judgeflow.results import ClaimResult, Judgment

# 20 fixed pairs: 6 false alarms, 2 misses, 7 true positives, 5 true negatives
HUMAN = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]
JUDGE = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]


def judgments(human: list[int | None], judge: list[int | None], **extra: object) -> list[Judgment]:
    out = []
    for i, (h, j) in enumerate(zip(human, judge)):
        claims = [ClaimResult(id="c1", text=f"claim {i}", verdict="contradicted" if j == 1 else "supported",
                              error=j == 1)]
        out.append(Judgment(id=f"q{i}", label=j, status="judged" if j is not None else "unscored",
                            human_label=h, criterion="reference_faithfulness", claims=claims,
                            extra={"dataset": "a" if i % 2 else "b", **extra}))
    return out


def write_rows(path: Path, rows: list[Judgment]) -> Path:
    path.write_text("".join(json.dumps(j.to_row()) + "\n" for j in rows))
    return path


def test_statistics_match_sklearn() -> None:
    r = calibrate(judgments(HUMAN, JUDGE))
    assert r.n == 20
    assert r.kappa == pytest.approx(cohen_kappa_score(HUMAN, JUDGE))
    assert r.confusion.matrix == confusion_matrix(HUMAN, JUDGE, labels=[0, 1]).tolist()
    assert r.precision == pytest.approx(precision_score(HUMAN, JUDGE))
    assert r.recall == pytest.approx(recall_score(HUMAN, JUDGE))
    assert r.f1 == pytest.approx(f1_score(HUMAN, JUDGE))
    assert r.accuracy == pytest.approx(np.mean(np.array(HUMAN) == np.array(JUDGE)))
    assert (r.false_alarms, r.misses) == (6, 2)
    assert r.false_alarm_share == pytest.approx(6 / 8) and r.miss_share == pytest.approx(2 / 8)
    assert "6 of 8 disagreements are false alarms" in r.diagnosis
    assert "factual_correctness" in r.diagnosis  # the criterion-specific advice
    assert any("only 20 items" in w for w in r.warnings)
    assert {d.id for d in r.disagreements} == {f"q{i}" for i in range(20) if HUMAN[i] != JUDGE[i]}
    fa = next(d for d in r.disagreements if d.direction == "false_alarm")
    assert fa.deciding_claim is not None and fa.deciding_claim.verdict == "contradicted"


def test_vectorised_kappa_matches_sklearn_on_resamples() -> None:
    h, j = np.array(HUMAN), np.array(JUDGE)
    idx = bootstrap_indices(len(h), seed=3, n_boot=50)
    fast = kappa_of(h[idx], j[idx])
    for row, k in zip(idx, fast):
        hh, jj = h[row], j[row]
        if len(set(hh) | set(jj)) == 1:
            assert math.isnan(k)
        else:
            assert k == pytest.approx(cohen_kappa_score(hh, jj, labels=[0, 1]))


def test_kappa_interval_is_seeded_and_brackets_kappa() -> None:
    a = agreement(HUMAN, JUDGE, seed=7)
    assert a.kappa_ci == agreement(HUMAN, JUDGE, seed=7).kappa_ci
    assert a.kappa_ci != agreement(HUMAN, JUDGE, seed=8).kappa_ci
    lo, hi = a.kappa_ci
    assert lo < a.kappa < hi
    # ten times the data: a narrower interval, and there the table's posterior and an independent percentile
    # bootstrap with sklearn over resampled items agree (they part only on few items, where the bootstrap
    # covers too rarely: benchmarks/interval_coverage.py)
    big = agreement(HUMAN * 10, JUDGE * 10, seed=7)
    assert big.kappa_ci[1] - big.kappa_ci[0] < hi - lo
    assert not any("only" in w for w in big.warnings)
    from fakes.kappas import (
        resampled_kappas,  # every resample at once; spot-checked against sklearn
    )

    kappas, defined = resampled_kappas(HUMAN * 10, JUDGE * 10, bootstrap_indices(200, seed=7, n_boot=1000))
    assert defined.all()
    ks = kappas
    assert big.kappa_ci == pytest.approx(tuple(np.percentile(ks, [2.5, 97.5])), abs=0.04)


def test_all_agree_with_both_classes_is_kappa_one() -> None:
    r = calibrate(judgments(HUMAN, HUMAN))
    assert r.kappa == 1.0 == cohen_kappa_score(HUMAN, HUMAN)
    assert r.false_alarm_share is None and r.n_disagreements == 0
    assert "agrees with every human label" in r.diagnosis


def test_all_agree_on_one_class_says_kappa_is_undefined() -> None:
    r = calibrate(judgments([1] * 8, [1] * 8))
    assert r.kappa is None and r.kappa_ci is None
    assert "undefined" in (r.kappa_note or "")
    assert r.accuracy == 1.0 and r.precision == 1.0 and r.recall == 1.0
    assert any("one class" in w for w in r.warnings)


def test_one_human_class_with_disagreements() -> None:
    human, judge = [0] * 10, [0] * 7 + [1] * 3
    r = calibrate(judgments(human, judge))
    assert cohen_kappa_score(human, judge) == 0.0  # what sklearn says: meaningless here
    assert r.kappa is None and "one class" in (r.kappa_note or "")
    assert r.recall is None and r.precision == 0.0 and r.f1 is None
    assert r.false_alarms == 3


def test_constant_judge_gets_kappa_zero_with_a_note() -> None:
    r = calibrate(judgments(HUMAN, [1] * 20))
    assert r.kappa == pytest.approx(cohen_kappa_score(HUMAN, [1] * 20)) == 0.0
    assert "every item 1" in (r.kappa_note or "")


def test_unscored_and_invalid_are_excluded_and_counted_apart() -> None:
    rows = judgments(HUMAN + [1, 0], JUDGE + [None, None])
    rows[-1] = rows[-1].model_copy(update={"status": "invalid"})
    rows.append(Judgment(id="nolabel", label=1, human_label=None))
    r = calibrate(rows)
    assert (r.n, r.unscored, r.invalid, r.unlabelled, r.total) == (20, 1, 1, 1, 23)
    assert r.kappa == pytest.approx(cohen_kappa_score(HUMAN, JUDGE))


def test_per_group_matches_sklearn_on_each_group() -> None:
    rows = judgments(HUMAN, JUDGE)
    r = calibrate(rows, by="dataset")
    assert [g.group for g in r.groups] == ["a", "b"]
    for g in r.groups:
        idx = [i for i in range(20) if (i % 2 == 1) == (g.group == "a")]
        h, j = [HUMAN[i] for i in idx], [JUDGE[i] for i in idx]
        assert g.n == len(idx)
        assert g.confusion.matrix == confusion_matrix(h, j, labels=[0, 1]).tolist()
        assert g.kappa == pytest.approx(cohen_kappa_score(h, j))
    nested = calibrate(judgments(HUMAN, JUDGE, meta={"kind": "x"}), by="meta.kind")
    assert [g.group for g in nested.groups] == ["x"]
    typo = calibrate(rows, by="datset")
    assert [g.group for g in typo.groups] == ["(none)"]
    assert any("no result has a field 'datset'" in w and "dataset" in w for w in typo.warnings)


def test_labels_file_in_true_false_form_with_ids_missing_on_both_sides(tmp_path: Path) -> None:
    rows = judgments([None] * 20, JUDGE)
    results = write_rows(tmp_path / "results.jsonl", rows)
    lines = ["id,label"] + [f"q{i},{'true' if h else 'false'}" for i, h in enumerate(HUMAN) if i != 3]
    lines += ["ghost,yes", "q3,"]  # an id with no result; q3 left unlabelled
    (tmp_path / "labels.csv").write_text("\n".join(lines) + "\n")
    r = calibrate(results, tmp_path / "labels.csv")
    keep = [i for i in range(20) if i != 3]
    assert r.n == 19 and r.unlabelled == 1 and r.only_in_labels == ["ghost"]
    assert r.kappa == pytest.approx(cohen_kappa_score([HUMAN[i] for i in keep], [JUDGE[i] for i in keep]))
    assert any("ghost" in w for w in r.warnings)
    assert r.label_source.endswith("labels.csv")


@pytest.mark.parametrize(("content", "needle"), [
    ('{"id": "q1", "label": 1}\n{"id": "q2", "label": "maybe"}\n', "labels.jsonl:2: item 'q2': label 'maybe'"),
    ('{"id": "q1", "label": 2}\n', "labels.jsonl:1:"),
    ('{"label": 1}\n', "labels.jsonl:1: row has no 'id'"),
    ('{"id": "q1", "label": 1}\n{"id": "q1", "label": 0}\n', "labelled twice"),
    ('{"id": "q1", "verdict": 1}\n', "no label column"),
    ('{"id": "q1", "label": 1\n', "labels.jsonl:1: not valid JSON"),
])
def test_bad_labels_name_file_line_and_field(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "labels.jsonl"
    p.write_text(content)
    with pytest.raises(InvalidItemError, match=None) as e:
        read_labels(p)
    assert needle in str(e.value)


def test_bad_label_error_carries_field(tmp_path: Path) -> None:
    p = tmp_path / "labels.jsonl"
    p.write_text('{"id": "q9", "human_label": "perhaps"}\n')
    with pytest.raises(InvalidItemError) as e:
        read_labels(p)
    assert (e.value.line, e.value.field, e.value.item_id) == (1, "human_label", "q9")


def test_nothing_to_calibrate_is_an_error_not_a_zero() -> None:
    with pytest.raises(InvalidItemError, match="no result has a human label"):
        calibrate(judgments([None] * 3, [1, 0, 1]))
    with pytest.raises(InvalidItemError, match="all unscored or invalid"):
        calibrate(judgments([1, 0], [None, None]))


def test_duplicate_result_ids_are_refused() -> None:
    rows = judgments(HUMAN[:2], JUDGE[:2])
    with pytest.raises(InvalidItemError, match="appears twice"):
        calibrate(rows + rows[:1])


def test_cli_prints_report_json_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_rows(tmp_path / "r.jsonl", judgments(HUMAN, JUDGE))
    assert main(["calibrate", str(results), "--by", "dataset"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "false alarms" in out and "6 of 8 disagreements are false alarms" in out
    html = tmp_path / "report.html"
    assert main(["calibrate", str(results), "--json", "--html", str(html)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["confusion"] == {"tn": 5, "fp": 6, "fn": 2, "tp": 7}
    assert html.read_text().startswith("<!DOCTYPE html>")


def test_cli_bad_labels_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_rows(tmp_path / "r.jsonl", judgments(HUMAN, JUDGE))
    (tmp_path / "l.jsonl").write_text('{"id": "q1", "label": "sure"}\n')
    assert main(["calibrate", str(results), "--labels", str(tmp_path / "l.jsonl")]) == 2
    assert "l.jsonl:1" in capsys.readouterr().err


def test_offline_results_on_the_shipped_labelled_sample(tmp_path: Path) -> None:
    from fakes.labelled import factual_rows

    from judgeflow import Judge

    items = factual_rows(48)  # examples/data/factual_qa_sample.jsonl: labelled rows of two data sets
    rows = Judge("baseline/lexical", criterion="reference_faithfulness").judge_many(items)
    r = calibrate(rows, by="dataset")
    human = [it["label"] for it in items]
    judge = [j.label for j in rows]
    assert r.n == 48 and len({it["dataset"] for it in items}) == 2
    assert r.kappa == pytest.approx(cohen_kappa_score(human, judge))


def test_bad_results_files_name_file_line_and_field(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    good = json.dumps(Judgment(id="q1", label=1, human_label=0).to_row())
    p.write_text(good + "\n" + good.replace('"id": "q1", "label": 1', '"id": "q2", "label": 2') + "\n")
    with pytest.raises(InvalidItemError) as e:
        calibrate(p)
    assert "r.jsonl:2:" in str(e.value) and e.value.field == "label"
    p.write_text('{"id": "q1", "answer": "A", "label": 1}\n')  # an items file, not results
    with pytest.raises(InvalidItemError, match=r"r.jsonl:1: not a judgeflow result row"):
        calibrate(p)


def test_diagnosis_never_prints_minus_zero():
    from judgeflow.calibration.agreement import Agreement, diagnose

    text = diagnose(Agreement(n=3, kappa=0.4, kappa_ci=(-0.0001, 1.0)))
    assert "95% CI 0.00 to 1.00" in text and "-0.00" not in text


def test_tiny_samples_get_no_collapsed_interval_in_any_report(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from judgeflow.calibration.agreement import MIN_CI_N, kappa_text

    eight = calibrate(judgments([0, 1] * 4, [0, 1] * 4))  # all agree: a bootstrap says [1.00, 1.00]
    assert eight.kappa == 1.0 and eight.kappa_ci is None
    assert f"CI not meaningful under N={MIN_CI_N}" in (eight.kappa_ci_note or "")
    assert kappa_text(eight).startswith("1.00 (CI not meaningful") and "[1.00, 1.00]" not in eight.diagnosis
    two = calibrate(judgments([0, 1], [0, 0]))  # a bootstrap says [0.00, 0.00]
    assert two.kappa_ci is None and "under N=10" in kappa_text(two)
    # the same words in the terminal, the HTML and --json
    results = write_rows(tmp_path / "r.jsonl", judgments([0, 1] * 4, [0, 1] * 4))
    html = tmp_path / "r.html"
    assert main(["calibrate", str(results), "--html", str(html)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "CI not meaningful under N=10" in out and "[1.00, 1.00]" not in out
    assert "CI not meaningful under N=10" in html.read_text() and "[1.00, 1.00]" not in html.read_text()
    assert main(["calibrate", str(results), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kappa_ci"] is None and "under N=10" in data["kappa_ci_note"]


def test_all_agreeing_larger_sample_gets_a_lower_bound_below_one() -> None:
    r = calibrate(judgments([0, 1] * 6, [0, 1] * 6))  # 12 items, all agree
    assert r.kappa == 1.0 and r.kappa_ci is not None
    lo, hi = r.kappa_ci
    assert hi == 1.0 and 0.3 < lo < 0.9, r.kappa_ci  # Wilson's 95% lower bound for 12/12 is 0.76 -> kappa 0.52
    assert lo == pytest.approx((0.7575 - 0.5) / 0.5, abs=0.01)
    assert "Wilson" in (r.kappa_ci_note or "")


def test_constant_judge_gets_no_interval() -> None:
    r = calibrate(judgments(HUMAN, [1] * 20))
    assert r.kappa_ci is None and "same label" in (r.kappa_ci_note or "")


def test_a_kappa_that_rounds_to_zero_is_never_printed_as_minus_zero() -> None:
    from judgeflow.calibration.agreement import Agreement, diagnose, kappa_text, strength

    a = Agreement(n=40, kappa=-0.003, kappa_ci=(-0.3, 0.29))
    assert kappa_text(a) == "0.00 [-0.30, 0.29]"
    assert "Kappa 0.00 (slight agreement" in diagnose(a) and "-0.00" not in diagnose(a)
    assert strength(-0.003) == "slight" and strength(-0.02) == "worse than chance"


def test_labels_that_match_no_result_say_so_with_both_sides_ids(tmp_path: Path) -> None:
    (tmp_path / "l.jsonl").write_text("".join(json.dumps({"id": f"other-{k}", "label": k % 2}) + "\n" for k in range(5)))
    with pytest.raises(InvalidItemError) as e:
        calibrate(judgments(HUMAN, JUDGE), labels=tmp_path / "l.jsonl")
    msg = str(e.value)
    assert "none of the 5 labelled id(s) is a result id" in msg
    assert "'other-0', 'other-1', 'other-2', ..." in msg and "results: 'q0'" in msg
