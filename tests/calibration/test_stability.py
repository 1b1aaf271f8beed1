"""Judge stability (test-retest): flip rate, kappa between repeats, the claims that flip; its use by
`calibrate` (beside the kappa with people) and `sample --focus unstable`.

The end-to-end tests judge the same items twice with `judgeflow run` against the in-repo
schema-following fake (tests/fakes/schema_provider.py): with different seeds its verdicts are
random, so the judge is pure noise; with the same seed it is perfectly stable.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from fakes import SchemaProvider

from judgeflow.calibration.agreement import calibrate
from judgeflow.calibration.stability import merged, stability
from judgeflow.cli import main
from judgeflow.errors import ConfigError, RunsDiffer
from judgeflow.results import ClaimResult, JudgeVote, Judgment


def row(i: int, label: int | None, *, human: int | None = None, repeats: list[int | None] | None = None,
        model: str = "openai/gpt-4o-mini", cached: bool = False) -> Judgment:
    def claim(x: int | None) -> list[ClaimResult]:
        return [ClaimResult(id="c1", text=f"claim of item {i}", verdict="contradicted" if x else "supported",
                            error=x == 1)]

    votes = [JudgeVote(model=model, role="repeat", label=x, claims=claim(x)) for x in repeats] if repeats else None
    return Judgment(id=f"q{i:03d}", label=label, status="judged" if label is not None else "unscored",
                    criterion="factual_correctness", model=model, strategy="graph", claims=claim(label),
                    human_label=human, repeats=votes, cached=cached)


def write(path: Path, rows: list[Judgment]) -> Path:
    path.write_text("".join(json.dumps(j.to_row()) + "\n" for j in rows), encoding="utf-8")
    return path


def test_identical_runs_have_no_flips_and_kappa_one(tmp_path: Path) -> None:
    labels = [i % 3 == 0 for i in range(60)]
    a = write(tmp_path / "a.jsonl", [row(i, int(x)) for i, x in enumerate(labels)])
    b = write(tmp_path / "b.jsonl", [row(i, int(x)) for i, x in enumerate(labels)])
    r = stability([a, b])
    assert (r.flipped, r.flip_rate, r.kappa, r.repeats, r.compared) == (0, 0.0, 1.0, 2, 60)
    assert r.unstable == [] and "same verdict on all 60 items" in r.verdict


def test_random_verdicts_flip_often_and_kappa_is_near_zero(tmp_path: Path) -> None:
    rng = random.Random(7)
    a = [row(i, rng.randint(0, 1)) for i in range(200)]
    b = [row(i, rng.randint(0, 1)) for i in range(200)]
    r = stability([a, b])
    assert 0.4 < (r.flip_rate or 0) < 0.6
    assert r.kappa is not None and abs(r.kappa) < 0.15 and r.kappa_ci is not None and r.kappa_ci[0] < 0 < r.kappa_ci[1]
    flip = r.unstable[0]
    assert flip.flipped and len(flip.verdicts) == 2
    assert [v.claim.text if v.claim else None for v in flip.verdicts].count(f"claim of item {int(flip.id[1:])}") == 1


def test_one_run_with_repeats_three_repeats_use_fleiss() -> None:
    rows = [row(i, 1 if i < 30 else 0, repeats=[1, 1, 1] if i < 30 else [0, 0, 0]) for i in range(100)]
    rows[0] = row(0, 1, repeats=[1, 0, 1])
    rows[50] = row(50, 0, repeats=[0, None, 1])
    r = stability(rows)
    assert r.repeats == 3 and r.kappa_method.startswith("Fleiss") and r.unscored == 1
    assert r.flipped == 2 and sorted(r.unstable_ids) == ["q000", "q050"]
    assert r.kappa_items == 99 and r.kappa is not None and 0.9 < r.kappa < 1 and r.kappa_ci is not None
    assert r.unstable[0].disagreement == pytest.approx(2 / 3)


def test_a_single_run_without_repeats_is_refused() -> None:
    with pytest.raises(ConfigError, match="stability needs repeats"):
        stability([row(i, 0) for i in range(5)])


def test_runs_of_other_items_or_judges_are_refused(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", [row(i, 0) for i in range(5)])
    b = write(tmp_path / "b.jsonl", [row(i, 0, model="openai/gpt-4o") for i in range(5)])
    with pytest.raises(RunsDiffer, match="judge model"):
        stability([a, b])
    assert main(["stability", str(a), str(b)]) == 2


def test_a_cached_repeat_is_called_out(tmp_path: Path) -> None:
    a = [row(i, i % 2) for i in range(40)]
    b = [row(i, i % 2, cached=True) for i in range(40)]
    assert any("served from the response cache" in w and "--no-cache" in w for w in stability([a, b]).warnings)


def test_merged_rows_feed_gate_calibrate_and_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`stability A B -o M` writes rows with repeats; calibrate puts the test-retest kappa beside the
    human kappa; sample --focus unstable offers exactly the flipping items."""
    human = [1 if i < 40 else 0 for i in range(100)]
    a_lab = [1 if i < 45 else 0 for i in range(100)]  # 5 false alarms (q040-q044)
    b_lab = list(a_lab)
    for i in (40, 41, 60):  # the judge flips on these between the runs
        b_lab[i] = 1 - b_lab[i]
    a = write(tmp_path / "a.jsonl", [row(i, x, human=h) for i, (x, h) in enumerate(zip(a_lab, human))])
    b = write(tmp_path / "b.jsonl", [row(i, x, human=h) for i, (x, h) in enumerate(zip(b_lab, human))])
    out = tmp_path / "merged.jsonl"
    assert main(["stability", str(a), str(b), "-o", str(out)]) == 0
    assert "changed its verdict on 3 of 100 items" in capsys.readouterr().out
    rows = [Judgment.from_row(json.loads(line)) for line in out.read_text().splitlines()]
    assert [v.label for v in rows[40].repeats or []] == [1, 0] and rows[40].label == 1

    report = calibrate(out, retest=stability(out))
    assert report.retest is not None and report.retest.on_unstable == 2  # q040, q041 of the 5 disagreements
    assert report.retest.noise_share == pytest.approx(0.03 / 0.05)
    assert "Of the disagreement with people, about 60% is the size of the judge's own noise" in report.retest.text
    assert main(["calibrate", str(a), "--retest", str(b)]) == 0
    assert "test-retest:" in capsys.readouterr().out

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"q{i:03d}", "question": "q?", "answer": "a.", "reference": "r"}) + "\n"
                             for i in range(100)))
    sample = tmp_path / "sample.jsonl"
    assert main(["sample", str(items), "-n", "10", "-o", str(sample), "--results", str(out), "--focus", "unstable"]) == 0
    assert sorted(json.loads(line)["id"] for line in sample.read_text().splitlines()) == ["q040", "q041", "q060"]
    assert [j.id for j in merged([a, b]) if j.repeats and len({v.label for v in j.repeats}) > 1] == ["q040", "q041", "q060"]


