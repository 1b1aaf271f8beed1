"""Gate a bot in CI: did its hallucination rate really get worse than the baseline's?

    result = gate("candidate.jsonl", baseline="baseline.jsonl", alpha=0.05, max_rate=0.1)
    result.passed, result.rule, result.got_worse, result.mcnemar_p, result.exit_code

Both runs are the same judge on answers to the same questions (paired by id): the baseline from
the main branch, the candidate from the change. Each run's rate gets a Wilson interval; the paired
test is McNemar's exact test on the items whose label changed (`comparison.mcnemar_exact`). The gate
fails (exit 1) when

- `max_unscored`: a run has more unscored and invalid rows than this share (its rate stands on too little;
  a row invalid in both runs is compared as invalid, the same input fault on both sides, and not counted),
- `paired`: the candidate went 0 -> 1 on more items than 1 -> 0 and the one-sided exact McNemar p
  for "worse" is below `alpha` (`gate_power.worse_p`), or
- `max_rate`: the candidate's rate is above `max_rate` and so is its interval's lower bound;

and passes (exit 0) otherwise: a flip or two in hundreds is noise, not a regression. Runs that
cannot be compared (other items, criterion or judge model) raise RunsDiffer (exit 2). Rows that
carry repeats (`judgeflow run --repeats K`) mark items whose verdict flips between the judge's own
repeats as unstable. The intervals are at level 1 - alpha. Every gate states the regression its
paired items could catch with 80% power (`gate_power`), and with `detect` the items a named one needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..errors import ConfigError
from ..results import ClaimResult, Judgment
from .agreement import deciding_claim
from .answer_rate import AnswerDrop, AnswerRate, answer_drop, answer_rate
from .comparison import mcnemar_exact
from .gate_corrected import GateCorrection, corrected_gate
from .gate_power import detectable, is_worse, noise_of, power_text, worse_p
from .gate_stability import judge_unstable, set_aside, stability_note
from .inject_marks import check_real
from .labels import Label, read_labels, read_run
from .pairing import paired
from .rates import RunRate, pct, rate_text, run_rate

Rule = Literal["max_unscored", "paired", "max_rate", "answer_rate"]
#: the default share of unscored and invalid rows a run may have before the gate fails
DEFAULT_MAX_UNSCORED = 0.05


class Flip(BaseModel):
    """An item whose label changed between the baseline and the candidate."""

    id: str
    baseline: Label
    candidate: Label
    claim: ClaimResult | None = None
    """The deciding claim of the run that says 1 (the candidate for 0 -> 1, the baseline for 1 -> 0)."""
    reason: str | None = None
    unstable: bool = False
    """The judge's own repeats disagree on this item in either run: the flip may be the judge's noise."""


class RuleOutcome(BaseModel):
    """One rule of the gate and what it found."""

    rule: Rule
    failed: bool
    text: str


class GateResult(BaseModel):
    """The candidate run against the baseline run, and the gate's decision."""

    baseline: RunRate
    candidate: RunRate
    paired: int = 0
    """Items scored (0/1) in both runs: the paired test's items."""
    not_paired: int = 0
    """Items unscored or invalid in either run (counted in each run's row counts, not in the test)."""
    invalid_both: int = 0
    """Items invalid in both runs: compared as invalid (the input's own fault, the same on both sides),
    so they count against neither run's `max_unscored`; an item invalid in one run only still does."""
    got_worse: list[Flip] = Field(default_factory=list)
    """0 -> 1: a hallucination found in the candidate's answer but not in the baseline's."""
    got_better: list[Flip] = Field(default_factory=list)
    """1 -> 0."""
    mcnemar_p: float = 1.0
    """McNemar's exact two-sided p on the 0 -> 1 and 1 -> 0 counts (shown; the rule uses `worse_p`)."""
    worse_p: float = 1.0
    """The one-sided exact McNemar p for "worse" (the paired rule's test, at `alpha`)."""
    detectable: float | None = None
    """The regression (a share) the paired items catch with 80% power at the judge's flip rate."""
    detect: float | None = None
    """A regression the caller named (`--detect`), for `power`'s "items needed"."""
    power: str = ""
    """The gate's power in a sentence: what it could catch, and what `detect` needs."""
    alpha: float = 0.05
    max_rate: float | None = None
    max_unscored: float = DEFAULT_MAX_UNSCORED
    rules: list[RuleOutcome] = Field(default_factory=list)
    passed: bool = True
    rule: Rule | None = None
    """The rule that failed the gate (the first that did), None when it passed."""
    unstable: list[str] = Field(default_factory=list)
    """Ids whose verdict flips between the judge's repeats (rows made with --repeats)."""
    repeats: bool = False
    """Whether either run carried repeats (so instability could be seen at all)."""
    verdict: str = ""
    baseline_answers: AnswerRate | None = None
    """The baseline's answer rate (answers with checkable content) and reference coverage."""
    candidate_answers: AnswerRate | None = None
    unstable_flips: list[Flip] = Field(default_factory=list)
    """Flips on unstable items: set aside, not counted as regressions or improvements (`gate_stability.py`)."""
    answers: AnswerDrop | None = None
    """The answer-rate rule's paired counts: a bot that starts refusing must not pass."""
    corrected: GateCorrection | None = None
    """With labels of the baseline's answers: both rates corrected for the judge's measured false alarms and
    misses, and whether a regression could be the judge's (`gate_corrected.py`); it informs, it does not decide."""

    @property
    def exit_code(self) -> int:
        """0 passed, 1 failed (2, runs that cannot be compared, is raised as RunsDiffer)."""
        return 0 if self.passed else 1


