"""The gate's result as Markdown for a CI job summary or a pull-request comment.

    text = gate_markdown(result)          # a few KB however many items flipped

GitHub shows `$GITHUB_STEP_SUMMARY` on the run's page and accepts up to 65,536 characters in a
comment; the lists of flipped items are cut at `MAX_ROWS` each and every cell at `MAX_CELL`
characters, so the text stays PR-comment sized. Claim texts come from the judged answers and the
judge: untrusted, so they are neutralised (HTML escaped, table pipes and backticks defused, no
@-mentions, one line).
"""

from __future__ import annotations

import html
import re

from .answer_rate import AnswerRate, answer_cell
from .gate import Flip, GateResult
from .rates import RunRate, rate_text

MAX_ROWS = 15
MAX_CELL = 140
_SPACE = re.compile(r"\s+")


def cell(text: str | None, limit: int = MAX_CELL) -> str:
    """Untrusted text as one safe Markdown table cell."""
    s = _SPACE.sub(" ", text or "").strip()
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    s = html.escape(s, quote=False).replace("|", "\\|").replace("`", "'").replace("@", "@\u200b")
    return s.replace("[", "\\[").replace("]", "\\]")


def _run_row(role: str, r: RunRate, a: AnswerRate | None = None) -> str:
    calls = f"{r.calls:,}" + (f" ({r.cached} rows from cache)" if r.cached else "")
    return (f"| {role} | {cell(r.name, 60)} | {rate_text(r)} | {answer_cell(a)} | {r.unscored} | {r.invalid} | {r.rows} | "
            f"{cell(', '.join(r.models), 60)} | {calls} |")


def _flips(title: str, flips: list[Flip]) -> list[str]:
    if not flips:
        return []
    lines = ["", f"<details><summary>{title}: {len(flips)}</summary>", "",
             "| id | deciding claim (of the run that says 1) | unstable |", "| --- | --- | --- |"]
    for f in flips[:MAX_ROWS]:
        why = f"{f.claim.verdict}: {f.claim.text}" if f.claim else (f.reason or "")
        lines.append(f"| {cell(f.id, 60)} | {cell(why)} | {'yes' if f.unstable else ''} |")
    if len(flips) > MAX_ROWS:
        lines.append(f"| … | {len(flips) - MAX_ROWS} more (see `judgeflow gate --json`) | |")
    return [*lines, "", "</details>"]


def gate_markdown(r: GateResult) -> str:
    """The gate's decision, both rates, the paired test, each rule and the flipped items."""
    mark = "✅ pass" if r.passed else f"❌ fail ({r.rule})"
    level = f"{r.candidate.level:.0%}"
    lines = [
        f"### judgeflow gate: {mark}", "",
        cell(r.verdict, 600), "",
        f"| run | results | hallucination rate [{level} Wilson] | answer rate | unscored | invalid | rows | judge "
        "| model calls |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        _run_row("baseline", r.baseline, r.baseline_answers), _run_row("candidate", r.candidate, r.candidate_answers), "",
        (f"Paired on {r.paired} items scored in both runs ({r.not_paired} left out: unscored or invalid in a run): "
         f"**{len(r.got_worse)}** went 0 → 1, **{len(r.got_better)}** went 1 → 0; McNemar exact p = {r.mcnemar_p:.3g} "
         f"(alpha {r.alpha:g})."), "",
    ]
    lines += [f"- {'**failed**' if o.failed else 'ok'} `{o.rule}`: {cell(o.text, 400)}" for o in r.rules]
    lines.append(f"- power: {cell(r.power, 400)}")
    if r.corrected is not None:
        lines.append(f"- judge: {cell(r.corrected.text, 700)}")
    if r.repeats:
        lines.append(f"- judge stability: {len(r.unstable)} item(s) flip between the judge's own verdicts; "
                     f"{len(r.unstable_flips)} flip(s) on them set aside, not counted as regressions")
    lines += _flips("Went 0 → 1 (a hallucination found only in the candidate)", r.got_worse)
    lines += _flips("Went 1 → 0", r.got_better)
    lines += _flips("Flipped on unstable items (set aside)", r.unstable_flips)
    lines += ["", ("<sub>Rate: the share of scored rows labelled 1 (a hallucination found); answer rate: the share "
                   "of scored answers with something checkable (a refusal states nothing, so it cannot hallucinate). "
                   "The gate makes no "
                   "model calls; the calls above are what judging each run cost (answers unchanged since an earlier "
                   "run are served from the response cache).</sub>"), ""]
    return "\n".join(lines)
