"""`judgeflow review`: the API (Starlette TestClient) and the labels file it shares with `judgeflow label`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from judgeflow.calibration.agreement import calibrate  # noqa: E402
from judgeflow.calibration.comparison import compare  # noqa: E402
from judgeflow.calibration.label_app.server import create_app, static_dir  # noqa: E402
from judgeflow.calibration.label_app.session import NOTE, ReviewSession  # noqa: E402
from judgeflow.calibration.labeller import Labeller  # noqa: E402
from judgeflow.calibration.labels import read_labels  # noqa: E402
from judgeflow.cli import main  # noqa: E402
from judgeflow.errors import ConfigError, InvalidItemError  # noqa: E402
from judgeflow.results import ClaimResult, Judgment, RequirementResult  # noqa: E402

TOKEN = "test-token"
H = {"X-Judgeflow-Token": TOKEN}
XSS = 'Fine. <script>window.__xss = 1</script> <img src=x onerror="window.__xss = 2"> done'
SOURCE = ["The tower is 330 metres tall.", "It was finished in 1889 for the World's Fair."]

ITEMS = [
    {"id": "f1", "question": "How tall is it?", "source": SOURCE, "answer": "It is 330 metres tall. It opened in 1890.",
     "label": 1, "dataset": "d1"},
    {"id": "q1", "question": "Capital of France?", "reference": "Paris", "answer": "Paris.", "label": 0,
     "dataset": "d2"},
    {"id": "x1", "question": "<b>bold?</b>", "reference": "Fine", "answer": XSS, "label": 0, "dataset": "d2"},
    {"id": "s1", "spec": "Reply in English. Mention the refund window.", "answer": "Refunds within 30 days.",
     "dataset": "d1"},
]


def results(criterion_f1: str = "source_faithfulness", f1_label: int = 1) -> list[Judgment]:
    f1_claims = [
        ClaimResult(id="c1", text="It is 330 metres tall.", verdict="supported", basis="source",
                    evidence="The tower is  330 METRES tall", evidence_found=True),
        ClaimResult(id="c2", text="It opened in 1890.", verdict="contradicted" if f1_label else "supported",
                    error=bool(f1_label), basis="source", evidence="opened in 1890", evidence_found=False),
    ]
    return [
        Judgment(id="f1", label=f1_label, criterion=criterion_f1, reason="c2 contradicted", claims=f1_claims,
                 language="en", human_label=1, extra={"dataset": "d1"}),
        Judgment(id="q1", label=0, criterion="factual_correctness", language="en", human_label=0,
                 claims=[ClaimResult(id="c1", text="Paris.", verdict="correct", basis="reference", evidence="Paris",
                                     evidence_found=True)], extra={"dataset": "d2"}),
        Judgment(id="x1", label=1, criterion="factual_correctness", language="en", human_label=0,
                 claims=[ClaimResult(id="c1", text="<script>window.__xss = 1</script>", verdict="incorrect",
                                     error=True, basis="reference", evidence="<img src=x onerror=alert(1)>",
                                     evidence_found=False)], extra={"dataset": "d2"}),
        Judgment(id="s1", label=None, status="unscored", criterion="spec_compliance", error="timeout", language="de",
                 requirements=[RequirementResult(id="r1", text="Reply in English.", status="met")],
                 extra={"dataset": "d1"}),
    ]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "items": write_jsonl(tmp_path / "items.jsonl", ITEMS),
        "results": write_jsonl(tmp_path / "results.jsonl", [j.to_row() for j in results()]),
        "labels": tmp_path / "labels.jsonl",
    }


def client(session: ReviewSession) -> TestClient:
    return TestClient(create_app(session, TOKEN), base_url="http://127.0.0.1")


def save(c: TestClient, s: ReviewSession, i: int, label, **extra):
    """POST a label for item i as the page does: with the id of the item it shows."""
    return c.post(f"/api/items/{i}/label", json={"id": s.labeller.items[i].id, "label": label, **extra}, headers=H)


def index_of(session: ReviewSession, item_id: str) -> int:
    return next(i for i, it in enumerate(session.labeller.items) if it.id == item_id)


def test_new_labels_file_is_a_blind_stratified_sample_of_every_item(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    assert s.created and len(s) == 4
    rows = [json.loads(x) for x in files["labels"].read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == ["f1", "q1", "s1", "x1"]
    assert all("label" not in r for r in rows), "the input's own labels must not be shown to the labeller"
    assert {r["id"]: r["judge"]["label"] for r in rows} == {"f1": 1, "q1": 0, "x1": 1, "s1": None}
    again = ReviewSession(files["results"], files["labels"])  # resumes the same file, no items needed
    assert not again.created and [it.id for it in again.labeller.items] == [r["id"] for r in rows]


def test_every_api_route_needs_the_launch_token(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = client(s)
    before = files["labels"].read_text()
    for path in ("/api/queue", "/api/items/0", "/api/calibration"):
        assert c.get(path).status_code == 403
        assert c.get(path, headers={"X-Judgeflow-Token": "wrong"}).status_code == 403
    r = c.post("/api/items/0/label", json={"label": 1})
    assert r.status_code == 403 and "token" in r.json()["error"]
    assert files["labels"].read_text() == before
    assert c.get("/api/queue", headers=H).status_code == 200
    assert c.get("/api/queue", headers={**H, "host": "attacker.example"}).status_code == 421
    assert c.get("/static/../session.py").status_code == 404


def test_blind_until_labelled_then_revealed(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = client(s)
    i = index_of(s, "f1")
    item = c.get(f"/api/items/{i}", headers=H).json()
    assert item["revealed"] is False and "judge" not in item
    entry = next(e for e in c.get("/api/queue", headers=H).json()["items"] if e["id"] == "f1")
    assert "judge" not in entry
    assert c.get("/api/queue", params={"judge": "1"}, headers=H).json()["items"] == []

    res = save(c, s, i, 0, note="year looks fine to me").json()
    judge = res["item"]["judge"]
    assert res["item"]["revealed"] and judge["label"] == 1
    assert [cl["id"] for cl in judge["claims"]] == ["c2", "c1"] and judge["claims"][0]["deciding"]
    c1 = judge["claims"][1]
    span = c1["spans"][0]
    assert SOURCE[span["doc"]][span["start"]:span["end"]] == "The tower is 330 metres tall"
    assert judge["claims"][0]["spans"] == [] and judge["claims"][0]["evidence_found"] is False
    answer = res["item"]["answer"]
    assert answer[slice(*c1["answer_span"])] == "It is 330 metres tall."
    assert [e["id"] for e in c.get("/api/queue", params={"disagree": "yes"}, headers=H).json()["items"]] == ["f1"]
    assert [e["id"] for e in c.get("/api/queue", params={"judge": "1"}, headers=H).json()["items"]] == ["f1"]

    revealed = client(ReviewSession(files["results"], files["labels"], reveal=True))
    assert revealed.get(f"/api/items/{index_of(s, 'q1')}", headers=H).json()["judge"]["label"] == 0


def test_filters_search_and_requirements(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = client(s)

    def ids(**params):
        return sorted(e["id"] for e in c.get("/api/queue", params=params, headers=H).json()["items"])

    assert ids(dataset="d1") == ["f1", "s1"]
    assert ids(criterion="factual_correctness") == ["q1", "x1"]
    assert ids(status="unscored") == ["s1"] and ids(language="de") == ["s1"]
    assert ids(q="onerror") == ["x1"] and ids(q="PARIS") == ["q1"]
    assert ids(human="open") == ["f1", "q1", "s1", "x1"]
    save(c, s, index_of(s, "s1"), "skip")
    assert ids(human="skipped") == ["s1"]
    reqs = client(ReviewSession(files["results"], files["labels"], reveal=True)).get(
        f"/api/items/{index_of(s, 's1')}", headers=H).json()["judge"]["requirements"]
    assert reqs == [{"id": "r1", "text": "Reply in English.", "status": "met", "evidence": "", "reason": ""}]


def test_untrusted_text_is_returned_as_data_and_the_page_never_parses_it_as_html(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"], reveal=True)
    c = client(s)
    item = c.get(f"/api/items/{index_of(s, 'x1')}", headers=H).json()
    assert item["answer"] == XSS and item["question"] == "<b>bold?</b>"
    assert item["judge"]["claims"][0]["text"] == "<script>window.__xss = 1</script>"
    page = c.get("/")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "<script>" not in page.text and 'src="/static/app.js"' in page.text  # no inline script
    js = Path(static_dir(), "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in js, f"app.js uses {sink}: untrusted text must go through textContent"
    assert c.get("/static/app.js").headers["content-type"].startswith("text/javascript")


def test_labels_file_round_trips_with_judgeflow_label(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = client(s)
    order = [it.id for it in s.labeller.items]
    save(c, s, 0, 1, note="wrong year")
    save(c, s, 1, 0)

    # the terminal labeller resumes at the first open item and adds a label
    prompts = []
    term = Labeller(files["labels"], input_fn=lambda p: prompts.append(p) or "0")
    assert term.next_open() == 2
    term.set_label(2, 0)
    labels = read_labels(files["labels"])
    assert labels.labels == {order[0]: 1, order[1]: 0, order[2]: 0}
    rows = [json.loads(x) for x in files["labels"].read_text().splitlines()]
    assert rows[0][NOTE] == "wrong year" and "labelled_at" in rows[0]

    # ... and the app reads the terminal's label back; a skip keeps an existing label
    again = ReviewSession(files["results"], files["labels"])
    assert again.human(2) == 0
    again.label(2, None, "second look", item_id=order[2])
    assert read_labels(files["labels"]).labels[order[2]] == 0
    assert json.loads(files["labels"].read_text().splitlines()[2])[NOTE] == "second look"
    assert not list(files["labels"].parent.glob(".labels.jsonl.*.tmp")), "atomic write left a temp file"


def test_calibration_panel_is_calibrate_on_the_labels_so_far(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = client(s)
    empty = c.get("/api/calibration", headers=H).json()
    assert empty["report"] is None and "no item labelled in labels.jsonl yet" in empty["message"]
    want = {"f1": 0, "q1": 0, "x1": 1}
    for item_id, value in want.items():
        save(c, s, index_of(s, item_id), value).raise_for_status()
        panel = c.get("/api/calibration", headers=H).json()
    ref = calibrate(results(), labels=want)
    r = panel["report"]
    assert panel["labelled"] == 3 and r["n"] == ref.n == 3
    assert r["kappa"] == pytest.approx(ref.kappa) and r["confusion"] == ref.confusion.model_dump()
    assert (r["false_alarms"], r["misses"]) == (1, 0)
    assert r["diagnosis"] == ref.diagnosis
    assert any("only 3 items" in w for w in r["warnings"])


def test_compare_shows_both_labels_and_the_claim_that_flipped(files, tmp_path):
    other = write_jsonl(tmp_path / "other.jsonl", [j.to_row() for j in results("reference_faithfulness", 0)])
    s = ReviewSession(files["results"], files["labels"], items=files["items"], other=other)
    c = client(s)
    i = index_of(s, "f1")
    res = save(c, s, i, 1).json()
    assert res["item"]["judge"]["label"] == 1 and res["item"]["other"]["label"] == 0
    assert res["item"]["flip"]["run"] == "A" and res["item"]["flip"]["claim"]["text"] == "It opened in 1890."
    assert res["entry"]["other"] == 0
    want = compare(results(), results("reference_faithfulness", 0), labels={"f1": 1}, names=("results", "other"))
    assert c.get("/api/calibration", headers=H).json()["compare"]["verdict"] == want.verdict
    assert "results 1 the other way" in want.verdict

    fewer = write_jsonl(tmp_path / "fewer.jsonl", [j.to_row() for j in results()[:2]])
    with pytest.raises(InvalidItemError, match="different items"):
        ReviewSession(files["results"], files["labels"], other=fewer)


def test_bad_requests_get_clear_errors(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = client(s)
    assert c.post("/api/items/0/label", json={"label": 2}, headers=H).status_code == 400
    assert c.post("/api/items/0/label", json={"label": True}, headers=H).status_code == 400
    assert c.post("/api/items/0/label", content=b"not json", headers=H).status_code == 400
    assert c.post("/api/items/99/label", json={"label": 1, "id": "f1"}, headers=H).status_code == 404
    assert c.get("/api/items/99", headers=H).status_code == 404
    with pytest.raises(ConfigError, match="--items"):
        ReviewSession(files["results"], files["labels"].with_name("missing.jsonl"))


def test_a_save_takes_only_a_whole_number_label_and_names_its_item(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = client(s)
    before = files["labels"].read_text()
    for bad in (1.0, 0.0, "1", [1], {"x": 1}):
        r = save(c, s, 0, bad)
        assert r.status_code == 400 and "whole number 1 or 0" in r.json()["error"], (bad, r.text)
    r = c.post("/api/items/0/label", json={"label": 1}, headers=H)
    assert r.status_code == 400 and "must name the item" in r.json()["error"]
    other = s.labeller.items[1].id
    r = c.post("/api/items/0/label", json={"label": 1, "id": other}, headers=H)
    assert r.status_code == 409 and repr(other) in r.json()["error"] and "nothing was saved" in r.json()["error"]
    assert files["labels"].read_text() == before and s.human(0) is None
    assert save(c, s, 0, None).status_code == 200 and s.labeller.done(0) and s.human(0) is None  # null = skip
    assert save(c, s, 0, 1).status_code == 200
    assert json.loads(files["labels"].read_text().splitlines()[0])["label"] == 1
    assert isinstance(json.loads(files["labels"].read_text().splitlines()[0])["label"], int)


def test_a_save_on_a_full_disk_says_so_and_leaves_the_item_unlabelled(files, monkeypatch):
    import errno

    import judgeflow.files

    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = TestClient(create_app(s, TOKEN), base_url="http://127.0.0.1", raise_server_exceptions=False)
    before = files["labels"].read_text()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(judgeflow.files.os, "fsync", full)
    r = save(c, s, 0, 1)
    assert r.status_code == 507, r.text
    msg = r.json()["error"]
    assert "NOT saved" in msg and "No space left on device" in msg and str(files["labels"]) in msg
    assert files["labels"].read_text() == before
    item = c.get("/api/items/0", headers=H).json()
    assert item["human"] is None and item["revealed"] is False, "a failed save must leave the item unlabelled"
    assert not list(files["labels"].parent.glob(".labels.jsonl.*.tmp"))
    monkeypatch.undo()
    assert save(c, s, 0, 1).status_code == 200 and s.human(0) == 1


def test_two_apps_and_the_terminal_labeller_on_one_file_keep_every_label(files):
    a = ReviewSession(files["results"], files["labels"], items=files["items"])
    b = ReviewSession(files["results"], files["labels"])  # a second `judgeflow review` on the same file
    ids = [it.id for it in a.labeller.items]
    save(client(a), a, 0, 1)
    save(client(b), b, 1, 0)  # b read the file before a's label
    term = Labeller(files["labels"], input_fn=lambda p: "q")
    save(client(a), a, 2, 1, note="from a")  # a never saw b's label
    term.set_label(3, 0)  # the terminal never saw a's third label
    assert read_labels(files["labels"]).labels == {ids[0]: 1, ids[1]: 0, ids[2]: 1, ids[3]: 0}
    assert a.human(1) == 0, "a save merges the labels others wrote into the app's view"


def test_the_queue_is_paged_and_steps_run_on_the_server(tmp_path):
    items = [{"id": f"i{k:03d}", "question": f"q{k}", "reference": "r", "answer": f"a{k}"} for k in range(250)]
    rows = [Judgment(id=r["id"], label=k % 2, status="judged", criterion="reference_faithfulness").to_row()
            for k, r in enumerate(items)]
    s = ReviewSession(write_jsonl(tmp_path / "results.jsonl", rows), tmp_path / "labels.jsonl",
                      items=write_jsonl(tmp_path / "items.jsonl", items))
    c = client(s)
    q = c.get("/api/queue", headers=H).json()
    assert len(q["items"]) == 100 and q["matched"] == 250 and q["offset"] == 0
    q = c.get("/api/queue", params={"around": 230}, headers=H).json()
    assert q["offset"] == 200 and [e["index"] for e in q["items"]] == list(range(200, 250))
    assert c.get("/api/step", params={"from": 5, "delta": 1}, headers=H).json() == {"index": 6}
    assert c.get("/api/step", params={"from": 0, "delta": -1}, headers=H).json() == {"index": None}
    save(c, s, 6, 1)
    assert c.get("/api/step", params={"from": 5, "open": 1}, headers=H).json() == {"index": 7}
    assert c.get("/api/step", params={"from": -1, "open": 1}, headers=H).json() == {"index": 0}
    assert c.get("/api/queue", params={"limit": "x"}, headers=H).status_code == 400


def test_the_panel_names_the_labels_the_results_already_carry(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    msg = client(s).get("/api/calibration", headers=H).json()["message"]
    assert "no result has a human label" not in msg
    assert "The results carry 3 human label(s)" in msg and "--keep-labels" in msg


def test_keep_labels_starts_the_labels_file_with_the_items_own_labels(files):
    s = ReviewSession(files["results"], files["labels"], items=files["items"], keep_labels=True)
    assert {it.id: it.label for it in s.labeller.items} == {"f1": 1, "q1": 0, "x1": 0, "s1": None}
    assert s.calibration()["report"]["n"] == 3  # f1, q1, x1: labelled and scored
    fresh = ReviewSession(files["results"], files["labels"].with_name("fresh.jsonl"), items=files["items"])
    assert fresh.dropped_labels == 3 and all(it.label is None for it in fresh.labeller.items)


def test_cli_without_items_or_labels_exits_2_naming_the_fix(files, capsys):
    assert main(["review", str(files["results"])]) == 2
    assert "--items" in capsys.readouterr().err


@pytest.mark.slow
def test_importing_judgeflow_does_not_import_starlette():
    code = "import sys, judgeflow, judgeflow.cli; print('starlette' in sys.modules, 'uvicorn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_review_and_calibrate_find_the_items_through_the_run_store(tmp_path, monkeypatch, capsys):
    import judgeflow.calibration.label_app.server as server

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JUDGEFLOW_MODEL", raising=False)  # the offline judge
    served = []
    monkeypatch.setattr(server, "serve", lambda s, **kw: served.append(s))
    write_jsonl(tmp_path / "items.jsonl", ITEMS)
    assert main(["run", "items.jsonl", "-o", "results.jsonl", "--store", "s.sqlite", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["review", "results.jsonl", "--store", "s.sqlite", "--labels", "a.jsonl"]) == 0
    out = capsys.readouterr().out
    assert f"items: {tmp_path / 'items.jsonl'} (the file the run read" in out
    assert len(served[0]) == 4 and served[0].labeller.items[0].answer
    assert main(["calibrate", "results.jsonl", "--store", "s.sqlite", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["disagreements"] and all(d["answer"] for d in report["disagreements"])
    # changed, then moved: said plainly, with the fix
    (tmp_path / "items.jsonl").write_text((tmp_path / "items.jsonl").read_text() + "\n", encoding="utf-8")
    assert main(["review", "results.jsonl", "--store", "s.sqlite", "--labels", "b.jsonl"]) == 2
    assert "changed since the run" in capsys.readouterr().err
    (tmp_path / "items.jsonl").rename(tmp_path / "moved.jsonl")
    assert main(["review", "results.jsonl", "--store", "s.sqlite", "--labels", "b.jsonl"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "which is no longer there (moved or deleted" in err and "--items" in err


def test_a_slow_calibration_never_holds_up_a_save(files, monkeypatch):
    import asyncio
    import threading

    import httpx

    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    release, order = threading.Event(), []

    def slow_calibration():
        release.wait(5)  # on the event loop this would stall every request for 5 s
        order.append("calibration")
        return {"report": None}

    monkeypatch.setattr(s, "calibration", slow_calibration)

    async def scenario():
        transport = httpx.ASGITransport(app=create_app(s, TOKEN))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=H) as c:
            panel = asyncio.create_task(c.get("/api/calibration"))
            await asyncio.sleep(0.2)
            r = await c.post("/api/items/0/label", json={"id": s.labeller.items[0].id, "label": 1})
            order.append("save")
            release.set()
            assert r.status_code == 200 and (await panel).status_code == 200

    asyncio.run(scenario())
    assert order == ["save", "calibration"]


@pytest.mark.slow
def test_serve_pays_for_the_heavy_imports_before_it_prints_the_url(files, monkeypatch):
    import uvicorn

    from judgeflow.calibration.label_app.server import serve

    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    order = []
    monkeypatch.setattr(s, "warm_up", lambda: order.append("warm_up"))

    class Server:
        def __init__(self, config):
            pass

        def run(self, sockets):
            order.append("serve")
            sockets[0].close()

    monkeypatch.setattr(uvicorn, "Server", Server)
    serve(s, announce=lambda url: order.append("announce"))
    assert order == ["warm_up", "announce", "serve"]
    code = ("import sys; from judgeflow.calibration.label_app.session import ReviewSession as R; "
            "R.warm_up(type('S', (), {'calibration': lambda self: None})()); print('sklearn.metrics' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split() == ["True"]


def test_answer_spans_come_from_the_claims_quote_checked_in_code(tmp_path):
    """#38: the decomposer's quote places a paraphrased claim; a claim in neither form is marked unplaced."""
    item = {"id": "f1", "question": "How tall is it?", "source": SOURCE, "label": 1,
            "answer": "It is 330 metres tall. It opened in 1890."}
    claims = [ClaimResult(id="c1", text="The tower opened in 1890.", quote="It opened in  1890", error=True,
                          verdict="contradicted", basis="source"),
              ClaimResult(id="c2", text="It is on the Moon.", quote="on the Moon", error=True,
                          verdict="contradicted", basis="source")]
    results_path = write_jsonl(tmp_path / "r.jsonl", [Judgment(id="f1", label=1, claims=claims, human_label=1).to_row()])
    s = ReviewSession(results_path, tmp_path / "labels.jsonl", items=write_jsonl(tmp_path / "i.jsonl", [item]))
    res = save(client(s), s, 0, 1).json()
    by_id = {cl["id"]: cl for cl in res["item"]["judge"]["claims"]}
    assert item["answer"][slice(*by_id["c1"]["answer_span"])] == "It opened in 1890"
    assert by_id["c1"]["placed"] is True
    assert by_id["c2"]["answer_span"] is None and by_id["c2"]["placed"] is False


