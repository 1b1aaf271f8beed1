"""judgeflow: LLM-as-judge hallucination detection with routed, claim-level judging.

Labels everywhere: 1 = hallucination/error, 0 = none found, None = unscored.
"""

import importlib as _importlib
import sys as _sys
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from . import _moved

_moved.install(_sys.modules[__name__])  # old module paths (judgeflow.llm, ...) keep working

from .backends import Backend, LLMJudge, make_backend
from .backends.lexical import LexicalJudge
from .schemas import Claim, ClaimCheck, ClaimChecks, Claims, SingleJudgment
from .criteria import Criterion, list_criteria, load_criterion
from .errors import ConfigError, CriterionError, InvalidItemError, JudgeflowError, LLMError
from .items import Item, load_items, read_items
from .judge import Judge, judge
from .panel import Panel
from .cascade import Cascade
from .spec_review import SpecJudge, areview, review
from .results import ClaimResult, JudgeVote, Judgment, RequirementResult, TraceEntry, Usage
from .backends.rouge import RougeJudge
from .runs.store import RunStore

__version__ = "0.1.0"

if _TYPE_CHECKING:
    from .backends.llm import LLMClient, make_client
    from .calibration.agreement import CalibrationReport, calibrate
    from .calibration.comparison import ComparisonReport, compare
    from .calibration.gate import GateResult, gate
    from .calibration.stability import StabilityReport, stability
    from .workflow import JudgeContext, JudgeState, build_graph

# The provider SDKs (openai, anthropic, instructor) take seconds to import; offline judging,
# calibration and `judgeflow criteria` never need them, so they load on first use. So does the
# workflow (LangGraph, about a second): a run served from the response cache never builds it;
# and calibration (numpy, a third of a second): judging never needs it.
_LAZY = {"LLMClient": "backends.llm", "make_client": "backends.llm",
         "CalibrationReport": "calibration.agreement", "calibrate": "calibration.agreement",
         "ComparisonReport": "calibration.comparison", "compare": "calibration.comparison",
         "GateResult": "calibration.gate", "gate": "calibration.gate",
         "StabilityReport": "calibration.stability", "stability": "calibration.stability",
         "JudgeContext": "workflow", "JudgeState": "workflow", "build_graph": "workflow"}


def __getattr__(name: str) -> _Any:
    if name in _LAZY:
        return getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Backend",
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
    "Judgment",
    "LLMClient",
    "LLMError",
    "LLMJudge",
    "LexicalJudge",
    "Panel",
    "RequirementResult",
    "RougeJudge",
    "RunStore",
    "SingleJudgment",
    "SpecJudge",
    "StabilityReport",
    "TraceEntry",
    "Usage",
    "areview",
    "build_graph",
    "calibrate",
    "compare",
    "gate",
    "judge",
    "list_criteria",
    "load_criterion",
    "load_items",
    "make_backend",
    "make_client",
    "read_items",
    "review",
    "stability",
]
