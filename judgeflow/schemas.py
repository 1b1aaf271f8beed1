"""The typed records exchanged with the judge model, with validators that make Instructor re-ask.

`Claims` is what decomposition returns; `ClaimChecks` is what checking returns for ALL claims of
an item in one call. Its validator (given the expected claim ids, the criterion's verdicts and
bases in the validation context) rejects a gap, a duplicate, or a verdict outside the
vocabulary, so Instructor sends the error back to the model and asks again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from .validation import exactly_once, repeated, validation_context

PLAIN_ID = _ID = re.compile(r"[A-Za-z0-9_.-]{1,24}")
"""What a claim or requirement id must look like: it is echoed into the next prompt (`c1: text`)."""


class Claim(BaseModel):
    """One short, self-contained claim taken from the answer."""

    id: str = Field(description="Claim id: c1, c2, ...")
    text: str = Field(description="The claim, in the answer's own language.")
    kind: str = Field(default="other", description="The kind of fact the claim states.")
    quote: str = Field(
        default="", description="The words of the answer the claim comes from, copied exactly."
    )

    @field_validator("text")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("claim text must not be empty")
        return v.strip()

    @field_validator("id")
    @classmethod
    def _plain_id(cls, v: str) -> str:
        # ids go back into the check prompt as `c1: text` lines: keep them plain tokens
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
    evidence: str = Field(
        default="", description="A short verbatim quote from the evidence, or empty."
    )
    reason: str = Field(default="", description="One sentence explaining the verdict.")
    basis: str = Field(
        description="What settled the verdict: reference, source, spec, knowledge or none."
    )
    verdict: str = Field(description="One verdict from the criterion's list.")


def _validate_checks(checks: list[Any], context: dict[str, Any], id_attr: str) -> None:
    verdicts = context.get("verdicts")
    bases = context.get("bases")
    problems: list[str] = []
    for c in checks:
        if verdicts and c.verdict not in verdicts:
            problems.append(
                f"{getattr(c, id_attr)}: verdict {c.verdict!r} is not one of {list(verdicts)}"
            )
        if bases and c.basis not in bases:
            problems.append(f"{getattr(c, id_attr)}: basis {c.basis!r} is not one of {list(bases)}")
    expected = context.get("claim_ids")
    if expected is not None:
        problems += exactly_once(
            expected, [getattr(c, id_attr) for c in checks], "claim", "verdict"
        )
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
    evidence: str = Field(
        default="", description="A short verbatim quote from the evidence, or empty."
    )
    reason: str = Field(default="", description="One sentence explaining the verdict.")
    basis: str = Field(description="What settled the verdict.")
    verdict: str = Field(description="One verdict from the criterion's list.")


class SingleJudgment(BaseModel):
    """The answer's claims, each with its verdict, from one call."""

    claims: list[JudgedClaim] = Field(
        description="The claims with verdicts; an empty list if the answer makes none."
    )
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
            ClaimCheck(
                claim_id=c.id,
                verdict=c.verdict,
                basis=c.basis,
                evidence=c.evidence,
                reason=c.reason,
            )
            for c in self.claims
        ]
        return claims, checks


# ---------------------------------------------------------------------------------------------
# Reply models: what the judge model is asked to produce, built per criterion (and per set of ids)
# so that every constraint the validators check is also in the JSON schema the model sees.
# Verdict, basis, fact kind and requirement status are enums; the check and coverage replies are
# objects keyed by id (one required property per id), so "each id exactly once" holds by
# construction under a grammar; claim and requirement ids are assigned by code, never invented.
# The internal records above (Claim, ClaimCheck, ...) stay what the rest of judgeflow uses.
# ---------------------------------------------------------------------------------------------

