"""Ensembles: `Judging`s made of member `Judging`s. A `Panel` votes (several judges, or one judge
sampled several times); a `Cascade` asks a cheap judge first and a strong one where needed. Both
expose their members (`members()`, `with_members(fn)`), so the response cache wraps each one."""

from .cascade import Cascade, CascadeEstimate, cascade_estimate
from .panel import RULES, Panel, combine

__all__ = ["RULES", "Cascade", "CascadeEstimate", "Panel", "cascade_estimate", "combine"]
