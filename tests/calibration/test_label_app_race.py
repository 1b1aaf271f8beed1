"""`judgeflow review` under a quick labeller: every saved label lands on the item on screen.

Playwright drives Debian's chromium against a real `judgeflow review` process (so the first
save pays whatever the server does on its first calibration). Keys go in as a fast person
presses them: `1`, `Enter`, `0`, `Enter`, ... 100 ms apart over 12 items. A capture-phase
listener, installed before the app's own, records the item id on screen when each key is
pressed, and whether a save or load was in flight (the app ignores such a key and says so);
every label in the labels file must match the last key the app took on that item.

A second test opens a 5,000-item review and checks that the page stays responsive: the
queue renders one page of rows (100), a label updates its row in place, and the pager turns
(save latency and labels per minute are measured in benchmarks/review.py, not timed here).

Needs playwright and chromium (as tests/calibration/test_label_app_browser.py); skips, saying which is missing.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.review import start_review, stop_review, write_run

from judgeflow.calibration.labels import read_labels

CHROMIUM = os.environ.get("JUDGEFLOW_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.slow  # a `judgeflow review` server and chromium, as processes
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed: pip install playwright")
pytest.importorskip("starlette", reason="the review extra is not installed: pip install 'judgeflow[review]'")
if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium at {CHROMIUM}: apt-get install -y chromium (or set JUDGEFLOW_CHROMIUM)",
                allow_module_level=True)

RECORD_KEYS = """
window.__keys = [];
window.addEventListener("keydown", (ev) => {
  const shown = document.querySelector("#item-id");
  // the app ignores label keys while a save or load is in flight (and says so): such a key labels nothing
  window.__keys.push({ key: ev.key, shown: shown ? shown.textContent : null,
                       busy: document.body.classList.contains("busy") });
}, true);
"""


def launch(tmp: Path) -> Iterator[str]:
    """Start `judgeflow review` on tmp's run; yield its URL; stop it."""
    server, url = start_review(tmp)
    try:
        yield url
    finally:
        stop_review(server)


@pytest.fixture(scope="module")
def browser():
    """One chromium for the module (each test opens its own page, in its own context)."""
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def settle(page, path: Path, timeout: float = 20.0) -> None:
    """Wait until the page has no request in flight and the labels file stops changing."""
    page.wait_for_function("() => !document.body.classList.contains('busy')", timeout=timeout * 1000)
    last, stable_since = None, time.monotonic()
    while time.monotonic() - stable_since < 1.0:
        now = path.read_text(encoding="utf-8") if path.exists() else ""
        if now != last:
            last, stable_since = now, time.monotonic()
        time.sleep(0.1)


def test_quick_keys_label_the_item_on_screen(tmp_path: Path, browser):
    write_run(tmp_path, 14)
    for url in launch(tmp_path):
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        page.add_init_script(RECORD_KEYS)
        page.goto(url)
        page.wait_for_selector("#item-id")
        for k in range(12):
            page.keyboard.press("1" if k % 2 == 0 else "0")
            page.wait_for_timeout(100)
            page.keyboard.press("Enter")
            page.wait_for_timeout(100)
        settle(page, tmp_path / "labels.jsonl")
        keys = page.evaluate("() => window.__keys")
        shown_at_end = page.text_content("#item-id")
        saved = read_labels(tmp_path / "labels.jsonl").labels
        pressed: dict[str, int] = {}
        for k in keys:
            if k["key"] in ("0", "1") and k["shown"] and not k["busy"]:
                pressed[k["shown"]] = int(k["key"])  # the last key the app took on that item wins
        wrong = {i: (v, pressed.get(i)) for i, v in saved.items() if pressed.get(i) != v}
        print(f"race: {len(saved)} labels saved for 12 label keys, {len(wrong)} on an item other than the one shown")
        assert not wrong, (f"{len(wrong)} of {len(saved)} saved labels landed on an item other than the one on "
                           f"screen when the key was pressed (id: (saved, pressed there)): {wrong}")
        # keys pressed while a save or load is in flight are ignored (said on the page), never misapplied;
        # on a quiet machine all 12 land, on a loaded one a few may be ignored
        assert len(saved) >= 6, f"only {len(saved)} of 12 labels saved: {saved}; keys {keys}"
        assert shown_at_end not in saved, "the page must end on the next open item, not re-render a labelled one"
        assert errors == []


def test_five_thousand_items_stay_responsive(tmp_path: Path, browser):
    write_run(tmp_path, 5000)
    for url in launch(tmp_path):
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url)
        page.wait_for_selector("#item-id", timeout=60_000)
        rows = page.evaluate("() => document.querySelectorAll('#queue li').length")
        assert 0 < rows <= 200, f"the queue renders {rows} rows at once; page it"
        assert "5000" in page.text_content("#queue-count")
        first = page.text_content("#item-id")
        page.keyboard.press("1")
        page.wait_for_function("() => document.querySelector('#your-label').textContent === 'your label: 1'")
        page.keyboard.press("Enter")
        page.wait_for_function("id => document.querySelector('#item-id').textContent !== id", arg=first)
        assert page.evaluate("() => document.querySelectorAll('#queue li').length") == rows  # one row updated
        assert read_labels(tmp_path / "labels.jsonl").labels == {first: 1}
        page.click("#page-next")  # the next page of the queue
        page.wait_for_function("() => document.querySelector('#queue-count').textContent.includes('rows 101–200')")