#: bump when the reply schemas change (part of the LLM backend's cache fingerprint)
# 8: a criterion with ask_kinds = false gets no "kind" in its decompose reply (#50)
# 7: the verdict entry's $defs name is "V" (#50); 6: a verdict entry used per id is one $defs entry
# (#40); 5: claims carry their quote
REPLIES_VERSION = 8
_REPAIRS: ContextVar[list[str] | None] = ContextVar("judgeflow_reply_repairs", default=None)
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def repair_json(text: str, pairs: Any = None) -> tuple[Any, str | None]:
    """Parse a model's JSON leniently: (value, what was repaired or None).

    Handles a ```json fence, text before or after the outermost object, and raw control
    characters (a newline, a tab) inside strings. Raises ValueError if no object can be read.
    pairs: json's object_pairs_hook (`KeyedObject` sees a key given twice).
    """
    try:
        return json.loads(text, object_pairs_hook=pairs), None
    except (json.JSONDecodeError, TypeError):
        pass
    if not isinstance(text, str):
        raise ValueError("reply is not text")
    fixes = []
    body = text
    fence = _FENCE.match(body)
    if fence:
        body, fixes = fence.group(1), ["code fence"]
    start, end = body.find("{"), body.rfind("}")
    if start == -1 or end < start:
        raise ValueError("reply holds no JSON object")
    if start > 0 or end < len(body) - 1:
        body = body[start : end + 1]
        fixes.append("text around the JSON object")
    try:
        value = json.loads(body, object_pairs_hook=pairs)
    except json.JSONDecodeError:
        try:
            value = json.loads(
                body, strict=False, object_pairs_hook=pairs
            )  # raw control characters inside strings
        except json.JSONDecodeError as e:
            raise ValueError(f"invalid JSON: {e}") from None
        fixes.append("control characters in strings")
    return value, ", ".join(fixes) or None


class KeyedObject(dict[str, Any]):
    """A JSON object that remembers the keys it was given more than once (json keeps the last)."""

    repeated: tuple[str, ...] = ()

    @classmethod
    def from_pairs(cls, pairs: list[tuple[str, Any]]) -> KeyedObject:
        obj = cls(pairs)
        if len(obj) < len(pairs):
            obj.repeated = tuple(repeated([k for k, _ in pairs]))
        return obj


