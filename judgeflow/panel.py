"""Panels (juries) and self-consistency: several verdicts on one item, combined by a rule.

    panel = Panel(["openai/gpt-5-mini", "anthropic/claude-haiku-4-5", "ollama/qwen3:8b"])  # majority
    panel = Panel(["openai/gpt-4o-mini"], samples=5, temperature=0.7)                     # self-consistency
    r = panel.judge(item)
    r.label, r.agreement ("2/3"), r.confidence (0.67), r.judges  # each member's label, claims, usage, model

Every member judges the item concurrently, with its own client, cache entry and cost. A panel has
the same interface as `Judge` (`ajudge`, `ajudge_many`, `ajudge_indexed`, `judge`, `judge_many`),
so the runner (`runs.runner`), the run store, the cache and resume treat it as one judge: the
runner binds it to the store (`with_store`), and each member's result is then cached under the
key of the one cache-key function (`runs.cache.cache_key`) as soon as it is in.

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
import hashlib
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal, NamedTuple, Protocol

from .errors import ConfigError, InvalidItemError
from .items import Item
from .judge import DEFAULT_CONCURRENCY, ItemLike, Judge, as_item, invalid_judgment
from .results import JudgeVote, Judgment, TraceEntry, Usage

Rule = Literal["majority", "any", "all"]
RULES: tuple[str, ...] = ("majority", "any", "all")
Label = Literal[0, 1] | None
#: bump when a change here makes earlier cached panel/cascade rows stale
CACHE_VERSION = 1


class CacheStore(Protocol):
    """What a panel needs from a store to cache its members one by one (`runs.store.RunStore`)."""

    def cached(self, key: str) -> Judgment | None: ...

    def put_cache(self, key: str, judgment: Judgment) -> None: ...


class Binding(NamedTuple):
    """A store, whether to read its cache, and the runner's key and cache-hit functions."""

    store: CacheStore
    cache: bool
    key: Callable[[Any, Item], str | None]
    from_cache: Callable[..., Judgment]


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


def combined_key(kind: str, keys: Sequence[str | None], **settings: Any) -> str | None:
    """The cache key of a panel or cascade: its members' keys and its own settings."""
    if any(k is None for k in keys):
        return None
    data = {"v": CACHE_VERSION, kind: list(keys), **settings}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


async def judge_cached(judge: Any, it: Item, b: Binding | None, key: str | None = None) -> Judgment:
    """One judge's result for `it`, served from and written to the store's cache entry `key`.

    This is what makes a resumed run repeat no member's call: every member's result is cached as
    soon as it is judged, before the panel or cascade row is complete.
    """
    if b is None:
        return await (judge._ajudge(it, None) if isinstance(judge, Ensemble) else judge.ajudge(it))
    key = key if key is not None else b.key(judge, it)
    if b.cache and key is not None:
        hit = b.store.cached(key)
        if hit is not None:
            return b.from_cache(hit, it, model=judge.model, strategy=judge.strategy, keep_trace=judge.keep_trace)
    j = await (judge._ajudge(it, b) if isinstance(judge, Ensemble) else judge.ajudge(it))
    if key is not None and j.status == "judged" and not j.cached:
        b.store.put_cache(key, j)
    return j


def vote_of(j: Judgment, role: str) -> JudgeVote:
    return JudgeVote(model=j.model, role=role, label=j.label, status=j.status, reason=j.reason, claims=j.claims,
                     error=j.error, usage=j.usage, cached=j.cached, agreement=j.agreement)


def temperature_of(backend: Any) -> float | None:
    """The sampling temperature of a backend (None: the provider's default; -1: not a model)."""
    while backend is not None:
        client = getattr(backend, "client", None)
        if client is not None and hasattr(client, "temperature"):
            return client.temperature  # type: ignore[no-any-return]
        backend = getattr(backend, "inner", None)
    return -1.0


class _Bound:
    """An ensemble bound to a store by the runner: the same judge, caching each member's result."""

    def __init__(self, ens: Ensemble, binding: Binding) -> None:
        self._ens, self._binding = ens, binding

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ens, name)

    async def ajudge(self, item: ItemLike) -> Judgment:
        return await self._ens._ajudge(item, self._binding)

    def ajudge_indexed(self, items: Any, *, concurrency: int | None = None) -> AsyncIterator[tuple[int, Judgment]]:
        return Judge.ajudge_indexed(self, items, concurrency=concurrency)  # type: ignore[arg-type]


class Ensemble:
    """What panels and cascades share: the `Judge` interface around `_ajudge(item, binding)`."""

    concurrency: int = DEFAULT_CONCURRENCY
    keep_trace: bool = True
    strategy: Any = None
    criterion: Any = None
    mode: Any = None

    @property
    def model(self) -> str:
        raise NotImplementedError

    def combined_cache_key(self, item: Item, key_of: Callable[[Any, Item], str | None]) -> str | None:
        """This panel's or cascade's cache key, from its members' keys (`runs.cache.cache_key` calls it)."""
        raise NotImplementedError

    async def _ajudge(self, item: ItemLike, b: Binding | None) -> Judgment:
        raise NotImplementedError

    async def ajudge(self, item: ItemLike) -> Judgment:
        """Judge one item (no cache)."""
        return await self._ajudge(item, None)

    def with_store(self, store: CacheStore, *, cache: bool, key: Callable[[Any, Item], str | None],
                   from_cache: Callable[..., Judgment]) -> _Bound:
        """This judge bound to `store` (the runner calls it), so each member's result is cached."""
        return _Bound(self, Binding(store, cache, key, from_cache))

    ajudge_indexed = Judge.ajudge_indexed
    ajudge_many = Judge.ajudge_many
    judge = Judge.judge
    judge_many = Judge.judge_many


