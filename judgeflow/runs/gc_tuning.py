"""Garbage collection set for a long judging run (`judgeflow run`).

Judging one item allocates thousands of short-lived container objects (HTTP messages, LangGraph
state, pydantic models, parsed replies). With CPython's default thresholds (700, 10, 10) the
collector runs about once per item, and every few hundred items it scans the whole heap, which
after start-up holds every imported module, schema and criterion (about 200 ms a scan on the
2-vCPU VM): 15-20% of the client's CPU per item in `python benchmarks/cpu.py`.

`tuned_gc()` moves what is alive at the start of the run out of every later collection
(`gc.freeze()`) and runs young collections every 20,000 net allocations instead of 700. Cyclic
garbage is still collected (later, in larger batches); `python benchmarks/memory.py` measures the
peak RSS with it on. The previous thresholds are restored, and the frozen objects released back
to the collector, when the run ends. The Python API leaves the process's collector alone; an
application judging in bulk can use the same context manager around its run.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_THRESHOLD = 20_000


@contextlib.contextmanager
def tuned_gc(young: int = YOUNG_THRESHOLD) -> Iterator[None]:
    """Collect less often during the block; restore the collector's settings after."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(young, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
