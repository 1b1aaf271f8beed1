"""`tune`: criterion edits as data, k-fold held-out scoring, honesty under noise, resume, budget.

The fakes answer at the HTTP boundary (real openai SDK, real Instructor): `ReadingFake` reads the
criterion text in each check prompt (it stops flagging correct extra details once the criterion's
"never an error" list mentions details) or answers with seeded noise; the schema fake
(tests/fakes/schema_provider.py) fills every reply from its schema at random.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import httpx2
import pytest
from fakes import FakeProvider, SchemaProvider, start_cli, stored_count
from fakes.labelled import factual_rows, write_rows
from fakes.tuning import EDITS, ReadingFake, capital_items

from judgeflow.calibration.edits import (
    CriterionEdit,
    EditError,
    apply_edit,
    dump_criterion,
    edited_toml,
    edits_reply,
    toml_diff,
)
from judgeflow.calibration.tune import NOTHING, make_folds, tune
from judgeflow.calibration.tune_report import write_tune
from judgeflow.cli import main
from judgeflow.criteria import load_criterion
from judgeflow.errors import ConfigError, CriterionError, InvalidItemError, LLMError
from judgeflow.items import Item
from judgeflow.runs.pricing import Price
from judgeflow.runs.store import RunStore

FACTUAL = load_criterion("factual_correctness")
#: the shipped criterion without its "never an error" list: the fake then flags correct extra details
STRICT = FACTUAL.model_copy(update={"not_errors": []})
PRICES = {"openai/gpt-fake": Price(input=1.0, output=2.0)}


# -- not_errors and fact_kinds as criterion data ----------------------------------------------

def test_not_errors_are_shown_where_the_criterion_defines_errors() -> None:
    check = FACTUAL.render("check", {"claims": "<claims></claims>"})
    single = FACTUAL.render("single", {"answer": "<answer>x</answer>"})
    for prompt in (check, single):
        assert "Never an error on its own" in prompt
        assert "- correct facts the reference lacks" in prompt
        assert "Concrete fact kinds: date, number, name" in prompt
    assert "Never an error" not in STRICT.render("check", {"claims": ""})
    assert load_criterion("reference_faithfulness").not_errors == []  # it does not apply there


def test_an_empty_not_errors_keeps_the_fingerprint_and_an_entry_changes_it() -> None:
    data = STRICT.model_dump()
    assert "not_errors" not in json.loads(STRICT.model_dump_json(exclude={"path", "coverage", "not_errors"})) \
        and STRICT.fingerprint == type(STRICT)(**{k: v for k, v in data.items() if k != "not_errors"}).fingerprint
    assert STRICT.fingerprint != FACTUAL.fingerprint


# -- edits ------------------------------------------------------------------------------------

@pytest.mark.parametrize("edit, expect", [
    (CriterionEdit(field="not_errors", action="add", new="spelling variants"), ("not_errors", "spelling variants")),
    (CriterionEdit(field="fact_kinds", action="remove", old="EVENT"), ("fact_kinds", None)),
    (CriterionEdit(field="fact_kinds", action="replace", old="title", new="work title"), ("fact_kinds", "work title")),
    (CriterionEdit(field="verdicts.unverifiable", action="replace", old="", new="Nothing settles it."),
     ("verdicts", "Nothing settles it.")),
], ids=["add", "remove-any-case", "replace", "verdict"])
def test_an_edit_changes_one_field_and_the_file_keeps_everything_else(edit: CriterionEdit, expect: tuple) -> None:
    new = apply_edit(FACTUAL, edit)
    field, value = expect
    got = getattr(new, field)
    if value is None:
        assert "event" not in got
    else:
        assert value in (got.values() if isinstance(got, dict) else got)
    old_text = Path(FACTUAL.path).read_text(encoding="utf-8")
    text = edited_toml(old_text, FACTUAL, new)
    assert "# Factual correctness" in text  # edited in place: the comments are kept
    diff = toml_diff(old_text, text, "a", "b").splitlines()[2:]
    assert 1 <= len([x for x in diff if x[:1] in "+-"]) <= 2


@pytest.mark.parametrize("edit, message", [
    (CriterionEdit(field="prompts.system", action="replace", new="x"), "not editable"),
    (CriterionEdit(field="not_errors", action="remove", old="no such entry"), "not an entry"),
    (CriterionEdit(field="not_errors", action="add", new="Clarifications, synonyms, paraphrases"), "already"),
    (CriterionEdit(field="verdicts.supported", action="remove", old="x"), "only be replaced"),
    (CriterionEdit(field="verdicts.supported", action="replace", old="something else", new="x"), "current meaning"),
    (CriterionEdit(field="fact_kinds", action="add", new=""), "needs new text"),
])
def test_an_edit_that_cannot_apply_says_why(edit: CriterionEdit, message: str) -> None:
    with pytest.raises(EditError, match=message):
        apply_edit(FACTUAL, edit)


@pytest.mark.parametrize("name", ["factual_correctness", "reference_faithfulness", "source_faithfulness",
                                  "spec_compliance"])
def test_a_criterion_written_out_loads_back_the_same(name: str, tmp_path: Path) -> None:
    c = load_criterion(name)
    path = tmp_path / f"{name}.toml"
    path.write_text(dump_criterion(c), encoding="utf-8")
    assert load_criterion(path).model_dump(exclude={"path"}) == c.model_dump(exclude={"path"})


def test_the_edit_schema_offers_only_the_data_fields() -> None:
    reply = edits_reply(FACTUAL, 3)
    with pytest.raises(ValueError, match="not one of"):  # a model without constrained decoding is asked again
        reply.model_validate({"edits": [{"field": "prompts.system", "action": "add", "new": "x"}]})
    schema = reply.model_json_schema()
    entry = schema["properties"]["edits"]["items"]
    fields = entry["properties"]["field"]["enum"]
    assert fields[:2] == ["not_errors", "fact_kinds"] and "verdicts.false_fact" in fields
    assert not any(f.startswith("prompts") for f in fields)
    assert schema["properties"]["edits"]["maxItems"] == 3


def test_folds_are_stratified_and_do_not_depend_on_input_order() -> None:
    items = [Item.from_record(r) for r in capital_items()]
    folds = make_folds(items, 4, seed=0)
    assert sorted(i for f in folds for i in f) == list(range(len(items)))
    assert all(sum(items[i].label for i in f) in (3, 4) for f in folds)  # 14 ones over 4 folds
    ids = [{items[i].id for i in f} for f in folds]
    back = list(reversed(items))
    assert [{back[i].id for i in f} for f in make_folds(back, 4, seed=0)] == ids


# -- the loop ---------------------------------------------------------------------------------

def test_tune_finds_the_edit_the_judge_reads_and_reports_a_held_out_gain(tmp_path: Path) -> None:
    fake = ReadingFake()
    store = RunStore(tmp_path / "runs.sqlite")
    result = tune(capital_items(), STRICT, backend=fake.backend(), folds=4, candidates=3, store=store, prices=PRICES)
    r = result.report
    assert result.criterion is not None and r.accepted_rank == 1
    assert result.criterion.not_errors == [EDITS[1]["new"]]
    best = r.ranks[1].comparison
    assert best is not None and best.kappa_diff is not None and best.kappa_diff > 0.3
    assert best.kappa_diff_ci is not None and best.kappa_diff_ci[0] > 0 and best.mcnemar_p < 0.01
    assert best.a.agreement.false_alarms == 14 and best.b.agreement.false_alarms == 0  # the extra details
    assert len(best.disagreements) == 14 and all(d.right == "b" for d in best.disagreements)
    assert not r.ranks[0].accepted and r.ranks[0].comparison.kappa_diff == 0  # the useless edit
    assert r.ranks[2].comparison is None and "no edit at this rank could be applied" in r.ranks[2].why
    # calls: labels x 2 (decompose, check) x (1 + the ranks that could be applied) + one proposal per fold
    assert r.judge_usage.calls == 40 * 2 * (1 + 2) and r.editor_usage.calls == 4 == fake.tools["CriterionEdits"]
    assert r.calls == len(fake.requests) and r.cost == pytest.approx(r.calls * (100 * 1.0 + 20 * 2.0) / 1e6)
    paths = write_tune(result, tmp_path / "out")
    diff = paths["diff"].read_text(encoding="utf-8")
    assert f'+not_errors = ["{EDITS[1]["new"]}"]' in diff  # against STRICT as it is, not the shipped file
    assert [x for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")] == ["-not_errors = []"]
    assert load_criterion(paths["criterion"]).not_errors == [EDITS[1]["new"]]
    html = paths["report.html"].read_text(encoding="utf-8")
    assert "accepted" in html and "q15" in html and "&lt;" not in r.verdict


def test_a_second_tune_is_served_from_the_caches(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    first = tune(capital_items(), STRICT, backend=ReadingFake().backend(), folds=4, candidates=2, store=store)
    again = ReadingFake()
    second = tune(capital_items(), STRICT, backend=again.backend(), folds=4, candidates=2, store=store)
    assert again.requests == [] and second.report.calls == 0
    assert second.report.cached_items == first.report.judge_usage.calls // 2
    assert second.report.verdict == first.report.verdict and all(f.cached for f in second.report.fold_info)


def test_noise_is_never_accepted(tmp_path: Path) -> None:
    for seed in (0, 1):
        fake = ReadingFake(verdicts="random", seed=seed)
        result = tune(capital_items(), STRICT, backend=fake.backend(), folds=4, candidates=3)
        assert result.criterion is None and result.report.accepted is None
        assert NOTHING in result.report.verdict
        assert [r.accepted for r in result.report.ranks] == [False] * len(result.report.ranks)


def test_the_budget_stops_before_a_step_and_a_larger_one_resumes(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    fake = ReadingFake()
    cut = tune(capital_items(), STRICT, backend=fake.backend(), folds=4, candidates=2, store=store, budget="150")
    assert cut.report.status == "budget" and cut.criterion is None and "larger --budget" in cut.report.verdict
    assert cut.report.calls <= 150 and len(fake.requests) == cut.report.calls
    rest = ReadingFake()
    done = tune(capital_items(), STRICT, backend=rest.backend(), folds=4, candidates=2, store=store, budget="500")
    assert done.report.status == "done" and done.criterion is not None
    assert cut.report.calls + done.report.calls == 40 * 2 * 3 + 4  # nothing paid twice


def test_a_cost_budget_needs_a_price() -> None:
    with pytest.raises(ConfigError, match="no price is known"):
        tune(capital_items(), STRICT, backend=ReadingFake().backend(), budget="$1")


def test_too_few_labels_or_one_class_is_refused() -> None:
    with pytest.raises(ConfigError, match="at least 10"):
        tune(capital_items()[:8], STRICT, backend=ReadingFake().backend())
    with pytest.raises(ConfigError, match="one class"):
        tune(capital_items(n_wrong=0, n_mislabelled=0), STRICT, backend=ReadingFake().backend())


def test_an_editor_that_gives_no_valid_reply_leaves_its_fold_without_edits() -> None:
    fake = ReadingFake(edits=[{"field": "prompts.system", "action": "add", "new": "x"}])  # outside the enum, always
    result = tune(capital_items(), STRICT, backend=fake.backend(max_retries=0), folds=2, candidates=1)
    assert result.criterion is None and all(f.error for f in result.report.fold_info)
    assert result.report.ranks == [] and NOTHING in result.report.verdict


# -- against the schema-filling fake (random verdicts), through the CLI ------------------------

def test_the_cli_with_a_random_judge_accepts_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = write_rows(tmp_path / "fq.jsonl", factual_rows(30))
    out = tmp_path / "out"
    with SchemaProvider(seed=0) as fake:
        code = main(["tune", str(items), "--criterion", "factual_correctness", "--model", "openai/fake-judge",
                     "--base-url", f"{fake.base_url}/v1", "--store", str(tmp_path / "runs.sqlite"), "--folds", "3",
                     "--candidates", "2", "-o", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and NOTHING in " ".join(text.split())
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["accepted"] is None and report["judge_usage"]["calls"] >= 60 and "model call(s)" in text
    assert (out / "report.html").is_file() and not list(out.glob("*.tuned.toml"))


def test_tune_after_run_serves_every_first_step_judgment_from_the_runs_cache(tmp_path: Path) -> None:
    """Before, `tune` judged every item again (0 from the cache) though `run` with the same items
    and model had filled it: the key held how the criterion was chosen (routed vs --criterion)."""
    items = write_rows(tmp_path / "fq.jsonl", factual_rows(12))
    store, out = tmp_path / "runs.sqlite", tmp_path / "out"
    with SchemaProvider(seed=0) as fake:
        url = f"{fake.base_url}/v1"
        main(["run", str(items), "-o", str(tmp_path / "results.jsonl"), "--model", "openai/fake-judge",
              "--base-url", url, "--store", str(store), "--no-progress"])
        judged = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
        assert [r["routed_by"] for r in judged] == ["reference present"] * 12
        main(["tune", str(items), "--criterion", "factual_correctness", "--model", "openai/fake-judge",
              "--base-url", url, "--store", str(store), "--folds", "3", "--candidates", "1", "-o", str(out)])
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    # the first step (12 items under the criterion as it is) all from the cache; an edited
    # criterion's judgments are new keys, judged (and paid) once
    assert report["labelled"] == 12 and report["cached_items"] == 12, report


def test_each_model_of_a_mixed_provider_tune_gets_its_own_endpoint_and_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """As docs/tuning.md shows: an OpenAI judge behind a proxy, an Anthropic editor. Before,
    --base-url went to both (`/v1/v1/messages`, exit 2 after the judging was paid) and
    --editor-model ignored MODEL@URL."""
    from judgeflow.calibration.tune import _seams
    from judgeflow.cli import build_parser
    from judgeflow.cli.tune_cmd import endpoints

    def parsed(*flags: str):
        return build_parser().parse_args(["tune", "items.jsonl", "--criterion", "factual_correctness", *flags])

    proxy = "http://127.0.0.1:9/v1"
    args = parsed("--model", "openai/gpt-4o-mini", "--base-url", proxy, "--editor-model", "anthropic/claude-sonnet-4-5")
    assert endpoints(args) == ("openai/gpt-4o-mini", proxy, "anthropic/claude-sonnet-4-5", {"base_url": None})
    args = parsed("--model", f"openai/gpt-4o-mini@{proxy}", "--editor-model", "anthropic/claude-sonnet-4-5@http://h:8",
                  "--editor-key-env", "MY_EDITOR_KEY")
    with pytest.raises(ConfigError, match="MY_EDITOR_KEY: that variable is not set"):
        endpoints(args)
    monkeypatch.setenv("MY_EDITOR_KEY", "ed-key")
    monkeypatch.setenv("OPENAI_API_KEY", "judge-key")
    model, url, editor_model, editor = endpoints(args)
    assert (model, url, editor_model) == ("openai/gpt-4o-mini", proxy, "anthropic/claude-sonnet-4-5")
    assert editor == {"base_url": "http://h:8", "api_key": "ed-key"}
    same = parsed("--model", "openai/gpt-4o-mini", "--base-url", proxy, "--editor-model", "openai/gpt-4.1")
    assert endpoints(same)[3] == {"base_url": proxy}  # one wire: the one endpoint serves both
    judging, ed = _seams(model, None, None, editor_model, None, "graph", 4, None, {"base_url": url}, editor)
    assert judging.backend.client.base_url == proxy and ed.client.base_url == "http://h:8"


def test_repeated_ids_and_a_judge_that_scores_nothing_are_refused() -> None:
    rows = capital_items()
    with pytest.raises(InvalidItemError, match="more than once"):
        tune([*rows, rows[0]], STRICT, backend=ReadingFake().backend())
    down = ReadingFake()
    down.handler = lambda request: httpx2.Response(500, json={"error": {"message": "down"}})  # type: ignore[method-assign]
    with pytest.raises(LLMError, match="scored only 0 of 40"):
        tune(rows, STRICT, backend=down.backend(max_retries=0))


@pytest.mark.parametrize("bad", ["", "two\nlines"], ids=["empty", "multi-line"])
def test_a_not_errors_entry_is_one_line(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(dump_criterion(FACTUAL.model_copy(update={"not_errors": ["fine", bad]})), encoding="utf-8")
    with pytest.raises(CriterionError, match="not_errors: each entry is one short line"):
        load_criterion(path)


def test_the_editor_can_be_another_model() -> None:
    judge, editor = ReadingFake(), ReadingFake(edits=EDITS[1:2])
    result = tune(capital_items(), STRICT, backend=judge.backend(), editor=editor.client(), folds=2, candidates=1)
    assert "CriterionEdits" not in judge.tools and editor.tools == {"CriterionEdits": 2}
    assert result.criterion is not None and result.report.editor_usage.calls == 2


@pytest.mark.slow
def test_a_killed_tune_resumes_and_pays_for_nothing_twice(tmp_path: Path) -> None:
    """SIGKILL half-way (no clean-up at all), then the same command: every item judgment and
    proposal is made once, apart from the calls in flight at the kill."""
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in capital_items()), encoding="utf-8")
    crit = tmp_path / "strict.toml"
    crit.write_text(dump_criterion(STRICT), encoding="utf-8")
    store = tmp_path / "runs.sqlite"
    with FakeProvider(latency=0.05) as fake:
        args = ["tune", str(items), "--criterion", str(crit), "--model", "openai/fake-judge", "--base-url",
                fake.base_url + "/v1", "--store", str(store), "--folds", "4", "--candidates", "1",
                "--concurrency", "2", "-o", str(tmp_path / "out")]
        proc = start_cli(args, tmp_path)
        deadline = time.monotonic() + 120
        while stored_count(store, "cache") < 50:  # the first judging (40) is done, the held-out judging under way
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "tune judged nothing"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        before = len(fake.requests)
        assert before < 40 * 2 * 2 + 4 and not (tmp_path / "out").exists()  # killed half-way
        assert main(args) == 0
        report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    bound = 40 * 2 * (1 + 1) + 4  # every item judged twice (current criterion, one edit), one proposal per fold
    assert report["status"] == "done" and report["cached_items"] >= 50
    assert bound <= len(fake.requests) <= bound + 2 * 2  # at most the kill's in-flight items (x 2 calls) again
    assert 0 < report["judge_usage"]["calls"] + report["editor_usage"]["calls"] == len(fake.requests) - before
