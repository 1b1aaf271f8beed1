"""What judges, as pure data (in the way of pydantic_evals' `EvaluatorSpec`): a `JudgeSpec`,
`PanelSpec`, `CascadeSpec` or `RepeatsSpec` (`JudgingSpec`, told apart by `kind`).

    spec = PanelSpec(members=[JudgeSpec(model="openai/gpt-5-mini"),
                              JudgeSpec(model="anthropic/claude-haiku-4-5")])
    panel = build(spec)             # judgeflow.build: a Panel, the same as one built by hand
    panel.spec() == spec            # every Judging gives its spec back (a tested round trip)
    JUDGING.validate_json(stored)   # a run's record rebuilds what judged it (`Run.judging`)

This module is on the bottom floor: it imports pydantic, the standard library, `errors` and
`config.client`, nothing that judges. The rules of composition are here, once: validators on the
specs (Python users meet them before anything is built), and the same functions for the Judgings
built by hand (`Panel(...)`, `Cascade(...)`, `Repeats(...)` call `panel_min_votes`,
`escalate_on_conditions`, `check_repeats`). A panel needs two members or samples; repeats take one
judge; samples of an offline judge are refused; escalating on disagreement needs a cheap judge with
votes. One rule needs what only a built judge knows, the model family's temperature (a reasoning
model samples at its own): `Panel` checks it on its built members (`same_samples` is its text).

A new judging option is a field of `JudgeSpec` here and its use in `workflow.py` (the graph's
context carries the spec); `Judge(**options)` and the cache key take every field by name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, field_validator, model_validator

from ..errors import ConfigError
from .client import ClientConfig, Spec, option
from .judging_protocol import Specified, spec_of

#: how items are routed to a criterion: "auto" by their fields, or one criterion family for all
MODES: tuple[str, ...] = ("auto", "factual", "faithfulness", "spec")
#: how claims the reference does not settle are checked (knowledge.py)
KNOWLEDGE: tuple[str, ...] = ("default", "commit-first")
STRATEGIES: tuple[str, ...] = ("graph", "single")
#: how a panel's votes combine
RULES: tuple[str, ...] = ("majority", "any", "all")
DEFAULT_ESCALATE_ON = "label1,unscored"
ESCALATE_ON = ("label1", "unscored", "disagree", "confidence<X")
_CONF = re.compile(r"^confidence<(0?\.\d+|1(\.0*)?|0)$")


class JudgeSpec(Spec):
    """One judge: a model, how items are routed to a criterion, the strategy, and its client."""

    kind: Literal["judge"] = "judge"
    model: str = option(
        ...,
        "provider/model (openai/..., anthropic/..., ollama/..., baseline/lexical).",
        flag="--model",
        results=True,
    )
    mode: str | None = option(
        None,
        "Routing: auto (by fields), factual, faithfulness or spec.",
        flag="--mode",
        results=True,
    )
    criterion: str | None = option(
        None, "A fixed criterion: a shipped name or a .toml path.", flag="--criterion", results=True
    )
    strategy: Literal["graph", "single"] = option(
        "graph",
        "graph (decompose, then check) or single (one call).",
        flag="--strategy",
        results=True,
    )
    coverage: bool = option(
        False,
        "Requirement coverage for items judged by a spec criterion.",
        flag="--coverage",
        results=True,
    )
    keep_trace: bool = option(
        True,
        "Keep rendered prompts and raw replies on each Judgment.",
        flag="--trace",
        results=False,
    )
    concurrency: int = option(
        16, "Items judged at once by the sync facade.", flag="--concurrency", results=False
    )
    check_dropped: bool = option(
        True,
        "Check the answer's numbers, dates and names no claim carries, as added claims (off: "
        "named in the row as not checked).",
        flag="--check-dropped",
        results=True,
    )
    knowledge: Literal["default", "commit-first"] | None = option(
        None,
        "Claims the reference does not settle: default (the check decides) or commit-first (the "
        "judge fills their masked values first; disagreement -> unverifiable). None: the "
        "criterion's setting.",
        flag="--knowledge",
        results=True,
    )
    evidence: str | None = option(
        None,
        'Documents for claims the reference does not settle: a JSONL file ({"text"} a line) '
        "or a folder of .txt/.md files.",
        flag="--evidence",
        results=True,
    )
    client: ClientConfig = Field(
        default_factory=ClientConfig, description="How the client talks to the model."
    )

    @field_validator("mode", mode="before")
    @classmethod
    def _a_mode(cls, value: Any) -> Any:
        if value not in (None, *MODES):
            raise ConfigError(f"mode {value!r} is not one of: {', '.join(MODES)}")
        return value

    @field_validator("strategy", mode="before")
    @classmethod
    def _a_strategy(cls, value: Any) -> Any:
        if value not in STRATEGIES:
            raise ConfigError(f"strategy {value!r} is not one of: {', '.join(STRATEGIES)}")
        return value

    @field_validator("knowledge", mode="before")
    @classmethod
    def _a_knowledge(cls, value: Any) -> Any:
        if value not in (None, *KNOWLEDGE):
            raise ConfigError(f"knowledge {value!r} is not one of: {', '.join(KNOWLEDGE)}")
        return value

    @field_validator("concurrency")
    @classmethod
    def _some_concurrency(cls, value: int) -> int:
        if value < 1:
            raise ConfigError(f"concurrency must be at least 1, got {value}")
        return value

    def judges(self) -> list[JudgeSpec]:
        return [self]


def panel_min_votes(members: int, samples: int, rule: str, tie: Any, min_votes: int | None) -> int:
    """The rules of a panel of `members` judges sampled `samples` times; its fewest votes for a
    label."""
    if rule not in RULES:
        raise ConfigError(f"panel rule {rule!r} is not one of: {', '.join(RULES)}")
    if tie not in (0, 1, None):
        raise ConfigError(f"tie must be 1, 0 or None (unscored), got {tie!r}")
    if samples < 1:
        raise ConfigError(f"samples must be at least 1, got {samples}")
    if not members:
        raise ConfigError("a panel needs at least one member")
    if members == 1 and samples == 1:
        raise ConfigError(
            "a panel of one judge with one sample is that judge: give more members or samples > 1"
        )
    n = members if members > 1 else samples
    votes = min_votes if min_votes is not None else n // 2 + 1
    if not 1 <= votes <= n:
        raise ConfigError(f"min_votes must be between 1 and {n}, got {votes}")
    return votes


def same_samples(samples: int, model: str) -> ConfigError:
    """The error for samples of a judge that always gives the same answer."""
    return ConfigError(
        f"samples={samples} with {model}: every sample would give the same answer; set a "
        "temperature above 0 (e.g. --temperature 0.7) for self-consistency"
    )


class PanelSpec(Spec):
    """Several judges voting on each item, or one judge sampled several times (self-consistency)."""

    kind: Literal["panel"] = "panel"
    members: list[JudgeSpec] = option(..., "The member judges.", flag="--panel", results=True)
    rule: Literal["majority", "any", "all"] = option(
        "majority", "How the votes combine.", flag="--panel-rule", results=True
    )
    samples: int = option(
        1, "Verdicts per member (needs a temperature above 0).", flag="--samples", results=True
    )
    tie: Literal[0, 1] | None = option(
        1, "The label of a majority tie (None: unscored).", flag="--panel-tie", results=True
    )
    min_votes: int | None = option(
        None, "Fewest voting members for a label (default: a majority).", flag=None, results=True
    )
    keep_trace: bool = option(True, "Keep the members' traces.", flag="--trace", results=False)
    concurrency: int = option(
        16, "Items judged at once by the sync facade.", flag="--concurrency", results=False
    )

    @model_validator(mode="after")
    def _composes(self) -> PanelSpec:
        panel_min_votes(len(self.members), self.samples, self.rule, self.tie, self.min_votes)
        for m in self.members if self.samples > 1 else ():
            if m.model.startswith("baseline/"):  # an offline judge: never a sample of its own
                raise same_samples(self.samples, m.model)
        return self

    def judges(self) -> list[JudgeSpec]:
        return list(self.members)


def escalate_on_conditions(spec: str | Sequence[str], *, cheap_votes: bool) -> list[str]:
    """Validate "label1,unscored,confidence<0.8" into a list of conditions; `cheap_votes`: whether
    the cheap judge has several votes (a panel or samples), which disagree and confidence<X need."""
    parts = [p.strip() for p in (spec.split(",") if isinstance(spec, str) else spec) if p.strip()]
    if not parts:
        raise ConfigError(f"--escalate-on is empty; give one or more of: {', '.join(ESCALATE_ON)}")
    for p in parts:
        if p not in ESCALATE_ON[:3] and not _CONF.match(p):
            raise ConfigError(
                f"--escalate-on {p!r} is not one of: {', '.join(ESCALATE_ON)} "
                "(X a share between 0 and 1, e.g. confidence<0.8)"
            )
    votes = [c for c in parts if c == "disagree" or c.startswith("confidence")]
    if votes and not cheap_votes:
        raise ConfigError(
            f"--escalate-on {','.join(votes)} needs a cheap judge with several votes: a "
            "panel (--cascade panel,STRONG with --panel ...) or samples (--samples N)"
        )
    return parts


def check_audit_rate(audit_rate: float) -> float:
    if not 0.0 <= audit_rate <= 1.0:
        raise ConfigError(f"audit rate must be a share between 0 and 1, got {audit_rate}")
    return audit_rate


class CascadeSpec(Spec):
    """A cheap judge on every item, a strong one on the items it escalates (and audited ones)."""

    kind: Literal["cascade"] = "cascade"
    cheap: JudgeSpec | PanelSpec = option(
        ..., "The judge every item sees.", flag="--cascade", results=True, discriminator="kind"
    )
    strong: JudgeSpec | PanelSpec = option(
        ..., "The judge escalated items see.", flag="--cascade", results=True, discriminator="kind"
    )
    escalate_on: str = option(
        DEFAULT_ESCALATE_ON,
        "When to escalate: label1, unscored, disagree, confidence<X.",
        flag="--escalate-on",
        results=True,
    )
    audit_rate: float = option(
        0.0,
        "Share of the other items also sent to the strong judge.",
        flag="--audit-rate",
        results=True,
        ge=0.0,
        le=1.0,
    )
    seed: int = option(0, "Seed of the audit draw.", flag="--audit-seed", results=True)
    keep_trace: bool = option(True, "Keep the members' traces.", flag="--trace", results=False)
    concurrency: int = option(
        16, "Items judged at once by the sync facade.", flag="--concurrency", results=False
    )

    @field_validator("audit_rate", mode="before")
    @classmethod
    def _a_share(cls, value: Any) -> Any:
        return check_audit_rate(value) if isinstance(value, (int, float)) else value

    @model_validator(mode="after")
    def _composes(self) -> CascadeSpec:
        escalate_on_conditions(self.escalate_on, cheap_votes=isinstance(self.cheap, PanelSpec))
        return self

    def judges(self) -> list[JudgeSpec]:
        return [*self.cheap.judges(), *self.strong.judges()]


def check_repeats(k: int) -> int:
    if k < 2:
        raise ConfigError(
            f"repeats must be at least 2 (one verdict an item is no test-retest), got {k}"
        )
    return k


class RepeatsSpec(Spec):
    """One judge asked `k` times about each item (test-retest); every verdict is kept."""

    kind: Literal["repeats"] = "repeats"
    judging: JudgeSpec = option(
        ...,
        "The judge to repeat (one judge: a panel or cascade is not repeated).",
        flag=None,
        results=True,
    )
    k: int = option(2, "Verdicts per item, at least 2.", flag="--repeats", results=True, ge=2)
    concurrency: int = option(
        16, "Items judged at once by the sync facade.", flag="--concurrency", results=False
    )

    @model_validator(mode="before")
    @classmethod
    def _one_judge(cls, data: Any) -> Any:
        inner = data.get("judging") if isinstance(data, dict) else None
        kind = inner.get("kind") if isinstance(inner, dict) else getattr(inner, "kind", "judge")
        if kind != "judge":
            raise ConfigError(
                f"repeats take one judge, not a {kind} (--repeats does not combine with --panel, "
                "--samples or --cascade yet: repeat one judge)"
            )
        return data

    @field_validator("k", mode="before")
    @classmethod
    def _two_at_least(cls, value: Any) -> Any:
        return check_repeats(value) if isinstance(value, int) else value

    def judges(self) -> list[JudgeSpec]:
        return [self.judging]


JudgingSpec = Annotated[
    JudgeSpec | PanelSpec | CascadeSpec | RepeatsSpec, Field(discriminator="kind")
]
#: reads a stored judging spec (JSON text or a dict) back
JUDGING: TypeAdapter[JudgeSpec | PanelSpec | CascadeSpec | RepeatsSpec] = TypeAdapter(JudgingSpec)

__all__ = [
    "DEFAULT_ESCALATE_ON",
    "ESCALATE_ON",
    "JUDGING",
    "KNOWLEDGE",
    "MODES",
    "RULES",
    "STRATEGIES",
    "CascadeSpec",
    "JudgeSpec",
    "JudgingSpec",
    "PanelSpec",
    "RepeatsSpec",
    "Specified",
    "check_audit_rate",
    "check_repeats",
    "escalate_on_conditions",
    "panel_min_votes",
    "same_samples",
    "spec_of",
]
