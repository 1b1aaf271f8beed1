"""How much the answers answer: the share with checkable content, and how much of a reference they cover.

    a = answer_rate(results)          # a.rate, a.ci, a.answered, a.scored, a.coverage
    drop = answer_drop(pairs, alpha=0.05)   # the gate's rule: did the candidate start saying less?

An answer with nothing checkable (a refusal, a hedge) is labelled 0, correctly: it states no
hallucination. So a bot that starts refusing lowers its hallucination rate. The answer rate,
printed beside every hallucination rate, shows it: the share of scored rows whose answer had at
least one checkable claim (or requirement). With a reference and the answer's text in the row
(`judgeflow run --with-inputs`), `coverage` is the mean share of the reference's content words and
numbers the answer contains ("precision is not faithfulness": a terse answer is precise and
uninformative). The gate fails when the candidate's answer rate drops significantly: an exact
one-sided sign test (scipy's binomtest) on the paired items that went answered -> silent against
silent -> answered, and the same on coverage where the rows carry it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel

from ..results import Judgment
from ..text import content_words, numbers
from .rates import pct, wilson_interval


def answered(j: Judgment) -> bool:
    """A scored row whose answer had something checkable (a claim or a requirement)."""
    return j.label is not None and bool(j.claims or j.requirements)


def reference_coverage(j: Judgment) -> float | None:
    """The share of the reference's content words and numbers found in the answer; None without both texts."""
    answer, reference = j.extra.get("answer"), j.extra.get("reference")
    if not isinstance(answer, str) or not isinstance(reference, str):
        return None
    wanted = content_words(reference) | numbers(reference)
    if not wanted:
        return None
    return len(wanted & (content_words(answer) | numbers(answer))) / len(wanted)


class AnswerRate(BaseModel):
    """One run's answer rate (on its scored rows) and reference coverage."""

    scored: int = 0
    answered: int = 0
    """Scored rows with at least one checkable claim or requirement."""
    rate: float | None = None
    ci: tuple[float, float] | None = None
    """Wilson interval of the answer rate at `level`."""
    level: float = 0.95
    covered: int = 0
    """Scored rows with a reference and an answer text, the rows `coverage` averages over."""
    coverage: float | None = None
    """Mean share of the reference's content words and numbers the answer contains."""


def answer_rate(results: Iterable[Judgment], *, level: float = 0.95) -> AnswerRate:
    """The answer rate and reference coverage of the scored rows of `results`."""
    out = AnswerRate(level=level)
    shares = []
    for j in results:
        if j.label is None:
            continue
        out.scored += 1
        out.answered += answered(j)
        c = reference_coverage(j)
        if c is not None:
            shares.append(c)
    if out.scored:
        out.rate = out.answered / out.scored
        out.ci = wilson_interval(out.answered, out.scored, level)
    if shares:
        out.covered, out.coverage = len(shares), sum(shares) / len(shares)
    return out


def answer_text(a: AnswerRate) -> str:
    """"answer rate 92.0% [86.1%, 95.6%] (184 of 200 scored); reference coverage 61.0% (200 rows)"."""
    if a.rate is None:
        return "answer rate: no scored rows"
    ci = f" [{pct(a.ci[0])}, {pct(a.ci[1])}]" if a.ci else ""
    cov = f"; reference coverage {pct(a.coverage)} ({a.covered} rows)" if a.coverage is not None else ""
    return f"answer rate {pct(a.rate)}{ci} ({a.answered} of {a.scored} scored answers checkable){cov}"


def answer_cell(a: AnswerRate | None) -> str:
    """Short, for a table beside the hallucination rate: "92.0% (184 of 200); covers 61.0%"."""
    if a is None or a.rate is None:
        return "-"
    return f"{pct(a.rate)} ({a.answered} of {a.scored})" + (f"; covers {pct(a.coverage)}" if a.coverage is not None else "")


def one_sided_p(worse: int, better: int) -> float:
    """Exact one-sided sign-test p that `worse` outnumbers `better` by more than chance (scipy binomtest)."""
    if worse + better == 0:
        return 1.0
    from scipy.stats import binomtest  # scipy comes with scikit-learn

    return float(binomtest(worse, worse + better, 0.5, alternative="greater").pvalue)


class AnswerDrop(BaseModel):
    """The gate's answer-rate rule: did the candidate answer fewer items, or cover less, than the baseline?"""

    lost: int = 0
    """Paired scored items answered in the baseline and silent (nothing checkable) in the candidate."""
    gained: int = 0
    p: float = 1.0
    less_covered: int = 0
    """Paired items whose answer covers less of the reference than the baseline's did."""
    more_covered: int = 0
    coverage_p: float = 1.0
    failed: bool = False
    text: str = ""


def answer_drop(pairs: Sequence[tuple[Judgment, Judgment]], *, alpha: float) -> AnswerDrop:
    """Compare answered / coverage item by item on the pairs (baseline, candidate) both runs scored."""
    out = AnswerDrop()
    for b, c in pairs:
        if b.label is None or c.label is None:
            continue
        out.lost += answered(b) and not answered(c)
        out.gained += answered(c) and not answered(b)
        cb, cc = reference_coverage(b), reference_coverage(c)
        if cb is not None and cc is not None and cb != cc:
            out.less_covered += cc < cb
            out.more_covered += cc > cb
    out.p, out.coverage_p = one_sided_p(out.lost, out.gained), one_sided_p(out.less_covered, out.more_covered)
    counts = (f"{out.lost} answered item(s) went silent (nothing checkable), {out.gained} went the other way; "
              f"one-sided exact p = {out.p:.3g}")
    if out.less_covered + out.more_covered:
        counts += (f"; {out.less_covered} cover less of the reference, {out.more_covered} more "
                   f"(p = {out.coverage_p:.3g})")
    out.failed = out.p < alpha or out.coverage_p < alpha
    if out.failed:
        out.text = (f"the answer rate dropped significantly: {counts} < alpha {alpha:g}: a bot that refuses or says "
                    "less lowers its hallucination rate without getting better")
    else:
        out.text = f"answer rate held: {counts}"
    return out