def _make_member(m: Judge | Ensemble | str, judge_kwargs: dict[str, Any]) -> Judge | Ensemble:
    return m if isinstance(m, (Judge, Ensemble)) else Judge(m, **judge_kwargs)


class Panel(Ensemble):
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
        if rule not in RULES:
            raise ConfigError(f"panel rule {rule!r} is not one of: {', '.join(RULES)}")
        if tie not in (0, 1, None):
            raise ConfigError(f"tie must be 1, 0 or None (unscored), got {tie!r}")
        if samples < 1:
            raise ConfigError(f"samples must be at least 1, got {samples}")
        if not members:
            raise ConfigError("a panel needs at least one member")
        if len(members) == 1 and samples == 1:
            raise ConfigError("a panel of one judge with one sample is that judge: give more members or samples > 1")
        self.members = [_make_member(m, {"keep_trace": keep_trace, **judge_kwargs}) for m in members]
        if samples > 1:
            for m in self.members:
                t = temperature_of(getattr(m, "backend", None))
                if t == 0 or t == -1.0:
                    what = "an offline judge, which always gives the same answer" if t == -1.0 else "temperature 0"
                    raise ConfigError(
                        f"samples={samples} with {m.model}: {what}, so every sample would be the same; "
                        "set a temperature above 0 (e.g. --temperature 0.7) for self-consistency")
        n = len(self.members) if len(self.members) > 1 else samples
        self.rule, self.samples, self.tie = rule, samples, tie
        self.min_votes = min_votes if min_votes is not None else n // 2 + 1
        if not 1 <= self.min_votes <= n:
            raise ConfigError(f"min_votes must be between 1 and {n}, got {self.min_votes}")
        self.concurrency = concurrency
        self.keep_trace = keep_trace
        first = self.members[0]
        self.criterion = getattr(first, "criterion", None)
        self.strategy = getattr(first, "strategy", None)

    @property
    def model(self) -> str:
        times = f"x{self.samples}" if self.samples > 1 else ""
        return f"panel/{self.rule}:" + ",".join(m.model + times for m in self.members)

    def _member_key(self, m: Judge | Ensemble, it: Item, k: int, key_of: Callable[[Any, Item], str | None]) -> str | None:
        key = key_of(m, it)
        return key if self.samples == 1 else sub_key(key, sample=k, of=self.samples)

    def combined_cache_key(self, item: Item, key_of: Callable[[Any, Item], str | None]) -> str | None:
        keys = [self._member_key(m, item, k, key_of) for m in self.members for k in range(self.samples)]
        return combined_key("panel", keys, rule=self.rule, tie=self.tie, min_votes=self.min_votes)

    def _vote(self, m: Judge | Ensemble, js: list[Judgment]) -> tuple[JudgeVote, Judgment]:
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

    async def _ajudge(self, item: ItemLike, b: Binding | None) -> Judgment:
        it = as_item(item)
        if isinstance(it, InvalidItemError):
            return invalid_judgment(it, model=self.model)
        calls = [judge_cached(m, it, b, self._member_key(m, it, k, b.key) if b is not None else None)
                 for m in self.members for k in range(self.samples)]
        results = await asyncio.gather(*calls)
        per_member = [results[i * self.samples:(i + 1) * self.samples] for i in range(len(self.members))]
        if all(j.status == "invalid" for j in results):  # the item cannot be routed: the same for every member
            first = results[0]
            return first.model_copy(update={"model": self.model, "usage": Usage(), "trace": []})
        votes, reps = zip(*(self._vote(m, js) for m, js in zip(self.members, per_member)))
        label, why = combine([v.label for v in votes], self.rule, min_votes=self.min_votes, tie=self.tie)
        if len(self.members) == 1:  # self-consistency: the samples are the votes
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
        rule = f"{self.rule} of {len(self.members)} judges" if len(self.members) > 1 else f"majority of {self.samples} samples"
        trace: list[TraceEntry] = []
        if self.keep_trace:
            for m, js in zip(self.members, per_member):
                for k, j in enumerate(js):
                    tag = m.model + (f"#{k + 1}" if self.samples > 1 else "")
                    trace.extend(t.model_copy(update={"step": f"{tag}:{t.step}"}) for t in j.trace)
        return Judgment(
            id=it.id, label=label, status="judged" if label is not None else "unscored",
            criterion=decider.criterion, routed_by=decider.routed_by,
            reason=f"{rule}, {agreement} say {label}: {decider.reason}" if label is not None else why,
            claims=decider.claims if label is not None else [], error=None if label is not None else why,
            usage=usage, model=self.model, strategy=decider.strategy, language=decider.language,
            human_label=it.label, extra=it.extra, trace=trace, judges=list(votes), agreement=agreement,
            confidence=(sum(x == label for x in all_scored) / len(all_scored)) if label is not None else None,
            cached=all(j.cached for j in results),
        )
