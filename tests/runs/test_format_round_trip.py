"""Fitness (#36): every result format round-trips. `io.write_results` then `io.read_results` gives the
same Judgments back: claims with their spans, the row's spans and dropped details, usage, panel votes,
requirements, unscored and invalid rows, the input's own fields (every row carries the same input
columns, as a run's rows do: a table cannot tell a column absent from one row from an empty one). The formats come from the io
registry (`io.FORMATS`), so a format added there is covered without editing this test."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from judgeflow import io
from judgeflow.results import ClaimResult, JudgeVote, Judgment, RequirementResult, Usage

#: formats that need an optional package, and the package (the others need nothing)
NEEDS = {"parquet": "pyarrow"}


def judgments() -> list[Judgment]:
    usage = Usage(calls=2, input_tokens=812, output_tokens=95, cached_tokens=512, cache_write_tokens=300, repairs=1,
                  reasks=1)
    claims = [
        ClaimResult(id="c1", text="Moscow was founded in 1247.", kind="date", verdict="contradicted", error=True,
                    basis="stated", evidence="founded in 1147", evidence_found=True, reason="the year differs",
                    quote="founded in 1247", span=[11, 26], placed=True, cites=["[7]"], citation="fabricated",
                    evidence_path="city.founded", evidence_lines=[2, 3]),
        ClaimResult(id="c2", text="It is a city.", verdict="supported", evidence="the city", evidence_found=False,
                    placed=False),
    ]
    return [
        Judgment(id="q1", label=1, criterion="reference_faithfulness", routed_by="reference", reason="one claim is wrong",
                 claims=claims, usage=usage, model="openai/fake-judge", structured="tools", strategy="graph",
                 language="en", confidence=0.75, spans=[{"start": 11, "end": 26, "claim": "c1"}],
                 dropped=["Yuri Dolgorukiy"], extra={"question": "When was Moscow founded?", "topic": "history"},
                 citations={"markers": 1, "pairs": 1, "supporting": 0, "precision": 0.0, "recall": None},
                 arguments=[{"call": "c_1", "tool": "find", "path": "year", "value": 1247, "grounded": False}]),
        Judgment(id="q2", label=0, criterion="spec_compliance", usage=Usage(calls=1, input_tokens=10, output_tokens=3),
                 requirements=[RequirementResult(id="r1", text="Say the year.", status="met", evidence="1147")],
                 judges=[JudgeVote(model="openai/a", label=0, reason="fine"),
                         JudgeVote(model="anthropic/b", label=1, samples=[1, 0, None], agreement="2/3")],
                 agreement="1/2", human_label=0, extra={"question": "Say the year", "topic": "history"}),
        Judgment.unscored("q3", "decompose: rate limited (429) after 3 tries", usage=Usage(calls=3),
                          model="openai/fake-judge", extra={"question": "Who?", "topic": "people"}),
        Judgment.invalid("line-4", "in.jsonl line 4: field 'answer' is missing; add it",
                         extra={"question": "", "topic": "misc"}),
    ]


@pytest.mark.parametrize("fmt", io.FORMATS)
def test_every_format_round_trips(tmp_path: Path, fmt: str) -> None:
    if fmt in NEEDS and importlib.util.find_spec(NEEDS[fmt]) is None:
        pytest.skip(f"{fmt} needs {NEEDS[fmt]} (pip install 'judgeflow[{fmt}]')")
    written = judgments()
    rows = [j.to_row() for j in written]
    columns = list(dict.fromkeys(k for r in rows for k in r))  # as `runs.output.write_output` writes a run
    path = tmp_path / f"results.{fmt}"
    assert io.write_results(path, rows, fmt=fmt, columns=None if fmt == "jsonl" else columns) == len(written)
    assert io.format_of(path) == fmt
    back = io.read_results(path)
    for a, b in zip(written, back, strict=True):
        assert b.model_dump() == a.model_dump(), a.id


def test_the_registry_names_every_format_module():
    """A format is a module of io/ with both directions; the registry lists each."""
    import importlib

    for fmt in io.FORMATS:
        module = importlib.import_module(f"judgeflow.io.{fmt}")
        assert hasattr(module, "write_results"), fmt
