"""A batch run driven from Python, without the CLI: `runs.batch.lifecycle` yields typed events.

Against the in-repository fake of both batch APIs (tests/fakes/provider.py: OpenAI's Batch API and
Anthropic's Message Batches over HTTP), with the real SDKs and Instructor's real parsing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeProvider

from judgeflow.config import ClientConfig, JudgeSpec, RunSpec
from judgeflow.runs.batch import lifecycle
from judgeflow.runs.batch.events import (
    Abandoned,
    Adopted,
    Collected,
    Event,
    FilesDeleted,
    Finished,
    Polled,
    Rejudged,
    RunState,
    StillOpen,
    Submitted,
    Waiting,
)
from judgeflow.runs.batch.ledger import BatchLedger
from judgeflow.runs.run import Run
from judgeflow.runs.store import RunStore


@pytest.fixture
def fake():
    with FakeProvider() as f:
        yield f


def items(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "reference": "Paris", "question": "Capital of France?",
                                        "answer": f"Item-{i:03d} says Paris. It is the capital."}) + "\n"
                            for i in range(n)))
    return path


def spec(tmp_path: Path, fake: FakeProvider, provider: str, **judge: object) -> RunSpec:
    base = fake.base_url + ("/v1" if provider == "openai" else "")
    return RunSpec(judging=JudgeSpec(model=f"{provider}/fake-judge", client=ClientConfig(base_url=base), **judge),
                   input=str(items(tmp_path / "in.jsonl", 3)), output=str(tmp_path / "out.jsonl"), batch=True,
                   store=str(tmp_path / "runs.sqlite"))


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_run_end_to_end_from_python(tmp_path: Path, fake: FakeProvider, provider: str) -> None:
    fake.batch.polls = 1  # the first status check of each batch says "in progress"
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, spec(tmp_path, fake, provider))
        first = list(lifecycle.submit(run))
        assert kinds(first) == ["Submitted"]
        sub = first[0]
        assert isinstance(sub, Submitted)
        assert (sub.run_id, sub.round, sub.provider, sub.requests, sub.done, sub.total) == (run.run_id, 1, provider,
                                                                                              3, 0, 3)
        assert list(sub.batch_ids) == [j.batch_id for j in BatchLedger(store).jobs(run.run_id)]

        status = list(lifecycle.status(store, run.run_id))
        assert isinstance(status[0], RunState) and (status[0].status, status[0].batches) == ("batch", 1)
        polled = status[1]
        assert isinstance(polled, Polled) and polled.batch_id == sub.batch_ids[0] and not polled.done

        sleeps: list[float] = []
        events = list(lifecycle.collect(store, run.run_id, wait=5, sleep=sleeps.append))
    # round 1 ends, round 2 (the check calls) is submitted, waited for once, collected; the run finishes
    assert kinds(events) == ["Polled", "Collected", "FilesDeleted", "Submitted", "Polled", "Waiting",
                             "Polled", "Collected", "FilesDeleted", "Finished"]
    assert sleeps == [5]
    collected = [e for e in events if isinstance(e, Collected)]
    assert [(c.ok, c.failed, c.partial) for c in collected] == [(3, 0, False), (3, 0, False)]
    assert all(isinstance(e, FilesDeleted) and not e.left for e in events if isinstance(e, FilesDeleted))
    assert [len(b) for b in fake.batch.submitted] == [3, 3]
    assert fake.requests == []  # nothing went online
    done = events[-1]
    assert isinstance(done, Finished) and done.failure is None and done.output == str(tmp_path / "out.jsonl")
    assert (done.tally.rows, done.tally.judged, done.tally.label_1) == (3, 3, 3)
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(r["id"], r["status"], r["label"]) for r in rows] == [("q0", "judged", 1), ("q1", "judged", 1),
                                                                  ("q2", "judged", 1)]


def test_collect_without_wait_stops_at_a_batch_still_running(tmp_path: Path, fake: FakeProvider) -> None:
    fake.batch.polls = 5
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, spec(tmp_path, fake, "openai", strategy="single"))
        list(lifecycle.submit(run))
        events = list(lifecycle.collect(store, run.run_id))
        assert kinds(events) == ["Polled", "Waiting"]
        assert isinstance(events[1], Waiting) and events[1].seconds is None
        assert store.get_run(run.run_id).status == "batch"


def test_an_invalid_reply_is_reported_and_rejudged_online(tmp_path: Path, fake: FakeProvider) -> None:
    fake.batch.corrupt = {"Item-001": {"claims": "not a list"}}
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, spec(tmp_path, fake, "openai"))
        list(lifecycle.submit(run))
        events = list(lifecycle.collect(store, run.run_id, wait=0.01, online=True, sleep=lambda s: None))
    rejudged = [e for e in events if isinstance(e, Rejudged)]
    assert [e.items for e in rejudged] == [1]
    done = events[-1]
    assert isinstance(done, Finished) and (done.tally.judged, done.tally.unscored) == (3, 0)
    assert len(fake.requests) == 2  # q1 alone, online: decompose and check


def test_a_finished_run_that_judged_nothing_says_why(tmp_path: Path, fake: FakeProvider) -> None:
    fake.batch.corrupt = {f"Item-00{i}": {"claims": "not a list"} for i in range(3)}
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, spec(tmp_path, fake, "openai"))
        list(lifecycle.submit(run))
        done = list(lifecycle.collect(store, run.run_id, wait=0.01, sleep=lambda s: None))[-1]
        assert isinstance(done, Finished) and done.failure and "nothing was judged" in done.failure
        again = list(lifecycle.collect(store, run.run_id))  # a done run: finished again, the same truth
        assert kinds(again) == ["Finished"] and isinstance(again[0], Finished) and again[0].failure == done.failure


def test_an_interrupted_submission_is_adopted_or_abandoned(tmp_path: Path, fake: FakeProvider) -> None:
    """A kill after submitting leaves an intent the provider has a batch for (adopted); an intent it has
    no batch for is abandoned and its requests go into the next submission."""
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = Run.open(store, spec(tmp_path, fake, "openai", strategy="single"))
        list(lifecycle.submit(run))
        ledger = BatchLedger(store)
        job = ledger.jobs(run.run_id)[0]
        ledger.add_intent(run.run_id, job.tag, job.round, job.part, job.provider, list(job.keys))  # its id unheard of
        provider = lifecycle.provider_for(store.get_run(run.run_id))
        adopted = list(lifecycle.reconcile(store, run.info, provider))
        assert kinds(adopted) == ["Adopted"] and isinstance(adopted[0], Adopted)
        assert adopted[0].batch_id == job.batch_id
        ledger.add_intent(run.run_id, "judgeflow-never-sent", 2, 1, "openai", ["k"])
        events = list(lifecycle.settle(store, store.get_run(run.run_id)))
        assert kinds(events) == ["Abandoned"]
        assert isinstance(events[0], Abandoned) and events[0].tag == "judgeflow-never-sent" and not events[0].left
        still = list(lifecycle.step(run, lifecycle.input_rows(run), provider))
        assert kinds(still) == ["StillOpen"] and isinstance(still[0], StillOpen)
        assert still[0].batch_ids == (job.batch_id,)
        assert [j.status for j in ledger.jobs(run.run_id)] == ["submitted", "abandoned"]
