"""`judgeflow gate`: a bot's new run against its baseline, paired by id (McNemar exact, Wilson intervals).

Runs are written as results files the way `judgeflow run -o` writes them (`Judgment.to_row`), so the
gate reads exactly what CI hands it; one test gates two real offline runs by run id in a store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow.calibration.gate import gate
from judgeflow.calibration.gate_report import MAX_ROWS, gate_markdown
from judgeflow.cli import main
from judgeflow.errors import ConfigError, RunsDiffer
from judgeflow.results import ClaimResult, JudgeVote, Judgment
from judgeflow.testing import assert_rate_below

MODEL = "openai/gpt-4o-mini"


def row(i: int, label: int | None, *, model: str = MODEL, criterion: str = "factual_correctness",
        repeats: list[int] | None = None) -> Judgment:
    error = label == 1
    claim = ClaimResult(id="c1", text=f"The answer to question {i} names the wrong year.",
                        verdict="contradicted" if error else "supported", error=error)
    status = "judged" if label is not None else "unscored"
    votes = [JudgeVote(model=model, role="repeat", label=x, claims=[claim.model_copy(update={"error": x == 1})])
             for x in repeats] if repeats else None
    return Judgment(id=f"q{i:03d}", label=label, status=status, criterion=criterion, model=model, strategy="graph",
                    claims=[claim] if label is not None else [], error=None if label is not None else "timed out",
                    reason="r", repeats=votes)


def write(path: Path, rows: list[Judgment]) -> Path:
    path.write_text("".join(json.dumps(j.to_row()) + "\n" for j in rows), encoding="utf-8")
    return path


def labels(n: int, ones: set[int]) -> list[int]:
    return [1 if i in ones else 0 for i in range(n)]


def runs(tmp_path: Path, base: list[int | None], cand: list[int | None], **kw: object) -> tuple[Path, Path]:
    b = write(tmp_path / "baseline.jsonl", [row(i, x) for i, x in enumerate(base)])
    c = write(tmp_path / "candidate.jsonl", [row(i, x, **kw) for i, x in enumerate(cand)])  # type: ignore[arg-type]
    return c, b


def test_identical_runs_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = labels(200, set(range(0, 200, 7)))
    cand, b = runs(tmp_path, base, base)
    assert main(["gate", str(cand), "--baseline", str(b)]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out and "0 went 0 -> 1" in out
    r = gate(cand, b)
    assert r.passed and r.paired == 200 and r.mcnemar_p == 1.0 and r.rule is None


def test_forty_of_two_hundred_flipped_fails_and_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = labels(200, set(range(20)))
    cand, b = runs(tmp_path, base, labels(200, set(range(60))))
    assert main(["gate", str(cand), "--baseline", str(b)]) == 1
    out = capsys.readouterr().out
    assert "FAIL (paired)" in out and "40 went 0 -> 1" in out
    for i in range(20, 40):  # the terminal shows 20; --json and the Markdown have the rest
        assert f"q{i:03d}" in out
    r = gate(cand, b)
    assert not r.passed and r.rule == "paired" and r.mcnemar_p < 1e-10
    assert [f.id for f in r.got_worse] == [f"q{i:03d}" for i in range(20, 60)]
    assert r.got_worse[0].claim is not None and "wrong year" in r.got_worse[0].claim.text
    assert r.baseline.rate == pytest.approx(0.10) and r.candidate.rate == pytest.approx(0.30)


def test_one_flip_in_two_hundred_is_noise(tmp_path: Path) -> None:
    base = labels(200, set(range(20)))
    cand, b = runs(tmp_path, base, labels(200, set(range(21))))
    assert main(["gate", str(cand), "--baseline", str(b)]) == 0
    r = gate(cand, b)
    assert r.passed and [f.id for f in r.got_worse] == ["q020"] and r.mcnemar_p == 1.0


def test_a_few_flips_both_ways_pass_and_a_one_sided_excess_at_the_margin(tmp_path: Path) -> None:
    # 6 worse, 1 better: two-sided p = 0.125 >= 0.05 -> noise; 9 worse, 0 better: p = 0.0039 -> fail
    base = labels(200, set(range(20)))
    cand, b = runs(tmp_path, base, labels(200, set(range(1, 26))))
    assert gate(cand, b).passed
    cand, b = runs(tmp_path, base, labels(200, set(range(29))))
    assert not gate(cand, b).passed


def test_max_rate_breach_fails_with_the_interval_shown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    both = labels(200, set(range(60)))  # 30% in both runs: the paired test sees nothing
    cand, b = runs(tmp_path, both, both)
    assert main(["gate", str(cand), "--baseline", str(b), "--max-rate", "0.2"]) == 1
    out = capsys.readouterr().out
    assert "FAIL (max_rate)" in out and "30.0% [24.1%, 36.7%]" in out and "lower bound" in out
    r = gate(cand, b, max_rate=0.2)
    assert r.rule == "max_rate" and r.candidate.ci is not None and r.candidate.ci[0] > 0.2


def test_a_rate_above_max_rate_within_its_interval_passes(tmp_path: Path) -> None:
    both = labels(10, {0, 1, 2})  # 3 of 10 = 30%, interval reaches down to about 11%
    cand, b = runs(tmp_path, both, both)
    r = gate(cand, b, max_rate=0.2)
    assert r.passed and "not clearly above" in r.rules[2].text


@pytest.mark.parametrize("change, named", [
    ("items", "different items: 1 id(s) only in"),
    ("model", "judge model: openai/gpt-4o-mini in"),
    ("criterion", "criterion: 200 item(s) judged under another criterion"),
])
def test_runs_that_cannot_be_compared_exit_2_saying_what_differs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str, named: str) -> None:
    base = labels(200, set(range(20)))
    b = write(tmp_path / "baseline.jsonl", [row(i, x) for i, x in enumerate(base)])
    cand_rows = [row(i, x) for i, x in enumerate(base)]
    if change == "items":
        cand_rows[-1] = cand_rows[-1].model_copy(update={"id": "q-new"})
    elif change == "model":
        cand_rows = [row(i, x, model="anthropic/claude-haiku-4-5") for i, x in enumerate(base)]
    else:
        cand_rows = [row(i, x, criterion="reference_faithfulness") for i, x in enumerate(base)]
    cand = write(tmp_path / "candidate.jsonl", cand_rows)
    assert main(["gate", str(cand), "--baseline", str(b)]) == 2
    assert named in capsys.readouterr().err
    with pytest.raises(RunsDiffer) as e:
        gate(cand, b)
    assert any(named in d for d in e.value.differences)


def test_unscored_rows_are_counted_and_max_unscored_applies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base: list[int | None] = labels(200, set(range(20)))  # type: ignore[assignment]
    cand = [None if 100 <= i < 120 else x for i, x in enumerate(base)]  # 20 of 200 unscored: 10%
    c, b = runs(tmp_path, base, cand)
    assert main(["gate", str(c), "--baseline", str(b)]) == 1
    out = capsys.readouterr().out
    assert "FAIL (max_unscored)" in out and "20 unscored" in out
    r = gate(c, b, max_unscored=0.2)
    assert r.passed and r.candidate.unscored == 20 and r.paired == 180 and r.not_paired == 20
    assert r.candidate.scored == 180 and r.candidate.rows == 200  # counted, never read as 0


def test_markdown_goes_to_the_step_summary_sized_for_a_comment_and_neutralised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    base = labels(200, set())
    b = write(tmp_path / "baseline.jsonl", [row(i, x) for i, x in enumerate(base)])
    evil = ClaimResult(id="c1", text="x | <img src=x onerror=alert(1)> @octocat `rm -rf` [link](http://e.vil)\n# heading",
                       verdict="contradicted", error=True)
    c = write(tmp_path / "candidate.jsonl", [row(i, 1).model_copy(update={"claims": [evil]}) for i in range(200)])
    assert main(["gate", str(c), "--baseline", str(b), "--json"]) == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n### judgeflow gate: ❌ fail (paired)")  # appended, as GitHub expects
    assert len(text) < 20_000  # a PR comment takes 65,536 characters
    assert f"{200 - MAX_ROWS} more" in text
    assert "<img" not in text and "@octocat" not in text and "`rm" not in text and "\n# heading" not in text
    assert "x \\| &lt;img" in text


def test_markdown_file_without_github(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    both = labels(50, {1})
    c, b = runs(tmp_path, both, both)
    md = tmp_path / "out" / "gate.md"
    assert main(["gate", str(c), "--baseline", str(b), "--markdown", str(md)]) == 0
    assert md.read_text().startswith("### judgeflow gate: ✅ pass")


def test_json_is_the_typed_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c, b = runs(tmp_path, labels(200, set(range(20))), labels(200, set(range(60))))
    main(["gate", str(c), "--baseline", str(b), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is False and data["rule"] == "paired" and len(data["got_worse"]) == 40
    assert data["candidate"]["ci"][0] == pytest.approx(0.241, abs=1e-3)


def test_unstable_items_are_marked_when_rows_carry_repeats(tmp_path: Path) -> None:
    base = [row(i, 0, repeats=[0, 0]) for i in range(100)]
    cand = [row(i, 1 if i < 3 else 0, repeats=[1, 0] if i < 2 else ([1, 1] if i == 2 else [0, 0])) for i in range(100)]
    r = gate(cand, base)
    assert r.repeats and r.unstable == ["q000", "q001"]
    assert [f.id for f in r.got_worse] == ["q002"] and [f.id for f in r.unstable_flips] == ["q000", "q001"]
    assert "2 flip(s) on items the judge itself flips on (2 0 -> 1, 0 1 -> 0) were set aside as unstable" in r.verdict
    assert "judge stability: 2 item(s)" in gate_markdown(r) and "2 flip(s) on them set aside" in gate_markdown(r)


def test_unstable_flips_are_not_regressions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """12 items went 0 -> 1, but the judge, given the candidate's answers again, flips on 10 of them."""
    base = labels(100, set())
    cand_labels = labels(100, set(range(12)))
    again_labels = labels(100, {10, 11})
    c, b = runs(tmp_path, base, cand_labels)
    again = write(tmp_path / "again.jsonl", [row(i, x) for i, x in enumerate(again_labels)])
    assert not gate(c, b).passed  # without the retest the 12 look like a regression
    r = gate(c, b, stability=[again])
    assert r.passed and len(r.got_worse) == 2 and len(r.unstable_flips) == 10 and len(r.unstable) == 10
    assert "10 flip(s) on items the judge itself flips on" in r.verdict
    assert main(["gate", str(c), "--baseline", str(b), "--stability", str(again)]) == 0
    assert "set aside" in capsys.readouterr().out
    with pytest.raises(ConfigError, match="fewer than 3 repeats"):
        gate(c, b, repeats=3)


