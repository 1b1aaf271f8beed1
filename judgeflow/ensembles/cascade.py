"""Cascades: a cheap judge first, a strong judge only where needed, and an audit of the rest.

    cascade = Cascade("openai/gpt-4o-mini", "openai/gpt-4.1", escalate_on="label1,unscored", audit_rate=0.1)
    r = cascade.judge(item)
    r.cascade   # {"escalated": True, "escalated_on": ["label1"], "audited": False, "cheap_label": 1, ...}

The strong judge runs on an item when the cheap judge's result meets an `escalate_on` condition:
`label1` (the cheap judge flags it), `unscored` (it could not decide), `disagree` (a cheap panel's
members or samples disagree) or `confidence<X` (a cheap panel's or self-consistency confidence is
below X). An escalated item takes the strong judge's label. `audit_rate=R` also sends a random
share R of the other items to the strong judge; those keep the cheap label (so the audit measures
the cascade as it runs) and `cascade_estimate` turns them into an estimate, with a Wilson 95%
interval, of what the cascade missed and of its agreement with the strong judge alone.

Which items are audited is drawn per item from `random.Random(f"{seed}:{item id}")`: the same
seed audits the same items whatever the order, concurrency or resume.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ..config.judging import DEFAULT_ESCALATE_ON as DEFAULT_ESCALATE_ON
from ..config.judging import (
    CascadeSpec,
    check_audit_rate,
    escalate_on_conditions,
    spec_of,
)
from ..errors import InvalidItemError
from ..items import Item
from ..judging import (
    DEFAULT_CONCURRENCY,
    Ensemble,
    ItemLike,
    Judging,
    as_item,
    combined_key,
    invalid_judgment,
)
from ..results import Judgment, TraceEntry, Usage
from .budget_cut import budget_cut
from .panel import EnsembleBase, make_member, vote_of


def parse_escalate_on(spec: str | Sequence[str]) -> list[str]:
    """Validate "label1,unscored,confidence<0.8" into a list of conditions (any cheap judge)."""
    return escalate_on_conditions(spec, cheap_votes=True)


def audit_draw(seed: int, item_id: str) -> float:
    """A uniform number in [0, 1) fixed by the seed and the item id."""
    return random.Random(f"{seed}:{item_id}").random()


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval for k successes in n trials (95% by default); None if n = 0."""
    if n == 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


class Cascade(EnsembleBase):
    """A cheap judge on every item, a strong judge on escalated and audited items."""

    def __init__(
        self,
        cheap: Judging | str,
        strong: Judging | str,
        *,
        escalate_on: str | Sequence[str] = DEFAULT_ESCALATE_ON,
        audit_rate: float = 0.0,
        seed: int = 0,
        concurrency: int = DEFAULT_CONCURRENCY,
        keep_trace: bool = True,
        **judge_kwargs: Any,
    ) -> None:
        """
        Args:
            cheap, strong: Judges, Panels, or "provider/model" strings (made with `judge_kwargs`).
            escalate_on: conditions on the cheap result that send an item to the strong judge.
            audit_rate: share of the other items also sent to the strong judge, to measure the cascade.
            seed: fixes which items are audited.
        """
        kw = {"keep_trace": keep_trace, **judge_kwargs}
        self._members = [make_member(cheap, kw), make_member(strong, kw)]
        votes = isinstance(self.cheap, Ensemble)
        self.escalate_on = escalate_on_conditions(escalate_on, cheap_votes=votes)
        self.audit_rate, self.seed = check_audit_rate(audit_rate), seed
        self.concurrency, self.keep_trace = concurrency, keep_trace

    def spec(self) -> CascadeSpec:
        """What this cascade is, as data: `build(spec())` makes the same cascade."""
        return CascadeSpec(cheap=spec_of(self.cheap), strong=spec_of(self.strong),
                           escalate_on=",".join(self.escalate_on), audit_rate=self.audit_rate, seed=self.seed,
                           keep_trace=self.keep_trace, concurrency=self.concurrency)

    @property
    def cheap(self) -> Judging:
        return self._members[0]

    @property
    def strong(self) -> Judging:
        return self._members[1]

    @property
    def model(self) -> str:
        return f"cascade/{self.cheap.model}>{self.strong.model}"

    def fingerprint(self, item: Item) -> str | None:
        return combined_key("cascade", [self.cheap.fingerprint(item), self.strong.fingerprint(item)],
                            escalate_on=self.escalate_on, audit_rate=self.audit_rate, seed=self.seed)

    def escalations(self, cheap: Judgment) -> list[str]:
        """The conditions the cheap result meets."""
        met = []
        for c in self.escalate_on:
            if c == "label1" and cheap.label == 1:
                met.append(c)
            elif c == "unscored" and cheap.label is None:
                met.append(c)
            elif c == "disagree" and cheap.label is not None and len({v.label for v in cheap.judges or []
                                                                        if v.label is not None} | set(
                    x for v in cheap.judges or [] for x in (v.samples or []) if x is not None)) > 1:
                met.append(c)
            elif c.startswith("confidence<") and cheap.confidence is not None and cheap.confidence < float(c[11:]):
                met.append(c)
        return met

    async def ajudge(self, item: ItemLike) -> Judgment:
        it = as_item(item)
        if isinstance(it, InvalidItemError):
            return invalid_judgment(it, model=self.model)
        cheap = await self.cheap.ajudge(it)
        if cheap.status == "invalid":
            return cheap.model_copy(update={"model": self.model})
        reasons = self.escalations(cheap)
        audited = not reasons and self.audit_rate > 0 and audit_draw(self.seed, it.id) < self.audit_rate
        strong = await self.strong.ajudge(it) if reasons or audited else None
        decider = strong if reasons and strong is not None else cheap
        usage = Usage()
        usage.add(cheap.usage)
        votes = [v.model_copy(update={"role": "cheap"}) for v in cheap.judges] if cheap.judges else [vote_of(cheap, "cheap")]
        if strong is not None:
            usage.add(strong.usage)
            votes += ([v.model_copy(update={"role": "strong"}) for v in strong.judges] if strong.judges
                      else [vote_of(strong, "strong")])
        if reasons:
            assert strong is not None
            reason = f"escalated ({', '.join(reasons)}; cheap judge said {cheap.label}): {strong.reason}"
            error = (None if strong.label is not None else
                     f"strong judge could not decide ({strong.error}); the cheap judge said {cheap.label}")
        else:
            audit = f"; audited: the strong judge says {strong.label}" if strong is not None else ""
            reason = f"cheap judge: {cheap.reason}{audit}"
            error = cheap.error
        trace: list[TraceEntry] = []
        if self.keep_trace:
            trace = [t.model_copy(update={"step": f"cheap:{t.step}"}) for t in cheap.trace]
            trace += [t.model_copy(update={"step": f"strong:{t.step}"}) for t in (strong.trace if strong else [])]
        return budget_cut(Judgment(
            id=it.id, label=decider.label, status="judged" if decider.label is not None else "unscored",
            criterion=decider.criterion, routed_by=decider.routed_by, reason=reason if decider.label is not None else error,
            claims=decider.claims, error=error if decider.label is None else None, usage=usage, model=self.model,
            citations=decider.citations, arguments=decider.arguments,
            strategy=decider.strategy, language=decider.language, human_label=it.label, extra=it.extra, trace=trace,
            judges=votes, agreement=decider.agreement, confidence=decider.confidence,
            cascade={"escalated": bool(reasons), "escalated_on": reasons, "audited": audited,
                     "cheap_label": cheap.label, "strong_label": strong.label if strong is not None else None},
            cached=cheap.cached and (strong is None or strong.cached),
        ), [cheap, *([strong] if strong is not None else [])])


