"""The end-of-run summary: label counts, unscored and invalid rows, tokens, calls and estimated cost.

    tally = Tally()
    for j in results: tally.add(j)          # running totals, e.g. while the output is written
    summarize(tally, model=..., prices=..., elapsed=..., session=..., session_items=...)

Every function here takes a Tally or the results themselves (an iterable of Judgments).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..citations import Citations
from ..errors import OVER_BUDGET
from ..knowledge import decided_by, shares, shares_line
from ..results import Judgment, Usage
from .pricing import estimate_cost, price_for

#: "path:12: " or "line 12: " before a message, then "item 'q1' ": what differs from row to row
_WHERE = re.compile(r"^(?:.*?:\d+: |line \d+: )?(?:item '.*?' )?")
#: distinct invalid reasons a Tally keeps (memory does not grow with the run)
MAX_REASONS = 100


def invalid_reason(message: str) -> str:
    """An invalid row's message without its file, line and item id: rows failing alike share it."""
    return _WHERE.sub("", message, count=1)


#: (words in an unscored row's reason, the fix) for reasons whose message does not name one itself
_FIXES = (
    ("connection error", "cannot connect: check --base-url (host, port, scheme) and that the server is running"),
    ("connecterror", "cannot connect: check --base-url (host, port, scheme) and that the server is running"),
    ("timed out", "the endpoint was slow: raise --timeout or lower --concurrency"),
    ("timeout", "the endpoint was slow: raise --timeout or lower --concurrency"),
    ("judge output rejected", "the model's replies did not fit the schema: raise --reasks, try --structured json, "
                              "or a stronger model"),
    ("http 5", "the provider failed: --resume later"),
    ("internalservererror", "the provider failed: --resume later"),
)
#: what an unscored reason says when it already names its fix
_HAS_FIX = re.compile(r"\b(check|raise|lower|set|add|resume|pip install|try)\b", re.IGNORECASE)
#: characters of an unscored reason the summary keeps
_REASON_CHARS = 400


def unscored_reason(message: str) -> str:
    """An unscored row's reason as rows failing alike share it, with its fix when the message has none."""
    reason = invalid_reason(message).strip()
    if len(reason) > _REASON_CHARS:
        reason = reason[:_REASON_CHARS - 3] + "..."
    if _HAS_FIX.search(reason):
        return reason
    low = reason.lower()
    fix = next((fix for words, fix in _FIXES if words in low), None)
    return f"{reason}; fix: {fix}" if fix else reason


@dataclass
class Tally:
    """Running totals of a run's rows: everything the summary needs, in memory that does not grow
    with the run (except for panels and cascades, whose per-member summary keeps each row's votes)."""

    rows: int = 0
    judged: int = 0
    label_1: int = 0
    label_0: int = 0
    unscored: int = 0
    invalid: int = 0
    rate_limited: int = 0
    """Unscored rows given up on the provider's rate limit (their error says "rate limited")."""
    over_budget: int = 0
    """Unscored rows whose calls did not fit the spend cap (`--budget`; their error starts "budget")."""
    cached: int = 0
    answered: int = 0
    """Judged rows whose answer had something checkable (a claim or requirement): the answer rate's count."""
    usage: Usage = field(default_factory=Usage)
    invalid_reasons: Counter[str] = field(default_factory=Counter)
    """Why rows were invalid (reason -> rows; at most MAX_REASONS reasons)."""
    unscored_reasons: Counter[str] = field(default_factory=Counter)
    """Why rows were unscored (reason -> rows; at most MAX_REASONS reasons)."""
    votes: list[Judgment] = field(default_factory=list)
    """Panel and cascade rows, without claims or traces (their summary needs each row's members)."""
    labelled: Counter[tuple[int, int]] = field(default_factory=Counter)
    """(the input's label, the judge's label) -> scored rows that carried a label: the corrected rate's counts."""
    injected: int = 0
    """Rows made by `judgeflow inject` (known positives and their controls)."""
    citations: Citations = field(default_factory=lambda: Citations())
    """The answers' own citations, summed (`judgeflow.citations`): precision and recall per run."""
    decided: Counter[str] = field(default_factory=Counter)
    """Claims of judged rows by what settled them (`knowledge.decided`): reference, knowledge, evidence, unverifiable."""

    def add(self, j: Judgment) -> None:
        self.rows += 1
        if j.status == "judged":
            self.judged += 1
            self.label_1 += j.label == 1
            self.label_0 += j.label == 0
            self.answered += bool(j.claims or j.requirements)
            if j.human_label is not None and j.label is not None:
                self.labelled[(j.human_label, j.label)] += 1
            self.decided.update(decided_by(j.claims))
        self.injected += "injected" in j.extra
        self.unscored += j.status == "unscored"
        if j.status == "unscored":
            reason = unscored_reason(j.error or "no reason given")
            if reason in self.unscored_reasons or len(self.unscored_reasons) < MAX_REASONS:
                self.unscored_reasons[reason] += 1
        self.rate_limited += j.status == "unscored" and RATE_LIMITED in (j.error or "")
        self.over_budget += j.status == "unscored" and (j.error or "").startswith(OVER_BUDGET)
        if j.status == "invalid":
            self.invalid += 1
            reason = invalid_reason(j.error or "no reason given")
            if reason in self.invalid_reasons or len(self.invalid_reasons) < MAX_REASONS:
                self.invalid_reasons[reason] += 1
        self.cached += bool(j.cached)
        self.usage.add(j.usage)
        if j.status == "judged":
            self.citations.add(j.citations)
        if j.judges:
            self.votes.append(Judgment(
                id=j.id, label=j.label, status=j.status, agreement=j.agreement, cascade=j.cascade,
                judges=[v.model_copy(update={"claims": []}) for v in j.judges]))

    @classmethod
    def of(cls, results: Tally | Iterable[Judgment]) -> Tally:
        if isinstance(results, Tally):
            return results
        tally = cls()
        for j in results:
            tally.add(j)
        return tally

