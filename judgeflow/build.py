"""`build(spec)`: the one way a judging spec (`JudgeSpec`, `PanelSpec`, `CascadeSpec`,
`RepeatsSpec`) becomes the Judging it describes (architecture step 4).

    from judgeflow.build import build
    panel = build(PanelSpec(members=[JudgeSpec(model="openai/gpt-5-mini"),
                                     JudgeSpec(model="baseline/lexical")]))
    build(panel.spec()).spec() == panel.spec()      # every Judging gives its spec back

The specs are pure data on the bottom floor (`config/judging.py`); this module sits above
`ensembles/`, the one place that knows which Judging each spec is. Callers (runs, cli,
integrations) build through here.
"""

from __future__ import annotations

from typing import Any

from ._judge import Judge
from .config.judging import CascadeSpec, JudgeSpec, PanelSpec, RepeatsSpec
from .ensembles import Cascade, Panel, Repeats
from .errors import ConfigError
from .judging import Judging


def build(spec: JudgeSpec | PanelSpec | CascadeSpec | RepeatsSpec, **client: Any) -> Judging:
    """The Judging `spec` describes; `client` replaces client options of every judge in it (a run's
    `budget`, batch replay's `http_client`)."""
    match spec:
        case JudgeSpec():
            return Judge(spec, **client)
        case PanelSpec():
            return Panel(
                [Judge(m, **client) for m in spec.members],
                rule=spec.rule,
                samples=spec.samples,
                tie=spec.tie,
                min_votes=spec.min_votes,
                concurrency=spec.concurrency,
                keep_trace=spec.keep_trace,
            )
        case CascadeSpec():
            return Cascade(
                build(spec.cheap, **client),
                build(spec.strong, **client),
                escalate_on=spec.escalate_on,
                audit_rate=spec.audit_rate,
                seed=spec.seed,
                concurrency=spec.concurrency,
                keep_trace=spec.keep_trace,
            )
        case RepeatsSpec():
            return Repeats(Judge(spec.judging, **client), spec.k, concurrency=spec.concurrency)
    raise ConfigError(
        f"{type(spec).__name__} is not a judging spec: give a JudgeSpec, PanelSpec, CascadeSpec "
        "or RepeatsSpec"
    )


__all__ = ["build"]
