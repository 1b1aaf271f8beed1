"""What judges, as data that builds it (in the way of pydantic_evals' `EvaluatorSpec`): a
`JudgeSpec`, `PanelSpec`, `CascadeSpec` or `RepeatsSpec` (`JudgingSpec`, told apart by `kind`).

    spec = PanelSpec(members=[JudgeSpec(model="openai/gpt-5-mini"), JudgeSpec(model="anthropic/claude-haiku-4-5")])
    panel = spec.build()                       # a Panel: the same as building it by hand
    panel.spec() == spec                       # every Judging gives its spec back (a tested round trip)
    JUDGING.validate_json(stored)              # a run's record rebuilds what judged it (`Run.judging`)

Each spec is defined beside the Judging it builds (`judge.JudgeSpec`, `ensembles.panel.PanelSpec`,
...), so building and `.spec()` need no import cycle; this module gathers them. The rules of
composition are validators on them, so Python users meet them before anything is built: a panel
needs two members or samples; repeats take one judge (not a panel or cascade); samples need a
temperature above 0; escalating on disagreement needs a cheap judge with votes.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, TypeAdapter

from ..ensembles.cascade import DEFAULT_ESCALATE_ON, CascadeSpec
from ..ensembles.panel import PanelSpec
from ..ensembles.repeats import RepeatsSpec
from .._judge import JudgeSpec
from .judging_protocol import Specified, spec_of

JudgingSpec = Annotated[JudgeSpec | PanelSpec | CascadeSpec | RepeatsSpec, Field(discriminator="kind")]
#: reads a stored judging spec (JSON text or a dict) back
JUDGING: TypeAdapter[JudgeSpec | PanelSpec | CascadeSpec | RepeatsSpec] = TypeAdapter(JudgingSpec)

__all__ = ["DEFAULT_ESCALATE_ON", "JUDGING", "CascadeSpec", "JudgeSpec", "JudgingSpec", "PanelSpec", "RepeatsSpec",
           "Specified", "spec_of"]
