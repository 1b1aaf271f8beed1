"""Each benchmark's converter on a small generated file in the benchmark's own format; the stratified
--limit; the download path against a local HTTP server (hash checked, cache hit, licence, consent)."""

from __future__ import annotations

import http.server
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import bench_files as fx

from judgeflow.bench import benchmark
from judgeflow.bench.base import SourceFile, git_blob_id
from judgeflow.bench.fetch import BenchDataError, cache_dir, ensure, from_data
from judgeflow.bench.prepare import records_of, stratified


def records(name: str, tmp_path: Path) -> list[dict]:
    return records_of(benchmark(name), fx.write(fx.FILES[name](), tmp_path))


def test_faithbench_labels_follow_the_release_binarisation_and_keep_the_spans(tmp_path):
    rows = records("faithbench", tmp_path)
    assert [r["id"] for r in rows] == [f"faithbench-1-{i}" for i in range(6)]
    # worst pooling; Questionable and Unwanted are hallucinated, Benign is not (scripts/binarize.py)
    assert [r["label"] for r in rows] == [1, 0, 1, 0, 1, 0]
    assert [r["meta"]["fine_label"] for r in rows] == ["unwanted", "benign", "questionable", "consistent",
                                                       "unwanted", "consistent"]
    assert rows[0]["spans"] == [{"start": fx.PROD[0], "end": fx.PROD[1], "labels": ["Unwanted", "Unwanted.Intrinsic"]}]
    assert rows[0]["answer"][slice(*fx.PROD)] == "production" and rows[0]["source"] == fx.SOURCE


def test_ragtruth_takes_the_good_test_answers_with_their_spans_and_sources(tmp_path):
    rows = records("ragtruth", tmp_path)
    assert [r["id"] for r in rows] == ["ragtruth-1", "ragtruth-2", "ragtruth-5"]
    assert [r["label"] for r in rows] == [1, 0, 0]
    s = rows[0]["spans"][0]
    assert fx.RAG_ANSWER[s["start"]:s["end"]] == "90 minutes" and s["labels"] == ["Evident Conflict"]
    assert rows[0]["question"] == "how to bake beets" and rows[0]["source"].startswith("passage 1:")
    assert "question" not in rows[2] and '"city": "Santa Barbara"' in rows[2]["source"]  # Data2txt: the JSON


def test_halueval_gives_the_right_and_the_hallucinated_answer_of_each_question(tmp_path):
    rows = records("halueval_qa", tmp_path)
    assert len(rows) == 10 and Counter(r["label"] for r in rows) == {0: 5, 1: 5}
    right, wrong = rows[0], rows[1]
    assert right["answer"] == right["reference"] == "Founder 0" and right["label"] == 0
    assert wrong["label"] == 1 and wrong["reference"] == "Founder 0" and "knowledge" not in wrong


def test_truthfulqa_pairs_a_true_answer_with_the_best_incorrect_one(tmp_path):
    rows = records("truthfulqa", tmp_path)
    assert [(r["answer"], r["label"]) for r in rows] == [
        ("Nothing happens", 0), ("You grow watermelons in your stomach", 1),  # not the best answer restated
        ("Blue", 0), ("Green", 1)]  # only the best answer is true: it is the label-0 answer
    assert rows[0]["reference"] == "The seeds pass through your digestive system"


def test_a_file_in_another_format_is_refused_naming_it(tmp_path):
    fx.write({"data/qa_data.json": b'{"question": "q"}\n'}, tmp_path)
    with pytest.raises(BenchDataError, match=r"qa_data.json:1: not a HaluEval QA row"):
        records_of(benchmark("halueval_qa"), tmp_path)


def test_limit_is_a_seeded_sample_stratified_by_label_in_the_benchmarks_order():
    pool = [{"id": str(i), "label": int(i % 4 == 0)} for i in range(100)]  # 25 ones, 75 zeros
    a = stratified(pool, 20, seed=1)
    assert Counter(r["label"] for r in a) == {0: 15, 1: 5}
    assert [int(r["id"]) for r in a] == sorted(int(r["id"]) for r in a)
    assert a == stratified(pool, 20, seed=1) and a != stratified(pool, 20, seed=2)
    assert Counter(r["label"] for r in stratified(pool, 2, seed=0)) == {0: 1, 1: 1}  # both labels, even tiny


