"""`RunSpec`: a whole `judgeflow run` as data: what judges (a `JudgingSpec`) and the run's input,
output, format, turns, ... Each field says whether it changes results and what its flag is.

    spec = RunSpec(judging=JudgeSpec(model="baseline/rouge-l", strategy="single"),
                   input="items.jsonl", output="results.jsonl")
    with RunStore(".judgeflow/runs.sqlite") as store:
        run = Run.open(store, spec)                          # the store records the spec
        async for j in run.judge(run.judging()): ...          # the judging rebuilt from the record
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, model_validator

from ..errors import ConfigError
from .client import Spec, option
from .judging import JudgingSpec, RepeatsSpec
from .limits import DEFAULT_MAX_INPUT_CHARS  # items.checked_item applies it

#: a run exits 1 when more than this share of its rows is unscored
DEFAULT_MAX_UNSCORED = 0.1
#: where runs are recorded unless told otherwise
DEFAULT_STORE = ".judgeflow/runs.sqlite"


class RunSpec(Spec):
    """Everything a run was asked to do. Never holds an API key (`ClientConfig.api_key` is not serialised)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    judging: JudgingSpec = option(
        ..., "What judges: a judge, panel, cascade or repeated judge.", flag=None, results=True
    )
    input: str | None = option(
        None,
        "The input file (JSONL, CSV, ...; - for stdin).",
        flag="INPUT",
        results=False,
        cli={
            "type": "path",
            "help": "items: .jsonl (one JSON object a line), .csv or .json; - reads stdin",
        },
    )
    output: str | None = option(
        None,
        "The results file (- for stdout).",
        flag="-o",
        results=False,
        cli={
            "type": "path",
            "aliases": ["--output"],
            "help": "results file (.jsonl, one judgment a line; "
            ".csv or .parquet: see --format); - writes to stdout (default: ITEMS.results.jsonl beside the "
            "input)",
        },
    )
    format: str | None = option(
        None,
        "The results file's format (None: from the output's suffix).",
        flag="--format",
        results=False,
        cli={
            "choices": ["jsonl", "csv", "parquet"],
            "help": "the results file's format (default: from the -o "
            "suffix, .csv or .parquet, else jsonl; parquet needs pyarrow)",
        },
    )
    limit: int | None = option(
        None,
        "Judge only the first N rows.",
        flag="--limit",
        results=True,
        cli={"type": "positive_int", "help": "judge only the first N rows"},
    )
    trace: bool = option(
        False, "Write prompts and raw replies into each row.", flag="--trace", results=True
    )
    max_input_chars: int = option(
        DEFAULT_MAX_INPUT_CHARS,
        "Longer items are invalid rows.",
        flag="--max-input-chars",
        results=True,
        cli={
            "type": "positive_int",
            "help": "an item whose texts together are longer is an invalid row "
            f"(default {DEFAULT_MAX_INPUT_CHARS:,})",
        },
    )
    column_map: dict[str, str] | None = option(
        None,
        "Item field -> the input column holding it.",
        flag="--map",
        results=True,
        cli={
            "metavar": "FIELD=COLUMN",
            "help": "read an item field from a column of another name, e.g. --map "
            "reference=gold_text (repeatable; fields: id, question, answer, reference, source, spec, label, "
            "...)",
        },
    )
    delimiter: str | None = option(
        None,
        "A CSV input's delimiter (None: a comma, or ; tab | sniffed from the header).",
        flag="--delimiter",
        results=True,
        cli={
            "type": "delimiter",
            "help": "a CSV input's delimiter, e.g. ';' or '\\t' (default: comma, or ; "
            "tab | sniffed from the header)",
        },
    )
    turns: Literal["last", "all"] = option(
        "last",
        "Conversations: judge the last assistant turn or every one.",
        flag="--turns",
        results=True,
        cli={
            "help": "conversations (rows with messages): judge the last assistant turn, or every assistant "
            "turn against what came before it (one row per turn, ids ID#t3)"
        },
    )
    system_prompt: bool = option(
        False,
        "Conversations: the system prompt counts as evidence.",
        flag="--system-prompt",
        results=True,
        cli={"help": "conversations: count the system prompt as evidence (left out by default)"},
    )
    batch: bool = option(
        False,
        "Submit through the provider's batch API.",
        flag="--batch",
        results=False,
        cli={
            "help": "submit through the provider's batch API (about half the price; collect later with "
            "`judgeflow batch collect RUN_ID`)"
        },
    )
    with_inputs: bool = option(
        True,
        "Result rows carry the item's question, answer, reference, source and spec.",
        flag="--with-inputs",
        results=False,
        cli={
            "help": "write each item's question, answer, reference, source and spec into its result row, as "
            "RAGAS and LangSmith show them beside the scores (the default; calibrate shows disagreements "
            "with them, the answer rate measures reference coverage); --no-with-inputs: the verdicts only "
            "(smaller files; the texts are held in memory while the output is written)"
        },
    )
    no_cache: bool = option(
        False,
        "Judge again what the response cache holds.",
        flag="--no-cache",
        results=False,
        cli={
            "help": "do not serve results from the store's response cache (new results are still cached)"
        },
    )
    store: str = option(
        DEFAULT_STORE,
        "The run store (SQLite).",
        flag="--store",
        results=False,
        cli={"type": "path", "help": "the run store, a SQLite file (default %(default)s)"},
    )
    prices: str | None = option(
        None,
        "A TOML/JSON price table.",
        flag="--prices",
        results=False,
        cli={
            "type": "path",
            "help": "a TOML/JSON price table to override the built-in one (or $JUDGEFLOW_PRICES)",
        },
    )
    max_unscored: float = option(
        DEFAULT_MAX_UNSCORED,
        "Exit 1 above this share of unscored rows.",
        flag="--max-unscored",
        results=False,
        cli={
            "type": "share",
            "help": "exit 1 when more than this share of rows is unscored (default %(default)s)",
        },
    )
    budget: str | None = option(
        None,
        "A hard spend cap for this invocation: calls (200) or estimated dollars ('$1.50'), reserved "
        "before each call (`runs.budget.Budget`).",
        flag="--budget",
        results=False,
        cli={
            "group": "provider",
            "help": "a hard spend cap for this invocation: model calls (200) or "
            "estimated dollars ('$1.50'); each call reserves the most it can cost before it is sent, so no "
            "concurrency passes it; rows that do not fit end unscored (reason 'budget: ...'), the run exits "
            "1 and --resume continues them",
        },
    )

    @model_validator(mode="after")
    def _composes(self) -> RunSpec:
        kind = self.judging.kind
        if self.batch and kind in ("panel", "cascade"):
            raise ConfigError(
                "--batch does not support --panel, --samples or --cascade yet: run them online "
                "(drop --batch), or judge each model on its own with --batch and compare the runs"
            )
        if self.batch and self.budget:
            raise ConfigError(
                "--budget does not combine with --batch yet: a batch is submitted whole, before any "
                "call's cost is known; run online (drop --batch), or cap the rows with --limit N"
            )
        if self.batch and isinstance(self.judging, RepeatsSpec):
            raise ConfigError(
                "--repeats does not combine with --batch yet: run online (drop --batch)"
            )
        if kind in ("panel", "cascade") and any(j.coverage for j in self.judging.judges()):
            raise ConfigError(
                "requirement coverage (--mode spec / --coverage) does not run in panels or cascades "
                "yet: add --no-coverage, or judge with one --model"
            )
        for judge in self.judging.judges():
            if judge.client.threshold is not None and not judge.model.startswith("baseline/"):
                raise ConfigError(
                    "--threshold applies to the offline judges (baseline/lexical, baseline/rouge-l) "
                    "only"
                )
        return self

    def results_view(self) -> dict[str, Any]:
        """The fields that change results (nested specs included): what a resume must match."""
        return results_view(self)