def test_a_deeply_nested_body_gets_a_clear_400_not_a_bare_500(files):
    """Issue 35, item 14: a 100,000-deep JSON body was a bare 500 (RecursionError in the JSON parser)."""
    s = ReviewSession(files["results"], files["labels"], items=files["items"])
    c = TestClient(create_app(s, TOKEN), base_url="http://127.0.0.1", raise_server_exceptions=False)
    before = files["labels"].read_text()
    for deep in (b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
                 b"[" * 20_000 + b"]" * 20_000):  # under the size limit: the parser's own depth limit
        r = c.post("/api/items/0/label", content=deep, headers=H)
        assert r.status_code in (400, 413), (r.status_code, r.text[:200])
        assert "body" in r.json()["error"], r.text[:200]
    assert files["labels"].read_text() == before and s.human(0) is None
    assert save(c, s, 0, 1).status_code == 200  # the app still serves


def test_review_finds_the_labels_of_a_sample_beside_the_results(tmp_path, monkeypatch, capsys):
    """Before: `judgeflow review results.jsonl` ignored the labels just made in to_label.jsonl (it
    looked only for results.labels.jsonl) and asked for --items."""
    import judgeflow.calibration.label_app.server as server

    monkeypatch.chdir(tmp_path)
    served = []
    monkeypatch.setattr(server, "serve", lambda s, **kw: served.append(s))
    write_jsonl(tmp_path / "items.jsonl", ITEMS)
    assert main(["run", "items.jsonl", "-o", "results.jsonl", "--store", "s.sqlite", "--no-progress"]) == 0
    assert main(["run", "items.jsonl", "-o", "other.jsonl", "--store", "s.sqlite", "--no-progress",
                 "--model", "baseline/rouge-l"]) == 0  # another run's results beside them: not a sample
    assert main(["sample", "items.jsonl", "-n", "3", "-o", "to_label.jsonl", "--results", "results.jsonl"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "to_label.jsonl").read_text().splitlines()]
    rows[0]["label"] = 1  # labelled with `judgeflow label`
    (tmp_path / "to_label.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["review", "results.jsonl", "--store", "s.sqlite"]) == 0
    out = capsys.readouterr().out
    assert "labels: found to_label.jsonl beside the results" in out
    assert len(served[0]) == 3 and {it.id: it.label for it in served[0].labeller.items}[rows[0]["id"]] == 1
