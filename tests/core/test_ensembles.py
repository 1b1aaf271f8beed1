"""Panels, self-consistency and cascades at the HTTP boundary: several scripted fake providers
that disagree in known ways (real openai/anthropic SDKs and Instructor parse every reply)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fakes import anthropic_body, moscow, openai_body

from judgeflow import Judge
from judgeflow.backends import LLMJudge
from judgeflow.backends.llm import make_client
from judgeflow.cli import main
from judgeflow.ensembles.cascade import Cascade, audit_draw, cascade_estimate, wilson
from judgeflow.ensembles.panel import Panel, combine
from judgeflow.errors import ConfigError
from judgeflow.results import Judgment
from judgeflow.runs.panel_summary import summary_lines
from judgeflow.runs.pricing import Price
from judgeflow.runs.run import Run
from judgeflow.runs.store import RunStore
from judgeflow.schemas import JudgedClaim, SingleJudgment

_ANSWER = re.compile(r"<answer>\n(.*?)\n</answer>", re.S)


class Member:
    """One fake provider: answers each item with the label its script gives (None = HTTP 500)."""

    def __init__(self, name: str, script: dict[str, Any], *, provider: str = "openai",
                 usage: tuple[int, int] = (100, 20), hang: str | None = None) -> None:
        self.name, self.script, self.provider, self.usage, self.hang = name, script, provider, usage, hang
        self.calls: list[str] = []
        self.seen: dict[str, int] = {}

    async def handler(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        text = " ".join(m["content"] if isinstance(m["content"], str) else " ".join(p.get("text", "") for p in m["content"])
                        for m in body["messages"] if m["role"] == "user")
        answer = _ANSWER.findall(text)[-1]
        self.calls.append(answer)
        if answer == self.hang:
            await asyncio.Event().wait()  # never answers: the run is killed while this call is in flight
        label = self.script[answer]
        if isinstance(label, list):  # successive calls (samples) get successive labels
            n = self.seen.get(answer, 0)
            self.seen[answer] = n + 1
            label = label[n]
        if label is None:
            return httpx2.Response(500, json={"error": {"message": "fake outage", "type": "fake"}})
        reply = SingleJudgment(claims=[JudgedClaim(id="c1", text=f"{self.name} on {answer}", basis="knowledge",
                                                   verdict="false_fact" if label else "supported")])
        make = openai_body if self.provider == "openai" else anthropic_body
        return httpx2.Response(200, json=make(reply, body, self.usage))

    @property
    def model(self) -> str:
        return f"{self.provider}/{self.name}"

    def judge(self, **kwargs: Any) -> Judge:
        client = make_client(self.model, api_key="test-key",
                             base_url="http://llm.test/v1" if self.provider == "openai" else "http://llm.test",
                             http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(self.handler)),
                             provider_retries=0, **kwargs)
        return Judge(backend=LLMJudge(client), strategy="single")


def item(answer: str) -> dict[str, str]:
    return {"id": answer, "question": "q?", "answer": answer, "reference": "r"}


# member labels per item: a, b, c
VOTES = {"i1": (1, 1, 1), "i2": (1, 1, 0), "i3": (1, 0, 0), "i4": (0, 0, 0), "i5": (1, 0, None), "i6": (None, None, 0)}
EXPECTED = {
    "majority": {"i1": 1, "i2": 1, "i3": 0, "i4": 0, "i5": 1, "i6": None},
    "any": {"i1": 1, "i2": 1, "i3": 1, "i4": 0, "i5": 1, "i6": None},
    "all": {"i1": 1, "i2": 0, "i3": 0, "i4": 0, "i5": 0, "i6": None},
}


def members(**kw: Any) -> list[Member]:
    return [Member("judge-a", {k: v[0] for k, v in VOTES.items()}, usage=(100, 20), **kw),
            Member("judge-b", {k: v[1] for k, v in VOTES.items()}, provider="anthropic", usage=(200, 40)),
            Member("judge-c", {k: v[2] for k, v in VOTES.items()}, usage=(300, 60))]


@pytest.mark.parametrize("rule", ["majority", "any", "all"])
def test_each_rule_combines_the_members_votes_as_specified(rule: str) -> None:
    ms = members()
    panel = Panel([m.judge() for m in ms], rule=rule)  # type: ignore[arg-type]
    results = {r.id: r for r in panel.judge_many([item(k) for k in VOTES])}
    assert {k: r.label for k, r in results.items()} == EXPECTED[rule]
    for m in ms:
        assert sorted(m.calls) == sorted(VOTES)  # every member judged every item exactly once
    r5, r6 = results["i5"], results["i6"]
    assert [v.label for v in r5.judges or []] == [1, 0, None]  # the unscored member does not vote
    assert r5.judges and r5.judges[2].status == "unscored" and "500" in (r5.judges[2].error or "")
    assert r6.status == "unscored" and "only 1 of 3 votes" in (r6.error or "") and r6.agreement is None
    assert results["i1"].agreement == "3/3" and results["i1"].confidence == 1.0
    if rule == "majority":
        assert results["i2"].agreement == "2/3" and results["i5"].agreement == "1/2"  # a 1-1 tie is 1
        assert results["i3"].claims[0].text.startswith("judge-b")  # claims of a member that voted with the panel


def test_a_tie_can_be_unscored_and_combine_counts_votes() -> None:
    assert combine([1, 0, None], "majority", min_votes=2, tie=None) == (None, "tie: 1 votes for 1, 1 for 0")
    assert combine([1, 0], "majority", min_votes=2) == (1, None)
    assert combine([1, None, None], "any", min_votes=2)[0] is None
    panel = Panel([m.judge() for m in members()], tie=None)  # type: ignore[arg-type]
    r = panel.judge(item("i5"))
    assert r.label is None and r.status == "unscored" and r.error and "tie" in r.error


def test_costs_add_up_per_member() -> None:
    ms = members()
    panel = Panel([m.judge() for m in ms])  # type: ignore[arg-type]
    results = panel.judge_many([item(k) for k in VOTES])
    for r in results:
        assert r.judges is not None
        assert [v.model for v in r.judges] == [m.model for m in ms]
        assert r.usage.calls == sum(v.usage.calls for v in r.judges)
        assert r.usage.input_tokens == sum(v.usage.input_tokens for v in r.judges)
    # each member: one call an item at its own token counts (the failed calls count a call, no tokens)
    for i, m in enumerate(ms):
        scored = sum(1 for v in VOTES.values() if v[i] is not None)
        calls = sum(r.judges[i].usage.calls for r in results)  # type: ignore[index]
        tokens_in = sum(r.judges[i].usage.input_tokens for r in results)  # type: ignore[index]
        assert tokens_in == scored * m.usage[0] and calls >= scored
    prices = {m.model: Price(input=1.0 * (i + 1), output=10.0) for i, m in enumerate(ms)}
    lines = summary_lines(results, prices)
    # judge-b (anthropic): 5 scored items x (200 in at $2/M + 40 out at $10/M) = $0.0040
    assert any(line.startswith("member anthropic/judge-b:") and "$0.0040" in line for line in lines), lines
    # all: each member scored 5 items: a 5 x (100 x 1 + 20 x 10) + b 5 x 800 + c 5 x (300 x 3 + 60 x 10), per 1M
    total = (5 * 300 + 5 * 800 + 5 * 1500) / 1e6
    assert any(f"${total:,.4f}" in line and "all judges" in line for line in lines), lines


def test_self_consistency_takes_the_majority_of_samples_and_reports_confidence() -> None:
    m = Member("sampler", {"x": [1, 1, 0, 1, 0]})
    panel = Panel([m.judge(temperature=0.7)], samples=5)
    r = panel.judge(item("x"))
    assert len(m.calls) == 5 and r.label == 1 and r.agreement == "3/5" and r.confidence == pytest.approx(0.6)
    # the samples run concurrently, so which sample got which scripted reply depends on arrival order
    assert r.judges and sorted(r.judges[0].samples or []) == [0, 0, 1, 1, 1]
    with pytest.raises(ConfigError, match="temperature above 0"):
        Panel([Member("cold", {}).judge()], samples=3)


def test_a_cascade_makes_exactly_the_expected_strong_calls() -> None:
    answers = [f"a{i}" for i in range(40)]
    cheap_labels = {a: (1 if i % 5 == 0 else None if i % 7 == 3 else 0) for i, a in enumerate(answers)}
    strong_labels = {a: (1 if i % 3 == 0 else 0) for i, a in enumerate(answers)}
    cheap, strong = Member("cheap", cheap_labels), Member("strong", strong_labels, provider="anthropic")
    cascade = Cascade(cheap.judge(), strong.judge(), escalate_on="label1,unscored", audit_rate=0.25, seed=7)
    results = {r.id: r for r in cascade.judge_many([item(a) for a in answers])}
    escalated = {a for a in answers if cheap_labels[a] != 0}
    audited = {a for a in answers if a not in escalated and audit_draw(7, a) < 0.25}
    assert audited and len(audited) < len(answers) - len(escalated)
    assert sorted(cheap.calls) == sorted(answers)
    assert sorted(strong.calls) == sorted(escalated | audited)  # escalated + audited, nothing else
    for a, r in results.items():
        assert r.cascade is not None
        assert r.cascade["escalated"] == (a in escalated) and r.cascade["audited"] == (a in audited)
        assert r.label == (strong_labels[a] if a in escalated else cheap_labels[a])  # audited keep the cheap label
    est = cascade_estimate(results.values())
    missed = sum(1 for a in audited if strong_labels[a] == 1)
    assert (est.escalated, est.audited, est.audit_misses) == (len(escalated), len(audited), missed)
    assert est.miss_rate_ci == wilson(missed, len(audited))
    assert est.est_missed == pytest.approx(missed / len(audited) * (len(answers) - len(escalated)))


def test_disagree_escalation_needs_votes_and_uses_them() -> None:
    with pytest.raises(ConfigError, match="several votes"):
        Cascade(Member("c", {}).judge(), Member("s", {}).judge(), escalate_on="disagree")
    ms = members()
    strong = Member("strong", {k: 0 for k in VOTES})
    cascade = Cascade(Panel([m.judge() for m in ms]), strong.judge(), escalate_on="disagree")  # type: ignore[arg-type]
    results = {r.id: r for r in cascade.judge_many([item(k) for k in VOTES])}
    # members disagree on i2, i3, i5 (unscored members do not count); i6 is unscored: not escalated on disagree
    assert sorted(strong.calls) == ["i2", "i3", "i5"]
    assert results["i2"].label == 0 and results["i1"].label == 1
    assert [v.role for v in results["i2"].judges or []] == ["cheap", "cheap", "cheap", "strong"]


def test_resume_repeats_no_members_call(tmp_path: Path) -> None:
    items = [item(k) for k in ("i1", "i2", "i3", "i4")]
    script = {"i1": 1, "i2": 0, "i3": 1, "i4": 0}

    def panel(hang: str | None = None) -> tuple[Panel, list[Member]]:
        ms = [Member("a", script), Member("b", script), Member("c", script, hang=hang)]
        return Panel([m.judge() for m in ms]), ms  # type: ignore[arg-type]

    p1, ms1 = panel(hang="i3")
    with RunStore(tmp_path / "runs.sqlite") as store:
        run = store.start_run(settings={"model": p1.model})

        async def first() -> list[Judgment]:
            out: list[Judgment] = []

            async def consume() -> None:
                async for j in Run.attach(store, run).judge(p1, items):
                    out.append(j)

            with pytest.raises(asyncio.TimeoutError):  # member c never answers item i3: the run is killed
                await asyncio.wait_for(consume(), timeout=3)
            return out

        done = asyncio.run(first())
        assert sorted(j.id for j in done) == ["i1", "i2", "i4"] and store.done_ids(run) == {"i1", "i2", "i4"}
        assert sorted(ms1[0].calls) == sorted(ms1[1].calls) == ["i1", "i2", "i3", "i4"]

        p2, ms2 = panel()
        resumed = asyncio.run(_collect(p2, items, store, run))
        assert store.done_ids(run) == {"i1", "i2", "i3", "i4"}
    # a and b judged i3 before the kill: their results come from the cache; only c is asked again
    assert ms2[0].calls == [] and ms2[1].calls == [] and ms2[2].calls == ["i3"]
    assert resumed[0].label == 1 and resumed[0].judges and [v.cached for v in resumed[0].judges] == [True, True, False]


async def _collect(p: Panel, items: list[dict[str, str]], store: RunStore, run: str) -> list[Judgment]:
    return [j async for j in Run.attach(store, run).judge(p, items)]


def test_run_cli_refuses_batch_and_cold_samples_and_writes_member_votes(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "items.jsonl"
    src.write_text("".join(json.dumps(moscow(id=f"q{i}", answer=a)) + "\n"
                           for i, a in enumerate(["In 1147.", "In 1247.", "Yuri Dolgorukiy founded it in 1147."])))
    out, store = tmp_path / "out.jsonl", str(tmp_path / "s.sqlite")
    base = ["run", str(src), "-o", str(out), "--store", store, "--no-progress"]
    assert main([*base, "--panel", "baseline/lexical,baseline/rouge-l", "--batch"]) == 2
    assert "--batch does not support" in capsys.readouterr().err
    assert main([*base, "--model", "openai/gpt-4o-mini", "--samples", "3"]) == 2
    assert "temperature above 0" in capsys.readouterr().err
    assert main([*base, "--panel", "baseline/lexical,baseline/rouge-l,baseline/lexical", "--panel-rule", "any"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [len(r["judges"]) for r in rows] == [3, 3, 3] and all(r["agreement"] for r in rows)
    assert rows[1]["label"] == 1 and "cascade" not in rows[0]
    err = capsys.readouterr().err
    assert "member baseline/rouge-l" in err and "estimated cost" in err
    # a single judge's rows keep their old shape
    assert main(["run", str(src), "-o", str(tmp_path / "one.jsonl"), "--store", store, "--no-progress"]) == 0
    one = json.loads((tmp_path / "one.jsonl").read_text().splitlines()[0])
    assert not {"judges", "agreement", "confidence", "cascade"} & set(one)


def _panel_rows() -> list[Judgment]:
    """Panel rows with known member votes and human labels: a is always right, b always says 1, c always 0."""
    from judgeflow.results import JudgeVote

    rows = []
    for i in range(40):
        human = i % 2
        votes = [human, 1, 0]
        label = 1 if sum(votes) >= 2 else 0
        rows.append(Judgment(id=f"x{i}", label=label, human_label=human, criterion="factual_correctness",
                             judges=[JudgeVote(model=m, role="member", label=v) for m, v in zip("abc", votes)],
                             agreement=f"{sum(v == label for v in votes)}/3"))
    return rows


def test_calibrate_by_judge_puts_members_and_the_combined_label_side_by_side(tmp_path: Path) -> None:
    from judgeflow.calibration.agreement import calibrate
    from judgeflow.calibration.members import fleiss_kappa
    from judgeflow.calibration.report_html import calibration_html

    r = calibrate(_panel_rows(), by="judge", n_boot=200)
    kappas = {g.group: g.kappa for g in r.groups}
    assert kappas["combined"] == pytest.approx(1.0) and kappas["a"] == pytest.approx(1.0)
    assert [g.group for g in r.groups] == ["combined", "a", "b", "c"] and r.groups[1].kappa_ci is not None
    assert kappas["b"] == pytest.approx(0.0) and kappas["c"] == pytest.approx(0.0)  # constant raters
    # Fleiss' kappa of the three members, by hand: each item has two raters on one side, one on the other
    # (P_i = 1/3), and both classes are equally common over all ratings (P_e = 1/2): (1/3 - 1/2) / (1/2) = -1/3
    assert r.fleiss_members == 3 and r.fleiss_items == 40 and r.fleiss_kappa == pytest.approx(-1 / 3)
    assert fleiss_kappa([[1, 1], [0, 0], [1, 1]]) == pytest.approx(1.0)
    wrong = calibrate([j.model_copy(update={"label": 1 - (j.human_label or 0)}) for j in _panel_rows()], by="judge",
                      n_boot=200)
    page = calibration_html(wrong)
    assert "Members&#x27; votes" in page or "Members' votes" in page
    assert "Fleiss" in page


def test_sample_focus_disagreement_keeps_only_disagreeing_items_and_says_it_is_for_debugging(tmp_path: Path) -> None:
    from judgeflow.calibration.sampling import FOCUS_NOTE, sample_file

    rows = _panel_rows()
    rows[0] = rows[0].model_copy(update={"judges": [v.model_copy(update={"label": 0}) for v in rows[0].judges or []]})
    items, results = tmp_path / "items.jsonl", tmp_path / "results.jsonl"
    items.write_text("".join(json.dumps({"id": j.id, "answer": "a", "reference": "r"}) + "\n" for j in rows))
    results.write_text("".join(json.dumps(j.to_row()) + "\n" for j in rows))
    s = sample_file(items, 100, tmp_path / "s.jsonl", results=results, focus="disagreement")
    got = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert s.n == 39 and "x0" not in {g["id"] for g in got} and all(g["sample_focus"] == "disagreement" for g in got)
    assert "not for measuring agreement" in FOCUS_NOTE
    with pytest.raises(ConfigError, match="--results"):
        sample_file(items, 10, tmp_path / "t.jsonl", focus="disagreement")
