"""Batch runs when something goes wrong, against the in-repo schema fake's batch endpoints
(tests/fakes/schema_provider.py + schema_batches.py, as ../shared/tools/fake_llm.py has them: OpenAI
Files + Batches, Anthropic Message Batches; expiry, cancel, failed lines). No scripted replies: the
fake fills the schema, so with it many items end unscored; these tests count lines paid, kept and
sent again, and rows, not labels."""

from __future__ import annotations

import json
import sqlite3
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fakes import SchemaProvider

from judgeflow.cli import main
from judgeflow.results import Judgment
from judgeflow.runs.batch import split
from judgeflow.runs.batch.anthropic import AnthropicBatches
from judgeflow.runs.batch.ledger import MAX_ATTEMPTS, BatchLedger
from judgeflow.runs.batch.openai import OpenAIBatches
from judgeflow.runs.store import RunStore

PROVIDERS = ["openai", "anthropic"]
CLASSES = {"openai": OpenAIBatches, "anthropic": AnthropicBatches}


class FakeLLM:
    """The schema fake on 127.0.0.1 (seed 1); its log tells which lines were answered."""

    def __init__(self, **options: Any) -> None:
        self.provider = SchemaProvider(seed=1, **options).__enter__()
        self.url = self.provider.base_url

    def close(self) -> None:
        self.provider.__exit__()

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path) as r:
            return json.loads(r.read())

    def config(self, *, error_rate: float | None = None, garbage_rate: float | None = None) -> None:
        """Change the fault rates while the fake runs (fake_llm.py's /_fake/config)."""
        faults = self.provider.faults
        faults.error_rate = faults.error_rate if error_rate is None else error_rate
        faults.garbage_rate = faults.garbage_rate if garbage_rate is None else garbage_rate

    def entries(self) -> list[dict[str, Any]]:
        return list(self.provider.log)

    def paid_lines(self) -> Counter[str]:
        """custom_id -> times a batch line was answered (a billed line)."""
        return Counter(e["custom_id"] for e in self.entries() if e.get("batch") and e.get("status") == 200)

    def failed_lines(self) -> int:
        return sum(1 for e in self.entries() if e.get("batch") and e.get("status") != 200)

    def online_calls(self) -> list[dict[str, Any]]:
        return [e for e in self.entries() if e.get("llm") and not e.get("batch")]

    def created(self, provider: str) -> int:
        """Batches created at the provider (from the log: deleted ones count too)."""
        path = "/v1/batches" if provider == "openai" else "/v1/messages/batches"
        return sum(1 for e in self.entries() if e.get("method") == "POST" and e.get("path") == path
                   and e.get("status") == 200)

    def provider_batches(self, provider: str) -> list[dict[str, Any]]:
        path = "/v1/batches?limit=1000" if provider == "openai" else "/v1/messages/batches?limit=1000"
        return self.get(path)["data"]


@pytest.fixture
def start(tmp_path: Path):
    fakes: list[FakeLLM] = []

    def go(**options: Any) -> FakeLLM:
        fakes.append(FakeLLM(**options))
        return fakes[-1]

    yield go
    for f in fakes:
        f.close()


def write_items(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "reference": "Paris", "question": "Capital of France?",
                                        "answer": f"Item-{i:03d} says Paris. It is the capital."}) + "\n"
                            for i in range(n)))
    return path


def run_args(tmp_path: Path, fake: FakeLLM, provider: str, *extra: str, out: str = "out.jsonl",
             strategy: str = "single") -> list[str]:
    """`--strategy single` by default: one batch round per run, so the counts below are one round's
    (the graph strategy's later rounds are covered where a test says so)."""
    base = fake.url + ("/v1" if provider == "openai" else "")
    return ["run", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / out), "--model", f"{provider}/fake-judge",
            "--base-url", base, "--store", str(tmp_path / "runs.sqlite"), "--no-progress", "--strategy", strategy,
            *extra]


def collect(tmp_path: Path, run_id: str, *extra: str) -> int:
    return main(["batch", "collect", run_id, "--store", str(tmp_path / "runs.sqlite"), *extra])


def runs(tmp_path: Path) -> list[str]:
    with RunStore(tmp_path / "runs.sqlite") as store:
        return [r.run_id for r in store.runs()]


def rows(tmp_path: Path, out: str = "out.jsonl") -> list[dict]:
    return [json.loads(line) for line in (tmp_path / out).read_text().splitlines()]


def recorded(tmp_path: Path, run_id: str) -> int:
    with RunStore(tmp_path / "runs.sqlite") as store:
        return store.count(run_id)


