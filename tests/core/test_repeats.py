"""`judgeflow run --repeats K` and `Repeats`: the same judge K times on each item (test-retest).

The first repeat is the row's label and shares the judge's cache entry with runs without repeats;
the later ones have their own, so a repeated run pays K - 1 calls an item over a plain one, and a
second repeated run none. The rows feed `stability` and `gate`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeLLM, FakeProvider, moscow

from judgeflow import Judge
from judgeflow.calibration.gate import gate
from judgeflow.calibration.stability import stability
from judgeflow.cli import main
from judgeflow.ensembles.repeats import Repeats
from judgeflow.errors import ConfigError
from judgeflow.results import Judgment
from judgeflow.runs.store import RunStore
from judgeflow.schemas import JudgedClaim, SingleJudgment


def verdict(label: int) -> SingleJudgment:
    return SingleJudgment(claims=[JudgedClaim(id="c1", text="Moscow was founded in 1247.", basis="reference",
                                              verdict="contradicted" if label else "supported")])


def test_repeats_keep_every_verdict_and_the_first_is_the_label() -> None:
    llm = FakeLLM("openai", [verdict(1), verdict(0), verdict(1)])
    r = Repeats(Judge(backend=llm.backend(), strategy="single"), 3).judge(moscow(reference="1147"))
    assert r.repeats is not None and sorted(v.label for v in r.repeats) == [0, 1, 1]
    assert r.label == r.repeats[0].label and r.model == "openai/gpt-fake" and r.usage.calls == 3
    assert len(llm.requests) == 3
    report = stability([r])
    assert report.flipped == 1 and report.repeats == 3
    flipping = report.unstable[0]
    assert [v.claim.text if v.claim else None for v in flipping.verdicts].count("Moscow was founded in 1247.") == 2


def test_fewer_than_two_repeats_are_refused() -> None:
    with pytest.raises(ConfigError, match="at least 2"):
        Repeats(Judge("baseline/lexical"), 1)


def rows(path: Path) -> list[Judgment]:
    return [Judgment.from_row(json.loads(line)) for line in path.read_text().splitlines()]


def test_run_repeats_stores_k_verdicts_and_pays_only_for_the_new_ones(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    items = tmp_path / "items.jsonl"
    answers = [f"It happened in {1900 + i}." if i % 2 else f"It happened long ago, in {chr(97 + i)}-land."
               for i in range(20)]  # half with a digit (the local fake's error), all different (no cache hits)
    items.write_text("".join(json.dumps({"id": f"q{i:02d}", "question": "When?", "reference": "r", "answer": a}) + "\n"
                             for i, a in enumerate(answers)))
    store = tmp_path / "runs.sqlite"
    with FakeProvider() as fake:
        common = ["--model", "openai/fake-judge", "--base-url", fake.base_url, "--store", str(store),
                  "--strategy", "single", "--no-progress"]
        assert main(["run", str(items), "-o", str(tmp_path / "plain.jsonl"), *common]) == 0
        assert len(fake.requests) == 20
        assert main(["run", str(items), "-o", str(tmp_path / "rep.jsonl"), *common, "--repeats", "3"]) == 0
        assert len(fake.requests) == 20 + 40  # repeat 1 of each item is the plain run's, from the cache
        assert main(["run", str(items), "-o", str(tmp_path / "rep2.jsonl"), *common, "--repeats", "3"]) == 0
        assert len(fake.requests) == 60  # nothing judged twice
    plain, rep = rows(tmp_path / "plain.jsonl"), rows(tmp_path / "rep.jsonl")
    assert all(j.repeats and len(j.repeats) == 3 and {v.label for v in j.repeats} == {j.label} for j in rep)
    assert [j.label for j in rep] == [j.label for j in plain] and {j.label for j in rep} == {0, 1}
    assert sum(j.usage.calls for j in rep) == 40
    s = stability(tmp_path / "rep.jsonl")  # the local fake is deterministic: a perfectly stable judge
    assert (s.repeats, s.flipped, s.kappa) == (3, 0, 1.0)
    g = gate(tmp_path / "rep.jsonl", tmp_path / "plain.jsonl")
    assert g.passed and g.repeats and g.unstable == []
    with RunStore(store) as runs:
        assert "--repeats 3" in (runs.runs()[0].command or "")


def test_repeats_do_not_combine_with_batch(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(moscow(reference="1147")) + "\n")
    assert main(["run", str(items), "-o", str(tmp_path / "o.jsonl"), "--repeats", "2", "--batch",
                 "--model", "openai/gpt-4o-mini", "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "--repeats" in capsys.readouterr().err
