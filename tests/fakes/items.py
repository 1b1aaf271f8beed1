"""The Moscow example the tests judge again and again: "When was Moscow founded?" answered with the
wrong year (1247; the reference and the source say 1147), as an item row and as the scripted
Claims/ClaimChecks replies for it. A test changes a field by passing it: `moscow(answer=MOSCOW_RIGHT)`.
"""

from __future__ import annotations

from typing import Any

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims

MOSCOW_QUESTION = "When was Moscow founded?"
MOSCOW_WRONG = "Moscow was founded in 1247."
MOSCOW_RIGHT = "Moscow was founded in 1147."
MOSCOW_REFERENCE = "1147, by Yuri Dolgorukiy"
MOSCOW_SOURCE = ["Moscow was founded in 1147 by Yuri Dolgorukiy."]
# the two-fact variant: the year is wrong, the founder right
MOSCOW_WHO_QUESTION = "When was Moscow founded and by whom?"
MOSCOW_WHO_WRONG = "Moscow was founded in 1247 by Yuri Dolgorukiy."
MOSCOW_FOUNDER = "Moscow was founded by Yuri Dolgorukiy."


def moscow(**changes: Any) -> dict[str, Any]:
    """An item row (factual: question, wrong answer, reference), with `changes` applied."""
    return {"id": "moscow", "question": MOSCOW_QUESTION, "answer": MOSCOW_WRONG, "reference": MOSCOW_REFERENCE,
            **changes}


def moscow_by_whom(**changes: Any) -> dict[str, Any]:
    """The two-fact item: "When ... and by whom?" answered with the wrong year and the right founder."""
    return moscow(**{"question": MOSCOW_WHO_QUESTION, "answer": MOSCOW_WHO_WRONG, **changes})


def moscow_claims(text: str = MOSCOW_WRONG, *, founder: bool = False) -> Claims:
    """The decompose reply: c1, the date claim `text`; with `founder`, c2 the founder's name too."""
    claims = [Claim(id="c1", text=text, kind="date")]
    if founder:
        claims.append(Claim(id="c2", text=MOSCOW_FOUNDER, kind="name"))
    return Claims(claims=claims)


def moscow_checks(verdict: str = "contradicted", *, basis: str = "reference", evidence: str = "1147",
                  reason: str = "", founder: bool = False) -> ClaimChecks:
    """The check reply: `verdict` on c1; with `founder`, c2 (the founder) supported by the reference."""
    checks = [ClaimCheck(claim_id="c1", verdict=verdict, basis=basis, evidence=evidence, reason=reason)]
    if founder:
        checks.append(ClaimCheck(claim_id="c2", verdict="supported", basis="reference",
                                 evidence="by Yuri Dolgorukiy", reason="same"))
    return ClaimChecks(checks=checks)
