"""Public benchmarks for `judgeflow bench NAME`: one module of one shape each (`base.Benchmark`).

    from judgeflow.bench import benchmark
    b = benchmark("faithbench")          # the pinned files, licence, converter, metric, published figures

Modules are imported only when named (a lazy table, like the providers').
"""

from __future__ import annotations

import importlib

from ..errors import ConfigError
from .base import Benchmark

#: benchmark name -> the module under judgeflow.bench that defines BENCHMARK
BENCHMARKS = {"faithbench": "faithbench", "ragtruth": "ragtruth", "halueval_qa": "halueval", "truthfulqa": "truthfulqa"}


def benchmark(name: str) -> Benchmark:
    """The benchmark called `name`; ConfigError naming the known ones otherwise."""
    module = BENCHMARKS.get(name.lower().replace("-", "_"))
    if module is None:
        raise ConfigError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    bench: Benchmark = importlib.import_module(f"{__name__}.{module}").BENCHMARK
    return bench


__all__ = ["BENCHMARKS", "Benchmark", "benchmark"]