def test_gate_by_run_id_in_a_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Two real offline runs of the same items, gated by their run ids; the second is served from the cache."""
    items = Path(__file__).resolve().parents[2] / "examples" / "qa_items.jsonl"
    monkeypatch.chdir(tmp_path)
    ids = []
    for out in ("a.jsonl", "b.jsonl"):
        assert main(["run", str(items), "-o", out, "--store", "s.sqlite", "--no-progress", "--json"]) == 0
        ids.append(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"])
    assert main(["gate", ids[1], "--baseline", ids[0], "--store", "s.sqlite", "--max-unscored", "0.2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["candidate"]["name"] == f"run {ids[1]}" and data["candidate"]["invalid"] == 1
    assert data["candidate"]["cached"] == data["candidate"]["rows"] - 1  # every judged row served from the cache
    assert main(["gate", "no-such-run", "--baseline", ids[0], "--store", "s.sqlite"]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err


def test_assert_rate_below_uses_the_upper_bound() -> None:
    clean20 = [row(i, 0) for i in range(20)]
    with pytest.raises(AssertionError, match=r"upper bound of its 95% interval, 16.1%, is not below 5.0%"):
        assert_rate_below(clean20, 0.05)  # 0 of 20 is no proof of a rate under 5%
    assert assert_rate_below([row(i, 0) for i in range(200)], 0.05).ci[1] < 0.05  # type: ignore[index]
    with pytest.raises(AssertionError, match=r"q000: \[contradicted\] The answer to question 0"):
        assert_rate_below([row(0, 1), *(row(i, 0) for i in range(1, 400))], 0.001)
    with pytest.raises(AssertionError, match="1 unscored and 0 invalid of 201 rows"):
        assert_rate_below([row(200, None), *(row(i, 0) for i in range(200))], 0.05)
