"""`bench --data` files are untrusted too: a 100k-deep JSON line is a clear error naming the file
and line, never a RecursionError (issue 46, F15)."""

from __future__ import annotations

import pytest
from fakes import bench_files as fx

from judgeflow.bench import benchmark
from judgeflow.bench.fetch import BenchDataError
from judgeflow.bench.prepare import records_of

DEEP = b"[" * 100_000 + b"]" * 100_000 + b"\n"


@pytest.mark.parametrize("name, path, where", [
    ("halueval_qa", "data/qa_data.json", "qa_data.json:1"),
    ("ragtruth", "dataset/response.jsonl", "response.jsonl:1"),
])
def test_a_100k_deep_line_is_a_clear_error(tmp_path, name, path, where):
    files = fx.FILES[name]()
    files[path] = DEEP
    fx.write(files, tmp_path)
    with pytest.raises(BenchDataError, match=where) as e:
        records_of(benchmark(name), tmp_path)
    assert "nested" in str(e.value)


def test_a_deep_faithbench_file_is_a_clear_error(tmp_path):
    files = fx.FILES["faithbench"]()
    first = next(iter(files))
    files[first] = DEEP
    fx.write(files, tmp_path)
    with pytest.raises(BenchDataError, match="nested"):
        records_of(benchmark("faithbench"), tmp_path)


def test_a_download_is_bounded_in_size_and_in_total_time(monkeypatch, tmp_path):
    """F28: a reply over the size bound is refused (from its Content-Length, or as it grows), and a
    server dripping a byte at a time is cut at the download's deadline; nothing is kept."""
    import http.server
    import threading
    import time

    from judgeflow.bench import fetch
    from judgeflow.bench.fetch import ensure

    files = fx.halueval_files()
    bench = fx.pinned_to(benchmark("halueval_qa"), files, git_blob=True)
    mode = ["big"]

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(200)
            if mode[0] == "big":
                self.send_header("Content-Length", str(10 ** 12))
                self.end_headers()
                return
            if mode[0] == "grows":  # no Content-Length: the body grows past the bound
                self.end_headers()
                self.wfile.write(b"x" * 50_000)
                return
            self.send_header("Content-Length", "1000")
            self.end_headers()
            try:
                for _ in range(1000):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    monkeypatch.setenv("JUDGEFLOW_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(fetch, "MAX_DOWNLOAD", 10_000)
    monkeypatch.setattr(fetch, "DOWNLOAD_SECONDS", 1.0)
    try:
        for m in ("big", "grows", "drip"):
            mode[0] = m
            t0 = time.monotonic()
            with pytest.raises(BenchDataError, match="nothing was kept"):
                ensure(bench, base=base, say=lambda s: None)
            assert time.monotonic() - t0 < 5, m
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert not any((tmp_path / "cache").rglob("*.json"))
