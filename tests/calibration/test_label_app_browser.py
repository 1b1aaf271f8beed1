"""`judgeflow review` end to end in a real browser: Playwright driving Debian's chromium.

Results come from the offline judge run at test time on a few generated labelled rows
(tests/fakes/labelled.py: source-grounded summaries and the shipped factual sample) plus one
item whose answer is an XSS attempt. Three items are labelled by keyboard; the test checks the
labels file, the blind reveal, the calibration panel and that the XSS item stays inert, and keeps
a screenshot in tests/artifacts/ (JUDGEFLOW_DOCS_SCREENSHOT=1 also refreshes docs/review-item.png).

Needs: pip install playwright (in the test extra) and apt-get install -y chromium; never
`playwright install`. Skips, saying which is missing, without them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.labelled import factual_rows, faithfulness_rows

from judgeflow.calibration.agreement import calibrate
from judgeflow.calibration.labels import read_labels

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("JUDGEFLOW_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
XSS = 'Paris. <script>window.__xss = 1; alert("xss")</script> <img src=x onerror="window.__xss = 2; alert(2)">'

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install playwright")
pytest.importorskip("starlette", reason="the review extra is not installed: pip install 'judgeflow[review]'")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium at {CHROMIUM}: apt-get install -y chromium (or set JUDGEFLOW_CHROMIUM)",
                allow_module_level=True)


@pytest.fixture
def review_url(tmp_path: Path):
    items = faithfulness_rows(3) + factual_rows(3)
    items.append({"id": "xss-1", "question": "Capital of France? <b>bold</b>", "reference": "Paris", "answer": XSS,
                  "dataset": "handmade", "label": 1})
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "JUDGEFLOW_MODEL"}  # the offline judge, whatever is set
    subprocess.run([sys.executable, "-m", "judgeflow", "run", "items.jsonl", "-o", "results.jsonl", "--no-progress",
                    "--store", "store.sqlite"], cwd=tmp_path, env=env, check=True, capture_output=True, timeout=300)
    server = subprocess.Popen([sys.executable, "-m", "judgeflow", "review", "results.jsonl", "--items", "items.jsonl",
                               "--labels", "labels.jsonl", "--port", "0"], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url, seen = None, []
        for line in server.stdout:  # type: ignore[union-attr]
            seen.append(line)
            m = re.search(r"open (http://127\.0\.0\.1:\d+/\?token=\S+)", line)
            if m:
                url = m.group(1)
                break
        assert url, f"judgeflow review printed no URL: {''.join(seen)}"
        yield url, tmp_path
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.slow
def test_label_three_items_by_keyboard_in_chromium(review_url):
    url, tmp = review_url
    artifacts = ROOT / "tests" / "artifacts"
    artifacts.mkdir(exist_ok=True)
    dialogs, errors = [], []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.wait_for_selector("#item-id")

        labelled: dict[str, int] = {}

        def label_current(key: str) -> None:
            item_id = page.text_content("#item-id")
            assert page.is_visible("#blind"), f"{item_id}: the judge must be hidden before labelling"
            assert page.query_selector("#verdict") is None
            page.keyboard.press(key)
            page.wait_for_selector("#verdict")
            assert not page.is_visible("#blind")
            verdict = page.text_content("#verdict")
            assert re.search(r"judge said (0|1|unscored)", verdict), verdict
            assert page.text_content("#your-label") == f"your label: {key}"
            labelled[item_id] = int(key)

        for key in ("1", "0"):
            label_current(key)
            before = page.text_content("#item-id")
            page.keyboard.press("Enter")
            page.wait_for_function("id => document.querySelector('#item-id').textContent !== id", arg=before)

        # the XSS item: found by search, opened from the queue, labelled by keyboard
        page.fill("#search", "onerror")
        page.wait_for_function("() => document.querySelectorAll('#queue li').length === 1")
        page.click("#queue li")
        page.wait_for_function("() => document.querySelector('#item-id').textContent === 'xss-1'")
        assert page.text_content("#answer") == XSS
        assert "<b>bold</b>" in page.text_content("#question")
        page.keyboard.press("Escape")
        page.locator("body").click(position={"x": 5, "y": 880})  # focus off the search box
        label_current("1")
        claims_text = page.text_content("#item table")
        assert "<script>" in claims_text  # the claim table shows the markup as text too
        assert page.evaluate("() => window.__xss") is None
        assert page.evaluate("() => document.querySelectorAll('#item img, #item script, #item b').length") == 0
        assert dialogs == [] and errors == []
        page.screenshot(path=str(artifacts / "review-xss.png"))

        # the labels file: three labels, in `judgeflow label`'s format
        labels = read_labels(tmp / "labels.jsonl")
        assert labels.labels == labelled and len(labelled) == 3
        rows = [json.loads(x) for x in (tmp / "labels.jsonl").read_text().splitlines()]
        assert all("labelled_at" in r for r in rows if r["id"] in labelled)

        # the calibration panel agrees with `judgeflow calibrate` on the same labels
        page.wait_for_function("() => document.querySelector('#counts').textContent.startsWith('3 labelled')")
        ref = calibrate(tmp / "results.jsonl", labels=tmp / "labels.jsonl")
        assert f"n = {ref.n}" in page.text_content("#kappa")
        if ref.kappa is not None:
            assert f"kappa {ref.kappa:.2f}" in page.text_content("#kappa")
        assert "only 3 labelled items" in page.text_content("#small")
        cells = page.eval_on_selector_all("#confusion td", "tds => tds.map(td => Number(td.textContent))")
        assert cells == [ref.confusion.tn, ref.confusion.fp, ref.confusion.fn, ref.confusion.tp]
        assert page.text_content("#diagnosis") == ref.diagnosis
        crit = next(iter(ref.criteria))
        assert f"judgeflow tune ITEMS.jsonl --criterion {crit}" in page.text_content("#tune-help")

        # the item view of a labelled source item, for the artifact (and the README)
        page.fill("#search", "")
        with_source = [r["id"] for r in rows if r.get("source") and r["id"] in labelled]
        first = with_source[0] if with_source else next(iter(labelled))
        page.wait_for_function("n => document.querySelectorAll('#queue li').length === n", arg=len(rows))
        page.click(f"#queue li:has-text('{first}')")
        page.wait_for_function("id => document.querySelector('#item-id').textContent === id", arg=first)
        page.wait_for_selector("#verdict")
        shot = artifacts / "review-item.png"
        page.screenshot(path=str(shot))
        if os.environ.get("JUDGEFLOW_DOCS_SCREENSHOT"):
            shutil.copyfile(shot, ROOT / "docs" / "review-item.png")
        browser.close()
    assert shot.stat().st_size > 10_000
