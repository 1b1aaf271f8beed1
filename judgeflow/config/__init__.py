"""One typed spec of what judges and how a run goes (architecture step 3).

* `ClientConfig` (client.py): every option of a judge's client, one object into the client.
* `JudgeSpec | PanelSpec | CascadeSpec | RepeatsSpec` (judging.py): pure data, with every rule of
  composition a validator; `judgeflow.build.build(spec)` gives the Judging, every Judging's
  `.spec()` gives its spec back.
* `RunSpec` (run.py): the judging and the run's input, output, format, turns, ...; the run store
  records it and a resume rebuilds the judging from it.

Each field says whether it changes results and what its `judgeflow run` flag is
(`option_flag`, `affects_results`). This package is the bottom floor: it imports pydantic, the
standard library and `errors` (tests/test_architecture.py pins it). Names are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import ClientConfig, affects_results, option_flag
    from .judging import (
        JUDGING,
        CascadeSpec,
        JudgeSpec,
        JudgingSpec,
        PanelSpec,
        RepeatsSpec,
        spec_of,
    )
    from .run import RunSpec

_WHERE = {"ClientConfig": "client", "affects_results": "client", "option_flag": "client", "JUDGING": "judging",
          "CascadeSpec": "judging", "JudgeSpec": "judging", "JudgingSpec": "judging", "PanelSpec": "judging",
          "RepeatsSpec": "judging", "spec_of": "judging", "RunSpec": "run"}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'judgeflow.config' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)


__all__ = ["JUDGING", "CascadeSpec", "ClientConfig", "JudgeSpec", "JudgingSpec", "PanelSpec", "RepeatsSpec",
           "RunSpec", "affects_results", "option_flag", "spec_of"]
