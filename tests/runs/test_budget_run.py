"""`--budget` end to end: the real openai SDK and Instructor over the in-repo schema fake (#37).

A run at --concurrency 16 never spends past its cap (calls, or estimated dollars from the rows' own
usage), the rows that did not fit are unscored "budget: ...", the run exits 1 with the resume
command, and the resume finishes them. Panels, cascades, repeats and `judge_many` share one cap.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import SchemaProvider

from judgeflow import Budget, Cascade, Item, Judge, Panel, Repeats
from judgeflow.cli import main
from judgeflow.errors import ConfigError
from judgeflow.results import Usage
from judgeflow.runs.pricing import Price

PRICE = Price(input=1.0, output=4.0)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")


def items_file(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "items.jsonl"
    rows = [{"id": f"q{i}", "question": f"When was city {i} founded?", "answer": f"City {i} was founded in {1000 + i}.",
             "source": f"City {i} was founded in {1000 + i} by settlers."} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(tmp_path: Path, url: str, inp: Path, *extra: str) -> tuple[int, list[dict[str, Any]]]:
    out = tmp_path / "out.jsonl"
    model = [] if {"--panel", "--cascade"} & set(extra) else ["--model", "openai/x"]
    code = main(["run", str(inp), "-o", str(out), *model, "--base-url", url + "/v1",
                 "--store", str(tmp_path / "store.sqlite"), "--no-progress", *extra])
    return code, [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("cap", ["7", "$0.02"])
def test_run_budget_holds_at_concurrency_16_and_resume_finishes(tmp_path: Path, cap: str,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('["openai/x"]\ninput = 1.0\noutput = 4.0\n', encoding="utf-8")
    inp = items_file(tmp_path, 24)
    with SchemaProvider(seed=3, latency=0.02) as fake:
        code, rows = run(tmp_path, fake.base_url, inp, "--budget", cap, "--concurrency", "16", "--prices", str(prices))
        replies = len(fake.requests)
        said = capsys.readouterr().err
        budget = Budget.parse(cap, prices={"openai/x": PRICE})
        assert budget is not None
        spent = [budget.cost("openai/x", Usage(**r["usage"])) for r in rows]
        if budget.calls_cap is not None:
            assert replies <= budget.calls_cap and sum(c.calls for c in spent) == replies
        else:
            assert 0 < sum(c.usd for c in spent) <= budget.usd_cap  # never over the cap, 16 calls at once
        cut = [r for r in rows if r["status"] == "unscored"]
        assert len(rows) == 24 and cut and all(r["error"].startswith("budget: ") for r in cut), rows
        assert all(r["label"] is None for r in cut)  # unscored, never 0
        assert code == 1 and "stopped at --budget" in said and "--resume" in said and f"--budget {cap}" in said.replace("'", "")
        code, again = run(tmp_path, fake.base_url, inp, "--budget", "1000", "--concurrency", "16",
                          "--prices", str(prices), "--resume")
    assert code == 0 and len(again) == 24 and all(r["status"] == "judged" for r in again)
    assert [r["id"] for r in again] == [f"q{i}" for i in range(24)]


def test_run_json_summary_gives_spent_vs_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = items_file(tmp_path, 4)
    with SchemaProvider(seed=1) as fake:
        code, _ = run(tmp_path, fake.base_url, inp, "--budget", "3", "--json")
        replies = len(fake.requests)
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 1 and summary["failure"].startswith("stopped at --budget")
    assert summary["budget"]["calls"] == {"cap": 3, "spent": replies, "held": 0} and summary["budget"]["usd"] is None
    assert replies <= 3 and summary["budget"]["denied"] >= 1


def test_a_cached_run_says_what_the_cache_saved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a re-run served from the cache said "0 of 20 call(s) spent", as if nothing happened."""
    inp = items_file(tmp_path, 3)
    with SchemaProvider(seed=1) as fake:
        assert run(tmp_path, fake.base_url, inp, "--budget", "20")[0] == 0
        capsys.readouterr()
        (tmp_path / "out.jsonl").unlink()
        assert run(tmp_path, fake.base_url, inp, "--budget", "20")[0] == 0
    said = " ".join(capsys.readouterr().err.split())
    assert "budget: 0 of 20 call(s) spent; 3 row(s) served from the cache cost nothing" in said


