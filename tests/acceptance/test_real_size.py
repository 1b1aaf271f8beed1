"""#34: a run at a user's size. 5,000 rows offline; 2,000 rows through the schema-following fake at
--concurrency 16, killed with SIGKILL halfway and resumed: every input row exactly once, in input
order, and no more than 2 model calls per item plus what was in flight when it was killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from fakes import SchemaProvider
from fakes.generated import generated_items, read_jsonl, write_jsonl
from fakes.process import stored_count

pytestmark = pytest.mark.acceptance


def _cli(args: list[str], cwd, env=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "judgeflow", *args], cwd=cwd, text=True, capture_output=True,
                          env=env, timeout=600)


def _unjudgeable(row: dict) -> bool:
    """A row with nothing to judge against: invalid by design (the example's `no-evidence` row)."""
    return not any(row.get(k) for k in ("reference", "source", "spec"))


def test_the_readme_main_job_on_5000_rows_offline(tmp_path, monkeypatch):
    from judgeflow.cli import main  # in-process: the 5000 rows are the point, not a new interpreter

    rows = generated_items(5000, invalid_every=97)
    items = write_jsonl(tmp_path / "items.jsonl", rows)
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(items), "-o", "results.jsonl", "--no-progress"]) == 0
    out = read_jsonl(tmp_path / "results.jsonl")
    assert [r["id"] for r in out] == [r["id"] for r in rows]  # every row once, in input order
    assert [r["id"] for r in out if r["status"] == "invalid"] == [r["id"] for r in rows if _unjudgeable(r)]
    assert all((r["label"] is None) == (r["status"] != "judged") for r in out)
    assert main(["calibrate", "results.jsonl", "--json", "--n-boot", "50"]) == 0


@pytest.mark.slow  # a SIGKILL needs its own process
def test_2000_rows_through_the_fake_killed_halfway_and_resumed(tmp_path):
    rows = generated_items(2000)
    items = write_jsonl(tmp_path / "items.jsonl", rows)
    store = tmp_path / "runs.sqlite"
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake-acceptance"}
    with SchemaProvider(seed=7, latency=0.002) as fake:
        args = ["run", str(items), "-o", "out.jsonl", "--model", "openai/gpt-4o-mini", "--base-url",
                fake.base_url + "/v1", "--concurrency", "16", "--store", str(store), "--no-progress"]
        proc = subprocess.Popen([sys.executable, "-m", "judgeflow", *args], cwd=tmp_path, text=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        import time

        deadline = time.monotonic() + 300
        while stored_count(store) < 1000:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run did not reach half way"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        killed_at = len(fake.requests)
        done_before = stored_count(store)
        assert done_before < 2000, "the run finished before it could be killed"
        resumed = _cli([*args, "--resume"], tmp_path, env=env)
        assert resumed.returncode == 0, resumed.stderr[-2000:]
        calls = len(fake.requests)
    out = read_jsonl(tmp_path / "out.jsonl")
    assert [r["id"] for r in out] == [r["id"] for r in rows]  # every input row exactly once, in input order
    assert [r["id"] for r in out if r["status"] == "invalid"] == [r["id"] for r in rows if _unjudgeable(r)]
    in_flight = 16 * 2  # at most --concurrency items mid-way when killed, each up to 2 calls
    assert calls <= 2 * len(rows) + in_flight, (calls, killed_at, done_before)
    assert sum(r["usage"]["calls"] for r in out) <= 2 * len(rows)