def _judge_twice(tmp_path: Path, seeds: tuple[int, int], items: Path) -> list[Path]:
    outs = []
    for k, seed in enumerate(seeds):
        with SchemaProvider(seed=seed) as fake:
            out = tmp_path / f"run{k}-seed{seed}.jsonl"
            assert main(["run", str(items), "-o", str(out), "--model", "openai/fake-judge", "--base-url",
                         f"{fake.base_url}/v1",
                         "--strategy", "single", "--store", str(tmp_path / "runs.sqlite"), "--no-cache",
                         "--no-progress", "--retries", "0"]) == 0
            outs.append(out)
    return outs


@pytest.fixture
def fake_items(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"q{i:02d}", "question": f"In which year did event {i} happen?",
                                         "answer": f"Event {i} happened in {1800 + i}.", "reference": str(1800 + i)})
                             + "\n" for i in range(60)))
    return items


def test_the_schema_fake_with_different_seeds_is_noise(tmp_path: Path, fake_items: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    runs = _judge_twice(tmp_path, (1, 2), fake_items)
    r = stability(runs)
    assert r.compared == 60 and r.flip_rate is not None and r.flip_rate > 0.3
    assert r.kappa is not None and abs(r.kappa) < 0.3 and r.kappa_ci is not None and r.kappa_ci[0] < 0 < r.kappa_ci[1]
    capsys.readouterr()
    assert main(["stability", *map(str, runs), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["flipped"] == r.flipped


def test_the_schema_fake_with_one_seed_is_stable(tmp_path: Path, fake_items: Path) -> None:
    r = stability(_judge_twice(tmp_path, (1, 1), fake_items))
    assert (r.compared, r.flipped, r.kappa) == (60, 0, 1.0)