def kept_replies(tmp_path: Path, run_id: str) -> int:
    with RunStore(tmp_path / "runs.sqlite") as store:
        BatchLedger(store)
        return store._read("SELECT COUNT(*) FROM batch_replies WHERE run_id=? AND ok=1", (run_id,))[0][0]


# 1. expiry / cancel keep the completed lines ---------------------------------------------------

@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_expired_batch_keeps_its_completed_lines(tmp_path: Path, start, provider: str) -> None:
    fake = start(batch_polls=1, batch_expire_fraction=0.25)
    write_items(tmp_path / "in.jsonl", 20)
    assert main(run_args(tmp_path, fake, provider, "--batch")) == 0
    run_id = runs(tmp_path)[0]
    assert collect(tmp_path, run_id) == 0  # the batch ends expired: 15 answered, 5 not
    assert kept_replies(tmp_path, run_id) == 15
    assert recorded(tmp_path, run_id) == 15  # those items went on (here: unscored by the fake's replies)
    assert fake.created(provider) == 2  # the 5 missing lines, and only they, went out again
    assert collect(tmp_path, run_id, "--wait", "0.01") == 0
    out = rows(tmp_path)
    assert len(out) == 20 and len({r["id"] for r in out}) == 20
    paid = fake.paid_lines()
    assert max(paid.values()) == 1  # no line was paid twice
    assert sum(paid.values()) == kept_replies(tmp_path, run_id)  # every paid line is kept
    assert fake.online_calls() == []
    # A request that expired MAX_ATTEMPTS times ends unscored with the reason, not 0 or 1.
    gave_up = [r for r in out if "expired" in (r["error"] or "") or "no result" in (r["error"] or "")]
    assert all(r["label"] is None and r["status"] == "unscored" for r in gave_up)
    assert len(gave_up) == 20 - sum(paid.values())


def _cancel(fake: FakeLLM, provider: str, batch_id: str) -> None:
    path = f"/v1/batches/{batch_id}/cancel" if provider == "openai" else f"/v1/messages/batches/{batch_id}/cancel"
    urllib.request.urlopen(urllib.request.Request(fake.url + path, data=b"{}", method="POST")).read()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_cancelled_batch_keeps_what_was_done_and_does_not_resubmit(tmp_path: Path, start, provider: str) -> None:
    fake = start(batch_polls=4)
    write_items(tmp_path / "in.jsonl", 20)
    assert main(run_args(tmp_path, fake, provider, "--batch")) == 0
    run_id = runs(tmp_path)[0]
    assert collect(tmp_path, run_id) == 0 and collect(tmp_path, run_id) == 0  # two polls: half done
    _cancel(fake, provider, fake.provider_batches(provider)[0]["id"])
    assert collect(tmp_path, run_id, "--wait", "0.01", "--max-unscored", "1") == 0  # the cancelled rows: unscored
    done = sum(fake.paid_lines().values())
    assert 0 < done < 20
    assert kept_replies(tmp_path, run_id) == done
    assert fake.created(provider) == 1  # a cancel is a decision: nothing sent again
    out = rows(tmp_path)
    assert len(out) == 20
    cancelled = [r for r in out if "cancel" in (r["error"] or "")]
    assert len(cancelled) == 20 - done and all(r["label"] is None for r in cancelled)


# 2. a failed line is retried, never a result, never cached --------------------------------------