# -- the download path --------------------------------------------------------------------------


class Server:
    """A local HTTP server for the benchmark's files (raw.githubusercontent.com's layout); counts requests."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files, self.requests = files, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                data = server.files.get(self.path)
                self.send_response(200 if data is not None else 404)
                self.end_headers()
                self.wfile.write(data or b"")

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def served(monkeypatch, tmp_path) -> Iterator[tuple[Server, object]]:
    monkeypatch.setenv("JUDGEFLOW_CACHE_DIR", str(tmp_path / "cache"))
    files = fx.halueval_files()
    bench = fx.pinned_to(benchmark("halueval_qa"), files, git_blob=True)
    server = Server({f"/{bench.repo}/{bench.commit}/{p}": d for p, d in files.items()})
    yield server, bench
    server.httpd.shutdown()
    server.httpd.server_close()


def test_a_download_is_checked_then_cached_and_a_cache_hit_makes_no_request(served):
    server, bench = served
    said: list[str] = []
    root = ensure(bench, base=server.url, say=said.append)
    assert root == cache_dir(bench) and (root / "data/qa_data.json").is_file()
    assert server.requests == [f"/RUCAIBox/HaluEval/{bench.commit}/data/qa_data.json"]
    assert "MIT License" in said[0] and said[1].startswith("downloading")  # the licence first
    ensure(bench, base=server.url, say=said.append)
    assert len(server.requests) == 1


def test_a_file_that_is_not_the_pinned_one_is_refused_and_not_kept(served):
    server, bench = served
    for key in server.files:
        server.files[key] = server.files[key] + b"{}\n"  # altered upstream (or on the way)
    with pytest.raises(BenchDataError, match=r"not the pinned file \(git blob id [0-9a-f]{40}, expected "
                       + bench.files[0].git_blob + r"\); nothing was kept"):
        ensure(bench, base=server.url, say=lambda s: None)
    assert not any(cache_dir(bench).rglob("*.json")) and not any(cache_dir(bench).rglob("*.part"))


def test_a_corrupted_cache_file_is_downloaded_again(served):
    server, bench = served
    ensure(bench, base=server.url, say=lambda s: None)
    (cache_dir(bench) / "data/qa_data.json").write_bytes(b"truncated")
    ensure(bench, base=server.url, say=lambda s: None)
    assert len(server.requests) == 2


def test_a_restrictive_licence_needs_consent_before_anything_is_downloaded(monkeypatch, tmp_path):
    monkeypatch.setenv("JUDGEFLOW_CACHE_DIR", str(tmp_path / "cache"))
    files = fx.faithbench_files()
    bench = fx.pinned_to(benchmark("faithbench"), files)
    server = Server({f"/{bench.repo}/{bench.commit}/{p}": d for p, d in files.items()})
    try:
        said: list[str] = []
        with pytest.raises(BenchDataError, match="needs your consent.*--accept-licence"):
            ensure(bench, base=server.url, say=said.append, ask=lambda q: False)
        assert "CC BY-NC-SA 4.0" in said[0] and server.requests == []
        with pytest.raises(BenchDataError, match="--accept-licence"):  # not a terminal, no --accept-licence
            ensure(bench, base=server.url, say=said.append)
        ensure(bench, base=server.url, say=said.append, ask=lambda q: "[y/N]" in q)
        assert len(server.requests) == 15
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def test_sha256_and_git_blob_pins_are_both_real_checks():
    data = b"hello\n"
    assert git_blob_id(data) == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object` of "hello\n"
    assert SourceFile("f", git_blob="ce013625030ba8dba906f756967f9e9ca394464a").check(data) is None
    assert SourceFile("f", git_blob="ce013625030ba8dba906f756967f9e9ca394464a").check(b"hello") is not None
    pinned = SourceFile("f", sha256="5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03")
    assert pinned.check(data) is None and "expected" in pinned.check(b"x")


def test_data_dir_files_by_path_or_name_and_a_warning_for_another_version(tmp_path):
    bench = benchmark("truthfulqa")
    fx.write(fx.truthfulqa_files(), tmp_path)
    warned: list[str] = []
    assert from_data(bench, tmp_path, warned.append) == tmp_path
    assert "not the pinned file" in warned[0]
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchDataError, match="TruthfulQA.csv is missing"):
        from_data(bench, tmp_path / "empty", warned.append)
