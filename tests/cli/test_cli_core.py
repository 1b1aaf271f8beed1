"""`judgeflow run` and `judgeflow criteria`, driven through judgeflow.cli.main(argv)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, load_criterion
from judgeflow.cli import main

CLAIM_FIELDS = {"text", "kind", "verdict", "basis", "evidence", "reason"}
ROW_FIELDS = {"id", "label", "criterion", "routed_by", "claims", "error", "usage", "model", "human_label"}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a scratch directory so nothing (e.g. a run store) lands in the repository."""
    monkeypatch.chdir(tmp_path)


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False) for x in lines) + "\n",
                    encoding="utf-8")
    return path


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def run_cli(*argv: str) -> int:
    return main(["run", *argv])


MIXED = [
    {"id": "good", "question": "When was Moscow founded?", "answer": "Moscow was founded in 1147.",
     "reference": "1147", "label": 0, "dataset": "demo", "meta": {"k": 1}},
    {"id": "wrong", "question": "When was Moscow founded?", "answer": "Moscow was founded in 1247.",
     "ground_truth": "1147", "label": "yes", "dataset": "demo"},
    '{"id": "broken", "answer": ',
    {"id": "no-answer", "question": "q", "reference": "r", "label": 1, "dataset": "demo"},
    {"id": "no-evidence", "question": "q", "answer": "Something.", "label": "no"},
    {"id": "rag", "answer": "The tower is in Paris.", "context": ["The Eiffel Tower is in Paris."]},
]


def test_run_offline_writes_one_row_per_input_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = write_lines(tmp_path / "items.jsonl", MIXED)
    out = tmp_path / "out" / "results.jsonl"
    assert run_cli(str(inp), "-o", str(out)) == 0
    assert "no model configured" in capsys.readouterr().err  # the visible notice

    rows = read_rows(out)
    assert len(rows) == len(MIXED)
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {"good", "wrong", "broken", "no-answer", "no-evidence", "rag"}  # a broken line keeps its id
    for row in rows:
        assert ROW_FIELDS <= set(row)
        assert set(row["usage"]) >= {"calls", "input_tokens", "output_tokens"}
        assert row["model"] == "baseline/lexical"
        for claim in row["claims"]:
            assert CLAIM_FIELDS <= set(claim)

    good, wrong, rag = by_id["good"], by_id["wrong"], by_id["rag"]
    assert (good["label"], good["criterion"], good["routed_by"], good["error"]) == (
        0, "factual_correctness", "reference present", None)
    assert good["human_label"] == 0 and good["dataset"] == "demo" and good["meta"] == {"k": 1}
    assert wrong["label"] == 1 and wrong["human_label"] == 1
    assert wrong["claims"][0]["verdict"] == "contradicted" and wrong["claims"][0]["kind"] == "date"
    assert (rag["label"], rag["criterion"], rag["routed_by"]) == (0, "source_faithfulness", "source present")

    for bad_id, words in [("broken", f"{inp}:3: not valid JSON"), ("no-answer", "has no 'answer'"),
                          ("no-evidence", "no source, spec or reference")]:
        row = by_id[bad_id]
        assert row["label"] is None and row["status"] == "invalid" and words in row["error"]
    # an error row still carries the input's label and other fields
    assert (by_id["no-answer"]["human_label"], by_id["no-answer"]["dataset"]) == (1, "demo")
    assert by_id["no-evidence"]["human_label"] == 0 and by_id["broken"]["human_label"] is None


