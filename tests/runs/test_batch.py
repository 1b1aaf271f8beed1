"""Provider batch APIs against a fake batch endpoint over HTTP (OpenAI Batch API and Anthropic
Message Batches): submit, status, collect in two stages, invalid replies, and the store's cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgeflow.cli import main
from judgeflow.runs.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
from fakes import FakeProvider  # noqa: E402

PROVIDERS = ["openai", "anthropic"]


@pytest.fixture
def fake():
    with FakeProvider() as f:
        yield f


def write_items(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "reference": "Paris", "question": "Capital of France?",
                                        "answer": f"Item-{i:03d} says Paris. It is the capital."}) + "\n"
                            for i in range(n)))
    return path


def run_args(tmp_path: Path, fake: FakeProvider, provider: str, *extra: str) -> list[str]:
    base = fake.base_url + ("/v1" if provider == "openai" else "")
    return ["run", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"), "--model", f"{provider}/fake-judge",
            "--base-url", base, "--store", str(tmp_path / "runs.sqlite"), "--no-progress", *extra]


def the_run(tmp_path: Path) -> str:
    with RunStore(tmp_path / "runs.sqlite") as store:
        return store.runs()[0].run_id


def rows(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_submit_then_collect_in_two_stages(tmp_path: Path, fake: FakeProvider, provider: str, capsys) -> None:
    write_items(tmp_path / "in.jsonl", 4)
    fake.batch.polls = 2  # the provider reports "in progress" to the next two status checks
    assert main(run_args(tmp_path, fake, provider, "--batch")) == 0
    run_id = the_run(tmp_path)
    assert fake.requests == []  # nothing went to the online endpoint
    assert [len(b) for b in fake.batch.submitted] == [4]  # stage 1: every item's decompose call
    assert f"judgeflow batch collect {run_id}" in capsys.readouterr().err

    store = ["--store", str(tmp_path / "runs.sqlite")]
    assert main(["batch", "status", run_id, *store]) == 0
    assert "round 1" in capsys.readouterr().out
    assert main(["batch", "collect", run_id, *store]) == 0  # still in progress: nothing happens
    assert [len(b) for b in fake.batch.submitted] == [4]
    assert not (tmp_path / "out.jsonl").exists()

    assert main(["batch", "collect", run_id, *store, "--wait", "0.01"]) == 0
    assert [len(b) for b in fake.batch.submitted] == [4, 4]  # stage 2: the check calls
    assert fake.requests == []
    out = rows(tmp_path)
    assert [r["id"] for r in out] == ["q0", "q1", "q2", "q3"]
    assert all(r["status"] == "judged" and r["label"] == 1 for r in out)  # the fake flags claims with digits
    assert all(r["usage"]["calls"] == 2 and r["usage"]["input_tokens"] > 0 for r in out)

    # The batch results are in the cache: the same run online costs no request.
    assert main(run_args(tmp_path, fake, provider)) == 0
    assert fake.requests == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_single_strategy_is_one_batch(tmp_path: Path, fake: FakeProvider, provider: str) -> None:
    write_items(tmp_path / "in.jsonl", 3)
    assert main(run_args(tmp_path, fake, provider, "--batch", "--strategy", "single")) == 0
    assert main(["batch", "collect", the_run(tmp_path), "--store", str(tmp_path / "runs.sqlite"), "--wait", "0.01"]) == 0
    assert [len(b) for b in fake.batch.submitted] == [3]
    assert [r["label"] for r in rows(tmp_path)] == [1, 1, 1]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_invalid_batch_reply_leaves_that_item_unscored(tmp_path: Path, fake: FakeProvider, provider: str) -> None:
    write_items(tmp_path / "in.jsonl", 3)
    fake.batch.corrupt = {"Item-001": {"claims": "not a list"}}
    assert main(run_args(tmp_path, fake, provider, "--batch")) == 0
    assert main(["batch", "collect", the_run(tmp_path), "--store", str(tmp_path / "runs.sqlite"), "--wait", "0.01",
                 "--max-unscored", "0.5"]) == 0
    by_id = {r["id"]: r for r in rows(tmp_path)}
    assert by_id["q1"]["status"] == "unscored" and by_id["q1"]["label"] is None
    assert "decompose: unparseable judge output" in by_id["q1"]["error"]  # Instructor's own validation
    assert by_id["q0"]["label"] == 1 and by_id["q2"]["label"] == 1
    assert [len(b) for b in fake.batch.submitted] == [3, 2]  # q1 never reached the check stage


def test_collect_online_re_judges_only_the_failed_items(tmp_path: Path, fake: FakeProvider) -> None:
    write_items(tmp_path / "in.jsonl", 3)
    fake.batch.corrupt = {"Item-002": {"claims": "not a list"}}
    assert main(run_args(tmp_path, fake, "openai", "--batch")) == 0
    args = ["batch", "collect", the_run(tmp_path), "--store", str(tmp_path / "runs.sqlite"), "--wait", "0.01", "--online"]
    assert main(args) == 0
    assert len(fake.requests) == 2 and all("Item-002" in json.dumps(r) for r in fake.requests)
    assert [(r["id"], r["status"]) for r in rows(tmp_path)] == [("q0", "judged"), ("q1", "judged"), ("q2", "judged")]


def test_collect_refuses_an_input_changed_since_submission(tmp_path: Path, fake: FakeProvider, capsys) -> None:
    write_items(tmp_path / "in.jsonl", 2)
    assert main(run_args(tmp_path, fake, "openai", "--batch")) == 0
    write_items(tmp_path / "in.jsonl", 3)
    assert main(["batch", "collect", the_run(tmp_path), "--store", str(tmp_path / "runs.sqlite"), "--wait", "0.01"]) == 2
    assert "changed since run" in capsys.readouterr().err


def test_batch_needs_a_provider_with_a_batch_api(tmp_path: Path, capsys) -> None:
    write_items(tmp_path / "in.jsonl", 1)
    args = ["run", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o.jsonl"), "--model", "ollama/llama3.1",
            "--store", str(tmp_path / "s.sqlite"), "--batch"]
    assert main(args) == 2
    assert "--batch needs an openai/ or anthropic/ model" in capsys.readouterr().err


def test_the_summary_prices_a_batch_run_at_half(tmp_path: Path, fake: FakeProvider, monkeypatch, capsys) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/fake-judge": {"input": 1000.0, "output": 0.0}}))
    monkeypatch.setenv("JUDGEFLOW_PRICES", str(prices))
    write_items(tmp_path / "in.jsonl", 2)
    assert main(run_args(tmp_path, fake, "openai", "--batch")) == 0
    assert main(["batch", "collect", the_run(tmp_path), "--store", str(tmp_path / "runs.sqlite"), "--wait", "0.01"]) == 0
    tokens = sum(r["usage"]["input_tokens"] for r in rows(tmp_path))
    assert f"${tokens * 1000 / 1e6 / 2:,.4f} for 4 batch calls" in capsys.readouterr().err


def test_collect_exits_1_like_run_when_the_finished_run_is_mostly_unscored(tmp_path: Path, fake: FakeProvider,
                                                                             capsys) -> None:
    write_items(tmp_path / "in.jsonl", 3)
    fake.batch.corrupt = {f"Item-00{i}": {"claims": "not a list"} for i in range(3)}
    assert main(run_args(tmp_path, fake, "openai", "--batch")) == 0  # submitted: nothing finished yet
    collect = ["batch", "collect", the_run(tmp_path), "--store", str(tmp_path / "runs.sqlite"), "--wait", "0.01"]
    assert main(collect) == 1
    assert "nothing was judged: 0 of 3 rows are invalid, 3 unscored" in capsys.readouterr().err
    assert [r["status"] for r in rows(tmp_path)] == ["unscored"] * 3  # the output is still written
    assert main(collect) == 1  # collecting a done run again tells the same truth


def test_collect_honours_max_unscored(tmp_path: Path, fake: FakeProvider) -> None:
    write_items(tmp_path / "in.jsonl", 3)
    fake.batch.corrupt = {"Item-001": {"claims": "not a list"}}
    assert main(run_args(tmp_path, fake, "openai", "--batch")) == 0
    collect = ["batch", "collect", the_run(tmp_path), "--store", str(tmp_path / "runs.sqlite"), "--wait", "0.01"]
    assert main([*collect, "--max-unscored", "0.5"]) == 0  # 1 of 3 unscored is below 0.5
    assert main(collect) == 1  # and above the default 0.1


def test_batch_with_no_cache_submits_instead_of_serving_the_cache(tmp_path: Path, fake: FakeProvider,
                                                                    capsys) -> None:
    """`run --batch --no-cache` after an online run of the same items: every item goes into the batch
    (before, the cache served the old verdicts and the run said "done" without a request), and the
    next round's collect keeps not serving the cache."""
    write_items(tmp_path / "in.jsonl", 3)
    assert main(run_args(tmp_path, fake, "openai")) == 0  # online: every result is now in the cache
    online = len(fake.requests)
    out_a = str(tmp_path / "out.jsonl")
    args = run_args(tmp_path, fake, "openai", "--batch", "--no-cache")
    args[args.index(out_a)] = str(tmp_path / "batch.jsonl")
    assert main(args) == 0
    assert [len(b) for b in fake.batch.submitted] == [3]  # every item's decompose call went into a batch
    with RunStore(tmp_path / "runs.sqlite") as store:
        run_id = next(r.run_id for r in store.runs() if r.output_path.endswith("batch.jsonl"))
    capsys.readouterr()
    assert main(["batch", "collect", run_id, "--store", str(tmp_path / "runs.sqlite"), "--wait", "0.01"]) == 0
    assert [len(b) for b in fake.batch.submitted] == [3, 3]  # round 2 too: the check calls
    assert len(fake.requests) == online  # nothing was served online either