@pytest.mark.parametrize("provider", PROVIDERS)
def test_failed_lines_are_sent_again_and_never_served_to_a_later_run(tmp_path: Path, start, provider: str) -> None:
    fake = start(batch_polls=0, error_rate=1.0)
    write_items(tmp_path / "in.jsonl", 10)
    assert main(run_args(tmp_path, fake, provider, "--batch")) == 0
    first = runs(tmp_path)[0]
    assert collect(tmp_path, first, "--wait", "0.01") == 1  # done, but every row unscored: not a success
    assert fake.created(provider) == MAX_ATTEMPTS  # each failed line tried MAX_ATTEMPTS times
    assert fake.failed_lines() == 10 * MAX_ATTEMPTS and not fake.paid_lines()
    assert all(r["status"] == "unscored" and r["label"] is None and "batch request" in r["error"]
               for r in rows(tmp_path))
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert store._read("SELECT COUNT(*) FROM cache")[0][0] == 0

    fake.config(error_rate=0.0)
    assert main(run_args(tmp_path, fake, provider, "--batch", out="again.jsonl")) == 0
    second = runs(tmp_path)[0]
    assert second != first and recorded(tmp_path, second) == 0  # nothing finished "at once" from run 1's failures
    assert fake.created(provider) == MAX_ATTEMPTS + 1
    assert collect(tmp_path, second, "--wait", "0.01") == 0
    assert sum(fake.paid_lines().values()) == 10
    assert not any("batch request" in (r["error"] or "") for r in rows(tmp_path, "again.jsonl"))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_only_the_failed_lines_go_into_the_next_batch(tmp_path: Path, start, provider: str) -> None:
    fake = start(batch_polls=0, error_rate=0.3)
    write_items(tmp_path / "in.jsonl", 20)
    assert main(run_args(tmp_path, fake, provider, "--batch")) == 0
    run_id = runs(tmp_path)[0]
    failed = fake.failed_lines()
    assert 0 < failed < 20
    assert collect(tmp_path, run_id) == 0
    with RunStore(tmp_path / "runs.sqlite") as store:
        jobs = BatchLedger(store).jobs(run_id)
    assert [len(j.keys) for j in jobs] == [20, failed]
    assert max(fake.paid_lines().values()) == 1


def test_a_failed_online_call_is_not_cached_either(tmp_path: Path, start) -> None:
    fake = start(error_rate=1.0)
    write_items(tmp_path / "in.jsonl", 5)
    assert main(run_args(tmp_path, fake, "openai", "--retries", "0")) == 1  # all unscored: a loud exit code
    assert all(r["status"] == "unscored" and "provider error" in r["error"] for r in rows(tmp_path))
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert store._read("SELECT COUNT(*) FROM cache")[0][0] == 0
    fake.config(error_rate=0.0)
    before = len(fake.online_calls())
    assert main(run_args(tmp_path, fake, "openai", "--retries", "0", out="again.jsonl")) == 0
    assert len(fake.online_calls()) - before >= 5  # asked again, item by item
    assert not any(r.get("cached") for r in rows(tmp_path, "again.jsonl"))


def test_the_cache_never_serves_an_unscored_result(tmp_path: Path) -> None:
    with RunStore(tmp_path / "s.sqlite") as store:
        bad = Judgment(id="a", label=None, status="unscored", error="provider error")
        store._write("t", "INSERT INTO cache VALUES ('k', ?, 0)", (bad.model_dump_json(),))  # an older version's row
        assert store.cached("k") is None
        store.put_cache("k2", bad)
        assert store._read("SELECT COUNT(*) FROM cache WHERE key='k2'")[0][0] == 0


# 3. collect --online after the run is done -------------------------------------------------------

def test_collect_online_re_judges_unscored_items_of_a_finished_run(tmp_path: Path, start) -> None:
    fake = start(batch_polls=0, garbage_rate=1.0)  # every batch reply unreadable: items unscored
    write_items(tmp_path / "in.jsonl", 4)
    assert main(run_args(tmp_path, fake, "openai", "--batch")) == 0
    run_id = runs(tmp_path)[0]
    code = collect(tmp_path, run_id, "--wait", "0.01")
    unscored = [r["id"] for r in rows(tmp_path) if r["status"] == "unscored"]
    assert unscored and fake.online_calls() == []
    assert code == (1 if len(unscored) / 4 > 0.1 else 0)  # done, but unscored above --max-unscored is not a success
    fake.config(garbage_rate=0.0)
    assert collect(tmp_path, run_id, "--online") == 0
    assert len(fake.online_calls()) >= len(unscored)  # each unscored item asked online at least once
    assert len(rows(tmp_path)) == 4


# 4. a kill between submitting and recording ------------------------------------------------------

class Killed(BaseException):
    """Stands in for SIGKILL at one point: nothing after it runs."""


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("when", ["after", "before"])
def test_a_kill_around_submission_never_submits_twice(tmp_path: Path, start, monkeypatch, provider: str,
                                                       when: str) -> None:
    fake = start(batch_polls=1)
    write_items(tmp_path / "in.jsonl", 6)
    cls = CLASSES[provider]
    real = cls.submit

    def killed(self: Any, requests: dict, tag: str) -> str:
        if when == "after":
            real(self, requests, tag)  # the provider has the batch; the store never hears its id
        raise Killed

    monkeypatch.setattr(cls, "submit", killed)
    with pytest.raises(Killed):
        main(run_args(tmp_path, fake, provider, "--batch"))
    monkeypatch.setattr(cls, "submit", real)
    assert fake.created(provider) == (1 if when == "after" else 0)
    # Resume as a user would: the same command with --resume (or `batch collect`).
    assert main(run_args(tmp_path, fake, provider, "--batch", "--resume")) == 0
    run_id = runs(tmp_path)[0]
    assert collect(tmp_path, run_id, "--wait", "0.01") == 0
    assert fake.created(provider) == 1
    assert max(fake.paid_lines().values()) == 1 and sum(fake.paid_lines().values()) == 6
    assert len(rows(tmp_path)) == 6


