"""How much a gate can see: the one-sided exact McNemar test for "worse", and its power.

    worse_p(worse=7, better=1)                         # P(>= 7 of 8 flips go 0 -> 1 | no change)
    power(n=200, delta=0.05, noise=0.04, alpha=0.05)   # chance a 5-point regression fails the gate
    detectable(n=200, noise=0.04)                      # the regression caught with 80% power
    needed_n(delta=0.05, noise=0.04)                   # the paired items that 5 points needs

The gate asks one question, "is the candidate worse?", so its test is one-sided at `alpha`: under
no change each flip is 0 -> 1 or 1 -> 0 with chance 1/2, and the gate fails when the 0 -> 1 count
is improbably high. (A two-sided p below alpha with the sign checked is a one-sided test at alpha/2:
it fails less often than alpha says on noise and misses real regressions.)

Power model: on a paired item the judge's own noise flips the label each way with chance
`noise / 2` (`noise`: the share of items whose label changes between two runs of the same answers),
and a regression of `delta` adds `delta` to the 0 -> 1 chance. The noise is read from a gate's
own flips (twice the smaller of the two counts, over the paired items), so the figure fits the
run's rates. Exact binomial sums in plain Python (no scipy needed).
"""

from __future__ import annotations

import math
from functools import lru_cache

#: the power the gate's "can detect" figures are stated at
POWER = 0.8


def _log_pmf(k: int, n: int, p: float) -> float:
    if p <= 0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1:
        return 0.0 if k == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def _upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k), X ~ Bin(n, p), summed from k up (terms beyond 1e-16 of the largest dropped)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    total, peak = 0.0, -math.inf
    for i in range(k, n + 1):
        lp = _log_pmf(i, n, p)
        peak = max(peak, lp)
        if lp < peak - 40:
            break
        total += math.exp(lp)
    return min(1.0, total)


def worse_p(worse: int, better: int) -> float:
    """One-sided exact McNemar p for "worse": P(X >= worse), X ~ Bin(worse + better, 1/2)
    (what `scipy.stats.binomtest(worse, worse + better, 0.5, alternative="greater")` gives)."""
    n = worse + better
    if n == 0:
        return 1.0
    return min(1.0, sum(math.comb(n, i) for i in range(worse, n + 1)) / 2**n)


def is_worse(worse: int, better: int, alpha: float) -> bool:
    """The gate's paired rule: more 0 -> 1 than 1 -> 0, and the one-sided exact p below alpha."""
    return worse > better and worse_p(worse, better) < alpha


@lru_cache(maxsize=1 << 14)
def _critical(n: int, alpha: float) -> int:
    """The smallest 0 -> 1 count of n flips that fails the gate (n + 1: none does)."""
    k, tail = n + 1, 0.0
    while k > 0:
        nxt = tail + math.exp(_log_pmf(k - 1, n, 0.5))
        if nxt >= alpha or (k - 1) * 2 <= n:
            break
        tail, k = nxt, k - 1
    return k


def power(n: int, delta: float, noise: float, alpha: float = 0.05) -> float:
    """The chance that a real regression of `delta` (a share) on `n` paired items fails the gate."""
    p10 = noise / 2
    p01 = min(1.0 - p10, p10 + delta)
    q = p01 + p10  # the chance an item flips at all
    if n <= 0 or q <= 0:
        return 0.0
    r = p01 / q
    mean, sd = n * q, math.sqrt(n * q * (1 - q)) + 1
    lo, hi = max(0, int(mean - 9 * sd)), min(n, int(mean + 9 * sd) + 1)
    return min(1.0, sum(math.exp(_log_pmf(m, n, q)) * _upper_tail(_critical(m, alpha), m, r)
                        for m in range(lo, hi + 1)))


def detectable(n: int, noise: float, alpha: float = 0.05, target: float = POWER) -> float | None:
    """The smallest regression (a share, to 0.5 points) caught with `target` power at `n` items,
    or None when even a 50-point regression is not."""
    for step in range(1, 101):
        delta = step / 200
        if power(n, delta, noise, alpha) >= target:
            return delta
    return None


def needed_n(delta: float, noise: float, alpha: float = 0.05, target: float = POWER, cap: int = 200_000) -> int | None:
    """About how many paired items a regression of `delta` needs to be caught with `target` power
    (the smallest n on a doubling-then-bisecting search; the exact test's power is slightly saw-toothed)."""
    if delta <= 0:
        return None
    hi = 8
    while power(hi, delta, noise, alpha) < target:
        hi *= 2
        if hi > cap:
            return None
    lo = hi // 2
    while hi - lo > max(1, lo // 100):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if power(mid, delta, noise, alpha) >= target else (mid, hi)
    return hi


def noise_of(worse: int, better: int, paired: int) -> float:
    """The judge's flip rate seen in a gate: twice the smaller flip count (the part both directions
    share) over the paired items; at least one flip's worth, so a quiet run is not taken as noiseless."""
    if paired <= 0:
        return 0.0
    return max(2 * min(worse, better), 1) / paired


def power_text(n: int, noise: float, alpha: float, detect: float | None = None) -> str:
    """The sentence every gate prints: what it could have caught, and what a named regression needs."""
    d = detectable(n, noise, alpha)
    can = (f"at {n} paired items and this judge's flip rate ({noise:.1%}), the gate catches a regression of "
           f"{d * 100:.1f} points or more with {POWER:.0%} power (one-sided alpha {alpha:g})" if d is not None else
           f"at {n} paired items no regression up to 50 points is caught with {POWER:.0%} power")
    if detect is None:
        return can
    need = needed_n(detect, noise, alpha)
    wanted = (f"; a {detect * 100:g}-point regression needs about {need:,} paired items" if need is not None
              else f"; a {detect * 100:g}-point regression cannot be caught at any practical size")
    return can + wanted
