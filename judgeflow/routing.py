"""Routing: which criterion judges an item, and why.

Precedence: a run-level criterion (--criterion / Judge(criterion=...)) > a run-level mode >
the item's own `criterion` > the item's own `mode` > its fields, by the `[route]` tables of the shipped
criteria (criteria/*.toml: `when` a field is present, lowest `priority` first): a conversation
(`messages`) -> trace grounding (with a spec too, coverage still applies), else `source` -> source
faithfulness, else `spec` -> spec compliance, else `reference` -> factual correctness.
"""

from __future__ import annotations

from collections.abc import Callable

from .criteria import FAMILY_DEFAULTS, Criterion, load_criterion, routes
from .errors import CriterionError, InvalidItemError
from .items import Item

TRACE_CRITERION = "trace_grounding"


def choose_criterion(
    item: Item, *, criterion: Criterion | None = None, mode: str | None = None,
    load: Callable[[str], Criterion] = load_criterion,
) -> tuple[Criterion, str]:
    """Return (criterion, routed_by), or raise InvalidItemError if nothing fits the item.

    `load` reads the item's own `criterion` field (default: a shipped name or a path; a served
    graph passes `served.served_criterion`, names only)."""
    if criterion is not None:
        chosen, why = criterion, f"criterion {criterion.name} set for the run"
    elif mode is not None and mode != "auto":
        chosen, why = load_criterion(FAMILY_DEFAULTS[mode]), f"mode {mode} set for the run"
    elif item.criterion:
        try:
            chosen = load(item.criterion)
        except CriterionError as e:
            raise InvalidItemError(f"item '{item.id}' field criterion: {e}", field="criterion", item_id=item.id) from e
        why = f"item field criterion={item.criterion}"
    elif item.mode:
        chosen, why = load_criterion(FAMILY_DEFAULTS[item.mode]), f"item field mode={item.mode}"
    else:
        chosen, why = _routed(item)
    missing = [f for f in chosen.requires if not getattr(item, f)]
    if missing:
        hint = {"source": "faithfulness", "reference": "factual", "spec": "spec"}
        alt = ", ".join(f"--mode {hint[f]}" for f in ("source", "reference", "spec")
                        if getattr(item, f) and f not in missing)
        raise InvalidItemError(
            f"item '{item.id}' has no '{missing[0]}'; criterion '{chosen.name}' requires it"
            + (f" (or pass {alt})" if alt else ""),
            field=missing[0], item_id=item.id,
        )
    return chosen, why


def _routed(item: Item) -> tuple[Criterion, str]:
    """The shipped criterion the item's fields route it to: each criterion's `[route]` (`criteria.routes`)."""
    for field, name, why in routes():
        if (item.messages is not None) if field == "messages" else getattr(item, field):
            return load_criterion(name), why
    raise InvalidItemError(
        f"item '{item.id}' has no source, spec or reference to judge against; add one "
        "(source for RAG/summaries, reference for QA, spec for agent output) or set "
        "mode=factual to judge by the model's own knowledge",
        field="source|spec|reference", item_id=item.id,
    )
