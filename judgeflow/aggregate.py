"""Pure aggregation: claim verdicts (and requirement statuses) -> 1 / 0 by rule, in code, not by the model.

The rule: label 1 iff any claim's verdict is one of the criterion's error verdicts, or (with
requirement coverage) any requirement is not met. An answer with no checkable claims (a refusal,
a hedge) is 0; no claims for an answer that states something checkable is unscored, never a 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from .criteria import Criterion
from .details import empty_reason
from .quotes import CITATION, QUOTES, quote_in
from .results import ClaimResult, Judgment, RequirementResult
from .schemas import Claim, ClaimCheck

Label = Literal[0, 1] | None


def merge(claims: Sequence[Claim], checks: Sequence[ClaimCheck], criterion: Criterion) -> list[ClaimResult]:
    """Join claims with their checks (by id) into result records."""
    by_id = {c.claim_id: c for c in checks}
    out = []
    for claim in claims:
        check = by_id.get(claim.id)
        out.append(
            ClaimResult(
                id=claim.id,
                text=claim.text,
                kind=claim.kind,
                quote=claim.quote,
                verdict=check.verdict if check else None,
                error=bool(check and check.verdict in criterion.error_verdicts),
                basis=check.basis if check else None,
                evidence=check.evidence if check else "",
                reason=check.reason if check else "",
            )
        )
    return out


def aggregate(claims: Sequence[ClaimResult], criterion: Criterion, *,
              answer: str | None = None) -> tuple[Literal[0, 1] | None, str]:
    """Return (label, reason). None if any claim is left without a verdict, or if there are no
    claims for an `answer` that states something checkable (an empty decomposition is not a pass)."""
    if not claims:
        empty = empty_reason(answer) if answer is not None else None
        if empty is not None:
            return None, empty
        return 0, "no checkable claims in the answer (e.g. a refusal or a hedge)"
    unchecked = [c.id for c in claims if c.verdict is None]
    if unchecked:
        return None, f"claims {unchecked} have no verdict"
    errors = [c for c in claims if c.verdict in criterion.error_verdicts]
    if errors:
        first = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return 1, f"claim {first.id} fails (verdict {first.verdict}): {first.text}{more}"
    verdicts = ", ".join(sorted({c.verdict or "" for c in claims}))
    if len(claims) == 1:
        return 0, f"the one claim passes ({verdicts})"
    return 0, f"all {len(claims)} claims pass ({verdicts})"


def cover_label(label: Label, reason: str | None, requirements: Sequence[RequirementResult]) -> tuple[Label, str | None]:
    """The claims' (label, reason) with requirement coverage: 1 if a claim erred or a requirement is unmet.

    A claims label of None (a claim could not be checked) stays None: the judge could not decide.
    """
    unmet = [r for r in requirements if r.status == "not_met"]
    if unmet:
        names = "; ".join(f"{r.id} {r.text}" for r in unmet)
        why = f"requirement{'s' if len(unmet) > 1 else ''} not met: {names}"
        if label == 1:
            return 1, f"{reason}; {why}"
        if label == 0:
            return 1, why
        return label, reason
    if label == 0:
        met = [r for r in requirements if r.status == "met"]
        return 0, f"{reason}; {len(met)}/{len(requirements)} requirements met, none unmet"
    return label, reason


def combine(judgment: Judgment, requirements: list[RequirementResult]) -> Judgment:
    """Put requirement results on a spec judgment, with the label and reason `cover_label` gives."""
    label, reason = cover_label(judgment.label, judgment.reason, requirements)
    update: dict[str, Any] = {"requirements": requirements, "label": label, "reason": reason}
    return judgment.model_copy(update=update)


def verify_evidence(claims: Sequence[ClaimResult], evidence: dict[str, str | None]) -> list[ClaimResult]:
    """Mark whether each claim's evidence quote really occurs in the evidence it names.

    A judge that cites a quote its source does not contain is worth knowing about when auditing a
    verdict; this never changes a verdict or a label.

    Args:
        claims: merged claim results.
        evidence: basis name -> that evidence's text ("reference", "source", "spec").
    """
    out = []
    for c in claims:
        text = evidence.get(c.basis or "")
        quote = CITATION.sub("", c.evidence or "")
        found = quote_in(quote, text) if text and quote.strip().strip(QUOTES).strip() else None
        out.append(c.model_copy(update={"evidence_found": found}) if found is not None else c)
    return out

