"""`judgeflow review`, measured: how long a save takes, and how many labels a minute a keyboard user reaches.

    python benchmarks/review.py                 # save latency over HTTP, 200 items
    python benchmarks/review.py --items 5000    # the same on a 5,000-item review
    python benchmarks/review.py --browser       # plus labels/minute, Playwright driving chromium

Starts a real `judgeflow review` process (so the first save pays for the first calibration)
on a made-up run with both classes. Save latency: POST a label for the first 30 items in
turn, each after fetching the item as the page does; prints the first save, the median and
the slowest. Labels per minute: press the label key, then Enter, as soon as the page shows the
next item (a person who never hesitates: the app's own ceiling), and with a 300 ms pause
before each key (a quick person).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes.review import start_review, write_run  # noqa: E402  (tests/fakes: the browser tests' made-up run)


def start(tmp: Path) -> tuple[subprocess.Popen[str], str]:
    return start_review(tmp, env={**os.environ, "PYTHONPATH": str(ROOT)})


def save_latency(url: str, n: int = 30) -> list[float]:
    import httpx

    base, token = url.split("/?token=")
    h = {"X-Judgeflow-Token": token}
    out = []
    with httpx.Client(base_url=base, headers=h, timeout=60) as c:
        for i in range(n):
            item = c.get(f"/api/items/{i}").json()
            t0 = time.perf_counter()
            r = c.post(f"/api/items/{i}/label", json={"label": i % 2, "id": item["id"]})
            out.append(time.perf_counter() - t0)
            r.raise_for_status()
    return out


def labels_per_minute(url: str, pause_ms: int, n: int) -> float:
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("JUDGEFLOW_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = b.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url)
        page.wait_for_selector("#item-id")
        t0 = time.perf_counter()
        for k in range(n):
            shown = page.text_content("#item-id")
            page.wait_for_timeout(pause_ms)
            page.keyboard.press("1" if k % 3 == 0 else "0")
            page.wait_for_function("() => document.querySelector('#your-label').textContent.startsWith('your label')")
            page.wait_for_timeout(pause_ms)
            page.keyboard.press("Enter")
            page.wait_for_function("id => document.querySelector('#item-id').textContent !== id", arg=shown)
        took = time.perf_counter() - t0
        b.close()
    return n / took * 60


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--browser", action="store_true", help="also measure labels/minute in chromium")
    ap.add_argument("--labels", type=int, default=40, help="labels per browser pass")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        write_run(tmp, a.items)
        server, url = start(tmp)
        try:
            lat = save_latency(url)
            ms = [x * 1000 for x in lat]
            print(f"{a.items} items: first save {ms[0]:.0f} ms, median {statistics.median(ms[1:]):.0f} ms, "
                  f"slowest after the first {max(ms[1:]):.0f} ms ({len(ms)} saves)")
        finally:
            server.terminate()
            server.wait(timeout=20)
        if not a.browser:
            return
        for pause in (0, 300):
            (tmp / "labels.jsonl").unlink()
            server, url = start(tmp)
            try:
                rate = labels_per_minute(url, pause, a.labels)
                print(f"{a.items} items, {pause} ms pause before each key: {rate:.0f} labels/minute "
                      f"({a.labels} labels)")
            finally:
                server.terminate()
                server.wait(timeout=20)


if __name__ == "__main__":
    main()
