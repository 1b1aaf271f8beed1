"""A user's own data: columns under their own names (`--map FIELD=COLUMN`, `column_map=`), a
misspelt field with the nearest one, an input whose every row fails the same way said once
(exit 2), the most common invalid reason in the summary, and results as a DataFrame or CSV/Parquet.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow import Judge, load_items
from judgeflow.cli import main
from judgeflow.errors import ConfigError
from judgeflow.runs.store import RunStore


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


OWN = [{"id": "moscow", "resp": "Moscow was founded in 1247.", "gold_text": "In 1147, by Yuri Dolgorukiy."},
       {"id": "everest", "resp": "Mount Everest is 8,849 metres tall.", "gold_text": "8,849 metres"}]


def run(tmp_path: Path, inp: Path, *extra: str) -> int:
    return main(["run", str(inp), "-o", str(tmp_path / "out.jsonl"), "--store", str(tmp_path / "s.sqlite"),
                 "--no-progress", *extra])


def out_rows(tmp_path: Path, name: str = "out.jsonl") -> list[dict]:
    return [json.loads(x) for x in (tmp_path / name).read_text().splitlines()]


def test_map_reads_fields_from_the_users_own_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = write(tmp_path / "own.jsonl", OWN)
    assert run(tmp_path, inp, "--map", "answer=resp", "--map", "reference=gold_text") == 0
    rows = out_rows(tmp_path)
    assert [(r["id"], r["status"], r["label"]) for r in rows] == [("moscow", "judged", 1), ("everest", "judged", 0)]
    err = capsys.readouterr().err
    assert "'resp' as answer (2 rows)" in err and "'gold_text' as reference (2 rows)" in err
    with RunStore(tmp_path / "s.sqlite") as store:
        (r,) = store.runs()
    assert "--map answer=resp --map reference=gold_text" in r.command  # the resume command reads them alike
    assert r.spec.column_map == {"answer": "resp", "reference": "gold_text"}


def test_a_misspelt_field_gets_the_nearest_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = write(tmp_path / "own.jsonl", OWN)
    assert run(tmp_path, inp, "--map", "refernce=gold_text") == 2
    err = capsys.readouterr().err
    assert "did you mean `reference`?" in err and len(err.strip().splitlines()) == 1
    assert run(tmp_path, inp, "--map", "reference") == 2
    assert "FIELD=COLUMN" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="did you mean `reference`"):
        Judge("baseline/lexical", column_map={"refernce": "gold_text"})


def test_every_row_invalid_for_one_reason_is_said_once_and_exits_2(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a file of invalid rows and exit 1; the user had to open it to learn the column name."""
    inp = write(tmp_path / "own.jsonl", [{"id": r["id"], "answer": r["resp"], "gold_text": r["gold_text"]}
                                         for r in OWN])
    assert run(tmp_path, inp) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1
    assert "all 2 rows are unusable for the same reason: has no source, spec or reference" in err
    assert "gold_text" in err and "--map reference=COLUMN" in err
    assert not (tmp_path / "out.jsonl").exists()


def test_the_summary_names_the_most_common_invalid_reason(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"id": "ok", "answer": "Paris.", "reference": "Paris"},
            {"id": "a", "answer": "x"}, {"id": "b", "answer": "y"}, {"id": "c", "reference": "z"}]
    assert run(tmp_path, write(tmp_path / "in.jsonl", rows)) == 0
    err = capsys.readouterr().err
    assert "most common invalid reason (2 of 3 invalid rows): has no source, spec or reference" in err


def test_a_two_row_run_against_a_dead_port_names_the_unscored_reason_and_its_fix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Before, a small failed run said only "nothing was judged: 1 of 2 rows are invalid, 1 unscored";
    why (and the fix) was inside the output file. Now the summary says it, whatever the row count."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    rows = [{"id": "ok", "answer": "Paris.", "reference": "Paris"}, {"id": "bad", "reference": "z"}]
    assert run(tmp_path, write(tmp_path / "in.jsonl", rows), "--model", "openai/gpt-4o-mini",
               "--base-url", f"http://127.0.0.1:{port}/v1", "--retries", "0") == 1
    err = capsys.readouterr().err
    assert "most common unscored reason (1 of 1 unscored rows)" in err
    assert "cannot connect: check --base-url" in err