def _flip(b: Judgment, c: Judgment, unstable: set[str]) -> Flip:
    says_one = c if c.label == 1 else b
    return Flip(id=c.id, baseline=b.label or 0, candidate=c.label or 0, claim=deciding_claim(says_one),
                reason=says_one.reason, unstable=c.id in unstable)


def gate(
    candidate: Iterable[Judgment] | str | Path,
    baseline: Iterable[Judgment] | str | Path,
    *,
    alpha: float = 0.05,
    max_rate: float | None = None,
    max_unscored: float = DEFAULT_MAX_UNSCORED,
    store: str | Path | None = None,
    stability: Sequence[Iterable[Judgment] | str | Path] | None = None,
    repeats: int | None = None,
    detect: float | None = None,
    labels: str | Path | None = None,
) -> GateResult:
    """Decide whether the candidate run is worse than the baseline run.

    Args:
        candidate: the changed bot's results (Judgments, a results file, or a run id in `store`).
        baseline: the reference results on the same questions, with the same judge.
        alpha: significance level of the paired test; the rate intervals are at 1 - alpha.
        max_rate: an absolute ceiling on the candidate's rate (fails only when the interval's lower
            bound is above it); None: no ceiling.
        max_unscored: the largest share of a run's rows that may be unscored or invalid.
        store: the run store that run ids are looked up in.
        stability: the candidate's answers judged again (results, files or run ids): items whose
            label differs are unstable, and flips on them are set aside (`gate_stability.py`).
        repeats: check that every scored row carries at least this many repeats (`run --repeats K`).
        detect: a regression (a share, e.g. 0.05) to state the paired items needed to catch it.
        labels: people's labels of the baseline's answers: both rates corrected for the judge's errors.

    Raises:
        RunsDiffer: the runs cannot be compared (other items, criterion or judge model).
        ConfigError: an alpha, max_rate or max_unscored outside its range; a run id not found.
    """
    _check_args(alpha, max_rate, max_unscored)
    rows_c, name_c = read_run(candidate, store=store)
    rows_b, name_b = read_run(baseline, store=store)
    for rows, name in ((rows_c, name_c), (rows_b, name_b)):
        check_real(rows, name)
    if name_c == name_b == "results":
        name_c, name_b = "candidate", "baseline"
    pairs = paired(rows_b, rows_c, name_b, name_c)
    level = 1 - alpha
    result = GateResult(baseline=run_rate(rows_b, name=name_b, level=level),
                        candidate=run_rate(rows_c, name=name_c, level=level),
                        alpha=alpha, max_rate=max_rate, max_unscored=max_unscored,
                        repeats=any(j.repeats for j in (*rows_b, *rows_c)))
    unstable = judge_unstable(rows_b, rows_c, (name_b, name_c), stability=stability, repeats=repeats, store=store)
    result.repeats = result.repeats or bool(stability)
    result.unstable = sorted(unstable)
    _count_flips(result, pairs, unstable)
    result.mcnemar_p = mcnemar_exact(len(result.got_worse), len(result.got_better))
    _add_power(result, detect)
    result.rules = [_unscored_rule(result), _paired_rule(result), _rate_rule(result),
                    _answer_rule(result, rows_b, rows_c, pairs, level)]
    failed = [r for r in result.rules if r.failed]
    result.passed = not failed
    result.rule = failed[0].rule if failed else None
    result.corrected = _corrected(result, rows_b, rows_c, labels, level)
    result.verdict = verdict(result)
    return result


def _corrected(r: GateResult, rows_b: list[Judgment], rows_c: list[Judgment], labels: str | Path | None,
               level: float) -> GateCorrection | None:
    """Both rates corrected for the judge's errors measured on labels of the baseline's answers (None without)."""
    if labels is None:
        return None
    return corrected_gate(rows_b, rows_c, read_labels(labels), worse=len(r.got_worse), better=len(r.got_better),
                          paired=r.paired, level=level)


def _count_flips(result: GateResult, pairs: Any, unstable: set[str]) -> None:
    """Pairs scored on both sides: each flip as worse or better; flips on unstable items set aside."""
    for b, c in pairs:
        result.invalid_both += b.status == c.status == "invalid"
        if b.label is None or c.label is None:
            result.not_paired += 1
            continue
        result.paired += 1
        if b.label != c.label:
            (result.got_worse if c.label == 1 else result.got_better).append(_flip(b, c, unstable))
    set_aside(result)


