"""Hallucination checks inside a test suite (QA bots in CI), with judgements cached on disk.

    from judgeflow.testing import assert_no_hallucination

    def test_founding_of_moscow():
        answer = bot.ask("Who founded Moscow?")
        assert_no_hallucination(answer, reference="Yuri Dolgorukiy, 1147", question="Who founded Moscow?")

A failing check raises AssertionError listing each failing claim with its verdict, reason and
evidence. At the dataset level, `assert_rate_below(results, 0.05)` fails when the upper bound of the
hallucination rate's interval is above the limit (a rate of 0 of 20 does not prove a rate below 5%).
The judge is the offline `baseline/lexical` unless `model=` (or $JUDGEFLOW_MODEL, or pytest's
`--judgeflow-model`) names an LLM. Judged results are cached as JSON files under
`.judgeflow/pytest-cache/` through the one read-through cache (`runs.cache.Cached`, keyed by the
judge's `fingerprint(item)`, as in the run store), so re-running a suite does not pay twice;
unscored results are never cached. The pytest plugin (`judgeflow.pytest_plugin`, registered
as an entry point) adds the `judgeflow_judge` fixture and the options.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._judge import Judge
from .backends.llm_judge import default_model
from .criteria import Criterion
from .errors import ConfigError
from .items import Item
from .judging import Judging, run_sync
from .results import Judgment
from .runs.cache import Cached, FileCache

CACHE_DIR_ENV = "JUDGEFLOW_CACHE_DIR"
DEFAULT_CACHE_DIR = Path(".judgeflow") / "pytest-cache"


class Checker:
    """A judging (cached on disk, or not) that checks answers: `judge`, `judge_item`, `assert_no_hallucination`.
    The `judgeflow_judge` pytest fixture is one."""

    def __init__(self, judging: Judging) -> None:
        self.judging = judging

    def judge_item(self, item: Item) -> Judgment:
        """Judge one Item (cached); never raises for a hallucination: read `.label` (1, 0 or None)."""
        return run_sync(self.judging.ajudge(item))

    def judge(self, answer: Any, *, reference: str | None = None, source: Any = None, spec: str | None = None,
              question: str | None = None) -> Judgment:
        """Judge `answer` (cached) and return the Judgment without asserting: label 1 (a hallucination),
        0 (none found) or None (unscored), with `.claims` and `.reason`. The arguments are
        `assert_no_hallucination`'s."""
        return self.judge_item(make_item(answer, reference=reference, source=source, spec=spec, question=question))

    def assert_no_hallucination(
        self,
        answer: Any,
        *,
        reference: str | None = None,
        source: Any = None,
        spec: str | None = None,
        question: str | None = None,
        allow_unscored: bool = False,
    ) -> Judgment:
        """Judge `answer` and raise AssertionError naming the failing claims if it has any.

        Args:
            answer: the text under test (a dict/list is judged as pretty JSON).
            reference: a short gold answer (factual correctness).
            source: documents the answer must be faithful to (str, list, langchain Documents).
            spec: requirements the answer must meet (spec compliance).
            question: the question or task, if any.
            allow_unscored: pass when the judge could not decide (default: fail).

        Returns:
            The Judgment (label 0, or None with allow_unscored).
        """
        __tracebackhide__ = True  # a failure shows the test's line and the claims, not judgeflow's frames
        item = make_item(answer, reference=reference, source=source, spec=spec, question=question)
        result = self.judge_item(item)
        if result.label == 1 or (result.label is None and not allow_unscored):
            raise AssertionError(failure_message(result, item))
        return result


def make_item(
    answer: Any, *, reference: str | None = None, source: Any = None, spec: str | None = None,
    question: str | None = None,
) -> Item:
    """An Item for an ad-hoc check; its id is a hash of its content."""
    if not isinstance(answer, str):
        answer = json.dumps(answer, ensure_ascii=False, indent=2, default=str)
    rec: dict[str, Any] = {"answer": answer, "reference": reference, "source": source, "spec": spec,
                           "question": question}
    rec = {k: v for k, v in rec.items() if v is not None}
    digest = hashlib.sha256(json.dumps(rec, sort_keys=True, default=str, ensure_ascii=False).encode())
    return Item.from_record({"id": "check-" + digest.hexdigest()[:10], **rec})


def failure_message(result: Judgment, item: Item) -> str:
    """What a failing test prints: the verdict, then every failing claim with reason and evidence."""
    who = f"{result.criterion or 'no criterion'}, {result.model}{', cached' if result.cached else ''}"
    if result.label is None:
        head = f"judgeflow could not judge the answer ({result.status}, {who}): {result.error or result.reason}"
    else:
        head = f"judgeflow found a hallucination ({who}): {result.reason}"
    lines = [head]
    for c in result.claims:
        if c.error:
            lines.append(f"  {c.id} [{c.verdict}] {c.text}")
            if c.reason:
                lines.append(f"      reason: {c.reason}")
            if c.evidence:
                lines.append(f"      evidence: {c.evidence}")
    lines.append(f"answer: {item.answer}")
    return "\n".join(lines)


_settings: dict[str, Any] = {"model": None, "cache_dir": None, "cache": True, "base_url": None}
_judges: dict[tuple[str, str | None, bool, str], Checker] = {}