def test_an_unscored_reason_without_a_fix_gets_one() -> None:
    from judgeflow.results import Judgment
    from judgeflow.runs.summary import Tally, top_unscored

    tally = Tally.of([Judgment.unscored(f"r{i}", "decompose: provider error after retries: APIConnectionError: "
                                                 "Connection error.") for i in range(2)]
                     + [Judgment.unscored("x", "judge output rejected: ValidationError: 1 error")])
    assert top_unscored(tally) == ["most common unscored reason (2 of 3 unscored rows): decompose: provider error "
                                   "after retries: APIConnectionError: Connection error.; fix: cannot connect: "
                                   "check --base-url (host, port, scheme) and that the server is running"]


def test_column_map_in_python(tmp_path: Path) -> None:
    judge = Judge("baseline/lexical", column_map={"answer": "resp", "reference": "gold_text"})
    assert [judge.judge(r).label for r in OWN] == [1, 0]
    assert [j.label for j in judge.judge_many(OWN)] == [1, 0]
    items = load_items(write(tmp_path / "own.jsonl", OWN), column_map={"answer": "resp", "reference": "gold_text"})
    assert items[0].reference == "In 1147, by Yuri Dolgorukiy." and items[0].aliases["reference"] == "gold_text"


def test_from_dataframe_takes_a_column_map() -> None:
    pd = pytest.importorskip("pandas")
    from judgeflow.integrations.langchain import from_dataframe

    items = from_dataframe(pd.DataFrame(OWN), column_map={"answer": "resp", "reference": "gold_text"})
    assert [(i.id, i.answer, i.reference) for i in items] == [(r["id"], r["resp"], r["gold_text"]) for r in OWN]
    with pytest.raises(ConfigError, match="did you mean `answer`"):
        from_dataframe(pd.DataFrame(OWN), column_map={"answr": "resp"})


def test_results_to_dataframe(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from judgeflow import results_to_dataframe

    results = Judge("baseline/lexical", column_map={"answer": "resp", "reference": "gold_text"}).judge_many(OWN)
    df = results_to_dataframe(results)
    assert list(df["id"]) == ["moscow", "everest"] and list(df["label"]) == [1, 0]
    assert {"status", "criterion", "reason", "claims", "usage"} <= set(df.columns)
    assert isinstance(df["claims"][0], list)  # nested fields stay Python objects
    inp = write(tmp_path / "in.jsonl", [{"id": r["id"], "answer": r["resp"], "reference": r["gold_text"]} for r in OWN])
    assert run(tmp_path, inp) == 0
    assert list(results_to_dataframe(tmp_path / "out.jsonl")["label"]) == [1, 0]  # from a results file


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_format_writes_csv_or_parquet(tmp_path: Path, fmt: str) -> None:
    pd = pytest.importorskip("pandas")
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    inp = write(tmp_path / "in.jsonl", [{"id": r["id"], "answer": r["resp"], "reference": r["gold_text"],
                                         "team": "qa"} for r in OWN] + [{"id": "bad", "answer": "no evidence"}])
    out = tmp_path / f"out.{fmt}"
    assert main(["run", str(inp), "-o", str(out), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    df = pd.read_csv(out) if fmt == "csv" else pd.read_parquet(out)
    assert list(df["id"]) == ["moscow", "everest", "bad"]
    assert list(df["status"]) == ["judged", "judged", "invalid"] and list(df["team"])[:2] == ["qa", "qa"]
    assert json.loads(df["claims"][0])[0]["verdict"] == "contradicted"  # nested fields as JSON text
    # --format wins over the suffix
    other = tmp_path / "results.data"
    assert main(["run", str(inp), "-o", str(other), "--format", fmt, "--store", str(tmp_path / "s.sqlite"),
                 "--no-progress"]) == 0
    assert len(pd.read_csv(other) if fmt == "csv" else pd.read_parquet(other)) == 3


def test_parquet_without_pyarrow_says_so_before_judging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if not installed
    inp = write(tmp_path / "in.jsonl", [{"id": "a", "answer": "Paris.", "reference": "Paris"}])
    out = tmp_path / "out.parquet"
    assert main(["run", str(inp), "-o", str(out), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "needs pyarrow" in err and "pip install pyarrow" in err and err.count("\n") == 1
    assert not out.exists() and not (tmp_path / "s.sqlite").exists()  # nothing was judged