class ScriptedLLM:
    """Fake replies that depend on the request, so concurrent items get their own answers."""

    def __init__(self, fail_ids: tuple[str, ...] = ()) -> None:
        self.fail_ids = fail_ids

    def __call__(self, req: dict[str, Any]) -> Any:
        text = json.dumps(req)
        if any(f"UNPARSEABLE-{i}" in text for i in self.fail_ids):
            return "I refuse to use the tool."
        tool = req["tools"][0]
        if (tool.get("function") or tool)["name"] == "Claims":  # decompose
            answer = re.search(r"<answer>\\n(.*?)\\n</answer>", text)
            assert answer
            return Claims(claims=[Claim(id="c1", text=answer.group(1), kind="date")])
        verdict = "contradicted" if "1247" in text else "supported"
        return ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict=verdict, basis="reference",
                                              evidence="1147", reason="compared with the reference")])


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_run_with_an_llm_judged_unscored_and_invalid_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    llm = FakeLLM(provider, [ScriptedLLM(fail_ids=("u",))] * 20)
    seen: list[str | None] = []

    def fake_backend(model: str | None = None, config: Any = None, **kwargs: Any) -> Any:
        seen.append(model)
        return llm.backend()

    monkeypatch.setattr(sys.modules["judgeflow._judge"], "make_backend", fake_backend)
    inp = write_lines(tmp_path / "items.jsonl", [
        MIXED[0], MIXED[1],
        {"id": "u", "question": "q", "answer": "UNPARSEABLE-u", "reference": "r", "label": 1},
        {"id": "no-answer", "reference": "r"},
    ])
    out = tmp_path / "results.jsonl"
    assert run_cli(str(inp), "-o", str(out), "--model", f"{provider}/judge-model", "--concurrency", "2",
                   "--max-unscored", "0.5") == 0  # 1 of 4 unscored: above the default share (0.1)
    assert seen == [f"{provider}/judge-model"]

    by_id = {r["id"]: r for r in read_rows(out)}
    assert len(by_id) == 4
    assert (by_id["good"]["label"], by_id["wrong"]["label"]) == (0, 1)
    assert by_id["wrong"]["claims"] == [{
        "id": "c1", "text": "Moscow was founded in 1247.", "kind": "date", "verdict": "contradicted", "error": True,
        "basis": "reference", "evidence": "1147", "evidence_found": True, "reason": "compared with the reference",
        "span": [0, 27], "placed": True}]  # #38: where in the answer the claim stands
    assert by_id["good"]["usage"] == {"calls": 2, "input_tokens": 200, "output_tokens": 40, "reasoning_tokens": 0,
                                      "cached_tokens": 0, "cache_write_tokens": 0, "repairs": 0,
                                      "reasks": 0, "over_bound": 0}
    unscored = by_id["u"]
    assert unscored["label"] is None and unscored["status"] == "unscored" and unscored["human_label"] == 1
    assert unscored["error"].startswith("decompose: unparseable judge output after 3 attempt(s)")
    assert unscored["usage"]["calls"] == 3
    assert by_id["no-answer"]["status"] == "invalid"


def test_run_limit_mode_and_criterion(tmp_path: Path) -> None:
    inp = write_lines(tmp_path / "items.jsonl", MIXED)
    out = tmp_path / "r.jsonl"
    assert run_cli(str(inp), "-o", str(out), "--limit", "2") == 0
    assert [r["id"] for r in sorted(read_rows(out), key=lambda r: r["id"])] == ["good", "wrong"]

    src = write_lines(tmp_path / "src.jsonl", [MIXED[5] | {"reference": "Paris"}])
    assert run_cli(str(src), "-o", str(out), "--mode", "factual") == 0
    (row,) = read_rows(out)
    assert (row["criterion"], row["routed_by"]) == ("factual_correctness", "mode factual set for the run")

    text = Path(load_criterion("source_faithfulness").path).read_text(encoding="utf-8")
    mine = tmp_path / "mine.toml"
    mine.write_text(text.replace('name = "source_faithfulness"', 'name = "my_rag_check"'), encoding="utf-8")
    assert run_cli(str(src), "-o", str(out), "--criterion", str(mine)) == 0
    (row,) = read_rows(out)
    assert row["criterion"] == "my_rag_check" and row["label"] == 0
    assert row["routed_by"] == "criterion my_rag_check set for the run"


