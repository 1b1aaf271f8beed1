"""One key's rate limit shared by the processes of one machine (backends/shared_limits.py): two
`judgeflow run` processes on one limited endpoint (the real openai SDK and Instructor over a loopback
server with a provider-like limiter) stay under its limit together; the state file holds no key; a
process killed while holding the lock or reservations leaves nothing that lasts; a stale file is not
believed; an unusable folder falls back to pacing alone, with a warning."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fakes import MOSCOW_RIGHT, FakeProvider, LimitedLLM, ProviderLimit, moscow

from judgeflow.backends.limits import BELIEVE_FOR, Limiter, limiter_for
from judgeflow.backends.shared_limits import DIR_ENV, SharedState, state_dir

ROOT = Path(__file__).resolve().parents[2]


def rows(n: int) -> list[dict]:
    item = moscow(answer=MOSCOW_RIGHT, reference="1147")
    return [{**item, "id": f"i{k}", "answer": f"Moscow was founded in 1147. Fact {k}."} for k in range(n)]


@pytest.mark.slow
def test_two_processes_on_one_key_stay_under_the_limit_together(tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(12)))
    limit = ProviderLimit(rpm=8, window=1.0)  # 8 requests a second, for both processes together
    with FakeProvider(limit=limit) as fake:
        env = {**os.environ, "OPENAI_API_KEY": "sk-one-key-for-both"}
        procs = [subprocess.Popen([sys.executable, "-m", "judgeflow", "run", str(data), "-o", str(tmp_path / f"o{k}.jsonl"),
                                   "--model", "openai/gpt-4o-mini", "--base-url", f"{fake.base_url}/v1",
                                   "--store", str(tmp_path / f"s{k}.db"), "--no-cache", "--no-progress",
                                   "--concurrency", "8"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for k in range(2)]
        errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    results = [json.loads(line) for k in range(2) for line in (tmp_path / f"o{k}.jsonl").read_text().splitlines()]
    assert len(results) == 24 and all(r["label"] is not None for r in results)
    sent = len(limit.admitted) + limit.refused
    # each process paced to the whole limit (the old code): 30-45% of the requests were refused
    assert limit.refused <= max(2, sent // 10), (limit.refused, sent)


def test_processes_draw_from_one_bucket(tmp_path: Path) -> None:
    # two limiters on one state file are what two processes on one key see
    a = Limiter(name="a", shared=SharedState(tmp_path / "x.json"))
    b = Limiter(name="b", shared=SharedState(tmp_path / "x.json"))
    a.configure(rpm=4)  # 4 a minute, set in one process only
    now = time.monotonic()
    with a._synced():
        for _ in range(4):
            assert a.buckets["requests"].reserve(1.0, now) == 0.0
    with b._synced():
        wait = b.buckets["requests"].reserve(1.0, time.monotonic())
    assert b.buckets["requests"].source == "set"
    assert wait == pytest.approx(15.0, abs=0.5)  # the 5th request of the minute waits for its slot
    assert Limiter(name="alone").buckets == {}


def test_the_state_file_holds_no_key_and_no_credentials(tmp_path: Path) -> None:
    llm = LimitedLLM("openai", limit=ProviderLimit(rpm=60, window=1.0))
    judge_backend = llm.backend(provider_retries=0)
    import asyncio

    from judgeflow import Judge, judge_stream

    async def go() -> None:
        judge = Judge(backend=judge_backend)
        try:
            _ = [j async for _, j in judge_stream(judge, rows(3), concurrency=2)]
        finally:
            await judge.aclose()

    asyncio.run(go())
    limiter_for("openai", "http://user:hunter2@x.test/v1", "sk-secret-key-123", "openai/m").configure(rpm=5)
    files = list(state_dir().iterdir())
    assert len(files) == 2
    for f in files:
        text = f.name + f.read_text()
        assert "sk-secret-key-123" not in text and "hunter2" not in text and "sk-" not in text
        assert json.loads(f.read_text())["buckets"]["requests"]["limit"] in (60, 5)


@pytest.mark.slow  # a process killed: it needs its own
def test_a_process_killed_holding_the_lock_or_reservations_leaves_nothing_that_lasts(tmp_path: Path) -> None:
    child = textwrap.dedent("""
        import time
        from judgeflow.backends.limits import limiter_for
        lim = limiter_for("openai", "http://k.test/v1", "key", "openai/m")
        lim.configure(rpm=600)  # 10 a second
        with lim._synced():
            for _ in range(620):  # the whole minute and 20 requests waiting for their slots
                lim.buckets["requests"].reserve(1.0, time.monotonic())
        with lim.shared.session():  # killed while holding the lock
            print("READY", flush=True)
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    lim = limiter_for("openai", "http://k.test/v1", "key", "openai/m")
    lim.configure(rpm=600)  # would block for ever if the dead process's lock lasted
    with lim._synced():
        wait = lim.buckets["requests"].reserve(1.0, time.monotonic())
    assert 0.0 < wait <= 2.2  # its 20 waiting requests' debt at 10 a second, then nothing


