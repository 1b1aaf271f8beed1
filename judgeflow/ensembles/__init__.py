"""Ensembles: `Judging`s made of member `Judging`s. A `Panel` votes (several judges, or one judge
sampled several times); a `Cascade` asks a cheap judge first and a strong one where needed;
`Repeats` asks one judge K times and keeps every verdict (test-retest). All expose their members
(`members()`, `with_members(fn)`), so the response cache wraps each one."""

from .cascade import Cascade, CascadeEstimate, cascade_estimate
from .panel import RULES, Panel, combine
from .repeats import Repeats

__all__ = ["RULES", "Cascade", "CascadeEstimate", "Panel", "Repeats", "cascade_estimate", "combine"]
