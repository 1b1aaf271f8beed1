"""Summary lines for panel and cascade runs: calls and cost per member, and a cascade's audit."""

from __future__ import annotations

from typing import Any

from ..ensembles.cascade import cascade_estimate
from ..results import Judgment, Usage
from .pricing import estimate_cost


def _cost(model: str | None, usage: Usage, prices: Any) -> float | None:
    if model is None:
        return None
    if model.startswith(("baseline/", "ollama/")):
        return 0.0
    return estimate_cost(model, usage, prices=prices)


def _money(x: float | None) -> str:
    return "unknown" if x is None else f"${x:,.4f}"


def summary_lines(results: list[Judgment], prices: Any) -> list[str]:
    """Per-member calls and cost; for a cascade, the cost against the strong judge alone and the audit."""
    per: dict[tuple[str, str], Usage] = {}
    hits: dict[tuple[str, str], int] = {}  # results served from the cache, per member
    for j in results:
        for v in j.judges or []:
            member = (v.role or "member", v.model or "?")
            per.setdefault(member, Usage()).add(v.usage)
            hits[member] = hits.get(member, 0) + v.cached
    lines, total, known = [], 0.0, True
    for (role, model), u in per.items():
        c = _cost(model, u, prices)
        known = known and c is not None
        total += c or 0.0
        lines.append(f"{role} {model}: {u.calls:,} calls, tokens in {u.input_tokens:,} out {u.output_tokens:,}, "
                     f"cost {_money(c)}" + ("" if c is not None else " (add its price with --prices FILE)")
                     + (f"; {hits[(role, model)]:,} served from cache" if hits[(role, model)] else ""))
    lines.append(f"estimated cost: {_money(total if known else None)} at list prices, all judges")
    if not any(j.cascade for j in results):
        votes = [j for j in results if j.agreement]
        if votes:
            split = sum(1 for j in votes if j.agreement and j.agreement.split("/")[0] != j.agreement.split("/")[1])
            lines.append(f"judges disagree on {split} of {len(votes)} judged items "
                         "(`judgeflow sample --focus disagreement` to read them)")
        return lines
    est = cascade_estimate(results)
    strong_model = next((m for (r, m) in per if r == "strong"), None)
    lines.append(f"cascade: {est.escalated} of {est.n} items escalated to the strong judge, {est.audited} audited")
    if est.strong_audit_items and strong_model:
        per_item = Usage(calls=est.strong_audit_usage.calls, input_tokens=est.strong_audit_usage.input_tokens,
                         output_tokens=est.strong_audit_usage.output_tokens)
        scale = est.n / est.strong_audit_items
        alone = Usage(calls=round(per_item.calls * scale), input_tokens=round(per_item.input_tokens * scale),
                      output_tokens=round(per_item.output_tokens * scale))
        c_alone = _cost(strong_model, alone, prices)
        cascade_calls = sum(u.calls for u in per.values())
        ratio = f" ({total / c_alone:.0%} of it)" if known and c_alone else ""
        lines.append(f"strong judge alone (measured on the {est.strong_audit_items} audited items, extrapolated to "
                     f"{est.n}): about {alone.calls:,} calls, cost {_money(c_alone)}; the cascade: {cascade_calls:,} "
                     f"calls, {_money(total if known else None)}{ratio}")
    elif est.n:
        lines.append("strong judge alone: not estimated (no audited item judged this session; use --audit-rate R)")
    if est.miss_rate is not None and est.miss_rate_ci and est.est_missed_ci and est.agreement_ci:
        lines.append(f"audit: the strong judge flags {est.audit_misses} of {est.audited_scored} audited items the cascade "
                     f"passed: miss rate {est.miss_rate:.1%} (Wilson 95% CI {est.miss_rate_ci[0]:.1%}-"
                     f"{est.miss_rate_ci[1]:.1%}), about {est.est_missed:.0f} missed items "
                     f"({est.est_missed_ci[0]:.0f}-{est.est_missed_ci[1]:.0f}) among the {est.n - est.escalated} "
                     f"not escalated")
        lines.append(f"estimated agreement of the cascade with the strong judge alone: {est.agreement:.1%} "
                     f"(95% CI {est.agreement_ci[0]:.1%}-{est.agreement_ci[1]:.1%})")
    return lines
