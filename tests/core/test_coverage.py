"""Requirement coverage for agent output against a spec: typed calls, validator, combination, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, InvalidItemError, Judge, Judgment
from judgeflow.aggregate import combine
from judgeflow.backends.llm_judge import LLMRequirementChecker
from judgeflow.cli import main
from judgeflow.coverage import (
    LexicalRequirementChecker,
    Requirement,
    RequirementCheck,
    RequirementChecks,
    Requirements,
    split_requirements,
)
from judgeflow.results import RequirementResult
from judgeflow.spec_review import as_output_text, review

SPEC = """Order confirmation:
- Give the order number.
- Delivery within 5 business days.
- If the order ships internationally, mention customs fees.
"""
REQS = Requirements(requirements=[
    Requirement(id="r1", text="Give the order number."),
    Requirement(id="r2", text="Delivery within 5 business days."),
    Requirement(id="r3", text="If the order ships internationally, mention customs fees."),
])
CLAIMS = Claims(claims=[Claim(id="c1", text="Order A-1042 is confirmed.", kind="value"),
                        Claim(id="c2", text="Thanks for shopping with us.", kind="other")])
CLAIM_CHECKS = ClaimChecks(checks=[
    ClaimCheck(claim_id="c1", verdict="complies", basis="spec", evidence="Give the order number."),
    ClaimCheck(claim_id="c2", verdict="extra", basis="none", reason="a harmless addition"),
])
OUTPUT = "Order A-1042 is confirmed. Thanks for shopping with us."


def coverage(*statuses: str) -> RequirementChecks:
    return RequirementChecks(checks=[RequirementCheck(requirement_id=f"r{i}", status=s, reason=f"r{i} is {s}")  # type: ignore[arg-type]
                                     for i, s in enumerate(statuses, 1)])


def run_review(statuses: tuple[str, ...], *extra_replies: object) -> tuple[Judgment, FakeLLM]:
    llm = FakeLLM("openai", [CLAIMS, CLAIM_CHECKS, REQS, *extra_replies, coverage(*statuses)])
    judge = Judge(backend=llm.backend(), mode="spec", coverage=True)
    return review(OUTPUT, SPEC, judge=judge), llm


def test_harmless_extras_pass_when_every_requirement_is_met() -> None:
    result, llm = run_review(("met", "met", "not_applicable"))
    assert result.label == 0 and result.criterion == "spec_compliance"
    assert [r.status for r in result.requirements or []] == ["met", "met", "not_applicable"]
    assert [c.verdict for c in result.claims] == ["complies", "extra"]
    assert result.usage.calls == 4 and [t.step for t in result.trace] == ["decompose", "check", "requirements", "coverage"]
    coverage_prompt = llm.user_prompts()[3]
    assert "\nr2: Delivery within 5 business days.\n" in coverage_prompt
    assert "<answer>\nOrder A-1042 is confirmed." in coverage_prompt
    assert result.language == "en" and "input_language" not in result.to_row()  # one language field


def test_a_missing_requirement_fails_and_is_named() -> None:
    result, _ = run_review(("met", "not_met", "not_applicable"))
    assert result.label == 1
    assert result.reason == "requirement not met: r2 Delivery within 5 business days."


def test_an_unanswered_or_repeated_requirement_is_reasked() -> None:
    incomplete = {"checks": [{"requirement_id": "r1", "status": "met"}, {"requirement_id": "r1", "status": "met"},
                             {"requirement_id": "r9", "status": "met"}]}
    result, llm = run_review(("met", "met", "met"), incomplete)
    assert result.label == 0 and len(llm.requests) == 5
    reask = json.dumps(llm.requests[4]["messages"])
    assert "no status for requirement ids ['r2', 'r3']" in reask
    assert "['r1'] were answered more than once" in reask and "['r9'] do not exist" in reask


def test_a_status_outside_the_vocabulary_is_reasked() -> None:
    bad = {"checks": [{"requirement_id": f"r{i}", "status": "partially"} for i in (1, 2, 3)]}
    result, llm = run_review(("met", "not_met", "met"), bad)
    assert result.label == 1 and len(llm.requests) == 5


def test_spec_is_split_once_for_many_outputs() -> None:
    llm = FakeLLM("anthropic", [CLAIMS, CLAIM_CHECKS, REQS, coverage("met", "met", "met"),
                                CLAIMS, CLAIM_CHECKS, coverage("met", "not_met", "met")])
    judge = Judge(backend=llm.backend(), mode="spec", coverage=True, concurrency=1)
    first, second = judge.judge_many([{"id": "a", "answer": OUTPUT, "spec": SPEC},
                                      {"id": "b", "answer": OUTPUT + " Soon.", "spec": SPEC}])
    assert (first.label, second.label) == (0, 1)
    assert len(llm.requests) == 7
    assert second.usage.calls == 3


def test_coverage_failure_leaves_the_item_unscored_not_passed() -> None:
    llm = FakeLLM("openai", [CLAIMS, CLAIM_CHECKS, 500])
    result = review(OUTPUT, SPEC, judge=Judge(backend=llm.backend(), mode="spec", coverage=True))
    assert result.label is None and result.status == "unscored"
    assert (result.error or "").startswith("requirements: provider error")


def test_claim_violation_stands_even_if_all_requirements_are_met() -> None:
    base = Judgment(id="x", label=1, reason="claim c1 is violates_spec: 10 days")
    met = [RequirementResult(id="r1", text="t", status="met")]
    assert combine(base, met).label == 1
    unscored = Judgment(id="x", label=None, status="unscored", reason="claims ['c1'] have no verdict")
    assert combine(unscored, [RequirementResult(id="r1", text="t", status="not_met")]).label is None


def test_offline_coverage_extras_pass_missing_fails_condition_not_applicable() -> None:
    spec = "- Name the release version 2.1.\n- Link to the changelog.\n- If there are breaking changes, list them."
    assert [r.text for r in split_requirements("Requirements:\n" + spec)] == [
        "Name the release version 2.1.", "Link to the changelog.", "If there are breaking changes, list them."]
    good = review("Version 2.1 is out. Changelog: https://example.com/changelog. Thanks for upgrading!", spec)
    assert good.label == 0, good.reason
    assert [r.status for r in good.requirements or []] == ["met", "met", "not_applicable"]
    missing = review("Version 2.1 is out. Thanks for upgrading!", spec)
    assert missing.label == 1 and "r2 Link to the changelog." in (missing.reason or "")
    wrong = review({"version": "2.2", "changelog": "https://example.com/changelog"}, spec)
    assert wrong.label == 1
    assert next(r for r in wrong.requirements or [] if r.id == "r1").reason == "values ['2.1'] are missing"


def test_output_as_json_and_bad_spec() -> None:
    assert as_output_text({"b": 1, "a": "é"}) == '{\n  "b": 1,\n  "a": "é"\n}'
    assert as_output_text("plain") == "plain"
    with pytest.raises(InvalidItemError, match="non-empty spec"):
        review("x", "  ")


def test_checkers_fingerprints_differ_and_enter_the_cache_key() -> None:
    assert LexicalRequirementChecker().fingerprint != LLMRequirementChecker(FakeLLM("openai").client()).fingerprint
    judge = Judge("baseline/lexical", coverage=True)
    from judgeflow import Item
    spec_item = Item(id="s", answer="a", spec="b")
    ref_item = Item(id="r", answer="a", reference="b")
    plain = Judge("baseline/lexical")
    assert judge.fingerprint(spec_item) != plain.fingerprint(spec_item)
    assert judge.fingerprint(ref_item) == plain.fingerprint(ref_item)
def test_cli_run_mode_spec_reports_requirements(tmp_path: Path) -> None:
    items = tmp_path / "outputs.jsonl"
    rows = [{"id": "good", "spec": "- Name the release version 2.1.\n- Link to the changelog.",
             "answer": "Version 2.1 is out. Changelog: https://example.com/changelog. Enjoy!"},
            {"id": "missing", "spec": "- Name the release version 2.1.\n- Link to the changelog.",
             "answer": "Version 2.1 is out. Enjoy!"}]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "results.jsonl"
    assert main(["run", str(items), "-o", str(out), "--mode", "spec", "--store", str(tmp_path / "s.sqlite")]) == 0
    got = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert got["good"]["label"] == 0 and got["missing"]["label"] == 1
    assert [r["status"] for r in got["missing"]["requirements"]] == ["met", "not_met"]
    out2 = tmp_path / "plain.jsonl"
    assert main(["run", str(items), "-o", str(out2), "--mode", "spec", "--no-coverage",
                 "--store", str(tmp_path / "s.sqlite")]) == 0
    plain = {r["id"]: r for r in map(json.loads, out2.read_text().splitlines())}
    assert plain["missing"]["requirements"] is None and plain["missing"]["label"] == 0


def test_coverage_is_a_node_of_the_graph_and_routing_runs_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import judgeflow.workflow as workflow
    from judgeflow import build_graph

    assert "cover" in build_graph().get_graph().nodes
    calls = []
    real = workflow.choose_criterion
    monkeypatch.setattr(workflow, "choose_criterion", lambda *a, **k: calls.append(1) or real(*a, **k))
    llm = FakeLLM("openai", [CLAIMS, CLAIM_CHECKS, REQS, coverage("met", "met", "met")])
    result = Judge(backend=llm.backend(), mode="spec", coverage=True).judge({"id": "a", "answer": OUTPUT, "spec": SPEC})
    assert result.label == 0 and len(calls) == 1


def test_coverage_prompts_belong_to_spec_criteria_only(tmp_path: Path) -> None:
    from judgeflow import CriterionError, load_criterion

    text = Path(load_criterion("factual_correctness").path).read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(text + '\n[coverage]\nsystem = "s"\nrequirements = "{spec}"\ncheck = "{answer} {requirements}"\n',
                   encoding="utf-8")
    with pytest.raises(CriterionError, match="coverage: requirement coverage applies to spec criteria only"):
        load_criterion(bad)
