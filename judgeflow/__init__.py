"""judgeflow: LLM-as-judge hallucination detection with routed, claim-level judging.

Labels everywhere: 1 = hallucination/error, 0 = none found, None = unscored.
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

__version__ = "0.2.0"

# Every public name loads on first use: `judgeflow --version` and `--help` import none of the
# judging code, offline judging never loads the provider SDKs (openai, anthropic, Instructor: seconds
# to import), a run served from the response cache never builds the workflow (LangGraph, about a
# second), and judging never loads calibration (numpy). One table: name -> the module defining it
# (PEP 562). No public name is also a submodule's name (`judge` lives in `_judge.py`): importing a
# submodule sets the package attribute of its name, which would shadow the function.
_LAZY = {
    "Backend": "backends", "LLMJudge": "backends", "make_backend": "backends",
    "LexicalJudge": "backends.lexical", "RougeJudge": "backends.rouge",
    "LLMClient": "backends.llm", "make_client": "backends.llm",
    "Claim": "schemas", "ClaimCheck": "schemas", "ClaimChecks": "schemas", "Claims": "schemas",
    "SingleJudgment": "schemas",
    "Criterion": "criteria", "list_criteria": "criteria", "load_criterion": "criteria",
    "ConfigError": "errors", "CriterionError": "errors", "InvalidItemError": "errors", "JudgeflowError": "errors",
    "LLMError": "errors", "BudgetExceeded": "errors",
    "Budget": "runs.budget",
    "Item": "items", "load_items": "items", "read_items": "items",
    "Judge": "_judge", "judge": "_judge",
    "Judging": "judging", "judge_many": "judging", "judge_stream": "judging",
    "Panel": "ensembles", "Cascade": "ensembles", "Repeats": "ensembles",
    "areview": "spec_review", "review": "spec_review",
    "ClaimResult": "results", "JudgeVote": "results", "Judgment": "results", "RequirementResult": "results",
    "TraceEntry": "results", "Usage": "results", "results_to_dataframe": "frames",
    "RunStore": "runs.store",
    "CalibrationReport": "calibration.agreement", "calibrate": "calibration.agreement",
    "ComparisonReport": "calibration.comparison", "compare": "calibration.comparison",
    "GateResult": "calibration.gate", "gate": "calibration.gate",
    "StabilityReport": "calibration.stability", "stability": "calibration.stability",
    "TuneReport": "calibration.tune", "TuneResult": "calibration.tune", "atune": "calibration.tune",
    "tune": "calibration.tune",
    "JudgeContext": "workflow", "JudgeState": "workflow", "build_graph": "workflow",
}

if _TYPE_CHECKING:
    from ._judge import Judge, judge
    from .backends import Backend, LLMJudge, make_backend
    from .backends.lexical import LexicalJudge
    from .backends.llm import LLMClient, make_client
    from .backends.rouge import RougeJudge
    from .calibration.agreement import CalibrationReport, calibrate
    from .calibration.comparison import ComparisonReport, compare
    from .calibration.gate import GateResult, gate
    from .calibration.stability import StabilityReport, stability
    from .calibration.tune import TuneReport, TuneResult, atune, tune
    from .criteria import Criterion, list_criteria, load_criterion
    from .ensembles import Cascade, Panel, Repeats
    from .errors import (
        BudgetExceeded,
        ConfigError,
        CriterionError,
        InvalidItemError,
        JudgeflowError,
        LLMError,
    )
    from .frames import results_to_dataframe
    from .items import Item, load_items, read_items
    from .judging import Judging, judge_many, judge_stream
    from .results import ClaimResult, JudgeVote, Judgment, RequirementResult, TraceEntry, Usage
    from .runs.budget import Budget
    from .runs.store import RunStore
    from .schemas import Claim, ClaimCheck, ClaimChecks, Claims, SingleJudgment
    from .spec_review import areview, review
    from .workflow import JudgeContext, JudgeState, build_graph


def __getattr__(name: str) -> _Any:
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value  # the next lookup is a plain attribute
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Backend",
    "Budget",
    "BudgetExceeded",
    "CalibrationReport",
    "Cascade",
    "Claim",
    "ClaimCheck",
    "ClaimChecks",
    "ClaimResult",
    "Claims",
    "ComparisonReport",
    "ConfigError",
    "Criterion",
    "CriterionError",
    "GateResult",
    "InvalidItemError",
    "Item",
    "Judge",
    "JudgeContext",
    "JudgeState",
    "JudgeVote",
    "JudgeflowError",
    "Judging",
    "Judgment",
    "LLMClient",
    "LLMError",
    "LLMJudge",
    "LexicalJudge",
    "Panel",
    "Repeats",
    "RequirementResult",
    "RougeJudge",
    "RunStore",
    "SingleJudgment",
    "StabilityReport",
    "TraceEntry",
    "TuneReport",
    "TuneResult",
    "Usage",
    "areview",
    "atune",
    "build_graph",
    "calibrate",
    "compare",
    "gate",
    "judge",
    "judge_many",
    "judge_stream",
    "list_criteria",
    "load_criterion",
    "load_items",
    "make_backend",
    "make_client",
    "read_items",
    "results_to_dataframe",
    "review",
    "stability",
    "tune",
]

