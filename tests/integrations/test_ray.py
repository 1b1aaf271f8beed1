"""Judging a dataset on Ray Data: a local Ray (2 CPUs) against the in-repo schema fake over HTTP
(tests/fakes/schema_provider.py, in this process; the Ray workers reach it on 127.0.0.1).

Every input row comes out exactly once (judged, unscored with its reason, or invalid); a killed
job, rerun, never calls the model again for an item it had finished; the response cache in a
shared store serves unchanged items without calls. Labels are not asserted: the fake fills the
schema with nonsense, so what is checked is the accounting of rows and calls.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from fakes import ProviderLimit, SchemaProvider

from judgeflow.cli import main

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "JUDGEFLOW_MODEL", "JUDGEFLOW_BASE_URL", "OPENAI_BASE_URL")
pytestmark = pytest.mark.ray


@pytest.mark.slow
def test_importing_judgeflow_never_imports_ray() -> None:
    code = ("import sys, judgeflow, judgeflow.cli, judgeflow.cli.run, judgeflow.integrations; "
            "judgeflow.cli.build_parser(); assert 'ray' not in sys.modules, 'ray imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture(scope="module")
def ray_local() -> Any:
    ray = pytest.importorskip("ray", reason='needs pip install "judgeflow[ray]"')
    env = pytest.MonkeyPatch()
    for var in KEYS:  # Ray workers inherit this environment: no real key, no configured model
        env.delenv(var, raising=False)
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, logging_level="ERROR",
             log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()
    env.undo()


class Fake:
    """The schema fake (seed 0 unless given) with fake_llm.py's options as keywords."""

    def __init__(self, *, rpm: float = 0, window: float = 60.0, latency_ms: float = 0.0, **options: Any) -> None:
        limit = ProviderLimit(rpm=rpm, window=window) if rpm else None
        self.provider = SchemaProvider(limit=limit, latency=latency_ms / 1000, **options).__enter__()
        self.base_url = f"{self.provider.base_url}/v1"

    def stats(self) -> dict[str, Any]:
        return self.provider.stats()

    def calls_by_item(self) -> Counter[str]:
        """Model calls per item, from the request bodies (each answer carries its item's tag)."""
        seen: Counter[str] = Counter()
        for entry in list(self.provider.log):
            if entry.get("llm"):
                text = json.dumps(entry.get("request"))
                seen.update(t for t in TAGS if t in text)
        return seen

    def stop(self) -> None:
        self.provider.__exit__()


N = 24
TAGS = [f"tag{n:03d}x" for n in range(N)]


def items(n: int = N) -> list[dict[str, Any]]:
    return [{"id": f"q{i}", "question": f"Question {i}?", "answer": f"Answer {TAGS[i]} is 42.",
             "reference": "42", "topic": "t" if i % 2 else None, "label": i % 2} for i in range(n)]


def write_jsonl(path: Path, rows: list[Any], extra_lines: tuple[str, ...] = ()) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "".join(x + "\n" for x in extra_lines))
    return path


