"""The records a judgement produces: `Judgment` (one per item), its claims, usage and trace."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, SerializerFunctionWrapHandler, model_serializer

JudgmentStatus = Literal["judged", "unscored", "invalid"]
#: prefix of an input field whose name is taken by a result field in the output row
INPUT_PREFIX = "input_"
#: result fields that hold lists or objects: JSON strings in flat rows (CSV, Parquet)
JSON_FIELDS = ("claims", "usage", "requirements", "trace", "spans")


class Usage(BaseModel):
    """Model calls and tokens spent on one item (retries and re-asks included)."""

    calls: int = 0
    input_tokens: int = 0
    """All prompt tokens, those served from or written to a provider's prompt cache included."""
    output_tokens: int = 0
    """All completion tokens, reasoning tokens included (billed as output)."""
    reasoning_tokens: int = 0
    """Hidden reasoning tokens the provider reports apart (part of output_tokens)."""
    cached_tokens: int = 0
    """Prompt tokens the provider served from its prompt cache (part of input_tokens; cheaper)."""
    cache_write_tokens: int = 0
    """Prompt tokens written to Anthropic's prompt cache (part of input_tokens; dearer)."""
    repairs: int = 0
    """Replies read only after a lenient repair (code fence, text around the JSON, raw control characters)."""
    reasks: int = 0
    """Calls that asked again: an invalid reply re-asked, or a reply cut off at max_tokens."""
    over_bound: int = 0
    """Claims (or requirements) a reply listed beyond its schema's bound (maxItems): cut, never checked."""
    _rate_wait: float = PrivateAttr(default=0.0)

    @property
    def rate_wait(self) -> float:
        """Seconds this item's requests waited on the provider's rate limit (not kept in results;
        the limiter gives an item up after --max-wait of it)."""
        return self._rate_wait

    @rate_wait.setter
    def rate_wait(self, seconds: float) -> None:
        self._rate_wait = seconds

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cached_tokens += other.cached_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.repairs += other.repairs
        self.reasks += other.reasks
        self.over_bound += other.over_bound