@contextmanager
def counting_repairs() -> Iterator[list[str]]:
    """Collect the repairs `ReplyModel.model_validate_json` makes inside the block."""
    repairs: list[str] = []
    token = _REPAIRS.set(repairs)
    try:
        yield repairs
    finally:
        _REPAIRS.reset(token)


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the model should see it: no titles or defaults below the top, every property
    required and no additional properties (what OpenAI's strict mode demands), and each $ref
    inlined except where one definition is used more than once (the check reply's verdict entry,
    one per claim id): that stays one entry in $defs, each use a bare {"$ref": ...}, so the request
    grows by a reference per claim id rather than by a copy of the entry (#40)."""
    defs = schema.get("$defs", {})
    shared = _shared_refs(schema)

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            if node["$ref"] in shared and len(node) == 1:
                return node
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        out = {k: walk(v) for k, v in node.items() if k not in ("title", "default", "$defs")}
        if "const" in out:  # a one-value Literal: an enum of one is understood more widely
            out["enum"] = [out.pop("const")]
        if out.get("type") == "object" and "properties" in out:
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        return out

    cleaned = walk(schema)
    kept = {ref.rsplit("/", 1)[-1] for ref in shared}
    if kept:
        cleaned["$defs"] = {name: walk(defs[name]) for name in sorted(kept)}
    cleaned["title"] = schema.get("title", "Reply")
    return cleaned


def _shared_refs(schema: dict[str, Any]) -> set[str]:
    """The local $refs used as a bare {"$ref": ...} more than once (kept as references)."""
    counts: dict[str, int] = {}

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for n in node:
                visit(n)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and len(node) == 1:
                counts[ref] = counts.get(ref, 0) + 1
            for v in node.values():
                visit(v)

    visit({k: v for k, v in schema.items() if k != "$defs"})
    return {ref for ref, n in counts.items() if n > 1}


class ReplyModel(BaseModel):
    """Base of every reply model: a clean, strict-mode schema and lenient JSON parsing."""

    model_config = ConfigDict(extra="ignore")
    #: the ids a reply keyed by id must give, each exactly once (`_keyed`); empty for other replies
    _keyed_ids: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return _clean_schema(super().model_json_schema(*args, **kwargs))

    @classmethod
    def model_validate_json(
        cls, json_data: Any, *, strict: bool | None = None, **kwargs: Any
    ) -> Any:
        if isinstance(json_data, (bytes, bytearray)):
            json_data = json_data.decode("utf-8", errors="replace")
        try:
            value, fixed = repair_json(
                json_data, KeyedObject.from_pairs if cls._keyed_ids else None
            )
        except ValueError:
            return super().model_validate_json(
                json_data, strict=strict, **kwargs
            )  # pydantic's own error
        if fixed:
            repairs = _REPAIRS.get()
            if repairs is not None:
                repairs.append(fixed)
        kwargs.pop("by_alias", None)
        return cls.model_validate(value, strict=False, **kwargs)


class _ClaimEntry(ReplyModel):
    text: str = Field(description="One short, self-contained claim, in the answer's language.")

    @field_validator("text")
    @classmethod
    def _not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("claim text must not be empty")
        return v.strip()


def enum_field(
    values: tuple[str, ...], description: str | None, default: Any = ...
) -> tuple[Any, Any]:
    """A string field that the schema restricts to `values` (an enum the model's decoder honours).

    Validation checks membership in the reply model's validator instead of a Literal type, so
    a model without constrained decoding gets a re-ask that names the field and the allowed values.
    """
    return (
        str,
        Field(
            default,
            description=description,
            json_schema_extra={"enum": list(values)} if values else None,
        ),
    )


def _bounded(n: int | None) -> dict[str, Any] | None:
    """maxItems in the schema only: a grammar stops a rambling list; a longer reply is still read."""
    return {"maxItems": n} if n else None


@lru_cache(maxsize=256)
def claims_reply(
    fact_kinds: tuple[str, ...], max_items: int | None = None, kinds: bool = True
) -> type[ReplyModel]:
    """Decompose reply: {"claims": [{"text", "kind", "quote"}]}; ids are assigned by code (c1..cn).

    max_items bounds the list in the schema, so a small model under a grammar cannot ramble on.
    kinds=False leaves "kind" out (the caller finds it in code; `to_claims` says "other")."""
    kind = {"kind": enum_field(fact_kinds, None, "other")} if kinds else {}
    checks = {"_kind": _kind_validator(fact_kinds)} if kinds else {}
    entry = create_model(  # no descriptions: the decompose prompt says what text and kind are
        "Claim",
        __base__=ReplyModel,
        __validators__={**checks, "_text": _text_validator()},
        text=(str, Field()),
        **kind,
        quote=(str, Field(default="")),
    )
    model = create_model(
        "Claims",
        __base__=ReplyModel,
        __doc__="The answer's claims.",
        claims=(list[entry], Field(json_schema_extra=_bounded(max_items))),  # type: ignore[valid-type]
    )
    model.to_claims = lambda self: [  # type: ignore[attr-defined]
        Claim(id=f"c{n}", text=c.text, kind=getattr(c, "kind", "other"), quote=c.quote)
        for n, c in enumerate(self.claims, 1)
    ]
    return model


def _text_validator() -> Any:
    def text(cls: Any, v: str) -> str:
        if not v.strip():
            raise ValueError("claim text must not be empty")
        return v.strip()

    return field_validator("text")(classmethod(text))


def _verdict_fields(
    bases: tuple[str, ...], verdicts: tuple[str, ...], described: bool = True
) -> dict[str, Any]:
    """described=False: no descriptions (the check reply repeats the entry once per claim id, and the
    prompt already says what evidence, reason, basis and verdict are)."""

    def d(text: str) -> str | None:
        return text if described else None

    return {  # evidence and reason first: the model quotes and reasons before it decides
        "evidence": (
            str,
            Field(default="", description=d("A short verbatim quote from the evidence, or empty.")),
        ),
        "reason": (str, Field(default="", description=d("One sentence explaining the verdict."))),
        "basis": enum_field(bases, d("What settled the verdict.")),
        "verdict": enum_field(verdicts, d("The verdict.")),
    }


def _kind_validator(fact_kinds: tuple[str, ...]) -> Any:
    """An unknown fact kind is read as "other" (it only labels the claim), never re-asked."""

    def kind(cls: Any, v: str) -> str:
        return v if not fact_kinds or v in fact_kinds or "other" not in fact_kinds else "other"

    return field_validator("kind")(classmethod(kind))


def _vocab_validator(bases: tuple[str, ...], verdicts: tuple[str, ...], checks: Any) -> Any:
    """After-validator: every verdict and basis in the criterion's vocabulary (messages name both)."""

    def valid(self: Any) -> Any:
        _validate_checks(checks(self), {"verdicts": verdicts, "bases": bases}, "claim_id")
        return self

    return model_validator(mode="after")(valid)


def _keyed(
    name: str,
    doc: str,
    entry: type[BaseModel],
    ids: tuple[str, ...],
    legacy: str,
    id_key: str,
    noun: str,
    answer: str,
    after: Any = None,
) -> type[ReplyModel]:
    """An object with one required property per id. An id missing, given twice (seen while the
    JSON is read: `KeyedObject`) or not asked for is re-asked with what is wrong, never read past.
    Also reads the older array form ({legacy: [{id_key: ..., ...}]}) that a model without
    constrained decoding may give, under the same rule."""

    def from_array(cls: Any, data: Any) -> Any:
        if (
            isinstance(data, dict)
            and isinstance(data.get(legacy), list)
            and not any(i in data for i in ids)
        ):
            rows = [r for r in data[legacy] if isinstance(r, dict)]
            got = [str(r.get(id_key)) for r in rows]
            problems = exactly_once(list(ids), got, noun, answer)
            if problems:
                raise ValueError("; ".join(problems))
            return {str(r[id_key]): {k: v for k, v in r.items() if k != id_key} for r in rows}
        if isinstance(data, dict):
            problems = exactly_once(
                list(ids), [*data, *getattr(data, "repeated", ())], noun, answer
            )
            if problems:
                raise ValueError("; ".join(problems))
        return data

    fields: dict[str, Any] = {f"k{n}": (entry, Field(alias=i)) for n, i in enumerate(ids)}
    model = create_model(
        name,
        __base__=ReplyModel,
        __doc__=doc,
        __validators__={
            "_from_array": model_validator(mode="before")(classmethod(from_array)),
            **({"_after": after} if after is not None else {}),
        },
        **fields,
    )
    model._keyed_ids = ids
    return model


def _entries(reply: BaseModel) -> list[tuple[str, Any]]:
    return [
        (info.alias or name, getattr(reply, name))
        for name, info in type(reply).model_fields.items()
    ]


@lru_cache(maxsize=1024)
def checks_reply(
    bases: tuple[str, ...], verdicts: tuple[str, ...], ids: tuple[str, ...]
) -> type[ReplyModel]:
    """Check reply: {"c1": {"evidence", "reason", "basis", "verdict"}, ...}, every id required."""
    # the entry's name is in every claim id's {"$ref": "#/$defs/..."}: one letter saves ~3 tokens a claim
    entry = create_model(
        "V", __base__=ReplyModel, **_verdict_fields(bases, verdicts, described=False)
    )

    def to_checks(self: Any) -> list[ClaimCheck]:
        return [ClaimCheck(claim_id=i, **e.model_dump()) for i, e in _entries(self)]

    model = _keyed(
        "ClaimChecks",
        "Verdicts by claim id.",
        entry,
        ids,
        "checks",
        "claim_id",
        "claim",
        "verdict",
        after=_vocab_validator(bases, verdicts, to_checks),
    )
    model.to_checks = to_checks  # type: ignore[attr-defined]
    return model


@lru_cache(maxsize=1024)
def commitments_reply(ids: tuple[str, ...]) -> type[ReplyModel]:
    """Commit-first reply: {"c1": {"values": "1147; Yuri Dolgorukiy"}, ...}, every claim id required;
    an empty string where the judge does not know (see knowledge.py)."""
    entry = create_model("Commitment", __base__=ReplyModel, values=(str, Field(default="")))
    return _keyed(
        "Commitments",
        "The blanks' values by claim id.",
        entry,
        ids,
        "commitments",
        "claim_id",
        "claim",
        "values",
    )


def commitments_of(reply: BaseModel) -> dict[str, str]:
    """claim id -> the values a `commitments_reply` gives for its blanks."""
    return {i: str(e.values) for i, e in _entries(reply)}


@lru_cache(maxsize=256)
def single_reply(
    fact_kinds: tuple[str, ...],
    bases: tuple[str, ...],
    verdicts: tuple[str, ...],
    max_items: int | None = None,
) -> type[ReplyModel]:
    """One-call reply: {"claims": [{"text", "kind", "evidence", "reason", "basis", "verdict"}]}."""
    entry = create_model(  # no descriptions: the single prompt says what each field is
        "JudgedClaim",
        __base__=ReplyModel,
        __validators__={"_kind": _kind_validator(fact_kinds), "_text": _text_validator()},
        text=(str, Field()),
        kind=enum_field(fact_kinds, None, "other"),
        quote=(str, Field(default="")),
        **_verdict_fields(bases, verdicts, described=False),
    )
    model = create_model(
        "SingleJudgment",
        __base__=ReplyModel,
        __doc__="The answer's claims with verdicts.",
        claims=(list[entry], Field(json_schema_extra=_bounded(max_items))),  # type: ignore[valid-type]
        __validators__={"_vocab": _vocab_validator(bases, verdicts, lambda self: self.split()[1])},
    )
    model.split = _split  # type: ignore[attr-defined]
    return model


def _split(self: Any) -> tuple[list[Claim], list[ClaimCheck]]:
    judged = [(f"c{n}", c) for n, c in enumerate(self.claims, 1)]
    return (
        [Claim(id=i, text=c.text, kind=c.kind, quote=c.quote) for i, c in judged],
        [
            ClaimCheck(
                claim_id=i, evidence=c.evidence, reason=c.reason, basis=c.basis, verdict=c.verdict
            )
            for i, c in judged
        ],
    )


def criterion_vocab(criterion: Any) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(fact kinds, bases, verdicts) of a criterion, as the hashable keys the builders cache on."""
    return tuple(criterion.fact_kinds), tuple(criterion.bases), tuple(criterion.model_verdicts)


@lru_cache(maxsize=64)
def requirements_reply(max_items: int | None = None) -> type[ReplyModel]:
    """Requirement split reply: {"requirements": [{"text"}]}; ids r1..rn are assigned by code."""
    entry = create_model(
        "Requirement",
        __base__=ReplyModel,
        text=(str, Field(description="One atomic requirement, in the spec's own wording.")),
    )
    return create_model(
        "Requirements",
        __base__=ReplyModel,
        __doc__="The spec's requirements (an empty list if it asks for nothing).",
        requirements=(
            list[entry],
            Field(
                description="The requirements, in spec order.",
                json_schema_extra=_bounded(max_items),
            ),
        ),  # type: ignore[valid-type]
    )


@lru_cache(maxsize=1024)
def coverage_reply(statuses: tuple[str, ...], ids: tuple[str, ...]) -> type[ReplyModel]:
    """Coverage reply: {"r1": {"evidence", "reason", "status"}, ...}, every requirement id required."""
    entry = create_model(
        "RequirementStatus",
        __base__=ReplyModel,
        evidence=(
            str,
            Field(default="", description="A short verbatim quote from the output, or empty."),
        ),
        reason=(str, Field(default="", description="One sentence explaining the status.")),
        status=enum_field(statuses, "The status."),
    )

    def valid(self: Any) -> Any:
        bad = [
            f"{i}: status {e.status!r} is not one of {list(statuses)}"
            for i, e in _entries(self)
            if e.status not in statuses
        ]
        if bad:
            raise ValueError("; ".join(bad))
        return self

    model = _keyed(
        "RequirementChecks",
        "A status for every requirement, keyed by requirement id.",
        entry,
        ids,
        "checks",
        "requirement_id",
        "requirement",
        "status",
        after=model_validator(mode="after")(valid),
    )
    model.entries = _entries  # type: ignore[attr-defined]
    return model
