"""`check_dropped` is on by default (#41, the study's rule: judge the answer whole): through the CLI
against the in-repository schema fake (a real HTTP server; its claims are random words, so they
never carry the answer's year), the year is checked as an added claim; `--no-check-dropped` turns
it off, is recorded with the run and repeated by its resume command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.schema_provider import SchemaProvider

from judgeflow.cli import main
from judgeflow.cli.flags import resume_command
from judgeflow.config.judging import JudgeSpec
from judgeflow.config.run import RunSpec

ITEM = {"id": "m", "question": "When was Moscow founded?", "answer": "Moscow was founded in 1247.", "reference": "1147"}


def run(tmp_path: Path, url: str, *flags: str) -> tuple[int, list[dict]]:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(ITEM) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["run", str(items), "-o", str(out), "--model", "openai/fake", "--base-url", f"{url}/v1",
                 "--store", str(tmp_path / "s.sqlite"), "--no-progress", *flags])
    return code, [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_the_cli_checks_a_dropped_year_by_default(tmp_path: Path) -> None:
    with SchemaProvider(seed=2) as fake:
        code, rows = run(tmp_path, fake.base_url)
        check = next(r for r in fake.requests if "1247" in json.dumps(r) and "claim" in json.dumps(r["tools"]))
    assert code in (0, 1) and rows[0]["dropped"] == ["1247"]
    assert "checked as added claims: 1247" in rows[0]["reason"], rows[0]["reason"]
    assert any("1247" in c["text"] for c in rows[0]["claims"]) and check


def test_no_check_dropped_names_the_year_as_not_checked_and_resumes_with_the_flag(tmp_path: Path,
                                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with SchemaProvider(seed=2) as fake:
        code, rows = run(tmp_path, fake.base_url, "--no-check-dropped")
        assert "not checked (no claim carried them): 1247" in rows[0]["reason"], rows[0]["reason"]
        assert not any("1247" in c["text"] for c in rows[0]["claims"])
        again, _ = run(tmp_path, fake.base_url, "--resume")  # the default (on) differs from the recorded run
    err = capsys.readouterr().err
    assert again == 2 and "check_dropped" in err, err
    off = RunSpec(judging=JudgeSpec(model="openai/fake", check_dropped=False), input="i.jsonl", output="o.jsonl")
    assert "--no-check-dropped" in resume_command(off)
    on = RunSpec(judging=JudgeSpec(model="openai/fake"), input="i.jsonl", output="o.jsonl")
    assert "--no-check-dropped" not in resume_command(on)