def _torn_last(lines: list[str]) -> list[str]:
    return [*lines[:-1], lines[-1][: len(lines[-1]) // 2]]


def _an_array(lines: list[str]) -> list[str]:
    return [lines[0], "[1, 2, 3]", *lines[2:]]


def _bad_status(lines: list[str]) -> list[str]:
    row = json.loads(lines[1])
    if "response" in row:
        row["response"]["status_code"] = "abc"
    else:
        row["result"] = "abc"
    return [lines[0], json.dumps(row), *lines[2:]]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("damage", [_torn_last, _an_array, _bad_status])
def test_one_bad_line_in_a_batch_output_fails_that_line_only(tmp_path: Path, fake: FakeProvider, provider: str,
                                                             damage, capsys) -> None:
    """Issue 35, item 2: a torn, non-object or mistyped line fails that line only; the good replies
    are kept, the message names the file and line, and only that line is sent again."""
    write_items(tmp_path / "in.jsonl", 4)
    assert main(run_args(tmp_path, fake, provider, "--batch", "--strategy", "single")) == 0
    capsys.readouterr()
    fake.batch.damage = damage
    store = ["--store", str(tmp_path / "runs.sqlite")]
    assert main(["batch", "collect", the_run(tmp_path), *store, "--wait", "0.01"]) == 0
    err = capsys.readouterr().err
    assert "kept 3 completed lines; 1 failed or missing" in err, err
    assert " line " in err and ("file-out-1" in err or "msgbatch_1" in err), err
    assert [len(b) for b in fake.batch.submitted] == [4, 1]  # only the bad line went out again
    assert [r["label"] for r in rows(tmp_path)] == [1, 1, 1, 1]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_goes_to_the_judgeflow_base_url_endpoint_as_an_online_run_does(
        tmp_path: Path, fake: FakeProvider, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """#48: `run --batch` with $JUDGEFLOW_BASE_URL (cli.md: the default endpoint) and no --base-url went to the
    provider's own host (a traceback offline); it goes where an online run goes."""
    write_items(tmp_path / "in.jsonl", 2)
    monkeypatch.setenv("JUDGEFLOW_BASE_URL", fake.base_url + ("/v1" if provider == "openai" else ""))
    args = run_args(tmp_path, fake, provider, "--batch")
    k = args.index("--base-url")
    assert main(args[:k] + args[k + 2:]) == 0
    assert [len(b) for b in fake.batch.submitted] == [2]


def test_a_batch_that_cannot_reach_its_endpoint_says_the_fix_not_a_traceback(tmp_path: Path, capsys) -> None:
    """#48: `run --batch --base-url` of a refused port ended in the SDK's APIConnectionError traceback."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    write_items(tmp_path / "in.jsonl", 2)
    args = ["run", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o.jsonl"), "--model", "openai/gpt-4o-mini",
            "--base-url", dead, "--store", str(tmp_path / "s.sqlite"), "--no-progress", "--batch"]
    assert main(args) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "cannot connect: check --base-url" in err and "batch" in err
