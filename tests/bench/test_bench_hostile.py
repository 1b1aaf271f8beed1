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