def test_run_single_strategy_offline_gives_the_graph_labels(tmp_path: Path) -> None:
    inp = write_lines(tmp_path / "items.jsonl", MIXED)
    graph, single = tmp_path / "g.jsonl", tmp_path / "s.jsonl"
    assert run_cli(str(inp), "-o", str(graph)) == 0 and run_cli(str(inp), "-o", str(single), "--strategy", "single") == 0
    labels = {r["id"]: r["label"] for r in read_rows(graph)}
    rows = read_rows(single)
    assert {r["id"]: r["label"] for r in rows} == labels
    assert {r["strategy"] for r in rows if r["status"] == "judged"} == {"single"}


def test_run_reads_csv(tmp_path: Path) -> None:
    inp = tmp_path / "items.csv"
    inp.write_text('id,question,response,contexts,label\n'
                   'c1,Where?,The tower is in Paris.,"[""The Eiffel Tower is in Paris.""]",no\n'
                   'c2,Where?,,"[""x""]",yes\n', encoding="utf-8")
    out = tmp_path / "r.jsonl"
    assert run_cli(str(inp), "-o", str(out)) == 0
    by_id = {r["id"]: r for r in read_rows(out)}
    assert by_id["c1"]["label"] == 0 and by_id["c1"]["human_label"] == 0
    assert by_id["c2"]["status"] == "invalid" and f"{inp}:3:" in by_id["c2"]["error"]


@pytest.mark.parametrize("argv, words", [
    (["--criterion", "nonexistent_criterion"], "unknown criterion 'nonexistent_criterion'"),
    (["--model", "nosuch/model"], "unknown provider 'nosuch'"),
    (["--model", "gpt-4o"], "provider/model"),
    (["--model", "openai/gpt-4o-mini"], "OPENAI_API_KEY"),
])  # numbers out of range (--limit 0, ...) are refused by argparse: tests/core/test_failure_paths.py
def test_run_bad_options_exit_2_with_one_red_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    inp = write_lines(tmp_path / "items.jsonl", MIXED[:1])
    assert run_cli(str(inp), "-o", str(tmp_path / "r.jsonl"), *argv) == 2
    err = capsys.readouterr().err
    assert "error:" in err and words in err and "Traceback" not in err


def test_run_missing_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "r.jsonl")) == 2
    assert "no such file" in capsys.readouterr().err


