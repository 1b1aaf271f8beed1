"""The end-of-run summary: label counts, unscored and invalid rows, tokens, calls and estimated cost."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..results import Judgment, Usage
from .pricing import estimate_cost

#: a finished run exits 1 when more than this share of its rows is unscored
DEFAULT_MAX_UNSCORED = 0.5


def run_failure(results: list[Judgment], max_unscored: float) -> str | None:
    """Why a finished run is not a success (it judged nothing, or too many rows are unscored), else None."""
    if not any(j.status == "judged" for j in results):
        if not results:
            return "nothing was judged: no rows"
        invalid = sum(j.status == "invalid" for j in results)
        return f"nothing was judged: {invalid} of {len(results)} rows are invalid, {len(results) - invalid} unscored"
    unscored = sum(j.status == "unscored" for j in results)
    if unscored / len(results) > max_unscored:
        return f"{unscored} of {len(results)} rows are unscored (more than --max-unscored {max_unscored:g})"
    return None


def summarize(results: list[Judgment], *, model: str, prices: Any, elapsed: float, session: Usage,
              session_items: int) -> list[str]:
    """The end-of-run summary lines: labels, unscored, tokens and estimated cost."""
    counts = Counter(j.status if j.status != "judged" else f"label {j.label}" for j in results)
    cached = sum(j.cached for j in results)
    total = Usage()
    for j in results:
        total.add(j.usage)
    labels = ", ".join(f"{k}: {counts[k]}" for k in ("label 1", "label 0") if counts[k])
    lines = [
        f"{len(results)} rows: {labels or 'no 1/0 labels'}; unscored: {counts['unscored']}; invalid: {counts['invalid']}"
        + (f"; served from cache: {cached}" if cached else ""),
        f"tokens in {total.input_tokens:,}, out {total.output_tokens:,} in {total.calls:,} calls"
        + (f" ({session.calls:,} calls for {session_items} items this session, {elapsed:.1f}s, "
           f"{session_items / elapsed:.1f} items/s)" if elapsed > 0 and session_items else ""),
    ]
    if any(j.judges for j in results):  # a panel or cascade: each member at its own price
        from .panel_summary import summary_lines

        return lines + summary_lines(results, prices)
    cost = estimate_cost(model, total, prices=prices)
    if model.startswith("baseline/"):
        lines.append("cost: none (offline judge, no model calls)")
    elif cost is None:
        lines.append(f"estimated cost: unknown (no price for {model}; add it with --prices FILE)")
    else:
        lines.append(f"estimated cost: ${cost:,.4f} at list prices for {model}")
    return lines
