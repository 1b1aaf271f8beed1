"""The answer rate beside every hallucination rate: a bot that starts refusing must not pass the gate.

The runs are judged for real: the openai SDK and Instructor's parsing over an httpx MockTransport,
answered by the fake provider's rules (claims are the answer's sentences; a claim with a digit is
contradicted), except that a refusal decomposes into no claims, as a model does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeLLM
from fakes.provider import _text, answer_for

from judgeflow import Item, Judge
from judgeflow.calibration.answer_rate import answer_rate, answer_text, reference_coverage
from judgeflow.calibration.gate import gate
from judgeflow.calibration.gate_report import gate_markdown
from judgeflow.cli import main
from judgeflow.results import Judgment

REFUSAL = "I am sorry, I cannot help with that."


def reply(body: dict) -> dict:
    tool = body["tools"][0]["function"]["name"]
    prompt = "\n".join(_text(m.get("content")) for m in body.get("messages", []))
    if tool == "Claims" and REFUSAL in prompt:
        return {"claims": []}
    return answer_for(tool, prompt)


def judged(answers: list[str]) -> list[Judgment]:
    items = [Item(id=f"q{i:02d}", question=f"Question {i}?", reference=f"Reference {i}", answer=a)
             for i, a in enumerate(answers)]
    llm = FakeLLM("openai", [reply] * (3 * len(items)))
    return Judge(backend=llm.backend(), criterion="factual_correctness").judge_many(items, concurrency=4)


def write(path: Path, rows: list[Judgment]) -> Path:
    path.write_text("".join(json.dumps(j.to_row()) + "\n" for j in rows))
    return path


@pytest.fixture(scope="module")
def bot_runs() -> tuple[list[Judgment], list[Judgment]]:
    # the baseline answers all 60 (every 6th answer has a wrong number); the candidate refuses 20 of them,
    # among them every answer with an error: its hallucination rate falls to 0
    base = [f"The answer to {i} is in {1900 + i}." if i % 6 == 0 else f"The answer is item {chr(65 + i % 26)}."
            for i in range(60)]
    cand = [REFUSAL if i % 6 == 0 or i % 5 == 0 else a for i, a in enumerate(base)]
    return judged(base), judged(cand)


def test_a_refusing_bot_fails_the_gate(tmp_path, bot_runs, capsys):
    base, cand = bot_runs
    r = gate(cand, base)
    assert r.candidate.rate is not None and r.baseline.rate is not None and r.candidate.rate < r.baseline.rate
    assert [o.rule for o in r.rules if o.failed] == ["answer_rate"] and not r.passed and r.exit_code == 1
    assert r.baseline_answers.answered == 60 and r.candidate_answers.answered == 60 - 20
    assert (r.answers.lost, r.answers.gained) == (20, 0)
    assert "answer rate dropped significantly" in r.verdict
    assert "answer rate" in gate_markdown(r) and "66.7% (40 of 60)" in gate_markdown(r)
    b, c = write(tmp_path / "b.jsonl", base), write(tmp_path / "c.jsonl", cand)
    assert main(["gate", str(c), "--baseline", str(b)]) == 1
    assert "answer_rate" in capsys.readouterr().out


def test_the_same_bot_passes(bot_runs):
    base, _ = bot_runs
    r = gate(base, base)
    assert r.passed and r.answers.lost == r.answers.gained == 0


def test_a_few_refusals_are_noise(bot_runs):
    base, _ = bot_runs
    few = judged([REFUSAL if i in (1, 2) else f"The answer is item {chr(65 + i % 26)}." if i % 6 else
                  f"The answer to {i} is in {1900 + i}." for i in range(60)])
    assert gate(few, base).passed


def test_coverage_of_the_reference():
    j = Judgment(id="a", label=0, claims=[], extra={"answer": "Paris is in France.",
                                                    "reference": "Paris, capital of France, 2.1 million people"})
    assert reference_coverage(j) == pytest.approx(2 / 6)  # paris, france of paris capit franc 2.1 milli peopl
    assert reference_coverage(Judgment(id="b", label=0)) is None
    a = answer_rate([j, Judgment(id="u", label=None, status="unscored")])
    assert (a.scored, a.answered, a.covered) == (1, 0, 1)
    assert "answer rate 0.0%" in answer_text(a) and "reference coverage 33.3%" in answer_text(a)
