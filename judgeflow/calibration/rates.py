"""A run's hallucination rate with an interval, counting what was not scored.

    r = run_rate(results, name="candidate.jsonl")          # 95% Wilson score interval
    r.rate, r.ci, r.ones, r.scored, r.unscored, r.invalid, r.calls

The rate is the share of scored rows labelled 1. Unscored rows (the judge could not decide) and
invalid rows (the input was unusable) are never counted as 0: they are left out of the rate and
counted apart, so a reader sees how much of the run the rate stands on. The interval is Wilson's
score interval (Wilson, 1927): unlike the normal approximation it stays inside [0, 1] and honest at
0 of n or n of n, where the normal interval collapses to a point.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from statistics import NormalDist

from pydantic import BaseModel, Field

from ..results import Judgment


def wilson_interval(ones: int, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """Wilson's score interval for `ones` successes in `n` trials at `level` (two-sided); None if n is 0.
    The closed form of scipy's `binomtest(ones, n).proportion_ci(level, method="wilson")` (its test
    oracle), without importing scipy: every run's summary calls this, and scipy.stats costs a CLI
    process more than half a second to import."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if n == 0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = ones / n
    centre = (2 * n * p + z * z) / (2 * (n + z * z))
    half = z * math.sqrt(4 * n * p * (1 - p) + z * z) / (2 * (n + z * z))
    return max(0.0, centre - half), min(1.0, centre + half)


class RunRate(BaseModel):
    """One run's hallucination rate on its scored rows, with what the rate leaves out."""

    name: str
    """The results file or run id."""
    rows: int = 0
    scored: int = 0
    """Rows labelled 0 or 1."""
    ones: int = 0
    """Rows labelled 1 (a hallucination found)."""
    unscored: int = 0
    """Rows the judge could not decide (label null): not in the rate."""
    invalid: int = 0
    """Rows whose input was unusable (label null): not in the rate."""
    rate: float | None = None
    """ones / scored; None when nothing was scored."""
    ci: tuple[float, float] | None = None
    """Wilson score interval of the rate at `level`."""
    level: float = 0.95
    models: dict[str, int] = Field(default_factory=dict)
    """Judge model -> rows (invalid rows left out)."""
    criteria: dict[str, int] = Field(default_factory=dict)
    calls: int = 0
    """Model calls the run's rows cost (rows served from the cache cost none)."""
    cached: int = 0
    """Rows served from the response cache."""

    @property
    def not_scored(self) -> int:
        return self.unscored + self.invalid

    @property
    def not_scored_share(self) -> float:
        return self.not_scored / self.rows if self.rows else 0.0


def run_rate(results: Iterable[Judgment], *, name: str = "results", level: float = 0.95) -> RunRate:
    """The hallucination rate of `results` with its Wilson interval at `level`."""
    out = RunRate(name=name, level=level)
    models: Counter[str] = Counter()
    criteria: Counter[str] = Counter()
    for j in results:
        out.rows += 1
        out.calls += j.usage.calls
        out.cached += bool(j.cached)
        if j.status == "invalid":
            out.invalid += 1
            continue
        models[j.model or "(none)"] += 1
        criteria[j.criterion or "(none)"] += 1
        if j.label is None:
            out.unscored += 1
        else:
            out.scored += 1
            out.ones += j.label
    out.models, out.criteria = dict(models), dict(criteria)
    if out.scored:
        out.rate = out.ones / out.scored
        out.ci = wilson_interval(out.ones, out.scored, level)
    return out


def pct(x: float | None) -> str:
    """A share as a percentage with one decimal ("-" for None)."""
    return "-" if x is None else f"{100 * x:.1f}%"


def rate_text(r: RunRate) -> str:
    """"12.0% [8.1%, 17.3%] (24 of 200 scored)" ("no scored rows" when there are none)."""
    if r.rate is None:
        return "no scored rows"
    ci = f" [{pct(r.ci[0])}, {pct(r.ci[1])}]" if r.ci else ""
    return f"{pct(r.rate)}{ci} ({r.ones} of {r.scored} scored)"