# 5. each call priced by how it was made ------------------------------------------------------------

def test_the_summary_prices_batch_and_online_calls_apart(tmp_path: Path, start, monkeypatch, capsys) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/fake-judge": {"input": 1000.0, "output": 0.0}}))
    monkeypatch.setenv("JUDGEFLOW_PRICES", str(prices))
    fake = start(batch_polls=0, garbage_rate=1.0)  # paid batch lines, unreadable: items unscored
    write_items(tmp_path / "in.jsonl", 3)
    assert main(run_args(tmp_path, fake, "openai", "--batch")) == 0
    run_id = runs(tmp_path)[0]
    code = collect(tmp_path, run_id, "--wait", "0.01")
    unscored = sum(r["status"] == "unscored" for r in rows(tmp_path))
    assert unscored and code == (1 if unscored / 3 > 0.1 else 0)
    fake.config(garbage_rate=0.0)
    capsys.readouterr()
    assert collect(tmp_path, run_id, "--online") == 0  # the unscored items are judged again online
    err = capsys.readouterr().err.replace("\n", " ")
    batch_lines = [e for e in fake.entries() if e.get("batch") and e.get("status") == 200]
    online = [e for e in fake.online_calls() if e.get("status") == 200]
    cost_b = sum(e["prompt_tokens"] for e in batch_lines) * 1000 / 1e6 / 2
    cost_o = sum(e["prompt_tokens"] for e in online) * 1000 / 1e6
    assert online and batch_lines
    assert f"${cost_b:,.4f} for {len(batch_lines)} batch calls" in err
    assert f"${cost_o:,.4f} for {len(online)} online calls" in err


def test_a_batch_run_finished_by_resume_prices_its_online_calls_at_list(tmp_path: Path, start, monkeypatch,
                                                                         capsys) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/fake-judge": {"input": 1000.0, "output": 0.0}}))
    monkeypatch.setenv("JUDGEFLOW_PRICES", str(prices))
    fake = start(batch_polls=1, batch_expire_fraction=0.25)
    write_items(tmp_path / "in.jsonl", 8)
    assert main(run_args(tmp_path, fake, "openai", "--batch")) == 0
    assert collect(tmp_path, runs(tmp_path)[0]) == 0  # 6 kept, 2 sent again
    capsys.readouterr()
    assert main(run_args(tmp_path, fake, "openai", "--resume")) == 0  # the user finishes online instead
    err = capsys.readouterr().err.replace("\n", " ")
    online = [e for e in fake.online_calls() if e.get("status") == 200]
    cost_o = sum(e["prompt_tokens"] for e in online) * 1000 / 1e6
    assert online and f"${cost_o:,.4f} for {len(online)} online calls at list prices" in err
    assert "for 6 batch calls" in err
    assert "is still at the provider and its lines are billed" in err  # the open round-2 batch


# 6. files deleted once the replies are stored ---------------------------------------------------------

@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("keep", [False, True])
def test_batch_files_are_deleted_once_stored(tmp_path: Path, start, provider: str, keep: bool) -> None:
    fake = start(batch_polls=1, error_rate=0.3)
    write_items(tmp_path / "in.jsonl", 5)
    assert main(run_args(tmp_path, fake, provider, "--batch")) == 0
    assert collect(tmp_path, runs(tmp_path)[0], "--wait", "0.01", "--max-unscored", "1",  # failed lines: unscored
                   *(["--keep-batch-files"] if keep else [])) == 0
    assert len(rows(tmp_path)) == 5
    if provider == "openai":
        left = fake.get("/v1/files")["data"]
        assert (len(left) > 0) == keep  # input, output and error files of every batch
        assert not keep or {f["purpose"] for f in left} == {"batch", "batch_output"}
    else:
        assert (len(fake.provider_batches(provider)) > 0) == keep


# 7. split at the provider's limits ----------------------------------------------------------------------