class CascadeEstimate(BaseModel):
    """What the audit says about a cascade run (see `cascade_estimate`)."""

    n: int = 0
    """Cascade rows (judged or unscored)."""
    escalated: int = 0
    audited: int = 0
    """Non-escalated items the strong judge also judged (a random share)."""
    audited_scored: int = 0
    """Audited items where both the cascade and the strong judge gave a label."""
    audit_misses: int = 0
    """Audited items the strong judge flags (1) and the cascade passed (0)."""
    audit_false_alarms: int = 0
    """Audited items the cascade flags and the strong judge does not (the cheap judge's 1s are
    escalated by default, so this is usually 0)."""
    miss_rate: float | None = None
    miss_rate_ci: tuple[float, float] | None = None
    """Wilson 95% interval of the miss rate among non-escalated items."""
    est_missed: float | None = None
    """miss_rate x non-escalated items: the estimated count the cascade missed."""
    est_missed_ci: tuple[float, float] | None = None
    agreement: float | None = None
    """Estimated share of all items where the cascade's label equals the strong judge's."""
    agreement_ci: tuple[float, float] | None = None
    role_usage: dict[str, Usage] = Field(default_factory=dict)
    """Calls and tokens by role ("cheap", "strong"), from the votes (cached votes count 0)."""
    strong_audit_usage: Usage = Field(default_factory=Usage)
    """The strong judge's usage on audited items judged this time (not cached)."""
    strong_audit_items: int = 0
    """Audited items whose strong usage is in `strong_audit_usage`."""


def cascade_estimate(results: Iterable[Judgment]) -> CascadeEstimate:
    """Escalations, audit, and the estimated misses and agreement of a cascade run, with Wilson intervals.

    Escalated items take the strong label, so they agree with the strong judge by construction;
    the audited share estimates the agreement on the rest.
    """
    est = CascadeEstimate()
    non_escalated = 0
    for j in results:
        if j.cascade is None or j.status == "invalid":
            continue
        est.n += 1
        for v in j.judges or []:
            est.role_usage.setdefault(v.role or "?", Usage()).add(v.usage)
        if j.cascade.get("escalated"):
            est.escalated += 1
            continue
        non_escalated += 1
        if not j.cascade.get("audited"):
            continue
        est.audited += 1
        strong_votes = [v for v in j.judges or [] if v.role == "strong"]
        if strong_votes and not any(v.cached for v in strong_votes):
            est.strong_audit_items += 1
            for v in strong_votes:
                est.strong_audit_usage.add(v.usage)
        s = j.cascade.get("strong_label")
        if j.label is None or s is None:
            continue
        est.audited_scored += 1
        est.audit_misses += int(s == 1 and j.label == 0)
        est.audit_false_alarms += int(s == 0 and j.label == 1)
    m = est.audited_scored
    if m:
        est.miss_rate = est.audit_misses / m
        est.miss_rate_ci = wilson(est.audit_misses, m)
        est.est_missed = est.miss_rate * non_escalated
        lo, hi = est.miss_rate_ci or (0.0, 0.0)
        est.est_missed_ci = (lo * non_escalated, hi * non_escalated)
        agree = m - est.audit_misses - est.audit_false_alarms
        ci = wilson(agree, m) or (0.0, 0.0)
        total = est.escalated + non_escalated
        est.agreement = (est.escalated + agree / m * non_escalated) / total
        est.agreement_ci = ((est.escalated + ci[0] * non_escalated) / total, (est.escalated + ci[1] * non_escalated) / total)
    return est
