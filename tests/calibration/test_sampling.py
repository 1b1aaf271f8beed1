"""sample: stratified, seeded, reproducible; judge labels joined from results; labels hidden."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from judgeflow.calibration.sampling import allocate, sample_file
from judgeflow.cli import main
from judgeflow.errors import ConfigError, InvalidItemError
from judgeflow.results import Judgment


def make_items(path: Path, n: int = 100) -> Path:
    rows = [{"id": f"q{i}", "question": f"Q{i}?", "reference": f"R{i}", "answer": f"A{i}",
             "label": int(i % 4 == 0), "dataset": "small" if i < 10 else "big", "meta": {"kind": "k" + str(i % 2)}}
            for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def make_results(path: Path, n: int = 100, *, skip: int = 0) -> Path:
    rows = [Judgment(id=f"q{i}", label=None if i % 10 == 9 else int(i % 3 == 0),
                     status="unscored" if i % 10 == 9 else "judged", criterion="factual_correctness").to_row()
            for i in range(skip, n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.mark.parametrize(("sizes", "n", "equal", "expected"), [
    ({"a": 90, "b": 10}, 20, False, {"a": 18, "b": 2}),
    ({"a": 90, "b": 10}, 20, True, {"a": 10, "b": 10}),
    ({"a": 95, "b": 3, "c": 2}, 10, True, {"a": 5, "b": 3, "c": 2}),  # small strata taken whole
    ({"a": 99, "b": 1}, 10, False, {"a": 9, "b": 1}),               # at least one per stratum
    ({"a": 3, "b": 2}, 50, False, {"a": 3, "b": 2}),                # n larger than the pool
    ({"a": 1, "b": 1, "c": 1}, 2, False, {"a": 1, "b": 1, "c": 0}),
])
def test_allocate(sizes: dict[str, int], n: int, equal: bool, expected: dict[str, int]) -> None:
    got = allocate(sizes, n, equal=equal)
    assert got == expected
    assert sum(got.values()) == min(n, sum(sizes.values()))


def test_stratified_by_a_field_is_proportional_and_reproducible(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl")
    s = sample_file(items, 20, tmp_path / "a.jsonl", stratify_by=["dataset"], seed=3)
    rows = read(tmp_path / "a.jsonl")
    assert s.n == len(rows) == 20 and len({r["id"] for r in rows}) == 20
    assert Counter(r["dataset"] for r in rows) == {"big": 18, "small": 2}
    assert all("label" not in r for r in rows) and s.labels_dropped
    sample_file(items, 20, tmp_path / "b.jsonl", stratify_by=["dataset"], seed=3)
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    sample_file(items, 20, tmp_path / "c.jsonl", stratify_by=["dataset"], seed=4)
    assert (tmp_path / "a.jsonl").read_text() != (tmp_path / "c.jsonl").read_text()


def test_two_fields_and_dotted_paths(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl")
    s = sample_file(items, 40, tmp_path / "s.jsonl", stratify_by=["meta.kind", "label"], keep_labels=True)
    rows = read(tmp_path / "s.jsonl")
    assert {st.key for st in s.strata} == {"k0 | 0", "k0 | 1", "k1 | 0"}
    counts = Counter((r["meta"]["kind"], r["label"]) for r in rows)
    assert counts == {("k0", 0): 10, ("k0", 1): 10, ("k1", 0): 20}  # 25/25/50 of 100 rows


def test_stratify_by_judge_label_attaches_the_verdict(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl")
    results = make_results(tmp_path / "results.jsonl", skip=5)
    s = sample_file(items, 19, tmp_path / "s.jsonl", results=results, equal=True)
    assert s.stratify_by == ["judge_label"] and s.without_results == 5 and s.pool == 95
    rows = read(tmp_path / "s.jsonl")
    got = Counter("unscored" if r["judge"]["label"] is None else str(r["judge"]["label"]) for r in rows)
    assert got == {"0": 7, "1": 6, "unscored": 6}  # equal shares, the remainder by largest remainder
    assert all("judge_label" not in r for r in rows)


def test_bad_requests(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl")
    results = make_results(tmp_path / "results.jsonl")
    with pytest.raises(ConfigError, match="--results"):
        sample_file(items, 5, tmp_path / "s.jsonl", stratify_by=["judge_label"])
    with pytest.raises(InvalidItemError, match="this is a results file"):
        sample_file(results, 5, tmp_path / "s.jsonl")
    with pytest.raises(ConfigError, match="at least 1"):
        sample_file(items, 0, tmp_path / "s.jsonl")


def test_cli_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = make_items(tmp_path / "items.jsonl")
    out = tmp_path / "to_label.jsonl"
    assert main(["sample", str(items), "-n", "10", "-o", str(out), "--stratify-by", "dataset", "--seed", "1"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "sampled 10 of 100 rows" in text and "judgeflow label" in text
    assert len(read(out)) == 10
    assert main(["sample", str(items), "-n", "5", "-o", str(out), "--stratify-by", "judge_label"]) == 2


def test_invalid_rows_get_their_own_stratum_and_the_labeller_does_not_ask_about_them(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from judgeflow.calibration.labeller import label_file

    items = make_items(tmp_path / "items.jsonl", 12)
    rows = [Judgment(id=f"q{i}", label=None if i < 4 else int(i % 2), criterion=None if i < 4 else "factual_correctness",
                     status="invalid" if i < 4 else "judged").to_row() for i in range(12)]
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    s = sample_file(items, 12, tmp_path / "s.jsonl", results=tmp_path / "r.jsonl")
    assert {st.key: st.size for st in s.strata} == {"invalid": 4, "0": 4, "1": 4}
    buf = io.StringIO()
    keys = iter(["1"] * 12 + ["q"])
    summary = label_file(tmp_path / "s.jsonl", input_fn=lambda p: next(keys), console=Console(file=buf, width=200))
    out = buf.getvalue()
    assert summary.labelled == 8 and summary.invalid == 4 and summary.remaining == 0  # the 4 invalid never asked
    assert "4 item(s) not asked: the judge found their input invalid" in out and "None" not in out


def test_results_of_another_file_are_named_as_the_cause(tmp_path) -> None:
    """Before: "no rows to sample that have a result", which sent a user looking at the items."""
    import json

    from judgeflow.calibration.sampling import sample_file
    from judgeflow.errors import InvalidItemError

    items, results = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{k}", "answer": "a", "reference": "r"}) + "\n" for k in range(3)))
    results.write_text(json.dumps({"id": "other", "label": 0, "status": "judged"}) + "\n")
    with pytest.raises(InvalidItemError, match=r"none of its 3 rows has a result in .*results.jsonl \(no id in common"):
        sample_file(items, 2, tmp_path / "out.jsonl", results=results)