def test_a_money_budget_for_a_model_with_no_price_is_refused_before_any_call(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    inp = items_file(tmp_path, 2)
    with SchemaProvider(seed=1) as fake:
        code = main(["run", str(inp), "-o", str(tmp_path / "o.jsonl"), "--model", "openai/judgeflow-unpriced",
                     "--base-url", fake.base_url + "/v1", "--store", str(tmp_path / "s.sqlite"), "--budget", "$1"])
        assert fake.received == 0
    err = capsys.readouterr().err
    assert code == 2 and "--prices FILE" in err and "--budget 200" in err


def test_budget_with_batch_or_ray_is_refused_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = items_file(tmp_path, 2)
    base = ["run", str(inp), "-o", str(tmp_path / "o.jsonl"), "--model", "openai/x", "--budget", "5",
            "--store", str(tmp_path / "s.sqlite")]
    assert main([*base, "--batch"]) == 2
    assert "--budget does not combine with --batch" in capsys.readouterr().err


def item(i: int = 0) -> Item:
    return Item(id=f"q{i}", question="When?", answer=f"It was founded in {1147 + i}.", source=[f"Founded in {1147 + i}."])


def test_a_panel_shares_one_budget_through_the_python_api() -> None:
    budget = Budget(calls=4)  # a call holds its 3 attempts (2 re-asks): a's 2 calls fit, b's first does not
    with SchemaProvider(seed=2) as fake:
        a = Judge("openai/x", base_url=fake.base_url + "/v1", budget=budget)
        b = Judge("openai/y", base_url=fake.base_url + "/v1", budget=budget)
        first, second = a.judge(item()), b.judge(item())
        assert len(fake.requests) == budget.spent.calls
    assert first.status == "judged" and second.status == "unscored" and second.error.startswith("budget: ")
    assert budget.spent.calls <= 4 and budget.denied == 1


@pytest.mark.parametrize("kind", ["panel", "cascade", "repeats", "judge_many"])
def test_every_judging_built_in_python_stays_within_one_cap(kind: str) -> None:
    budget = Budget(calls=9)
    with SchemaProvider(seed=5, latency=0.01) as fake:
        url = fake.base_url + "/v1"

        def one(model: str) -> Judge:
            return Judge(model, base_url=url, budget=budget)

        judging: Any = {"panel": lambda: Panel([one("openai/a"), one("openai/b"), one("openai/c")]),
                        "cascade": lambda: Cascade(one("openai/a"), one("openai/b"), audit_rate=1.0),
                        "repeats": lambda: Repeats(one("openai/a"), 3),
                        "judge_many": lambda: one("openai/a")}[kind]()
        results = judging.judge_many([item(i) for i in range(8)], concurrency=8)
        replies = len(fake.requests)
    assert replies <= 9 and replies == budget.spent.calls and budget.reserved.calls == 0
    assert budget.denied >= 1 and any((r.error or "").startswith("budget") or r.label is None for r in results)


def test_judge_refuses_a_budget_that_is_not_a_budget() -> None:
    with pytest.raises(ConfigError, match=r"Budget\(calls=200\)"):
        Judge("openai/x", budget="$1.50")


def test_a_run_from_python_rebuilds_its_judging_with_one_cap(tmp_path: Path) -> None:
    import asyncio

    from judgeflow import RunStore
    from judgeflow.config import JudgeSpec, PanelSpec, RunSpec
    from judgeflow.runs.run import Run

    inp = items_file(tmp_path, 6)
    budget = Budget(calls=8)
    with SchemaProvider(seed=6) as fake:
        members = [JudgeSpec(model=m, client={"base_url": fake.base_url + "/v1"}) for m in ("openai/a", "openai/b")]
        spec = RunSpec(judging=PanelSpec(members=members), input=str(inp), output=str(tmp_path / "r.jsonl"))

        async def go() -> list[Any]:
            with RunStore(tmp_path / "runs.sqlite") as store:
                run = Run.open(store, spec)
                judge = run.judging(budget=budget)
                try:
                    return [r async for r in run.judge(judge, concurrency=6)]
                finally:
                    await judge.aclose()

        rows = asyncio.run(go())
        replies = len(fake.requests)
    assert replies <= 8 and replies == budget.spent.calls
    cut = [r for r in rows if r.status == "unscored"]
    assert cut and all(r.error.startswith("budget: ") for r in cut)  # a panel row short of a member: budget


@pytest.mark.parametrize("flags", [["--panel", "openai/a,openai/b,openai/c"], ["--cascade", "openai/a,openai/b"],
                                   ["--repeats", "3"]], ids=["panel", "cascade", "repeats"])
def test_run_budget_holds_for_panels_cascades_and_repeats_and_resumes(tmp_path: Path, flags: list[str],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    inp = items_file(tmp_path, 10)
    with SchemaProvider(seed=7, latency=0.01) as fake:
        argv = [*flags, "--concurrency", "16", "--budget", "12"]
        code, rows = run(tmp_path, fake.base_url, inp, *argv)
        replies = len(fake.requests)
        said = capsys.readouterr().err
        assert replies <= 12 and code == 1 and "stopped at --budget" in said
        cut = [r for r in rows if r["status"] == "unscored"]
        assert cut and all(r["error"].startswith("budget") and r["label"] is None for r in cut)
        code, again = run(tmp_path, fake.base_url, inp, *flags, "--budget", "2000", "--resume")
    assert code in (0, 1) and not any((r["error"] or "").startswith("budget") for r in again)
    assert len(again) == 10