#: a finished run exits 1 when more than this share of its rows is unscored. With a working provider
#: unscored rows are rare (none in benchmarks/quotas.py; a judge that now and then breaks the schema
#: after its re-asks: a percent or so), so a tenth of the rows missing means something systematic
#: (a limit, an outage, a prompt the model refuses) that a user must hear about.
DEFAULT_MAX_UNSCORED = 0.1
#: the words that start the reason of a row given up on the provider's rate limit (limits.RateLimited)
RATE_LIMITED = "rate limited"


def run_failure(results: Tally | Iterable[Judgment], max_unscored: float) -> str | None:
    """Why a finished run is not a success (it judged nothing, or too many rows are unscored), else None."""
    t = Tally.of(results)
    if t.over_budget:  # rows the spend cap left unjudged: the run did not finish; --resume judges them
        return (f"stopped at --budget: {t.over_budget} of {t.rows} rows unscored (not sent); resume them, with a "
                "larger --budget if needed (a budget caps each invocation)")
    if not t.judged:
        if not t.rows:
            return "nothing was judged: no rows"
        return f"nothing was judged: {t.invalid} of {t.rows} rows are invalid, {t.rows - t.invalid} unscored"
    if t.rate_limited:  # rows lost to the limit are never a success: --resume judges them
        return (f"{t.rate_limited} items unscored: rate limited; lower --concurrency, raise --max-wait, "
                "or --resume later")
    if t.unscored / t.rows > max_unscored:
        return f"{t.unscored} of {t.rows} rows are unscored (more than --max-unscored {max_unscored:g})"
    return None


def reasoning_note(total: Usage) -> str:
    """What the tokens line says of reasoning: the count the provider reported, or that a thinking model's
    provider gave none (its thinking is in the output tokens, never estimated, never shown as 0)."""
    if total.reasoning_unreported:
        counted = f"{total.reasoning_tokens:,} reported; " if total.reasoning_tokens else ""
        return f" (reasoning: {counted}reasoning tokens not reported by the provider for " \
               f"{total.reasoning_unreported:,} calls, counted in out)"
    return f" (reasoning {total.reasoning_tokens:,})" if total.reasoning_tokens else ""