def test_a_stale_learned_limit_is_not_believed(tmp_path: Path) -> None:
    lim = limiter_for("openai", "http://old.test/v1", "k", "openai/m")
    assert lim.shared is not None
    old = time.time() - BELIEVE_FOR - 5
    lim.shared.path.parent.mkdir(parents=True, exist_ok=True)
    lim.shared.path.write_text(json.dumps({"buckets": {"requests": {
        "limit": 2, "rate": 0.001, "level": -50, "at": old, "source": "learned", "low": 0, "high": 1, "seen": old}}}))
    assert not lim.idle  # another process shared a limit ...
    with lim._synced():
        assert lim.buckets == {}  # ... that no reply confirmed for BELIEVE_FOR: forgotten


def test_an_unusable_state_folder_falls_back_to_pacing_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(DIR_ENV, str(blocker / "limits"))  # a folder that cannot be made
    llm = LimitedLLM("openai", limit=ProviderLimit(rpm=6, window=1.0))
    import asyncio

    from judgeflow import Judge, judge_stream

    judge = Judge(backend=llm.backend(provider_retries=0))

    async def go() -> list:
        try:
            return [j async for _, j in judge_stream(judge, rows(6), concurrency=6)]
        finally:
            await judge.aclose()

    with caplog.at_level(logging.WARNING, logger="judgeflow"):
        results = asyncio.run(go())
    assert all(j.status == "judged" for j in results)
    assert [r.getMessage() for r in caplog.records if "paces to the limit by itself" in r.getMessage()]
    limiter = judge.backend.client.limiter  # type: ignore[attr-defined]
    assert limiter.shared.broken and limiter.buckets["requests"].limit == 6  # paced from the headers alone
    assert llm.statuses.count(429) <= 3


def test_a_reply_does_not_resync_above_requests_counted_before_it_and_sent_after() -> None:
    import asyncio

    import httpx2

    lim = Limiter(name="x")
    lim.configure(tpm=10_000)
    headers = httpx2.Headers({"x-ratelimit-limit-tokens": "10000", "x-ratelimit-remaining-tokens": "9000",
                              "x-ratelimit-reset-tokens": "6s"})

    async def go() -> float:
        # a 429's re-send waiting out its retry-after: counted against the bucket, not sent yet
        early = asyncio.ensure_future(lim.acquire((1.0, 3_000.0, 0.0, 0.0), None, not_before=time.monotonic() + 30))
        await asyncio.sleep(0.01)
        late = await lim.acquire((1.0, 1_000.0, 0.0, 0.0), None)
        lim.observe(headers, late, 200)  # admitted first: the provider's remaining counts it, not the one waiting
        level = lim.buckets["tokens"].level
        early.cancel()
        return level

    assert asyncio.run(go()) <= 9_000 - 3_000  # the old code re-synced to 9,000, and a 429 followed
