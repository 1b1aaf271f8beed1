"""Issue #25, the run store, batches and input files: each test drives the CLI (in process through
`judgeflow.cli.main`, or as a child process) over real files, a real SQLite store and the fake
provider over HTTP, and failed before its fix."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import FakeProvider, start_cli

from judgeflow.cli import main
from judgeflow.runs.store import RunStore


def write_items(path: Path, n: int, **extra: object) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "question": "Capital of France?", "reference": "Paris",
                                        "answer": f"Item-{i:03d} says Paris.", **extra}) + "\n" for i in range(n)))
    return path


def offline(tmp_path: Path, inp: Path | str, *extra: str) -> list[str]:
    return ["run", str(inp), "-o", str(tmp_path / "out.jsonl"), "--store", str(tmp_path / "runs.sqlite"),
            "--model", "baseline/lexical", "--no-progress", *extra]


def batch_args(tmp_path: Path, fake: FakeProvider, *extra: str) -> list[str]:
    return ["run", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"), "--model", "openai/fake-judge",
            "--base-url", fake.base_url + "/v1", "--store", str(tmp_path / "runs.sqlite"), "--no-progress",
            "--batch", *extra]


def the_run(tmp_path: Path) -> str:
    with RunStore(tmp_path / "runs.sqlite") as store:
        return store.runs()[0].run_id


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# 4. `run - --batch` paid for a batch `collect` could never read back --------------------------------

def test_batch_from_stdin_is_refused_before_anything_is_submitted(tmp_path: Path, monkeypatch, capsys) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(write_items(tmp_path / "in.jsonl", 2).read_bytes())))
    with FakeProvider() as fake:
        code = main(batch_args(tmp_path, fake)[:1] + ["-"] + batch_args(tmp_path, fake)[2:])
        assert fake.batch.submitted == [] and fake.batch.files == {}  # nothing uploaded, nothing paid for
    assert code == 2
    assert "--batch needs the items in a file" in capsys.readouterr().err


def test_collect_of_a_stdin_batch_run_says_why_it_cannot(tmp_path: Path, capsys) -> None:
    """A store written before the refusal may hold such a run: collect says so (it read stdin again)."""
    with RunStore(tmp_path / "runs.sqlite") as store:
        old = {"model": "openai/fake-judge", "base_url": "http://127.0.0.1:9/v1", "strategy": "graph"}  # flat
        run_id = store.start_run(settings=old,
                                 input_path="-", input_sha="x",
                                 output_path=str(tmp_path / "out.jsonl"), total=2)
        from judgeflow.runs.batch.ledger import BatchLedger

        BatchLedger(store).add_intent(run_id, "t", 1, 1, "openai", ["k"])
        BatchLedger(store).mark_job(run_id, "t", "completed")
        store.set_status(run_id, "batch")
    assert main(["batch", "collect", run_id, "--store", str(tmp_path / "runs.sqlite")]) == 2
    assert "read its items from stdin" in capsys.readouterr().err


# 7. -o equal to --store, and --store equal to the input ---------------------------------------------

@pytest.mark.parametrize("exists", [True, False])
def test_output_equal_to_the_store_is_refused(tmp_path: Path, exists: bool, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 3)
    store = tmp_path / "runs.sqlite"
    if exists:
        RunStore(store).close()
    args = offline(tmp_path, inp)
    args[args.index("-o") + 1] = str(store)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "is the run store" in err and "give another -o path" in err
    if exists:  # the store is untouched, still a store
        with RunStore(store) as s:
            assert s.runs() == []
    else:
        assert not store.exists()


def test_store_equal_to_the_input_is_refused_and_the_input_kept(tmp_path: Path, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 3)
    before = inp.read_bytes()
    args = offline(tmp_path, inp)
    args[args.index("--store") + 1] = str(inp)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "the run store is the input file" in err and "corrupted" not in err
    assert inp.read_bytes() == before


# 13. batch collect --wait, a damaged schema value, SIGTERM of collect ---------------------------------

@pytest.mark.parametrize("wait", ["-1", "nan", "inf", "0"])
def test_collect_wait_must_be_a_positive_number_of_seconds(tmp_path: Path, wait: str, capsys) -> None:
    write_items(tmp_path / "in.jsonl", 2)
    with FakeProvider() as fake:
        fake.batch.polls = 100  # still in progress: collect would sleep --wait seconds
        assert main(batch_args(tmp_path, fake)) == 0
        with pytest.raises(SystemExit) as e:
            main(["batch", "collect", the_run(tmp_path), "--store", str(tmp_path / "runs.sqlite"), "--wait", wait])
    assert e.value.code == 2
    assert f"{wait!r} is not a number of seconds above 0" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["x", "", "9"])
def test_a_store_with_a_damaged_schema_value_names_the_file_and_the_fix(tmp_path: Path, value: str, capsys) -> None:
    path = tmp_path / "runs.sqlite"
    RunStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value=? WHERE key='schema'", (value,))
    db.commit()
    db.close()
    assert main(["batch", "status", "r1", "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "--store" in err and "Traceback" not in err


@pytest.mark.slow
def test_sigterm_of_batch_collect_prints_how_to_continue(tmp_path: Path) -> None:
    write_items(tmp_path / "in.jsonl", 2)
    store = tmp_path / "runs.sqlite"
    with FakeProvider() as fake:
        fake.batch.polls = 10_000
        assert main(batch_args(tmp_path, fake)) == 0
        run_id = the_run(tmp_path)
        proc = start_cli(["batch", "collect", run_id, "--store", str(store), "--wait", "0.2"], tmp_path)
        deadline = time.monotonic() + 60
        while sum(b["polls"] for b in fake.batch.batches.values()) < 2:  # it is polling
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert f"judgeflow batch collect {run_id} --store {store}" in err and "Traceback" not in err


# 14c. a JSON line with a repeated key ---------------------------------------------------------------

def test_a_repeated_key_makes_that_row_invalid_naming_the_key(tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"id": "a", "question": "Capital?", "reference": "Paris", "answer": "Paris", "answer": "Rome"}\n'
                   '{"id": "b", "question": "Capital?", "reference": "Paris", "answer": "Paris", '
                   '"meta": {"k": 1, "k": 2}}\n'
                   '{"id": "c", "question": "Capital?", "reference": "Paris", "answer": "Paris"}\n')
    assert main(offline(tmp_path, inp)) == 0
    rows = rows_of(tmp_path / "out.jsonl")
    assert [r["status"] for r in rows] == ["invalid", "invalid", "judged"]
    assert "the key 'answer' appears twice" in rows[0]["error"] and "in.jsonl:1" in rows[0]["error"]
    assert "the key 'k' appears twice" in rows[1]["error"]


def test_a_repeated_key_in_a_json_array_makes_only_that_item_invalid(tmp_path: Path) -> None:
    inp = tmp_path / "in.json"
    inp.write_text('[{"id": "a", "reference": "Paris", "answer": "Paris", "answer": "Rome"},'
                   ' {"id": "b", "reference": "Paris", "answer": "Paris"}]')
    assert main(offline(tmp_path, inp)) == 0
    rows = rows_of(tmp_path / "out.jsonl")
    assert [r["status"] for r in rows] == ["invalid", "judged"]
    assert "the key 'answer' appears twice" in rows[0]["error"]


def test_a_repeated_csv_column_is_refused(tmp_path: Path, capsys) -> None:
    inp = tmp_path / "in.csv"
    inp.write_text("id,reference,answer,answer\nq1,Paris,Paris,Rome\n")
    assert main(offline(tmp_path, inp)) == 2
    assert "the column 'answer' appears twice in the header" in capsys.readouterr().err


@pytest.mark.slow
def test_the_real_cli_reads_a_repeated_key_as_invalid(tmp_path: Path) -> None:
    """The same through a child process reading stdin (the JSONL stream path)."""
    line = '{"id": "a", "reference": "Paris", "answer": "Paris", "answer": "Rome"}\n'
    proc = subprocess.run([sys.executable, "-m", "judgeflow", *offline(tmp_path, "-")], input=line, text=True, check=False,
                          capture_output=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stderr  # nothing judged
    assert "appears twice" in rows_of(tmp_path / "out.jsonl")[0]["error"]


# 10. a cache or result row that no longer validates ----------------------------------------------------

def _poison(store: Path, sql: str) -> None:
    db = sqlite3.connect(store)
    db.execute(sql)
    db.commit()
    db.close()


def test_a_poisoned_cache_row_is_a_miss_counted_in_the_summary(tmp_path: Path, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 3)
    assert main(offline(tmp_path, inp)) == 0
    first = rows_of(tmp_path / "out.jsonl")
    _poison(tmp_path / "runs.sqlite", """UPDATE cache SET judgment = '{"id": "x", "label": 7}'""")
    capsys.readouterr()
    assert main(offline(tmp_path, inp, "--json")) == 0  # a new run over the same items: every lookup hits a bad row
    summary = json.loads(capsys.readouterr().out)
    assert summary["unreadable"] == {"cache": 3} and summary["cached"] == 0
    again = rows_of(tmp_path / "out.jsonl")
    assert [(r["id"], r["label"], r["status"]) for r in again] == [(r["id"], r["label"], r["status"]) for r in first]
    assert main(offline(tmp_path, inp)) == 0  # judged again, so the bad rows were replaced: served from the cache now
    assert "could not read" not in capsys.readouterr().err
    assert all(r["status"] == "judged" for r in rows_of(tmp_path / "out.jsonl"))


def test_a_poisoned_result_row_is_unscored_then_judged_again_on_resume(tmp_path: Path, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 4)
    assert main(offline(tmp_path, inp)) == 0
    bad = '{"id": "q1", "label": "maybe"}'
    _poison(tmp_path / "runs.sqlite", f"UPDATE results SET judgment = '{bad}' WHERE item_id='q1'")
    rows = "SELECT item_id, status, judgment FROM results ORDER BY item_id"
    before = sqlite3.connect(tmp_path / "runs.sqlite").execute(rows).fetchall()
    with RunStore(tmp_path / "runs.sqlite") as store:  # reading says why, and never writes (#49)
        read = {j.id: j for j in store.results(store.runs()[0].run_id)}
        assert store.unreadable["results"] == 1
    assert read["q1"].status == "unscored" and "the stored result could not be read (label" in (read["q1"].error or "")
    assert sqlite3.connect(tmp_path / "runs.sqlite").execute(rows).fetchall() == before
    assert ("q1", "judged", bad) in before
    capsys.readouterr()
    assert main(offline(tmp_path, inp, "--resume")) == 0  # the unreadable row is not finished: judged again
    assert "Traceback" not in capsys.readouterr().err
    assert [r["status"] for r in rows_of(tmp_path / "out.jsonl")] == ["judged"] * 4


# 3. one writer per run ------------------------------------------------------------------------------

def _online(tmp_path: Path, fake: FakeProvider, *extra: str) -> list[str]:
    return ["run", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"), "--model", "openai/fake-judge",
            "--base-url", fake.base_url + "/v1", "--store", str(tmp_path / "runs.sqlite"), "--no-progress",
            "--concurrency", "2", *extra]


def _interrupted_run(tmp_path: Path, fake: FakeProvider, n: int) -> int:
    """A run of `n` items stopped by SIGTERM after a few; returns the rows it finished."""
    from fakes import stored_count, wait_for_results

    write_items(tmp_path / "in.jsonl", n)
    proc = start_cli(_online(tmp_path, fake), tmp_path)
    wait_for_results(tmp_path / "runs.sqlite", 3, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    return stored_count(tmp_path / "runs.sqlite")


@pytest.mark.slow
def test_two_resumes_of_one_run_judge_what_is_left_once(tmp_path: Path) -> None:
    """Two real processes resume one run at once: one judges the rest, the other is refused with a
    clear line before it judges anything. Before, both judged everything left (both exit 0)."""
    n = 24
    with FakeProvider(latency=0.05) as fake:
        done = _interrupted_run(tmp_path, fake, n)
        calls_before = len(fake.requests)
        procs = [start_cli(_online(tmp_path, fake, "--resume"), tmp_path) for _ in range(2)]
        outs = [p.communicate(timeout=180) for p in procs]
        codes = sorted(p.returncode for p in procs)
        assert codes == [0, 2], outs
        refused = next(err for p, (_, err) in zip(procs, outs) if p.returncode == 2)
        assert "is being written by another judgeflow process (pid " in refused and "Traceback" not in refused
        assert len(fake.requests) - calls_before == 2 * (n - done)  # decompose + check, once per item left
    assert [r["status"] for r in rows_of(tmp_path / "out.jsonl")] == ["judged"] * n


@pytest.mark.slow
def test_the_lock_of_a_killed_run_is_free_at_once(tmp_path: Path) -> None:
    """kill -9 leaves the lock file behind, but no lock: the resume goes ahead."""
    from fakes import wait_for_results

    write_items(tmp_path / "in.jsonl", 12)
    with FakeProvider(latency=0.05) as fake:
        proc = start_cli(_online(tmp_path, fake), tmp_path)
        wait_for_results(tmp_path / "runs.sqlite", 2, proc)
        proc.kill()
        proc.wait(30)
        assert list((tmp_path / "runs.sqlite.locks").glob("*.lock"))  # left behind by the killed process
        assert main(_online(tmp_path, fake, "--resume")) == 0
    assert len(rows_of(tmp_path / "out.jsonl")) == 12
    assert not list((tmp_path / "runs.sqlite.locks").glob("*.lock"))  # removed on release


@pytest.mark.slow
def test_a_second_collect_of_a_batch_run_is_refused(tmp_path: Path) -> None:
    """Two real `batch collect` processes of one run: the second is refused while the first polls
    (before, both polled, and both would submit the next round when the batch ended)."""
    write_items(tmp_path / "in.jsonl", 2)
    store = ["--store", str(tmp_path / "runs.sqlite")]
    with FakeProvider() as fake:
        fake.batch.polls = 10_000
        assert main(batch_args(tmp_path, fake)) == 0
        run_id = the_run(tmp_path)
        first = start_cli(["batch", "collect", run_id, *store, "--wait", "0.1"], tmp_path)
        deadline = time.monotonic() + 60
        while sum(b["polls"] for b in fake.batch.batches.values()) < 1:  # the first one is polling
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.05)
        second = subprocess.run([sys.executable, "-m", "judgeflow", "batch", "collect", run_id, *store], cwd=tmp_path,
                                capture_output=True, text=True, timeout=120, check=False)
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    assert second.returncode == 2, second.stderr
    assert f"run {run_id} is being written by another judgeflow process (pid {first.pid}" in second.stderr


# 12. an upload left at the provider by a kill -----------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("then", ["status", "collect", "resume"])
def test_an_upload_left_by_a_kill_is_deleted_by_the_next_command(tmp_path: Path, then: str) -> None:
    """`run --batch` killed (-9) after uploading the batch input file, before the batch exists: the
    file, with every prompt, stayed at the provider forever. The next command deletes it."""
    import threading

    write_items(tmp_path / "in.jsonl", 3)
    store = ["--store", str(tmp_path / "runs.sqlite")]
    with FakeProvider() as fake:
        fake.batch.stall_create = threading.Event()
        proc = start_cli(batch_args(tmp_path, fake), tmp_path)
        deadline = time.monotonic() + 60
        while not fake.batch.create_calls:  # uploaded; the create is in flight
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        proc.kill()
        proc.wait(30)
        fake.batch.stall_create.set()
        fake.batch.stall_create = None
        [upload] = list(fake.batch.files)
        assert fake.batch.names[upload].startswith("judgeflow-") and fake.batch.deleted == []
        run_id = the_run(tmp_path)
        if then == "resume":
            assert main(batch_args(tmp_path, fake, "--resume")) == 0  # resumes by submitting the round again
        else:
            assert main(["batch", then, run_id, *store]) == 0
        assert upload in fake.batch.deleted
        if then != "status":  # the round was submitted again, from a new upload: one batch, no orphan
            assert len(fake.batch.submitted) == 1


@pytest.mark.parametrize("link", ["hard", "symbolic"])
def test_a_link_to_the_store_cannot_give_a_second_lock(tmp_path: Path, link: str, capsys) -> None:
    """Issue 35, item 7: the lock is keyed on the store file's identity, not its name. Before, a hard
    link or a symlink to the store gave a second lock: two `--resume` both ran and both paid."""
    from judgeflow.runs.lock import RunBusy

    write_items(tmp_path / "in.jsonl", 4)
    assert main(offline(tmp_path, tmp_path / "in.jsonl")) == 0
    run_id = the_run(tmp_path)
    other = tmp_path / "elsewhere"
    other.mkdir()
    alias = other / "alias.sqlite"
    if link == "hard":
        alias.hardlink_to(tmp_path / "runs.sqlite")
    else:
        alias.symlink_to(tmp_path / "runs.sqlite")
    with RunStore(tmp_path / "runs.sqlite") as holder:
        holder.claim(run_id)
        with RunStore(alias) as second, pytest.raises(RunBusy, match="being written by another"):
            second.claim(run_id)
        args = offline(tmp_path, tmp_path / "in.jsonl", "--resume")
        args[args.index("--store") + 1] = str(alias)
        capsys.readouterr()
        assert main(args) == 2  # the real CLI, through the link: refused
        assert "is being written by another judgeflow process" in capsys.readouterr().err
    with RunStore(alias) as later:  # released with its holder: free again through either name
        later.claim(run_id)
