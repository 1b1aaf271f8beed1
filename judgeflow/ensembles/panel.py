"""Panels (juries) and self-consistency: several verdicts on one item, combined by a rule.

    panel = Panel(["openai/gpt-5-mini", "anthropic/claude-haiku-4-5", "ollama/qwen3:8b"])  # majority
    panel = Panel(["openai/gpt-4o-mini"], samples=5, temperature=0.7)                     # self-consistency
    r = panel.judge(item)
    r.label, r.agreement ("2/3"), r.confidence (0.67), r.judges  # each member's label, claims, usage, model

Every member judges the item concurrently, with its own client, cache entry and cost. A panel is a
`Judging` (judging.py) like `Judge`, so a run, the cache and resume treat it as one judge; it is also
an `Ensemble`: `runs.cache.cached` puts the cache around each member (`with_members`), so each
member's result (each sample's, with `samples=N`) is cached under its own fingerprint as soon as it is in.

Rules, over the members that voted (an unscored member does not vote):
- `majority` (default): the label most members gave. A tie (e.g. 1-1 when one of three members
  failed) is 1 by default (`tie=1`): one judge found an error it could name, so the item goes to a
  person, and if that is wrong it shows up as a false alarm in `judgeflow calibrate`, where it is
  measured; `tie=None` makes a tie unscored instead (which drops the hardest items from kappa).
- `any`: 1 if any member says 1 (recall first).
- `all`: 1 only if every voting member says 1 (precision first).
Fewer votes than `min_votes` (default: a majority of the members, e.g. 2 of 3) -> unscored, with
the reason. With `samples=N` each member judges the item N times (temperature > 0); its vote is
the majority of its samples (ties as above), and `confidence` is the share of all scored samples
that agree with the final label.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from .._judge import Judge
from ..config.judging import RULES as RULES
from ..config.judging import PanelSpec, panel_min_votes, same_samples, spec_of
from ..errors import InvalidItemError
from ..items import Item
from ..judging import (
    DEFAULT_CONCURRENCY,
    ItemLike,
    Judging,
    SyncFacade,
    as_item,
    combined_key,
    invalid_judgment,
)
from ..results import JudgeVote, Judgment, TraceEntry, Usage
from .budget_cut import budget_cut

Rule = Literal["majority", "any", "all"]
Label = Literal[0, 1] | None


def combine(votes: Sequence[Label], rule: str, *, min_votes: int, tie: Label = 1) -> tuple[Label, str | None]:
    """The combined label of `votes` (None = did not vote) under `rule`, and why it is None if so."""
    scored = [v for v in votes if v is not None]
    if len(scored) < min_votes:
        return None, (f"only {len(scored)} of {len(votes)} votes (at least {min_votes} needed): "
                      "too few judges could decide")
    ones = sum(scored)
    zeros = len(scored) - ones
    if rule == "any":
        return (1 if ones else 0), None
    if rule == "all":
        return (1 if zeros == 0 else 0), None
    if ones != zeros:
        return (1 if ones > zeros else 0), None
    return tie, (None if tie is not None else f"tie: {ones} votes for 1, {zeros} for 0")


def sub_key(key: str | None, **parts: Any) -> str | None:
    """A derived cache key (e.g. one per sample), or None if `key` is None."""
    if key is None:
        return None
    return hashlib.sha256(json.dumps({"key": key, **parts}, sort_keys=True).encode()).hexdigest()


def vote_of(j: Judgment, role: str) -> JudgeVote:
    return JudgeVote(model=j.model, role=role, label=j.label, status=j.status, reason=j.reason, claims=j.claims,
                     error=j.error, usage=j.usage, cached=j.cached, agreement=j.agreement)


class Sample(SyncFacade):
    """Sample `k` of `of` of a member judge: the same judge, its own cache entry (self-consistency)."""

    def __init__(self, judging: Judging, k: int, of: int) -> None:
        self.inner, self.k, self.of = judging, k, of

    @property
    def model(self) -> str:
        return self.inner.model

    def fingerprint(self, item: Item) -> str | None:
        return sub_key(self.inner.fingerprint(item), sample=self.k, of=self.of)

    async def ajudge(self, item: ItemLike) -> Judgment:
        return await self.inner.ajudge(item)

    async def aclose(self) -> None:
        if self.k == 0:  # the samples share one judge: closed once
            await self.inner.aclose()


class EnsembleBase(SyncFacade):
    """What panels and cascades share: members replaceable one by one (`with_members`)."""

    concurrency: int = DEFAULT_CONCURRENCY
    keep_trace: bool = True
    _members: list[Judging]

    def members(self) -> list[Judging]:
        return list(self._members)

    def with_members(self, fn: Callable[[Judging], Judging]) -> Any:
        clone = copy.copy(self)
        clone._members = [fn(m) for m in self._members]
        return clone

    async def aclose(self) -> None:
        for m in self._members:
            await m.aclose()


def make_member(m: Judging | str, judge_kwargs: dict[str, Any]) -> Judging:
    return Judge(m, **judge_kwargs) if isinstance(m, str) else m


def check_samples(member: Judging, samples: int) -> None:
    """Samples of a judge that always answers the same are the same vote: refuse them. The built
    backend knows its temperature (None: a reasoning model sampling at its own; -1.0: offline)."""
    if isinstance(member, Judge) and member.backend.temperature in (0, -1.0):
        raise same_samples(samples, member.model)


class Panel(EnsembleBase):
    """Several judges (or one judge sampled several times) voting on each item."""

    def __init__(
        self,
        members: Sequence[Judge | str],
        *,
        rule: Rule = "majority",
        samples: int = 1,
        tie: Label = 1,
        min_votes: int | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        keep_trace: bool = True,
        **judge_kwargs: Any,
    ) -> None:
        """
        Args:
            members: Judges, or "provider/model" strings (made with `judge_kwargs`: mode,
                criterion, strategy, base_url, temperature, ...).
            rule: "majority", "any" (1 if any member says 1) or "all" (1 only if all voting say 1).
            samples: judge each item this many times per member (needs temperature > 0).
            tie: the label of a majority tie: 1 (default) or None (unscored).
            min_votes: fewest voting members for a label (default: a majority of the members).
        """
        votes = panel_min_votes(len(members), samples, rule, tie, min_votes)
        judges = [make_member(m, {"keep_trace": keep_trace, **judge_kwargs}) for m in members]
        if samples > 1:
            for m in judges:
                check_samples(m, samples)
        self.rule, self.samples, self.tie = rule, samples, tie
        self._min_votes, self.min_votes = min_votes, votes
        self.concurrency = concurrency
        self.keep_trace = keep_trace
        # one slot per member and sample, member by member: each is judged (and cached) on its own
        self._members = judges if samples == 1 else [Sample(m, k, samples) for m in judges for k in range(samples)]

    def spec(self) -> PanelSpec:
        """What this panel is, as data: `build(spec())` makes the same panel."""
        inner = [m.inner if isinstance(m, Sample) else m for m in self.judges]
        return PanelSpec(members=[spec_of(m) for m in inner], rule=self.rule, samples=self.samples,
                         tie=self.tie, min_votes=self._min_votes, keep_trace=self.keep_trace,
                         concurrency=self.concurrency)

    @property
    def judges(self) -> list[Judging]:
        """The member judges (one per member, whatever the samples)."""
        return self._members[::self.samples]

    @property
    def model(self) -> str:
        times = (f" ({self.samples} samples" + (" each)" if len(self.judges) > 1 else ")")) if self.samples > 1 else ""
        return f"panel/{self.rule}:" + ",".join(m.model for m in self.judges) + times

    def fingerprint(self, item: Item) -> str | None:
        keys = [m.fingerprint(item) for m in self._members]
        return combined_key("panel", keys, rule=self.rule, tie=self.tie, min_votes=self.min_votes)

    def _vote(self, m: Judging, js: list[Judgment]) -> tuple[JudgeVote, Judgment]:
        """One member's vote from its samples, and the sample that speaks for it."""
        if self.samples == 1:
            return vote_of(js[0], "member"), js[0]
        labels = [j.label for j in js]
        label, why = combine(labels, "majority", min_votes=self.samples // 2 + 1, tie=self.tie)
        rep = next((j for j in js if j.label == label and label is not None), js[0])
        usage = Usage()
        for j in js:
            usage.add(j.usage)
        scored = [x for x in labels if x is not None]
        errors = "; ".join(sorted({j.error for j in js if j.error}))
        return JudgeVote(
            model=m.model, role="member", label=label, status="judged" if label is not None else "unscored",
            samples=labels, agreement=f"{sum(x == label for x in scored)}/{len(scored)}" if label is not None else None,
            reason=rep.reason, claims=rep.claims, error=None if label is not None else (why or errors),
            usage=usage, cached=all(j.cached for j in js),
        ), rep

    async def ajudge(self, item: ItemLike) -> Judgment:
        it = as_item(item)
        if isinstance(it, InvalidItemError):
            return invalid_judgment(it, model=self.model)
        results = await asyncio.gather(*(m.ajudge(it) for m in self._members))
        per_member = [results[i * self.samples:(i + 1) * self.samples] for i in range(len(self.judges))]
        if all(j.status == "invalid" for j in results):  # the item cannot be routed: the same for every member
            first = results[0]
            return first.model_copy(update={"model": self.model, "usage": Usage(), "trace": []})
        votes, reps = zip(*(self._vote(m, js) for m, js in zip(self.judges, per_member)))
        label, why = combine([v.label for v in votes], self.rule, min_votes=self.min_votes, tie=self.tie)
        if len(self.judges) == 1:  # self-consistency: the samples are the votes
            samples = votes[0].samples or []
            label, why = votes[0].label, votes[0].error
            voting = [x for x in samples if x is not None]
        else:
            voting = [v.label for v in votes if v.label is not None]
        all_scored = [j.label for j in results if j.label is not None]
        decider = next((r for v, r in zip(votes, reps) if v.label == label and label is not None), reps[0])
        usage = Usage()
        for j in results:
            usage.add(j.usage)
        agree = sum(x == label for x in voting)
        agreement = f"{agree}/{len(voting)}" if label is not None else None
        rule = f"{self.rule} of {len(self.judges)} judges" if len(self.judges) > 1 else f"majority of {self.samples} samples"
        trace: list[TraceEntry] = []
        if self.keep_trace:
            for m, js in zip(self.judges, per_member):
                for k, j in enumerate(js):
                    tag = m.model + (f"#{k + 1}" if self.samples > 1 else "")
                    trace.extend(t.model_copy(update={"step": f"{tag}:{t.step}"}) for t in j.trace)
        return budget_cut(Judgment(
            id=it.id, label=label, status="judged" if label is not None else "unscored",
            criterion=decider.criterion, routed_by=decider.routed_by,
            reason=f"{rule}, {agreement} say {label}: {decider.reason}" if label is not None else why,
            claims=decider.claims if label is not None else [], error=None if label is not None else why,
            citations=decider.citations if label is not None else None,
            arguments=decider.arguments if label is not None else None,
            usage=usage, model=self.model, strategy=decider.strategy, language=decider.language,
            human_label=it.label, extra=it.extra, trace=trace, judges=list(votes), agreement=agreement,
            confidence=(sum(x == label for x in all_scored) / len(all_scored)) if label is not None else None,
            cached=all(j.cached for j in results),
        ), results)
