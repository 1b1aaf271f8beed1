"""`build(spec)`: the one way a judging spec (`JudgeSpec`, `PanelSpec`, `CascadeSpec`, `RepeatsSpec`)
becomes the Judging it describes (architecture step 4).

Callers above the floor of `config/` (runs, cli, integrations) build through here, never through a
method of the spec, so the specs can be pure data.
"""

from __future__ import annotations

from typing import Any


def build(spec: Any, **client: Any) -> Any:
    """The Judging `spec` describes; `client` replaces client options (batch replay: `http_client`)."""
    return spec.build(**client)


__all__ = ["build"]
