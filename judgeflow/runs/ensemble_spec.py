"""A run's recorded panel or cascade (the `ensemble` settings of `judgeflow run --panel/--samples/
--cascade`) as a `PanelSpec` or `CascadeSpec`: the CLI, a resume and Python build it the same way.

    ensemble_spec({"panel": "openai/a,anthropic/b", "panel_rule": "majority", ...}, settings.member)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..config.judging import JUDGING, CascadeSpec, JudgeSpec, PanelSpec
from ..errors import ConfigError

Member = Callable[..., JudgeSpec]


def split(spec: str, flag: str) -> list[str]:
    parts = [s.strip() for s in spec.split(",") if s.strip()]
    if not parts:
        raise ConfigError(f"{flag} is empty: give provider/model names separated by commas")
    return parts


def ensemble_spec(e: dict[str, Any], member: Member, *, model: str | None = None, trace: bool = True,
                  concurrency: int = 16) -> PanelSpec | CascadeSpec:
    """The panel or cascade `e` describes; `member(ref, keep_trace=)` makes one member's JudgeSpec."""
    if "judging" in e:  # built in Python: recorded as its spec
        spec = JUDGING.validate_python(e["judging"])
        assert isinstance(spec, (PanelSpec, CascadeSpec))
        return spec
    samples = int(e.get("samples") or 1)
    tie = 1 if str(e.get("panel_tie", "1")) == "1" else None

    def panel(default: str | None) -> PanelSpec | None:
        if e.get("panel"):
            return PanelSpec(members=[member(m, keep_trace=trace) for m in split(e["panel"], "--panel")],
                             rule=e.get("panel_rule") or "majority", samples=samples, tie=tie, keep_trace=trace,
                             concurrency=concurrency)
        if samples > 1 and default:
            return PanelSpec(members=[member(default, keep_trace=trace)], samples=samples, tie=tie, keep_trace=trace,
                             concurrency=concurrency)
        return None

    if not e.get("cascade"):
        made = panel(model)
        if made is None:
            raise ConfigError("an ensemble needs --panel, --samples N > 1 or --cascade")
        return made
    parts = split(e["cascade"], "--cascade")
    if len(parts) != 2:
        raise ConfigError(f"--cascade takes two judges, CHEAP,STRONG (got {len(parts)}: {e['cascade']})")
    cheap_ref, strong_ref = parts
    if cheap_ref == "panel":
        if not e.get("panel"):
            raise ConfigError("--cascade panel,STRONG needs --panel M1,M2,... for the cheap judge")
        cheap: JudgeSpec | PanelSpec | None = panel(None)
    else:
        if e.get("panel"):
            raise ConfigError("--panel with --cascade: write --cascade panel,STRONG to use the panel as the cheap judge")
        cheap = panel(cheap_ref) or member(cheap_ref, keep_trace=trace)
    assert cheap is not None
    return CascadeSpec(cheap=cheap, strong=member(strong_ref, keep_trace=trace),
                       escalate_on=e.get("escalate_on") or "label1,unscored", audit_rate=e.get("audit_rate") or 0.0,
                       seed=e.get("audit_seed") or 0, keep_trace=trace, concurrency=concurrency)