def _add_power(r: GateResult, detect: float | None) -> None:
    """The one-sided p, and what these paired items could catch (and need, for `detect`)."""
    worse, better = len(r.got_worse), len(r.got_better)
    r.worse_p, r.detect = worse_p(worse, better), detect
    noise = noise_of(worse, better, r.paired)
    r.detectable = detectable(r.paired, noise, r.alpha) if r.paired else None
    r.power = power_text(r.paired, noise, r.alpha, detect) if r.paired else "no paired items: nothing could be caught"


def _check_args(alpha: float, max_rate: float | None, max_unscored: float) -> None:
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    if max_rate is not None and not 0 <= max_rate <= 1:
        raise ConfigError(f"max_rate is a share between 0 and 1 (e.g. 0.1 for 10%), got {max_rate}")
    if not 0 <= max_unscored <= 1:
        raise ConfigError(f"max_unscored is a share between 0 and 1, got {max_unscored}")


def _unscored_rule(r: GateResult) -> RuleOutcome:
    def share(s: RunRate) -> float:  # rows invalid in both runs are compared as invalid, not held against a run
        return (s.not_scored - r.invalid_both) / s.rows if s.rows else 0.0

    over = [s for s in (r.baseline, r.candidate) if share(s) > r.max_unscored]
    parts = [f"{s.name}: {s.unscored} unscored, {s.invalid - r.invalid_both} invalid of {s.rows} rows ({pct(share(s))})"
             for s in (r.baseline, r.candidate)]
    limit = f"--max-unscored {pct(r.max_unscored)}"
    if r.invalid_both:
        limit += f"; {r.invalid_both} row(s) invalid in both runs compared as invalid, not counted"
    if over:
        return RuleOutcome(rule="max_unscored", failed=True,
                           text=f"too many rows not scored ({'; '.join(parts)}; above {limit}): the rates stand on "
                                "too little; re-judge the unscored rows (`judgeflow run ... --resume`) or fix the invalid ones")
    return RuleOutcome(rule="max_unscored", failed=False, text=f"rows not scored within {limit} ({'; '.join(parts)})")


def _paired_rule(r: GateResult) -> RuleOutcome:
    worse, better = len(r.got_worse), len(r.got_better)
    counts = (f"{worse} item(s) went 0 -> 1, {better} went 1 -> 0 of {r.paired} paired; one-sided exact McNemar "
              f"p = {r.worse_p:.3g}")
    if is_worse(worse, better, r.alpha):
        return RuleOutcome(rule="paired", failed=True,
                           text=f"significantly worse: {counts} < alpha {r.alpha:g}")
    if worse > better:
        return RuleOutcome(rule="paired", failed=False, text=f"not significantly worse: {counts} >= alpha {r.alpha:g} (noise)")
    return RuleOutcome(rule="paired", failed=False, text=f"not worse: {counts}")


def _rate_rule(r: GateResult) -> RuleOutcome:
    c = r.candidate
    if r.max_rate is None:
        return RuleOutcome(rule="max_rate", failed=False, text="no --max-rate set")
    level = f"{r.candidate.level:.0%} interval"
    if c.rate is None or c.ci is None:
        return RuleOutcome(rule="max_rate", failed=False, text="no scored rows to hold against --max-rate")
    if c.ci[0] > r.max_rate:
        return RuleOutcome(rule="max_rate", failed=True,
                           text=f"above --max-rate {pct(r.max_rate)}: the candidate's rate is {rate_text(c)}, and "
                                f"even the lower bound of its {level} ({pct(c.ci[0])}) is above the limit")
    if c.rate > r.max_rate:
        return RuleOutcome(rule="max_rate", failed=False,
                           text=f"rate {pct(c.rate)} is above --max-rate {pct(r.max_rate)}, but its {level} "
                                f"reaches down to {pct(c.ci[0])}: not clearly above (label more items to tell)")
    return RuleOutcome(rule="max_rate", failed=False, text=f"rate {rate_text(c)} within --max-rate {pct(r.max_rate)}")


def _answer_rule(r: GateResult, rows_b: list[Judgment], rows_c: list[Judgment],
                 pairs: list[tuple[Judgment, Judgment]], level: float) -> RuleOutcome:
    """Fails when the candidate answers (or covers) significantly less than the baseline (`answer_rate.py`)."""
    r.baseline_answers, r.candidate_answers = answer_rate(rows_b, level=level), answer_rate(rows_c, level=level)
    r.answers = answer_drop(pairs, alpha=r.alpha)
    return RuleOutcome(rule="answer_rate", failed=r.answers.failed, text=r.answers.text)


def verdict(r: GateResult) -> str:
    """The decision in one or two sentences, naming the rule that decided it."""
    if r.passed:
        head = (f"PASS: hallucination rate {pct(r.baseline.rate)} -> {pct(r.candidate.rate)}; "
                f"{len(r.got_worse)} item(s) got worse, {len(r.got_better)} better (McNemar p = {r.mcnemar_p:.3g}).")
    else:
        deciding = next(x for x in r.rules if x.failed)
        head = f"FAIL ({deciding.rule}): {deciding.text}."
    judge = " " + r.corrected.judge_note if r.corrected and r.corrected.judge_note else ""
    return head + judge + stability_note(r)