def read_rows(outdir: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for shard in sorted(outdir.glob("*.jsonl")):
        rows += [json.loads(line) for line in shard.read_text().splitlines()]
    if list(outdir.glob("*.parquet")):
        import pyarrow.parquet as pq

        rows += pq.read_table(outdir).to_pylist()
    return rows


@pytest.mark.slow  # a local Ray: its daemons and workers are processes
def test_every_row_once_unscored_keep_their_reason(ray_local: Any, tmp_path: Path) -> None:
    from judgeflow.integrations.ray import judge_dataset

    # array-len 1: one claim with its verdict (judged, one call); error-rate: provider errors
    # with no retries left (unscored, with the error as the reason)
    fake = Fake(array_len=1, error_rate=0.4, seed=3)
    try:
        path = write_jsonl(tmp_path / "items.jsonl", items(),
                           ('{"id": "broken", "answer": ', '{"id": "no-answer", "question": "q"}', '{"answer": "no id"}'))
        ds = ray_local.data.read_text(str(path), include_paths=True)
        out = judge_dataset(ds, model="openai/fake", base_url=fake.base_url, api_key="sk-fake", strategy="single",
                            provider_retries=0, max_retries=0, concurrency=4, num_actors=2, json_column="text")
        rows = out.take_all()
        stats = fake.stats()
    finally:
        fake.stop()
    ids = Counter(r["id"] for r in rows)
    assert len(rows) == N + 3 and max(ids.values()) == 1
    assert {f"q{i}" for i in range(N)} | {"no-answer"} <= set(ids)
    by_status = Counter(r["status"] for r in rows)
    assert by_status["invalid"] == 3 and by_status["judged"] + by_status["unscored"] == N
    assert by_status["judged"] and by_status["unscored"], by_status  # both outcomes occurred
    for r in rows:
        if r["status"] == "judged":
            assert r["label"] in (0, 1) and r["error"] is None
        else:
            assert r["label"] is None and r["error"], r  # never a 0/1, always a reason
    bad = {r["id"]: r["error"] for r in rows if r["status"] == "invalid"}
    assert "not valid JSON" in next(e for i, e in bad.items() if i.startswith("invalid-") and "JSON" in e)
    assert "has no 'answer'" in bad["no-answer"] and str(path) in bad["no-answer"]
    assert any("has no 'id'" in e for e in bad.values())
    # a judged row with the extra field set (which rows the fake fails depends on the request bytes)
    row = next(r for r in rows if r["status"] == "judged" and r["topic"] == "t")
    assert json.loads(row["usage"])["calls"] == 1 and row["human_label"] == 1
    assert isinstance(json.loads(row["claims"]), list)
    # one call per valid item: the fake answered each exactly once (200 or 500); its 429s were
    # waited out and sent again by the rate limiter, without using the retries
    assert stats["llm_calls"] - stats["by_status"].get("429", 0) == N


@pytest.mark.slow  # a local Ray: its daemons and workers are processes
def test_two_actors_share_one_rate_limit(ray_local: Any, tmp_path: Path) -> None:
    from judgeflow.integrations.ray import judge_dataset

    n = 48  # 48 calls against 8 requests a second (a bucket of 16 per 2 s window), 2 actors x 8 in flight
    fake = Fake(rpm=16, window=2)
    try:
        path = write_jsonl(tmp_path / "items.jsonl", [{"id": f"r{i}", "question": f"Question {i}?",
                                                        "answer": f"Answer {i}.", "reference": "42"} for i in range(n)])
        ds = ray_local.data.read_text(str(path), include_paths=True)
        out = judge_dataset(ds, model="openai/fake", base_url=fake.base_url, api_key="sk-fake", strategy="single",
                            provider_retries=0, concurrency=8, num_actors=2, json_column="text")
        rows = out.take_all()
        stats = fake.stats()
    finally:
        fake.stop()
    assert Counter(r["status"] for r in rows) == {"judged": n}, [r["error"] for r in rows if r["error"]]
    refused = stats["by_status"].get("429", 0)
    assert refused <= max(4, stats["llm_calls"] // 10), stats["by_status"]  # paced, not refused


@pytest.mark.slow
def test_killed_job_rerun_makes_no_repeated_calls(ray_local: Any, tmp_path: Path) -> None:
    fake = Fake(latency_ms=150)  # valid schema-filled replies: every item judged, one call
    path = write_jsonl(tmp_path / "items.jsonl", items())
    out = tmp_path / "out.jsonl"
    gcs = ray_local.get_runtime_context().gcs_address
    cmd = [sys.executable, "-m", "judgeflow", "run", str(path), "-o", str(out), "--ray", "--ray-address", gcs,
           "--model", "openai/fake", "--base-url", fake.base_url, "--strategy", "single", "--reasks", "0",
           "--retries", "0", "--concurrency", "2", "--ray-rows-per-shard", "4", "--no-progress"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-fake"}
    try:
        job = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
        deadline = time.monotonic() + 600  # Ray start under load can take minutes
        while not list(out.glob("*.jsonl")) and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        os.killpg(job.pid, signal.SIGKILL)  # the driver and its children, mid-job
        job.wait()
        first = read_rows(out)
        assert 0 < len(first) < N, "the kill should land mid-job"
        before = fake.calls_by_item()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        after = fake.calls_by_item()
    finally:
        fake.stop()
    rows = read_rows(out)
    assert sorted(r["id"] for r in rows) == sorted(f"q{i}" for i in range(N))  # each once
    for r in first:
        tag = TAGS[int(r["id"][1:])]
        assert after[tag] == before[tag] == 1, f"{r['id']} was judged again after it was finished"
        again = next(x for x in rows if x["id"] == r["id"])
        assert again == r and again["status"] == "judged"  # untouched (unscored rows would be re-judged)
    assert isinstance(rows[0]["claims"], list) and isinstance(rows[0]["usage"], dict)  # CLI rows, nested
    assert f"{len(first)} ids already in" in done.stderr


@pytest.mark.slow  # a local Ray: its daemons and workers are processes
def test_store_cache_serves_unchanged_items_without_calls(ray_local: Any, tmp_path: Path) -> None:
    from judgeflow.integrations.ray import existing_ids, judge_dataset, write_judgments

    fake = Fake(array_len=1)  # every item judged (one claim), one call each
    store = tmp_path / "runs.sqlite"
    ds = ray_local.data.from_items(items(8))
    kwargs = dict(model="openai/fake", base_url=fake.base_url, api_key="sk-fake", strategy="single",
                  provider_retries=0, max_retries=0, store=store, num_actors=2)
    try:
        write_judgments(judge_dataset(ds, **kwargs), tmp_path / "a", fmt="parquet")
        calls = fake.stats()["llm_calls"]
        write_judgments(judge_dataset(ds, **kwargs), tmp_path / "b", fmt="parquet")
        assert fake.stats()["llm_calls"] == calls == 8  # the second dataset cost nothing
    finally:
        fake.stop()
    a, b = read_rows(tmp_path / "a"), read_rows(tmp_path / "b")
    assert existing_ids(tmp_path / "b") == {f"q{i}" for i in range(8)}
    assert {r["status"] for r in a + b} == {"judged"}
    assert all(json.loads(r["usage"])["calls"] == 0 for r in b)


@pytest.mark.slow  # a local Ray: its daemons and workers are processes
def test_cli_reads_a_parquet_glob_and_writes_parquet_shards(ray_local: Any, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{k: v for k, v in r.items() if k != "topic"} for r in items(6)]
    rows[5]["answer"] = None
    pq.write_table(pa.Table.from_pylist(rows[:3]), tmp_path / "a.parquet")
    pq.write_table(pa.Table.from_pylist(rows[3:]), tmp_path / "b.parquet")
    out = tmp_path / "out"
    gcs = ray_local.get_runtime_context().gcs_address
    assert main(["run", str(tmp_path / "*.parquet"), "-o", str(out), "--ray", "--ray-address", gcs,
                 "--no-progress", "--model", "baseline/lexical"]) == 0
    table = pq.read_table(out)
    assert sorted(table.column("id").to_pylist()) == [f"q{i}" for i in range(6)]
    assert table.schema.field("label").type == pa.int64() and table.schema.field("claims").type == pa.string()
    got = {r["id"]: r for r in table.to_pylist()}
    assert {got[f"q{i}"]["status"] for i in range(5)} == {"judged"}
    assert got["q5"]["status"] == "invalid" and "has no 'answer'" in got["q5"]["error"]
    assert isinstance(json.loads(got["q0"]["claims"]), list)


def test_torn_shard_is_set_aside_and_its_items_judged_again(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from judgeflow.integrations.ray import existing_ids

    (tmp_path / "ok.jsonl").write_text('{"id": "a"}\n{"id": "b"}\n')
    (tmp_path / "cut.jsonl").write_text('{"id": "c"}\n{"id": "d", "la')
    (tmp_path / "cut.parquet").write_bytes(b"PAR1 not a whole file")
    torn: list[str] = []
    assert existing_ids(tmp_path, torn=torn) == {"a", "b"}
    assert sorted(torn) == ["cut.jsonl", "cut.parquet"]
    assert sorted(p.name for p in (tmp_path / "_torn").iterdir()) == ["cut.jsonl", "cut.parquet"]


def _unnamed(n: int = 12) -> list[dict[str, Any]]:
    """Rows without an id, some wrong (label 1), one human label the lexical judge disagrees with."""
    rows = []
    for i in range(n):
        wrong = i % 3 == 0
        rows.append({"question": f"When was town {i} founded?", "reference": f"Town {i} was founded in {1100 + i}.",
                     "answer": f"Town {i} was founded in {1500 + i if wrong else 1100 + i}.",
                     "label": int(wrong) if i != 4 else 1})
    return rows


@pytest.mark.slow  # a local Ray
@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_ray_output_directory_is_read_by_calibrate_with_the_same_kappa_as_a_local_run(
        ray_local: Any, tmp_path: Path, capsys: Any, fmt: str) -> None:
    """#47: rows without an id get the local run's `line-N` ids (not invalid), and every command that reads
    results reads the shard directory."""
    path = write_jsonl(tmp_path / "items.jsonl", _unnamed()[:6])
    with path.open("a") as f:
        f.write("\n" + "".join(json.dumps(r) + "\n" for r in _unnamed()[6:]))  # a blank line: line numbers count it
    local, shards = tmp_path / "local.jsonl", tmp_path / "shards"
    gcs = ray_local.get_runtime_context().gcs_address
    assert main(["run", str(path), "-o", str(local), "--model", "baseline/lexical", "--no-progress",
                 "--store", str(tmp_path / "s.sqlite")]) in (0, 1)
    assert main(["run", str(path), "-o", str(shards), "--ray", "--ray-address", gcs, "--ray-format", fmt,
                 "--no-progress", "--model", "baseline/lexical", "--ray-rows-per-shard", "5"]) == 0
    ray_rows = {r["id"]: r for r in read_rows(shards)}
    local_rows = {r["id"]: r for r in map(json.loads, local.read_text().splitlines())}
    assert set(ray_rows) == set(local_rows) and "line-8" in ray_rows and "line-7" not in ray_rows
    assert {r["status"] for r in ray_rows.values()} == {"judged"}  # not invalid for want of an id
    assert all(ray_rows[i]["label"] == local_rows[i]["label"] for i in local_rows)
    assert list(shards.glob(f"*.{'parquet' if fmt == 'parquet' else 'json*'}"))
    capsys.readouterr()
    assert main(["calibrate", str(local), "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert main(["calibrate", str(shards), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["kappa"] == want["kappa"] and got["n"] == want["n"] == 12
    assert main(["gate", str(shards), "--baseline", str(local)]) == 0  # the same verdicts: no regression


def test_several_input_files_name_their_rows_by_file(tmp_path: Path) -> None:
    from judgeflow.integrations.ray import numbered_rows

    data = b'{"answer": "a", "reference": "a"}\n\n{"id": "x", "answer": "b", "reference": "b"}\n{"answer": '
    rows = numbered_rows({"bytes": data, "path": str(tmp_path / "a.jsonl")}, prefix=True)
    assert [(r["line"], r["id_prefix"], r["error"] is None) for r in rows] == [(1, "a.jsonl:", True),
                                                                              (3, "a.jsonl:", True),
                                                                              (4, "a.jsonl:", False)]
