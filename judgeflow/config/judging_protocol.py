"""`spec_of(judging)`: the spec of any Judging that has one (the `Specified` protocol)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..errors import ConfigError


@runtime_checkable
class Specified(Protocol):
    """A Judging that can say what it is as data (Judge, Panel, Cascade, Repeats)."""

    def spec(self) -> Any: ...


def spec_of(judging: object) -> Any:
    """The spec of a Judge, Panel, Cascade or Repeats (ConfigError for a Judging without one)."""
    if not isinstance(judging, Specified):
        raise ConfigError(f"{type(judging).__name__} has no spec: a run records what judged it as a spec "
                          "(Judge, Panel, Cascade, Repeats, or their JudgeSpec/PanelSpec/...)")
    return judging.spec()
