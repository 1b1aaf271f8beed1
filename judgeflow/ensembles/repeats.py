"""Test-retest: the same judge on the same item K times (`judgeflow run --repeats K`).

    judging = Repeats(Judge("openai/gpt-4o-mini"), 3)
    r = judging.judge(item)
    r.label      # the first repeat's label: a run with repeats labels items as a run without them
    r.repeats    # every repeat's label, claims and usage (JudgeVote, role "repeat")

Providers are not deterministic, at temperature 0 too: the same answer can get 0 now and 1 on
the next call. `judgeflow stability`, `gate`, `calibrate` and `sample --focus unstable` read the
repeats. The first repeat is the judge itself, with the judge's own cache entry (shared with runs
without repeats: an answer judged before costs nothing); each later repeat k has its own entry
(the judge's key and k), so a resumed run pays for no repeat twice and a later run with more
repeats reuses the earlier ones. The model is the judge's: rows compare with runs without repeats.
"""

from __future__ import annotations

import asyncio

from ..config.judging import RepeatsSpec, check_repeats, spec_of
from ..errors import InvalidItemError
from ..items import Item
from ..judging import (
    DEFAULT_CONCURRENCY,
    ItemLike,
    Judging,
    as_item,
    combined_key,
    invalid_judgment,
)
from ..results import Judgment, Usage
from .budget_cut import budget_cut
from .panel import EnsembleBase, Sample, sub_key, vote_of


class Repeat(Sample):
    """Repeat `k` of a judge: repeat 0 is the judge itself (its cache entry); repeat k > 0 has its own."""

    def fingerprint(self, item: Item) -> str | None:
        key = self.inner.fingerprint(item)
        return key if self.k == 0 else sub_key(key, repeat=self.k)


class Repeats(EnsembleBase):
    """One judge asked `k` times about each item; the row keeps every verdict (`Judgment.repeats`)."""

    def __init__(self, judging: Judging, k: int, *, concurrency: int = DEFAULT_CONCURRENCY) -> None:
        """
        Args:
            judging: the judge to repeat (a Judge; a panel or cascade is not repeated).
            k: verdicts per item, at least 2.
            concurrency: items judged at once by `judge_many` (each item's repeats run together).
        """
        self._members = [Repeat(judging, i, k) for i in range(k)]
        self.k, self.concurrency = check_repeats(k), concurrency

    @property
    def model(self) -> str:
        return self._members[0].model

    def spec(self) -> RepeatsSpec:
        """What this is, as data: `build(spec())` makes the same repeated judge."""
        first = self._members[0]
        return RepeatsSpec(judging=spec_of(first.inner if isinstance(first, Repeat) else first),
                           k=self.k, concurrency=self.concurrency)

    def fingerprint(self, item: Item) -> str | None:
        return combined_key("repeats", [m.fingerprint(item) for m in self._members])

    async def ajudge(self, item: ItemLike) -> Judgment:
        it = as_item(item)
        if isinstance(it, InvalidItemError):
            return invalid_judgment(it, model=self.model)
        results = await asyncio.gather(*(m.ajudge(it) for m in self._members))
        first = results[0]
        if first.status == "invalid":  # the item cannot be routed: the same for every repeat
            return first
        usage = Usage()
        for j in results:
            usage.add(j.usage)
        return budget_cut(first.model_copy(update={"repeats": [vote_of(j, "repeat") for j in results], "usage": usage,
                                                   "cached": all(j.cached for j in results)}), results)
