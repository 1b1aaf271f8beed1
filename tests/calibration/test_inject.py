"""`judgeflow inject`: known positives at known offsets, marked so they never mix with real results,
and `inject --report`: recall per type, span overlap, false alarms on the untouched controls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow.calibration.inject import TYPES, inject_rows
from judgeflow.calibration.inject_report import inject_report
from judgeflow.cli import main
from judgeflow.errors import InvalidItemError
from judgeflow.results import Judgment

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "data" / "factual_qa_sample.jsonl"
ANSWERS = [
    {"id": "a1", "question": "Who wrote it?", "reference": "Mary Shelley wrote it in 1818.",
     "answer": "Mary Shelley wrote Frankenstein in 1818, and it was published in London with 3 volumes.", "label": 0},
    {"id": "a2", "question": "Is it legal?", "reference": "No.", "answer": "It is not legal in France.", "label": 0},
    {"id": "a3", "question": "Capital?", "reference": "Paris", "answer": "Rome", "label": 1},
]


def test_each_rule_changes_the_answer_at_the_offsets_it_records():
    rows, summary = inject_rows(list(enumerate(ANSWERS, 1)), seed=1)
    assert summary.correct == 2 and summary.skipped == 1 and summary.controls == 2
    by_id = {r["id"]: r for r in rows}
    assert set(summary.injected) == set(TYPES)
    for r in rows:
        original = next(a for a in ANSWERS if a["id"] == r["injected_from"])["answer"]
        if not r["injected"]:
            assert r["id"].endswith("#inj-none") and r["answer"] == original and r["label"] == 0
            continue
        (inj,) = r["injected"]
        assert r["id"] == f"{r['injected_from']}#inj-{inj['type']}" and r["label"] == 1
        assert r["answer"] != original
        new = r["answer"][inj["start"]:inj["end"]]
        assert new and inj["end"] <= len(r["answer"])
        if inj["type"] == "invented_detail":
            assert r["answer"].startswith(original.rstrip(".")) and inj["end"] == len(r["answer"])
        else:
            assert r["answer"][:inj["start"]] == original[:inj["start"]]
            assert original[inj["start"]:inj["start"] + len(r["injected_original"])] == r["injected_original"]
            assert new != r["injected_original"]
    assert by_id["a2#inj-negation"]["answer"] == "It is legal in France."  # a negation removed
    assert "a3#inj-none" not in by_id  # a wrong answer is no control


def test_the_same_seed_gives_the_same_rows():
    a, _ = inject_rows(list(enumerate(ANSWERS, 1)), seed=4)
    b, _ = inject_rows(list(enumerate(ANSWERS, 1)), seed=4)
    assert a == b


def judged(rows: list[dict], caught: set[str]) -> list[Judgment]:
    out = []
    for r in rows:
        label = int(r["id"] in caught)
        inj = r["injected"][0] if r["injected"] else {"start": 0, "end": 1}
        spans = [{"start": inj["start"], "end": inj["end"], "claim": "c1", "text": "x"}] if label else []
        out.append(Judgment(id=r["id"], label=label, model="m", spans=spans,
                            extra={"injected": r["injected"], "injected_from": r["injected_from"]}))
    return out


def test_the_report_gives_recall_per_type_and_the_controls_false_alarms():
    rows, _ = inject_rows(list(enumerate(ANSWERS, 1)), seed=1)
    caught = {r["id"] for r in rows if r["injected"] and r["injected"][0]["type"] in ("date", "negation")}
    caught.add("a1#inj-none")  # one false alarm on a control
    report = inject_report(judged(rows, caught))
    recall = {t.type: t.recall for t in report.types}
    assert recall["date"] == 1.0 and recall["name"] == 0.0
    assert report.controls == 2 and report.false_alarms == 1 and report.false_alarm_rate == 0.5
    assert all(t.span_overlap == 1.0 and t.span_precision == 1.0 for t in report.types if t.caught)


def test_real_results_never_mix_with_injected_rows(tmp_path: Path):
    rows, _ = inject_rows(list(enumerate(ANSWERS, 1)), seed=1)
    mixed = [*judged(rows, set()), Judgment(id="real-1", label=0, model="m")]
    with pytest.raises(InvalidItemError, match="not an injected row"):
        inject_report(mixed)
    path = tmp_path / "results.jsonl"
    path.write_text("".join(json.dumps(j.to_row()) + "\n" for j in judged(rows, set())), encoding="utf-8")
    assert main(["calibrate", str(path)]) == 2  # refused: injected rows are test data


def test_inject_and_report_on_the_example_data_with_the_offline_judge(tmp_path: Path, capsys):
    out, results = tmp_path / "injected.jsonl", tmp_path / "results.jsonl"
    assert main(["inject", str(EXAMPLE), "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows and all("#inj-" in r["id"] and isinstance(r["injected"], list) for r in rows)
    assert main(["run", str(out), "-o", str(results)]) == 0
    capsys.readouterr()
    assert main(["inject", "--report", str(results), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["scored"] == sum(1 for r in rows if r["injected"])
    assert {t["type"] for t in report["types"]} >= {"negation", "invented_detail"}
    assert report["controls"] == sum(1 for r in rows if not r["injected"])


def test_compare_refuses_injected_rows(tmp_path: Path):
    rows, _ = inject_rows(list(enumerate(ANSWERS, 1)), seed=1)
    path = tmp_path / "injected_results.jsonl"
    path.write_text("".join(json.dumps(j.to_row()) + "\n" for j in judged(rows, set())), encoding="utf-8")
    assert main(["compare", str(path), str(path)]) == 2


def test_a_model_writes_the_edit_and_code_places_it():
    """Through the real openai SDK and Instructor (tests/fakes/scripted.py): an edit whose words are in the
    answer is placed at the offsets code finds; one whose words are not (a model misquoting) is dropped."""
    from fakes.scripted import FakeLLM

    from judgeflow.calibration.inject import inject_file
    from judgeflow.calibration.inject_model import Edit

    llm = FakeLLM("openai", [Edit(original="1818", replacement="1831"), Edit(original="Paris", replacement="Rome")])
    rows_in = [ANSWERS[0]]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d) / "items.jsonl", Path(d) / "out.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in rows_in), encoding="utf-8")
        summary = inject_file(src, out, types=["date", "entity"], client=llm.client(), close_client=True)
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert summary.by == "openai/gpt-fake" and summary.not_placed == 1 and summary.injected == {"date": 1}
    (date,) = [r for r in rows if r["injected"]]
    inj = date["injected"][0]
    assert date["answer"][inj["start"]:inj["end"]] == "1831" and date["injected_by"] == "openai/gpt-fake"
    assert "<answer>" in json.dumps(llm.requests[0]) and "Error type: date" in json.dumps(llm.requests[0])


def test_inject_with_the_schema_fake_through_the_cli(tmp_path: Path, capsys):
    """The schema-following fake answers with words that are not in the answer: every edit but the appended
    sentences is dropped, and the summary says how many."""
    from fakes import SchemaProvider

    out = tmp_path / "injected.jsonl"
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in ANSWERS), encoding="utf-8")
    with SchemaProvider(seed=3) as fake:
        code = main(["inject", str(items), "-o", str(out), "--model", "openai/fake", "--base-url",
                     f"{fake.base_url}/v1", "--types", "date", "invented_detail"])
        calls = len([x for x in fake.log if x.get("llm")])
    assert code == 0 and calls == 4  # 2 correct answers x 2 types
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    kinds = [r["injected"][0]["type"] for r in rows if r["injected"]]
    assert kinds.count("invented_detail") == 2 and "date" not in kinds
    assert "2 edit(s) dropped" in capsys.readouterr().out