def flat_view(view: Any, prefix: str = "") -> dict[str, Any]:
    """A spec (or its `results_view`) as "name: value" pairs for people: nested names dotted, the
    judging's and the client's own fields by their short names (`strategy`, `temperature`,
    `members[1].model`)."""
    from pydantic import BaseModel

    if isinstance(view, BaseModel):
        view = view.model_dump(mode="json")
    out: dict[str, Any] = {}
    if isinstance(view, dict) and view:
        for k, v in view.items():
            name = prefix if k in ("judging", "client") else f"{prefix}.{k}" if prefix else k
            out.update(flat_view(v, name))
    elif isinstance(view, list) and view and any(isinstance(x, (dict, list)) for x in view):
        for i, v in enumerate(view):
            out.update(flat_view(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = view
    return out


def results_view(spec: Any) -> Any:
    """`spec` as plain data with only the fields that change results (recursively)."""
    from pydantic import BaseModel

    from .client import affects_results

    if isinstance(spec, list):
        return [results_view(x) for x in spec]
    if not isinstance(spec, BaseModel):
        return spec
    out = {}
    for name, field in type(spec).model_fields.items():
        value = getattr(spec, name)
        if (
            isinstance(value, (BaseModel, list))
            or affects_results(type(spec), name)
            or name == "kind"
        ):
            if field.exclude:
                continue
            out[name] = results_view(value)
    return out
