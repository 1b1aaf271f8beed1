"""The typed records exchanged with the judge model, with validators that make Instructor re-ask.

`Claims` is what decomposition returns; `ClaimChecks` is what checking returns for ALL claims of
an item in one call. Its validator (given the expected claim ids, the criterion's verdicts and
bases in the validation context) rejects a gap, a duplicate, or a verdict outside the
vocabulary, so Instructor sends the error back to the model and asks again.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from .validation import exactly_once, repeated, validation_context

PLAIN_ID = _ID = re.compile(r"[A-Za-z0-9_.-]{1,24}")
"""What a claim or requirement id must look like: it is echoed into the next prompt as id="..."."""


class Claim(BaseModel):
    """One short, self-contained claim taken from the answer."""

    id: str = Field(description="Claim id: c1, c2, ...")
    text: str = Field(description="The claim, in the answer's own language.")
    kind: str = Field(default="other", description="The kind of fact the claim states.")

    @field_validator("text")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("claim text must not be empty")
        return v.strip()

    @field_validator("id")
    @classmethod
    def _plain_id(cls, v: str) -> str:
        # ids go back into the check prompt as <claim id="...">: keep them plain tokens
        if not _ID.fullmatch(v.strip()):
            raise ValueError(f"claim id {v[:40]!r} must be a short plain token like c1, c2, ...")
        return v.strip()


class Claims(BaseModel):
    """The answer split into claims. Empty for a refusal or an answer with no factual content."""

    claims: list[Claim] = Field(description="The claims; an empty list if the answer makes none.")
    """Required, so a reply in the wrong shape is re-asked rather than read as "no claims" (label 0)."""

    @model_validator(mode="after")
    def _unique_ids(self, info: ValidationInfo) -> Claims:
        ids = [c.id for c in self.claims]
        dupes = repeated(ids)
        if dupes:
            raise ValueError(f"claim ids must be unique; repeated: {dupes}")
        kinds = validation_context(info).get("fact_kinds")
        if kinds:
            for c in self.claims:
                if c.kind not in kinds:
                    c.kind = "other"
        return self


class ClaimCheck(BaseModel):
    """The verdict on one claim, with what it rests on.

    Evidence and reason come before the verdict on purpose: models write fields in schema order,
    so the judge quotes and reasons first and decides last.
    """

    claim_id: str = Field(description="The id of the claim being checked.")
    evidence: str = Field(default="", description="A short verbatim quote from the evidence, or empty.")
    reason: str = Field(default="", description="One sentence explaining the verdict.")
    basis: str = Field(description="What settled the verdict: reference, source, spec, knowledge or none.")
    verdict: str = Field(description="One verdict from the criterion's list.")


def _validate_checks(checks: list[Any], context: dict[str, Any], id_attr: str) -> None:
    verdicts = context.get("verdicts")
    bases = context.get("bases")
    problems: list[str] = []
    for c in checks:
        if verdicts and c.verdict not in verdicts:
            problems.append(f"{getattr(c, id_attr)}: verdict {c.verdict!r} is not one of {list(verdicts)}")
        if bases and c.basis not in bases:
            problems.append(f"{getattr(c, id_attr)}: basis {c.basis!r} is not one of {list(bases)}")
    expected = context.get("claim_ids")
    if expected is not None:
        problems += exactly_once(expected, [getattr(c, id_attr) for c in checks], "claim", "verdict")
    if problems:
        raise ValueError("; ".join(problems))


class ClaimChecks(BaseModel):
    """Verdicts for every claim of one item: each claim id exactly once."""

    checks: list[ClaimCheck]

    @model_validator(mode="after")
    def _complete(self, info: ValidationInfo) -> ClaimChecks:
        _validate_checks(self.checks, validation_context(info), "claim_id")
        return self


class JudgedClaim(BaseModel):
    """A claim with its verdict: the one-call (`single`) strategy's record (verdict last, as in ClaimCheck)."""

    id: str = Field(description="Claim id: c1, c2, ...")
    text: str = Field(description="The claim, in the answer's own language.")
    kind: str = Field(default="other", description="The kind of fact the claim states.")
    evidence: str = Field(default="", description="A short verbatim quote from the evidence, or empty.")
    reason: str = Field(default="", description="One sentence explaining the verdict.")
    basis: str = Field(description="What settled the verdict.")
    verdict: str = Field(description="One verdict from the criterion's list.")


class SingleJudgment(BaseModel):
    """The answer's claims, each with its verdict, from one call."""

    claims: list[JudgedClaim] = Field(description="The claims with verdicts; an empty list if the answer makes none.")
    """Required, for the same reason as `Claims.claims`."""

    @model_validator(mode="after")
    def _valid(self, info: ValidationInfo) -> SingleJudgment:
        ctx = dict(validation_context(info))
        ids = [c.id for c in self.claims]
        dupes = repeated(ids)
        if dupes:
            raise ValueError(f"claim ids must be unique; repeated: {dupes}")
        ctx.pop("claim_ids", None)
        _validate_checks(self.claims, ctx, "id")
        return self

    def split(self) -> tuple[list[Claim], list[ClaimCheck]]:
        claims = [Claim(id=c.id, text=c.text, kind=c.kind) for c in self.claims]
        checks = [
            ClaimCheck(claim_id=c.id, verdict=c.verdict, basis=c.basis, evidence=c.evidence, reason=c.reason)
            for c in self.claims
        ]
        return claims, checks