@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_round_is_split_at_the_providers_request_limit(tmp_path: Path, start, monkeypatch, provider: str,
                                                          capsys) -> None:
    monkeypatch.setattr(CLASSES[provider], "max_requests", 7)
    fake = start(batch_polls=1)
    write_items(tmp_path / "in.jsonl", 20)
    assert main(run_args(tmp_path, fake, provider, "--batch")) == 0
    run_id = runs(tmp_path)[0]
    assert "as 3 " in capsys.readouterr().err
    assert fake.created(provider) == 3
    assert main(["batch", "status", run_id, "--store", str(tmp_path / "runs.sqlite")]) == 0
    assert capsys.readouterr().out.count("round 1 part") == 3
    assert collect(tmp_path, run_id, "--wait", "0.01") == 0
    assert sum(fake.paid_lines().values()) == 20 and len(rows(tmp_path)) == 20
    with RunStore(tmp_path / "runs.sqlite") as store:
        assert sorted(len(j.keys) for j in BatchLedger(store).jobs(run_id)) == [6, 7, 7]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_round_of_a_graph_run_is_split_and_each_line_paid_once(tmp_path: Path, start, monkeypatch,
                                                                      provider: str) -> None:
    monkeypatch.setattr(CLASSES[provider], "max_requests", 7)
    fake = start(batch_polls=0)
    write_items(tmp_path / "in.jsonl", 20)
    assert main(run_args(tmp_path, fake, provider, "--batch", strategy="graph")) == 0
    run_id = runs(tmp_path)[0]
    assert collect(tmp_path, run_id, "--wait", "0.01") == 0
    assert len(rows(tmp_path)) == 20
    with RunStore(tmp_path / "runs.sqlite") as store:
        jobs = BatchLedger(store).jobs(run_id)
    by_round: dict[int, list[int]] = {}
    for j in jobs:
        by_round.setdefault(j.round, []).append(len(j.keys))
    assert len(by_round) >= 2  # the fake's replies are valid: items go on past round 1
    for sizes in by_round.values():  # each round cut at the limit, as evenly as the greedy split does
        n = sum(sizes)
        assert max(sizes) <= 7 and len(sizes) == -(-n // 7)
    assert fake.created(provider) == len(jobs)
    paid = fake.paid_lines()
    assert set(paid.values()) == {1}  # each request key paid exactly once, in whichever round it was sent
    assert sum(paid.values()) == sum(len(j.keys) for j in jobs)
    assert fake.online_calls() == []


def test_split_keeps_each_batch_under_the_byte_limit() -> None:
    class P:
        max_requests = 1000
        max_bytes = 100

        def line_size(self, key: str, body: dict) -> int:
            return len(json.dumps({"custom_id": key, "body": body}))

    reqs = {f"k{i}": {"x": "y" * (i % 5) * 5} for i in range(30)}
    parts = split(reqs, P())
    assert [k for p in parts for k in p] == list(reqs)  # all, in order, once
    assert all(sum(P().line_size(k, b) for k, b in p.items()) <= 100 for p in parts)
    assert len(parts) > 1


def test_a_store_from_before_the_ledger_is_carried_over(tmp_path: Path) -> None:
    ok = json.dumps({"status": 200, "body": {"usage": {"prompt_tokens": 7, "completion_tokens": 1}}})
    bad = json.dumps({"status": 500, "body": {"error": {"message": "batch request failed"}}})
    path = tmp_path / "s.sqlite"
    RunStore(path).close()
    db = sqlite3.connect(path)  # back to schema 1 with the tables of a store from before the ledger
    db.executescript(
        "DROP TABLE batch_jobs; DROP TABLE batch_replies; DROP TABLE batch_items;"
        "UPDATE meta SET value='1' WHERE key='schema';"
        "CREATE TABLE batches (run_id TEXT, stage INTEGER, provider TEXT, batch_id TEXT, status TEXT, created REAL);"
        "CREATE TABLE replies (key TEXT PRIMARY KEY, run_id TEXT, reply TEXT);")
    db.execute("INSERT INTO batches VALUES ('r', 1, 'openai', 'batch_1', 'submitted', 0)")
    db.executemany("INSERT INTO replies VALUES (?, 'r', ?)", [("k1", ok), ("k2", bad)])
    db.commit()
    db.close()
    with RunStore(path) as store:  # migrated on open (runs/migrations.py, step 2)
        ledger = BatchLedger(store)
        assert [(j.batch_id, j.status, j.open) for j in ledger.jobs("r")] == [("batch_1", "submitted", True)]
        assert ledger.reply("r", "k1").ok and not ledger.reply("r", "k2").ok  # the failure will be sent again
        assert ledger.reply("other-run", "k1") is None
        assert ledger.billed("r").input_tokens == 7
