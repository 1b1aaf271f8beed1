"""Several labellers: labels carry who gave them, an overlap set for a second person, the human ceiling."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from sklearn.metrics import cohen_kappa_score

from judgeflow import Judge, read_items
from judgeflow.calibration.agreement import calibrate
from judgeflow.calibration.annotators import read_annotations
from judgeflow.calibration.labeller import label_file
from judgeflow.calibration.overlap import overlap_file
from judgeflow.errors import ConfigError, InvalidItemError

SAMPLE = Path(__file__).parents[2] / "examples" / "data" / "factual_qa_sample.jsonl"


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def results():
    return Judge("baseline/lexical").judge_many(read_items(SAMPLE))


def two_labellers(tmp_path: Path) -> tuple[Path, Path, dict[str, int], dict[str, int]]:
    """alice: the shipped labels; bob: an overlap of 24 drawn from alice's file, labelled by a rule that
    disagrees with her on every fifth item (a second label set made here, not shipped data)."""
    alice = write(tmp_path / "alice.jsonl", [{**r, "labelled_by": "alice"} for r in rows_of(SAMPLE)])
    overlap_file(alice, 24, tmp_path / "bob.jsonl", seed=3)
    original = {r["id"]: r["label"] for r in rows_of(SAMPLE)}
    bob_rows = rows_of(tmp_path / "bob.jsonl")
    assert all("label" not in r and "labelled_by" not in r for r in bob_rows)  # a blind copy
    bob = {r["id"]: (1 - original[r["id"]] if k % 5 == 0 else original[r["id"]]) for k, r in enumerate(bob_rows)}
    write(tmp_path / "bob.jsonl", [{**r, "label": bob[r["id"]], "labelled_by": "bob"} for r in bob_rows])
    return alice, tmp_path / "bob.jsonl", original, bob


def test_two_labellers_give_the_human_ceiling_beside_the_judge(tmp_path, results):
    alice, bob_file, a, b = two_labellers(tmp_path)
    report = calibrate(results, labels=[alice, bob_file], n_boot=500)
    assert report.labellers == ["alice", "bob"]
    assert report.n == 48  # the judge against the first labeller, on all her items
    (h,) = report.humans
    ids = list(b)
    assert (h.a, h.b, h.overlap) == ("alice", "bob", 24)
    assert h.kappa == pytest.approx(cohen_kappa_score([a[i] for i in ids], [b[i] for i in ids]))
    assert h.kappa_ci is not None and h.kappa_ci[0] <= h.kappa <= h.kappa_ci[1]
    judged = {j.id: j.label for j in results}
    assert h.judge_kappa_b == pytest.approx(cohen_kappa_score([b[i] for i in ids], [judged[i] for i in ids]))
    assert "alice vs bob kappa" in h.text and "24 items both labelled" in h.text


def test_one_file_with_two_labellers_reads_the_same(tmp_path, results):
    alice, bob_file, _, _ = two_labellers(tmp_path)
    both = write(tmp_path / "both.jsonl", rows_of(alice) + rows_of(bob_file))
    one = calibrate(results, labels=both, n_boot=200).humans[0]
    two = calibrate(results, labels=[alice, bob_file], n_boot=200).humans[0]
    assert (one.overlap, one.kappa) == (two.overlap, two.kappa)


def test_one_labeller_twice_on_an_id_is_an_error(tmp_path):
    f = write(tmp_path / "l.jsonl", [{"id": "a", "label": 1, "labelled_by": "x"}, {"id": "a", "label": 0,
                                                                                  "labelled_by": "x"}])
    with pytest.raises(InvalidItemError, match="labelled twice by 'x'"):
        read_annotations(f)


def test_a_file_without_names_is_its_stem(tmp_path):
    f = write(tmp_path / "carol.jsonl", [{"id": "a", "label": 1}])
    assert read_annotations(f).labellers == ["carol"]


def test_calibrate_cli_prints_the_ceiling(tmp_path, results, capsys):
    from judgeflow.cli import main

    alice, bob_file, _, _ = two_labellers(tmp_path)
    res = write(tmp_path / "res.jsonl", [j.to_row() for j in results])
    assert main(["calibrate", str(res), "--labels", str(alice), "--labels", str(bob_file), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "human ceiling:" in out and "kappa alice vs bob" in out


def test_label_as_name_writes_who_labelled(tmp_path):
    f = write(tmp_path / "s.jsonl", [{"id": f"q{i}", "question": "Q?", "answer": "A", "reference": "R"}
                                     for i in range(2)])
    keys = iter(["1", "0"])
    label_file(f, input_fn=lambda _: next(keys), console=Console(file=io.StringIO()), name="dana")
    assert [(r["label"], r["labelled_by"]) for r in rows_of(f)] == [(1, "dana"), (0, "dana")]
    with pytest.raises(ConfigError, match="holds labels by dana; label your own copy"):
        label_file(f, input_fn=lambda _: "q", console=Console(file=io.StringIO()), name="eve")


def test_label_does_not_ask_about_invalid_rows(tmp_path):
    f = write(tmp_path / "s.jsonl", [
        {"id": "ok", "question": "Q?", "answer": "A", "judge": {"label": 0, "status": "judged"}},
        {"id": "bad", "question": "Q?", "answer": "A", "judge": {"label": None, "status": "invalid"}}])
    asked = []
    buf = io.StringIO()

    def ask(_: str) -> str:
        asked.append(buf.getvalue().count("item "))
        return "1"

    s = label_file(f, input_fn=ask, console=Console(file=buf, width=200))
    assert len(asked) == 1 and s.remaining == 0 and s.invalid == 1


def test_overlap_is_stratified_by_the_first_label(tmp_path):
    f = write(tmp_path / "a.jsonl", [{"id": f"q{i}", "answer": "A", "label": int(i < 3)} for i in range(20)])
    s = overlap_file(f, 6, tmp_path / "b.jsonl")
    assert s.n == 6 and set(s.by_label) == {"0", "1"} and s.by_label["1"] >= 1
