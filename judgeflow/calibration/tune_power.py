"""How big a gain a tune's labels can show (#41): the smallest held-out gain its label count could
have detected with 80% power, and the labels a gain the user names would need.

    tune_power(labels=40, noise=0.05, ranks=3)            # TunePower: detectable gain at 40 labels
    tune_power(labels=40, noise=0.05, ranks=3, detect=0.10)  # ... and the labels a 10-point gain needs

An edit is accepted when its held-out result beats the current criterion with McNemar's exact
two-sided p below alpha / (edit ranks tested) (Bonferroni) and more items fixed than broken: that
is a one-sided exact test at half that level, the gate's own test read in the other direction. So
the figures are `gate_power`'s at alpha / (2 x ranks): a gain of `delta` is a share `delta` of the
labelled items moved from wrong to right (points of agreement with the labels), on top of the
judge's own flip rate `noise` (read from the tune's flips: twice the smaller of fixed and broken,
over the paired items). The bootstrap interval of the kappa gain must clear 0 too, so the true
power is at most this: the figure is what the labels allow, not a promise.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .gate_power import POWER, detectable, needed_n, noise_of

#: the significance level `tune` accepts edits at, before the Bonferroni split over ranks
ALPHA = 0.05


class TunePower(BaseModel):
    """What a tune's labels could have shown (every share is points of agreement / 100)."""

    labels: int
    """Paired labelled items the held-out gain is measured on."""
    noise: float
    """The judge's flip rate seen in the tune (both directions)."""
    level: float
    """The two-sided McNemar level an edit had to pass (alpha / ranks tested)."""
    detectable: float | None
    """The smallest gain detected with 80% power at `labels` (None: none up to 50 points)."""
    detect: float | None = None
    """A gain the user named (`--detect`)."""
    needed: int | None = None
    """About how many labels `detect` needs for 80% power (None: not at any practical size)."""

    def text(self) -> str:
        can = (f"with {self.labels} labels and this judge's flip rate ({self.noise:.1%}), tune detects a held-out "
               f"gain of {self.detectable * 100:.1f} points of agreement or more with {POWER:.0%} power (McNemar, "
               f"two-sided p < {self.level:.3g})" if self.detectable is not None else
               f"with {self.labels} labels no gain up to 50 points is detected with {POWER:.0%} power")
        if self.detect is None:
            return can
        if self.needed is None:
            return can + f"; a {self.detect * 100:g}-point gain cannot be detected at any practical label count"
        more = "" if self.needed <= self.labels else f" ({self.needed - self.labels:,} more than these)"
        return can + f"; a {self.detect * 100:g}-point gain needs about {self.needed:,} labels{more}"


def tune_power(labels: int, noise: float, *, ranks: int = 1, alpha: float = ALPHA,
               detect: float | None = None) -> TunePower:
    """The detectable gain at `labels` paired items (and the labels `detect` needs), at the level
    an edit is accepted at when `ranks` edit ranks were tested."""
    level = alpha / max(ranks, 1)
    one_sided = level / 2  # two-sided p < level with more fixed than broken
    return TunePower(labels=labels, noise=noise, level=level, detectable=detectable(labels, noise, one_sided),
                     detect=detect, needed=needed_n(detect, noise, one_sided) if detect else None)


def of_report(report: Any, *, detect: float | None = None, alpha: float = ALPHA) -> TunePower:
    """The power figures of a finished TuneReport: its paired labels, the flips of the rank shown
    (the accepted one, else the largest gain), and the ranks it tested."""
    tested = [r for r in report.ranks if r.comparison is not None]
    shown = next((r for r in tested if r.rank == report.accepted_rank), None) or \
        max(tested, key=lambda r: r.comparison.kappa_diff or 0.0, default=None)
    if shown is None:
        n = report.before.n if report.before is not None else report.labelled
        return tune_power(n, noise_of(0, 0, n), ranks=1, alpha=alpha, detect=detect)
    c = shown.comparison
    noise = noise_of(c.a_right_b_wrong, c.b_right_a_wrong, c.n)
    return tune_power(c.n, noise, ranks=len(tested), alpha=alpha, detect=detect)