def test_criteria_list(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # a wide terminal, so rich does not wrap the names
    assert main(["criteria", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("factual_correctness", "source_faithfulness", "reference_faithfulness", "spec_compliance"):
        assert name in out


@pytest.mark.parametrize("name", ["factual_correctness", "source_faithfulness", "reference_faithfulness",
                                  "spec_compliance"])
def test_criteria_show_json(capsys: pytest.CaptureFixture[str], name: str) -> None:
    assert main(["criteria", "show", name, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    crit = load_criterion(name)
    assert data["name"] == name
    assert data["verdicts"] == crit.verdicts and data["error_verdicts"] == crit.error_verdicts
    assert data["prompts"]["check"] == crit.prompts.check and data["fingerprint"] == crit.fingerprint


def test_criteria_show_text_and_by_path(capsys: pytest.CaptureFixture[str]) -> None:
    path = load_criterion("spec_compliance").path
    assert main(["criteria", "show", path]) == 0
    out = capsys.readouterr().out
    assert "spec_compliance" in out and "violates_spec (an error)" in out and "extra (not an error)" in out


def test_criteria_show_unknown_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["criteria", "show", "nope"]) == 2
    assert "unknown criterion 'nope'" in capsys.readouterr().err


def test_threshold_flag_reaches_the_offline_judge_and_is_refused_for_llms(tmp_path) -> None:
    from judgeflow.cli import main

    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "answer": "Paris is the capital of France", "reference": "Paris is the capital"}\n')
    store = str(tmp_path / "s.sqlite")
    labels = []
    for t in ("0.5", "0.95"):
        out = tmp_path / f"out{t}.jsonl"
        assert main(["run", str(items), "-o", str(out), "--model", "baseline/rouge-l", "--threshold", t,
                     "--store", store, "--no-progress"]) == 0
        labels.append(json.loads(out.read_text())["label"])
    assert labels == [0, 1]
    assert main(["run", str(items), "-o", str(tmp_path / "x.jsonl"), "--model", "openai/gpt-4o-mini",
                 "--threshold", "0.5", "--store", store]) == 2


def test_run_says_which_aliases_it_read(tmp_path, capsys) -> None:
    from judgeflow.cli import main

    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "a", "response": "Paris is big.", "context": "Paris is a big city."}\n')
    assert main(["run", str(items), "-o", str(tmp_path / "o.jsonl"), "--store", str(tmp_path / "s.sqlite"),
                 "--no-progress"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "'response' as answer" in err and "'context' as source" in err


def test_a_run_that_judged_nothing_is_not_a_success(tmp_path, capsys) -> None:
    from judgeflow.cli import main

    empty, bad = tmp_path / "empty.jsonl", tmp_path / "bad.jsonl"
    empty.write_text("")
    bad.write_text('{"id": "a"}\n{"id": "b", "answer": "x"}\n')
    store = ["--store", str(tmp_path / "s.sqlite")]
    assert main(["run", str(empty), "-o", str(tmp_path / "e.jsonl"), *store]) == 1
    assert "nothing was judged: no rows in" in capsys.readouterr().err
    assert main(["run", str(bad), "-o", str(tmp_path / "b.jsonl"), *store, "--json"]) == 1
    out = capsys.readouterr().out
    assert '"failure": "nothing was judged: 2 of 2 rows are invalid, 0 unscored"' in out
    assert len((tmp_path / "b.jsonl").read_text().splitlines()) == 2  # both rows still written, as errors


def test_an_offline_run_says_it_ignores_knowledge_and_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#48: docs/criteria.md's `--knowledge commit-first` / `--evidence FILE` ran offline and changed nothing
    without a word (the same labels, "evidence 0%"): they are steps of an LLM judge, so an offline run says so."""
    inp = write_lines(tmp_path / "items.jsonl", MIXED[:1])
    docs = write_lines(tmp_path / "docs.jsonl", [{"id": "d1", "text": "Moscow was founded in 1147."}])
    assert run_cli(str(inp), "-o", str(tmp_path / "a.jsonl"), "--evidence", str(docs), "--knowledge", "commit-first",
                   "--no-progress") == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "--knowledge commit-first and --evidence" in err and "ignores" in err and "--model" in err
    assert run_cli(str(inp), "-o", str(tmp_path / "b.jsonl"), "--no-progress") == 0
    assert "ignores" not in capsys.readouterr().err  # said only when asked for


@pytest.mark.parametrize("existing", [False, True])
def test_a_local_run_into_a_directory_says_give_a_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], existing: bool) -> None:
    """#48: `run X -o judged/` (a local run, trailing slash) wrote a *file* named `judged`. A local run
    writes one results file, so a directory -o (new with a slash, or existing) is refused with the fix."""
    inp = write_lines(tmp_path / "items.jsonl", MIXED[:1])
    out = tmp_path / "judged"
    if existing:
        out.mkdir()
    assert run_cli(str(inp), "-o", f"{out}/", "--no-progress") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "error:" in err and "-o" in err and str(out / "results.jsonl") in err and "Traceback" not in err
    assert out.is_dir() == existing and not out.is_file() and list(tmp_path.glob("judged*")) == (
        [out] if existing else [])
    assert run_cli(str(inp), "-o", str(out / "results.jsonl"), "--no-progress") == 0  # the fix works
