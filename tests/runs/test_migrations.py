"""#49: the run store migrates an older schema (numbered steps, runs/migrations.py), never
refuses it.

`data/store-0.2.0.sql` is a store written by judgeflow 0.2.0 (commit 76804db): `judgeflow run
in.jsonl -o out.jsonl --model baseline/lexical` over the four items below, then cut to two results
and marked interrupted (as a kill leaves it), its cache emptied, dumped with sqlite3's iterdump;
{DIR} stands for the directory it ran in.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from judgeflow.cli import main
from judgeflow.errors import StoreError
from judgeflow.runs import migrations
from judgeflow.runs.migrations import SCHEMA_VERSION, migrate, schema_of
from judgeflow.runs.store import RunStore

DUMP = Path(__file__).parent / "data" / "store-0.2.0.sql"
ITEMS = "".join(
    json.dumps(
        {
            "id": f"q{n}",
            "question": "Capital of France?",
            "answer": f"Paris is the capital of France, founded {n} BC.",
            "source": "Paris is the capital of France.",
        },
        separators=(",", ":"),
    )
    + "\n"
    for n in range(1, 5)
)


def old_store(tmp_path: Path) -> Path:
    (tmp_path / "in.jsonl").write_text(ITEMS, encoding="utf-8")
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)
    db.executescript(DUMP.read_text(encoding="utf-8").replace("{DIR}", str(tmp_path)))
    db.close()
    return path


def tables(path: Path) -> set[str]:
    return {
        r[0]
        for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type='table'")
    }


def test_a_store_written_by_0_2_0_migrates_and_resumes(tmp_path: Path, capsys) -> None:
    path = old_store(tmp_path)
    assert hashlib.sha256(ITEMS.encode()).hexdigest() in DUMP.read_text(
        encoding="utf-8"
    )  # the same input
    assert schema_of(sqlite3.connect(path)) == 1 and "batch_jobs" not in tables(path)
    with RunStore(path, readonly=True) as store:  # read as it is, not migrated
        (run,) = store.runs()
        assert run.status == "interrupted" and [j.id for j in store.results(run.run_id)] == [
            "q1",
            "q2",
        ]
    assert schema_of(sqlite3.connect(path)) == 1
    out = tmp_path / "out.jsonl"
    argv = [
        "run",
        str(tmp_path / "in.jsonl"),
        "-o",
        str(out),
        "--model",
        "baseline/lexical",
        "--store",
        str(path),
        "--no-progress",
        "--resume",
    ]
    assert main(argv) == 0
    assert f"resuming run {run.run_id}: 2 of 4 rows already done" in capsys.readouterr().err
    assert [json.loads(line)["status"] for line in out.read_text().splitlines()] == ["judged"] * 4
    assert schema_of(sqlite3.connect(path)) == SCHEMA_VERSION and {
        "batch_jobs",
        "batch_replies",
    } <= tables(path)
    with RunStore(path) as store:
        (again,) = store.runs()
        assert (
            again.run_id == run.run_id and again.status == "done" and store.count(run.run_id) == 4
        )


def test_each_step_runs_once_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    steps = tuple(lambda db, s=s: (ran.append(s.__name__), s(db))[1] for s in migrations.STEPS)
    monkeypatch.setattr(migrations, "STEPS", steps)
    db = sqlite3.connect(old_store(tmp_path), isolation_level=None)
    assert migrate(db) == SCHEMA_VERSION == len(migrations.STEPS) == 3
    assert migrate(db) == SCHEMA_VERSION
    assert ran == [
        "_002_batch_ledger",
        "_003_runspec_record",
    ]  # the store had step 1 (0.2.0's schema); each later step once
    new = sqlite3.connect(tmp_path / "new.sqlite", isolation_level=None)
    assert migrate(new) == SCHEMA_VERSION and ran == [
        "_002_batch_ledger",
        "_003_runspec_record",
        "_001_runs_results_cache",
        "_002_batch_ledger",
        "_003_runspec_record",
    ]


def test_a_failing_step_leaves_the_store_at_the_step_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(migrations, "STEPS", (migrations.STEPS[0], broken))
    path = old_store(tmp_path)
    with pytest.raises(StoreError, match="disk I/O error"):
        RunStore(path)
    assert schema_of(sqlite3.connect(path)) == 1 and "half_done" not in tables(path)


@pytest.mark.parametrize("mark", ["4", "99", "x"])
def test_a_store_from_a_newer_judgeflow_is_refused_and_left_alone(
    tmp_path: Path, mark: str
) -> None:
    path = old_store(tmp_path)
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value=? WHERE key='schema'", (mark,))
    db.commit()
    before = tables(path)
    for readonly in (False, True):
        with pytest.raises(
            StoreError, match=f"{path}: run store schema '{mark}' is newer than this judgeflow's 3"
        ):
            RunStore(path, readonly=readonly)
    assert tables(path) == before


def test_the_0_2_0_record_becomes_its_runspec_and_resumes_from_it_alone(tmp_path: Path, capsys) -> None:
    """Step 3: the flat 0.2.0 record is read into the typed RunSpec (read-only, in memory; migrated,
    in the store), and the resume command derived from that record alone finishes the run."""
    import shlex

    from judgeflow.cli.flags import resume_command
    from judgeflow.config.judging import JudgeSpec

    path = old_store(tmp_path)
    with RunStore(path, readonly=True) as store:
        (run,) = store.runs()
    assert isinstance(run.spec.judging, JudgeSpec) and run.spec.judging.model == "baseline/lexical"
    assert run.spec.input == str(tmp_path / "in.jsonl") and run.model == "baseline/lexical"
    assert '"spec"' not in sqlite3.connect(path).execute("SELECT settings FROM runs").fetchone()[0]
    with RunStore(path) as store:  # migrated: the record in the file is the spec now
        (migrated,) = store.runs()
    stored = json.loads(sqlite3.connect(path).execute("SELECT settings FROM runs").fetchone()[0])
    assert migrated.spec == run.spec and stored["spec"]["judging"]["model"] == "baseline/lexical"
    argv = shlex.split(resume_command(run.spec))
    assert argv[:2] == ["judgeflow", "run"] and "--resume" in argv
    assert main([*argv[1:], "--store", str(path), "--no-progress"]) == 0
    assert f"resuming run {run.run_id}: 2 of 4 rows already done" in capsys.readouterr().err


def test_a_0_1_0_flat_record_without_a_judging_spec_is_brought_forward() -> None:
    """Records from before the judging spec (0.1.0) hold only the flat settings: step 3 reads the
    judge, a panel or a cascade from them."""
    from judgeflow.config.judging import CascadeSpec, PanelSpec, RepeatsSpec
    from judgeflow.config.run import RunSpec

    flat = {"model": "openai/a", "mode": "auto", "strategy": "single", "temperature": 0.7, "retries": 1,
            "criterion": "factual_correctness@abc", "criterion_arg": "factual_correctness", "turns": "all"}
    one = RunSpec.model_validate(migrations.current_record(flat, "in.jsonl", "out.jsonl")["spec"])
    judge = one.judging
    assert judge.kind == "judge" and judge.strategy == "single" and judge.criterion == "factual_correctness"
    assert judge.client.temperature == 0.7 and judge.client.provider_retries == 1 and one.turns == "all"
    repeated = migrations.current_record({**flat, "repeats": 3})["spec"]
    assert isinstance(RunSpec.model_validate(repeated).judging, RepeatsSpec)
    panel = {**flat, "ensemble": {"panel": "openai/a,openai/b", "panel_rule": "any", "samples": 1}}
    assert isinstance(RunSpec.model_validate(migrations.current_record(panel)["spec"]).judging, PanelSpec)
    cascade = {**flat, "ensemble": {"cascade": "openai/a,openai/b", "audit_rate": 0.1}}
    spec = RunSpec.model_validate(migrations.current_record(cascade)["spec"]).judging
    assert isinstance(spec, CascadeSpec) and spec.strong.model == "openai/b" and spec.audit_rate == 0.1