class ClaimResult(BaseModel):
    """One claim of the answer with its verdict and what it rests on."""

    id: str
    text: str
    kind: str = "other"
    verdict: str | None = None
    """The criterion's verdict, or None if the claim was not checked."""
    error: bool = False
    """True if the verdict is one of the criterion's error verdicts."""
    basis: str | None = None
    evidence: str = ""
    evidence_found: bool | None = None
    """Whether the evidence quote occurs in the item's reference/source/spec (case and spacing
    ignored; "..." may join fragments). None when there is no quote or the basis is knowledge.
    For a trace, checked against the one message the evidence came from (`cited`)."""
    reason: str = ""
    cited: str | None = None
    """Traces: the message the evidence came from ("tool get_weather, call_1", "user turn 2");
    written only when set, so other rows keep their shape."""
    quote: str = ""
    """The words of the answer the claim comes from, as the decomposer gave them (empty for
    offline judges, whose claim text is that passage). Written only when set."""
    span: list[int] | None = None
    """[start, end) character offsets of the claim in the answer, found in code (`judgeflow.spans`)."""
    placed: bool | None = None
    """True: the claim was found in the answer (`span`); False: it could not be placed (its
    quote and text are not in the answer); None: not looked for. Written only when looked for."""

    @model_serializer(mode="wrap")
    def _without_unset_cited(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key, unset in (("cited", None), ("quote", ""), ("span", None), ("placed", None)):
            if key in data and data[key] == unset and (key != "span" or data.get("placed") is None):
                del data[key]
        return data


class RequirementResult(BaseModel):
    """One requirement of a spec and whether the output meets it (see `judgeflow.coverage`)."""

    id: str
    text: str
    status: Literal["met", "not_met", "not_applicable"]
    evidence: str = ""
    """A short quote from the output, or empty."""
    reason: str = ""


class TraceEntry(BaseModel):
    """One model exchange: what was sent and what came back, for auditing any 0 or 1."""

    step: str
    messages: list[dict[str, Any]] = Field(default_factory=list)
    reply: Any = None
    rejected: list[str] = Field(default_factory=list)
    """Raw replies that failed validation and were re-asked, in order (the audit of a re-ask)."""


class JudgeVote(BaseModel):
    """One member's verdict inside a panel or cascade row (see `judgeflow.ensembles`)."""

    model: str | None = None
    role: str | None = None
    """"member" in a panel; "cheap" or "strong" in a cascade."""
    label: Literal[0, 1] | None = None
    status: JudgmentStatus = "judged"
    samples: list[Literal[0, 1] | None] | None = None
    """Each sample's label when the member judged the item several times (self-consistency), else None."""
    agreement: str | None = None
    """Samples agreeing with this member's label, e.g. "3/5" (None for one sample)."""
    reason: str | None = None
    claims: list[ClaimResult] = Field(default_factory=list)
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cached: bool = False


#: result fields written only when set, so a single judge's rows keep their old shape
OPTIONAL_FIELDS = ("judges", "agreement", "confidence", "cascade", "repeats", "spans", "dropped")


class Judgment(BaseModel):
    """The judge's result for one item. label: 1 = hallucination, 0 = none found, None = unscored."""

    id: str
    label: Literal[0, 1] | None
    status: JudgmentStatus = "judged"
    """judged; unscored (the judge could not decide); invalid (the input row is unusable)."""
    criterion: str | None = None
    routed_by: str | None = None
    """Why this criterion was chosen (e.g. "source present", "--criterion")."""
    reason: str | None = None
    """Why the label: the deciding claim, or that no checkable claims were found."""
    claims: list[ClaimResult] = Field(default_factory=list)
    error: str | None = None
    """Why the item is unscored or invalid; None when judged."""
    usage: Usage = Field(default_factory=Usage)
    model: str | None = None
    structured: str | None = None
    """How the model was asked for structured output (tools_strict, tools, json_schema, json); None offline."""
    strategy: str | None = None
    language: str | None = None
    """The answer's language (ISO 639-1, detected offline; the input's `language` field if it had one)."""
    human_label: Literal[0, 1] | None = None
    """The input's own label, if it had one."""
    cached: bool = False
    requirements: list[RequirementResult] | None = None
    """Requirement coverage against the spec (spec review with requirements on), else None."""
    judges: list[JudgeVote] | None = None
    """Panels and cascades: each member's verdict, claims, usage and model; None for one judge."""
    agreement: str | None = None
    """Panels: voting members (or samples) agreeing with the label, e.g. "2/3"."""
    confidence: float | None = None
    """Panels and self-consistency: the share of all scored votes agreeing with the label."""
    cascade: dict[str, Any] | None = None
    """Cascades: {"escalated": bool, "escalated_on": [...], "audited": bool, "cheap_label": 0/1/None}."""
    repeats: list[JudgeVote] | None = None
    """Test-retest (`judgeflow run --repeats K`): the same judge's K verdicts on this item, the first
    being the row's own label; an item whose repeats differ is unstable. None without repeats."""
    spans: list[dict[str, Any]] | None = None
    """The answer spans of the error claims, in answer order: [{"start", "end", "claim", "text"}]
    ([start, end) character offsets into the answer; see `judgeflow.spans`). [] for a judged row
    with no placed error claim; None (not written) for other rows."""
    dropped: list[str] | None = None
    """Numbers, dates and names of the answer that no claim of the decomposition carried, found in
    code (graph strategy: checked as added claims; single: not checked); the reason says which.
    None when every one was carried."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """The input's other fields, carried through untouched."""
    trace: list[TraceEntry] = Field(default_factory=list)

    @classmethod
    def unscored(cls, id: str, error: str, **fields: Any) -> Judgment:
        """The judge could not decide (a failed call, a crash): label None, the reason kept."""
        return cls(id=id, label=None, status="unscored", error=error, **fields)

    @classmethod
    def invalid(cls, id: str, error: str, **fields: Any) -> Judgment:
        """The input row is unusable: label None, the message naming the row and the fix kept."""
        return cls(id=id, label=None, status="invalid", error=error, **fields)

    def to_row(self, *, trace: bool = False) -> dict[str, Any]:
        """The JSONL output row: fixed fields first, then the input's extra fields.

        An input field named like a result field (e.g. the `model` that wrote the answer) is
        written as `input_<name>`, so neither value is lost.
        """
        row = self.model_dump(exclude={"extra", "trace", "cached"})
        for k in OPTIONAL_FIELDS:
            if row[k] is None:
                del row[k]
        if trace:
            row["trace"] = [t.model_dump() for t in self.trace]
        for k, v in self.extra.items():
            row.setdefault(f"{INPUT_PREFIX}{k}" if k in type(self).model_fields else k, v)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Judgment:
        """Read a row written by `to_row` back (unknown fields go to `extra`)."""
        known = set(cls.model_fields)
        data = {k: v for k, v in row.items() if k in known and k != "extra"}
        extra = {}
        for k, v in row.items():
            if k not in known:
                name = k.removeprefix(INPUT_PREFIX)
                extra[name if name in known else k] = v
        data["extra"] = extra
        return cls(**data)


def flat_row(row: dict[str, Any]) -> dict[str, Any]:
    """An output row (`Judgment.to_row`) flattened for CSV and Parquet: lists and objects as JSON strings."""
    return {k: json.dumps(v, ensure_ascii=False, default=str)
            if isinstance(v, (list, dict)) or (k in JSON_FIELDS and v is not None) else v
            for k, v in row.items()}
