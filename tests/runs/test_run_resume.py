"""`judgeflow run` with the run store: resume after a kill or Ctrl-C, the response cache, and
clear errors for a changed input, other settings, or an output that cannot be written.

The provider is tests/fakes/provider.py: a real HTTP server on 127.0.0.1 speaking the OpenAI
wire format, so a judge in a subprocess can reach it and every request is counted.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from judgeflow import Judge
from judgeflow.cli import main
from judgeflow.runs.run import Run
from judgeflow.runs.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
from fakes import FakeProvider, start_cli, wait_for_results  # noqa: E402

MODEL = "openai/fake-judge"
_TOKEN = re.compile(r"Item-(\d{3})")


@pytest.fixture
def fake():
    with FakeProvider() as f:
        yield f


def write_items(path: Path, n: int, *, start: int = 0) -> Path:
    with path.open("w") as f:
        for i in range(start, start + n):
            f.write(json.dumps({"id": f"q{i:03d}", "question": f"Question {i}?", "reference": "Paris",
                                "answer": f"Item-{i:03d} says Paris. It is the capital."}) + "\n")
    return path


def items_asked(fake: FakeProvider, since: int = 0) -> Counter[str]:
    """How many requests mention each item (its Item-NNN token), from request number `since` on."""
    seen: Counter[str] = Counter()
    for body in fake.requests[since:]:
        text = " ".join(str(m.get("content")) for m in body.get("messages", []))
        seen.update(set(_TOKEN.findall(text)))
    return seen


def run_args(tmp_path: Path, fake: FakeProvider, inp: Path, *extra: str, model: str = MODEL) -> list[str]:
    return ["run", str(inp), "-o", str(tmp_path / "out.jsonl"), "--model", model,
            "--base-url", fake.base_url + "/v1", "--store", str(tmp_path / "runs.sqlite"), "--no-progress", *extra]


def out_rows(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_resume_after_a_kill_judges_only_what_was_left(tmp_path: Path) -> None:
    inp = write_items(tmp_path / "in.jsonl", 40)
    with FakeProvider(latency=0.05) as fake:
        proc = start_cli(run_args(tmp_path, fake, inp, "--concurrency", "2"), tmp_path)
        wait_for_results(tmp_path / "runs.sqlite", 8, proc)
        proc.send_signal(signal.SIGKILL)  # no clean-up of any kind: as a crash or power loss
        proc.wait()
        time.sleep(0.5)  # let the server read requests the dead process had already sent
        with RunStore(tmp_path / "runs.sqlite") as store:
            (run,) = store.runs()
            done = store.done_ids(run.run_id)
        assert 8 <= len(done) < 40
        before = len(fake.requests)
        fake.latency = 0.0
        assert main(run_args(tmp_path, fake, inp, "--resume")) == 0
        asked_again = items_asked(fake, before)
    rows = out_rows(tmp_path)
    assert [r["id"] for r in rows] == [f"q{i:03d}" for i in range(40)]  # every row once, input order
    assert all(r["label"] in (0, 1) for r in rows)
    finished_before = {d[1:] for d in done}
    assert not finished_before & set(asked_again)  # no call for an item finished before the kill
    assert set(asked_again) | finished_before == {f"{i:03d}" for i in range(40)}
    assert all(n == 2 for n in asked_again.values()), asked_again  # decompose + check, once each


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_prints_the_resume_command(tmp_path: Path) -> None:
    inp = write_items(tmp_path / "in.jsonl", 30)
    with FakeProvider(latency=0.05) as fake:
        proc = start_cli(run_args(tmp_path, fake, inp, "--concurrency", "2"), tmp_path)
        wait_for_results(tmp_path / "runs.sqlite", 5, proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        saved = len(out_rows(tmp_path))
        assert 5 <= saved < 30 and "Traceback" not in err
        assert f"{saved} of 30 rows are saved" in err
        command = err.split("Resume with:")[1].strip().splitlines()[0]
        argv = shlex.split(command)
        assert argv[:2] == ["judgeflow", "run"] and argv[-1] == "--resume"
        before = len(fake.requests)
        fake.latency = 0.0
        assert main(argv[1:]) == 0
        assert len(items_asked(fake, before)) <= 30 - saved + 2  # at most the 2 in flight are asked again
    ids = [r["id"] for r in out_rows(tmp_path)]
    assert ids == sorted(set(ids)) and len(ids) == 30


def test_a_rerun_is_served_from_the_cache_with_no_request(tmp_path: Path, fake: FakeProvider, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 12)
    assert main(run_args(tmp_path, fake, inp)) == 0
    first = out_rows(tmp_path)
    assert len(fake.requests) == 24
    assert main(run_args(tmp_path, fake, inp)) == 0  # a new run, not --resume
    assert len(fake.requests) == 24
    assert "served from cache: 12" in capsys.readouterr().err
    second = out_rows(tmp_path)
    assert [(r["id"], r["label"]) for r in second] == [(r["id"], r["label"]) for r in first]
    assert all(r["usage"]["calls"] == 0 for r in second)
    assert main(run_args(tmp_path, fake, inp, "--no-cache")) == 0
    assert len(fake.requests) == 48
    assert main(run_args(tmp_path, fake, inp, model="openai/another-judge")) == 0  # a changed model
    assert len(fake.requests) == 72


def test_the_cache_is_keyed_by_content_not_by_id(tmp_path: Path, fake: FakeProvider) -> None:
    inp = write_items(tmp_path / "in.jsonl", 4)
    assert main(run_args(tmp_path, fake, inp)) == 0
    rows = [json.loads(line) for line in inp.read_text().splitlines()]
    rows[0]["id"] = "renamed"  # same content: still cached
    rows[1]["answer"] += " Also Rome."  # changed content: judged again
    inp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = len(fake.requests)
    assert main(run_args(tmp_path, fake, inp)) == 0
    assert items_asked(fake, before) == Counter({"001": 2})
    assert out_rows(tmp_path)[0]["id"] == "renamed"


@pytest.mark.slow
def test_a_changed_criterion_invalidates_exactly_its_items(tmp_path: Path, fake: FakeProvider) -> None:
    crit = tmp_path / "mine.toml"
    crit.write_text((ROOT / "criteria" / "factual_correctness.toml").read_text().replace(
        'name = "factual_correctness"', 'name = "mine"'))
    inp = tmp_path / "in.jsonl"
    with inp.open("w") as f:
        for i in range(6):  # even rows use my criterion, odd rows route to source_faithfulness
            row = {"id": f"q{i:03d}", "answer": f"Item-{i:03d} says Paris. It is the capital."}
            row |= {"criterion": str(crit), "reference": "Paris"} if i % 2 == 0 else {"source": "Paris is the capital."}
            f.write(json.dumps(row) + "\n")
    args = run_args(tmp_path, fake, inp)
    assert main(args) == 0
    assert len(fake.requests) == 12
    # Later runs go through a new process, as a user's would: criteria are cached per process.
    crit.write_text("# a comment changes nothing the judge sees\n" + crit.read_text())
    subprocess.run([sys.executable, "-m", "judgeflow", *args], check=True, capture_output=True)
    assert len(fake.requests) == 12
    crit.write_text(crit.read_text().replace("Split the answer into short", "Split the answer into brief"))
    before = len(fake.requests)
    subprocess.run([sys.executable, "-m", "judgeflow", *args], check=True, capture_output=True)
    assert items_asked(fake, before) == Counter({"000": 2, "002": 2, "004": 2})


def test_resume_refuses_a_changed_input_file(tmp_path: Path, fake: FakeProvider, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 3)
    assert main(run_args(tmp_path, fake, inp)) == 0
    write_items(inp, 3, start=100)
    assert main(run_args(tmp_path, fake, inp, "--resume")) == 2
    err = capsys.readouterr().err
    assert "in.jsonl changed since run" in err and "without --resume" in err
    assert len(out_rows(tmp_path)) == 3  # the finished results are untouched


def test_resume_refuses_other_settings(tmp_path: Path, fake: FakeProvider, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 3)
    assert main(run_args(tmp_path, fake, inp)) == 0
    assert main(run_args(tmp_path, fake, inp, "--strategy", "single", "--resume")) == 2
    assert "strategy: 'graph' then, 'single' now" in capsys.readouterr().err


def test_resume_with_nothing_to_resume_says_so(tmp_path: Path, fake: FakeProvider, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 2)
    assert main(run_args(tmp_path, fake, inp, "--resume")) == 2
    assert "nothing to resume" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a read-only /sys (Linux)")
def test_an_output_path_that_cannot_be_written_fails_before_any_call(tmp_path: Path, fake: FakeProvider, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 2)
    args = run_args(tmp_path, fake, inp)
    args[args.index("-o") + 1] = "/sys/judgeflow-out.jsonl"
    assert main(args) == 2
    assert "/sys: cannot write the output there" in capsys.readouterr().err
    assert fake.requests == []


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root ignores file modes")
def test_a_read_only_output_file_is_refused(tmp_path: Path, fake: FakeProvider, capsys) -> None:
    inp = write_items(tmp_path / "in.jsonl", 2)
    out = tmp_path / "out.jsonl"
    out.write_text("")
    out.chmod(0o444)
    assert main(run_args(tmp_path, fake, inp)) == 2
    assert "read-only" in capsys.readouterr().err


def test_api_keys_never_reach_the_store_or_the_output(tmp_path: Path, fake: FakeProvider, monkeypatch) -> None:
    secret = "sk-test-SECRET-4242"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    inp = write_items(tmp_path / "in.jsonl", 2)
    assert main(run_args(tmp_path, fake, inp, "--trace")) == 0
    assert len(fake.requests) == 4
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert secret.encode() not in p.read_bytes(), p


def test_python_api_resume_after_cancelling_the_run(tmp_path: Path, fake: FakeProvider) -> None:
    items = [{"id": f"q{i:03d}", "reference": "Paris", "answer": f"Item-{i:03d} says Paris."} for i in range(20)]
    judge = Judge(MODEL, base_url=fake.base_url + "/v1", api_key="test", concurrency=4)

    async def first(store: RunStore, run: str) -> list[str]:
        got = []
        async for j in Run.attach(store, run).judge(judge, items):
            got.append(j.id)
            if len(got) == 7:
                break  # the consumer stops: in-flight items are cancelled, nothing half-written
        return got

    async def rest(store: RunStore, run: str) -> list[str]:
        return [j.id async for j in Run.attach(store, run).judge(judge, items)]

    with RunStore(tmp_path / "s.sqlite") as store:
        run = store.start_run(settings={})
        got = asyncio.run(first(store, run))
        done = store.done_ids(run)
        assert set(got) <= done and len(done) >= 7
        before = len(fake.requests)
        resumed = asyncio.run(rest(store, run))
        assert not set(resumed) & done
        assert sorted(done | set(resumed)) == [it["id"] for it in items]
        assert not {f"q{t}" for t in items_asked(fake, before)} & done
        assert [j.id for j in store.results(run)] == [it["id"] for it in items]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again: nothing listens there


def test_a_run_stopped_on_a_bad_endpoint_resumes_with_the_corrected_base_url(tmp_path: Path, fake: FakeProvider,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The endpoint is where requests go, not a judging setting: the printed resume command, with
    the fixed --base-url, continues the run (before: refused as "other settings"), and the run
    records the endpoint it finished with."""
    inp = write_items(tmp_path / "in.jsonl", 4)
    args = run_args(tmp_path, fake, inp)
    args[args.index("--base-url") + 1] = f"http://127.0.0.1:{_free_port()}/v1"
    assert main(args) == 3  # refused connections: the run stops, saying how to continue
    err = capsys.readouterr().err
    resume = shlex.split(err[err.index("continue with:") + len("continue with:"):].split("\n\n")[0].replace("\n", " "))
    assert resume[:2] == ["judgeflow", "run"] and "--resume" in resume
    resume[resume.index("--base-url") + 1] = fake.base_url + "/v1"
    assert main(resume[1:]) == 0, capsys.readouterr().err
    assert [r["status"] for r in out_rows(tmp_path)] == ["judged"] * 4
    assert "endpoint" in capsys.readouterr().err  # said: the base URL changed, and is recorded
    with RunStore(tmp_path / "runs.sqlite") as store:
        (run,) = store.runs()
    assert run.base_url == fake.base_url + "/v1"
    assert fake.base_url in run.command


def test_a_changed_model_is_still_refused_on_resume(tmp_path: Path, fake: FakeProvider,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    inp = write_items(tmp_path / "in.jsonl", 2)
    assert main(run_args(tmp_path, fake, inp)) == 0
    assert main(run_args(tmp_path, fake, inp, "--resume", model="openai/another-judge")) == 2
    assert "other settings (model:" in capsys.readouterr().err