def configure(*, model: str | None = None, cache_dir: str | Path | None = None, cache: bool = True,
              base_url: str | None = None) -> None:
    """Run-wide defaults (the pytest plugin calls this from its command-line options)."""
    _settings.update(model=model, cache_dir=cache_dir, cache=cache, base_url=base_url)
    _judges.clear()


def cache_dir() -> Path:
    """$JUDGEFLOW_CACHE_DIR, else the configured directory, else .judgeflow/pytest-cache under
    the pytest rootdir (under the current directory outside pytest)."""
    if os.environ.get(CACHE_DIR_ENV) or _settings["cache_dir"]:
        return Path(os.environ.get(CACHE_DIR_ENV) or _settings["cache_dir"])
    plugin = sys.modules.get("judgeflow.pytest_plugin")  # loaded by pytest; never imported here
    root = getattr(plugin, "rootdir", None)
    return Path(root) / DEFAULT_CACHE_DIR if root else DEFAULT_CACHE_DIR


def cached_judge(
    model: str | None = None, *, criterion: str | Criterion | None = None, cache: bool | None = None
) -> Checker:
    """A (memoised) Checker for `model` (default: configured, $JUDGEFLOW_MODEL, else offline), cached on disk."""
    model = model or _settings["model"] or default_model()
    use_cache = _settings["cache"] if cache is None else cache
    crit_key = criterion.name if isinstance(criterion, Criterion) else criterion
    base_url = _settings["base_url"]
    key = (model, crit_key, use_cache, str(cache_dir()), base_url)
    if key not in _judges or isinstance(criterion, Criterion):
        try:
            judge = Judge(model, criterion=criterion, keep_trace=False, **({"base_url": base_url} if base_url else {}))
        except ConfigError as e:
            if "judgeflow.pytest_plugin" not in sys.modules:
                raise
            # under pytest the option is --judgeflow-model (pytest's own --model may belong to another plugin)
            raise ConfigError(str(e).replace("--model ", "--judgeflow-model ")
                              .replace("--base-url ", "--judgeflow-base-url ")) from None
        _judges[key] = Checker(Cached(judge, FileCache(cache_dir()), keep_trace=False) if use_cache else judge)
    return _judges[key]


def assert_no_hallucination(
    answer: Any,
    *,
    reference: str | None = None,
    source: Any = None,
    spec: str | None = None,
    question: str | None = None,
    model: str | None = None,
    criterion: str | Criterion | None = None,
    cache: bool | None = None,
    allow_unscored: bool = False,
) -> Judgment:
    """Fail (AssertionError listing the failing claims) if `answer` has a hallucination.

    Give at least one of `reference`, `source` or `spec`; the criterion is routed from which one
    you give unless `criterion` names one. `model` defaults to pytest's --judgeflow-model, then
    $JUDGEFLOW_MODEL, then the offline baseline/lexical judge. Judged results are cached on disk
    (`cache=False` to judge afresh). Returns the Judgment.
    """
    __tracebackhide__ = True
    return cached_judge(model, criterion=criterion, cache=cache).assert_no_hallucination(
        answer, reference=reference, source=source, spec=spec, question=question,
        allow_unscored=allow_unscored,
    )


def assert_rate_below(
    results: Iterable[Judgment] | str | Path,
    max_rate: float,
    *,
    level: float = 0.95,
    max_unscored: float = 0.0,
) -> Any:
    """Fail unless the hallucination rate of `results` is below `max_rate` with confidence `level`.

    The rate is the share of scored rows labelled 1; the check uses the upper bound of its Wilson
    interval, not the point estimate, so a small sample cannot pass by luck (0 of 20 has an upper
    bound of 16%). Unscored and invalid rows are never counted as 0: more than `max_unscored` of
    them (a share of all rows; default none) fails the check too.

    Args:
        results: Judgments (e.g. from `judge_item` in a loop) or a results file from `judgeflow run`.
        max_rate: the largest acceptable hallucination rate, a share (0.05 for 5%).
        level: the interval's confidence level.
        max_unscored: the largest acceptable share of unscored or invalid rows.

    Returns:
        The RunRate (rate, interval, counts).
    """
    __tracebackhide__ = True
    from .calibration.labels import read_run
    from .calibration.rates import pct, rate_text, run_rate

    rows, name = read_run(results)
    r = run_rate(rows, name=name, level=level)
    problems = []
    if r.not_scored_share > max_unscored:
        problems.append(f"{r.unscored} unscored and {r.invalid} invalid of {r.rows} rows ({pct(r.not_scored_share)}), "
                        f"more than max_unscored {pct(max_unscored)}")
    if r.ci is None:
        problems.append("no row was scored")
    elif r.ci[1] >= max_rate:
        problems.append(f"hallucination rate {rate_text(r)}: the upper bound of its {level:.0%} interval, "
                        f"{pct(r.ci[1])}, is not below {pct(max_rate)}"
                        + (" (judge more items to narrow it)" if r.rate is not None and r.rate < max_rate else ""))
    if problems:
        flagged = [j for j in rows if j.label == 1][:10]
        lines = [f"judgeflow: {'; '.join(problems)}"]
        for j in flagged:
            claim = next((c for c in j.claims if c.error), None)
            lines.append(f"  {j.id}: " + (f"[{claim.verdict}] {claim.text}" if claim else (j.reason or "")))
        if r.ones > len(flagged):
            lines.append(f"  ... {r.ones - len(flagged)} more rows labelled 1")
        raise AssertionError("\n".join(lines))
    return r