def summarize(results: Tally | Iterable[Judgment], *, model: str, prices: Any, elapsed: float, session: Usage,
              session_items: int) -> list[str]:
    """The end-of-run summary lines: labels, unscored, tokens and estimated cost."""
    t = Tally.of(results)
    total = t.usage
    labels = ", ".join(f"label {k}: {n}" for k, n in ((1, t.label_1), (0, t.label_0)) if n)
    lines = [
        f"{t.rows} rows: {labels or 'no 1/0 labels'}; unscored: {t.unscored}; invalid: {t.invalid}"
        + (f"; served from cache: {t.cached}" if t.cached else ""),
        *([f"most common invalid reason ({n} of {t.invalid} invalid rows): {reason}"
           for reason, n in t.invalid_reasons.most_common(1)]),
        *top_unscored(t),
        f"tokens in {total.input_tokens:,}, out {total.output_tokens:,}"
        + reasoning_note(total) + f" in {total.calls:,} calls"
        + (f" ({session.calls:,} calls for {session_items} items this session, {elapsed:.1f}s, "
           f"{session_items / elapsed:.1f} items/s)" if elapsed > 0 and session_items else ""),
    ]
    if t.votes:  # a panel or cascade: each member at its own price
        from .panel_summary import summary_lines

        return lines + summary_lines(t.votes, prices)
    cost = estimate_cost(model, total, prices=prices)
    if model.startswith("baseline/"):
        lines.append("cost: none (offline judge, no model calls)")
    elif cost is None:
        lines.append(f"estimated cost: unknown (no price for {model}; add it with --prices FILE)")
    else:
        source = price.source if (price := price_for(model, prices)) else "?"
        lines.append(f"estimated cost: ${cost:,.4f} at list prices for {model} (prices: {source})")
    return lines


def top_unscored(t: Tally) -> list[str]:
    """The most common reason rows were unscored, with its fix, whatever the row count."""
    if not t.unscored_reasons:
        return []
    reason, n = t.unscored_reasons.most_common(1)[0]
    return [f"most common unscored reason ({n} of {t.unscored} unscored rows): {reason}"]


def citation_line(t: Tally) -> list[str]:
    """Citation precision and recall over the answers that cite their sources (none: no line)."""
    c = t.citations.summary()
    if c is None:
        return []
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.0%}"
    return [f"citations: precision {pct(c['precision'])} ({c['supporting']} of {c['pairs']} claim-source pairs hold "
            f"the claim), recall {pct(c['recall'])} ({c['supported_claims']} of {c['claims']} claims supported by "
            f"their citation) in {c['answers']} answers that cite; fabricated {c['fabricated']}, misattributed "
            f"{c['misattributed']}"]


def decided_line(t: Tally) -> list[str]:
    """What settled the claims (reference, knowledge, evidence, unverifiable), when anything but the
    reference did: the share of verdicts that rest on no quote."""
    if not t.decided or set(+t.decided) <= {"reference"}:
        return []
    return [shares_line(t.decided)]


def answer_line(t: Tally) -> list[str]:
    """The answer rate beside the labels: a refusal is a 0 that says nothing (`calibration/answer_rate.py`)."""
    if not t.judged:
        return []
    silent = t.judged - t.answered
    return [f"answer rate: {t.answered} of {t.judged} judged answers had something checkable"
            + (f" ({silent} refused or stated nothing: each a 0 that says nothing)" if silent else "")]


def summary_json(results: Tally | Iterable[Judgment], *, run_id: str, model: str, output: Path, prices: Any,
                 elapsed: float, session_items: int) -> dict[str, Any]:
    """The end-of-run summary as data (`run --json`): the same numbers as `summarize`."""
    t = Tally.of(results)
    total = t.usage
    return {
        "run_id": run_id, "model": model, "output": str(output), "rows": t.rows,
        "label_1": t.label_1, "label_0": t.label_0, "unscored": t.unscored, "invalid": t.invalid,
        "cached": t.cached,
        "unscored_reason": t.unscored_reasons.most_common(1)[0][0] if t.unscored_reasons else None,
        "calls": total.calls, "input_tokens": total.input_tokens, "output_tokens": total.output_tokens,
        "reasoning_tokens": total.reasoning_tokens,
        "cost_usd": None if model.startswith("baseline/") else estimate_cost(model, total, prices=prices),
        "priced_by": None if model.startswith("baseline/") else getattr(price_for(model, prices), "source", None),
        "seconds": round(elapsed, 3), "items_this_session": session_items,
        "rate_limited": t.rate_limited, "rate_limits": limit_stats(),
        "citations": t.citations.summary(),
        "decided_by": shares(t.decided), "claims": sum(t.decided.values()),
    }


def limit_stats() -> list[dict[str, Any]]:
    """The rate limits met this process (no provider SDK is imported for it)."""
    from ..backends.limits import stats

    return stats()
