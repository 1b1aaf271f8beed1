"""Items under judgement, and reading them from JSONL or CSV files.

An item is one answer to judge plus the evidence it is judged against: a short gold
`reference`, the `source` documents a RAG answer or summary was written from, and/or
the `spec` an agent's output was written against. Common field names used by other
tools are accepted as aliases and recorded in `Item.aliases`: RAGAS (`user_input`,
`retrieved_contexts`, `response`, `reference`), DeepEval (`input`, `actual_output`,
`retrieval_context`, `context`, `expected_output`), openevals (`inputs`, `outputs`,
`reference_outputs`, `context`) and LangSmith examples (`inputs` / `outputs` dicts).
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from .config.limits import DEFAULT_MAX_INPUT_CHARS
from .errors import ConfigError, InvalidItemError
from .io.openinference import otlp_rows
from .trace_runs import cycle_message, langsmith_messages, run_trees
from .traces import (
    TURN_EVIDENCE_CHARS,
    TraceError,
    TraceMessage,
    Turns,
    is_trace,
    judged_turns,
    read_messages,
    trace_fields,
)

#: the criterion families, declared once: a criterion's `family`, and the routing override
#: (`Item.mode`, `Judge(mode=...)`, `--mode`) names the family whose default criterion to use
Family = Literal["factual", "faithfulness", "spec"]
FAMILIES: tuple[str, ...] = get_args(Family)

#: canonical field -> accepted aliases, in order of preference (the one alias table).
#: `inputs`, `outputs` and `reference_outputs` (openevals, LangSmith examples) may hold a string
#: or a dict; a dict's keys are read through this same table (see `_unpack`).
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("item_id", "uid", "example_id", "qid"),
    "question": ("task", "query", "input", "prompt", "user_input", "instruction", "inputs"),
    "answer": (
        "response", "output", "prediction", "generation", "completion",
        "actual_output", "model_answer", "outputs", "result",
    ),
    "reference": (
        "ground_truth", "gold", "gold_answer", "expected", "expected_output",
        "reference_answer", "target", "ideal", "reference_outputs",
    ),
    "source": (  # DeepEval: retrieval_context is what the answer was written from; context the ideal one
        "retrieval_context", "context", "contexts", "documents", "source_documents", "docs", "retrieved_contexts",
        "passages", "evidence", "knowledge",
    ),
    "spec": ("requirements", "specification", "rubric"),
    "label": ("human_label", "is_hallucination", "hallucination"),
}


def checked_item(item: Item, limit: int = DEFAULT_MAX_INPUT_CHARS, *, path: str | None = None) -> Item | InvalidItemError:
    """The one item check every input path applies after reading (files, `watch`, the served graph,
    the Python API): an item whose texts together pass `limit` characters is an invalid row naming
    --max-input-chars, never a request of that size. (What an item may hold, e.g. an `answer` that
    is text, is checked where every path builds it: `Item.from_record`.)"""
    size = sum(len(t) for t in (item.answer, item.question or "", item.reference or "", item.spec or "",
                                *(item.source or [])))
    if size <= limit:
        item._checked = limit
        return item
    err = InvalidItemError(
        f"the item's texts are {size:,} characters, more than --max-input-chars {limit:,}; shorten the "
        "item (split a long source into the passages that matter, or the answer into several items), "
        "or raise --max-input-chars if you mean to send that much (--max-source-chars cuts sources "
        "later, so it does not lift this limit)", path=path, field="answer/source", item_id=item.id)
    err.record = {"id": item.id, "label": item.label, **item.extra}
    return err


_CANONICAL = ("id", "question", "answer", "reference", "source", "spec", "mode", "criterion", "label", "messages")
#: the item fields a column map (`--map FIELD=COLUMN`, `column_map=`) may name
FIELDS = _CANONICAL
ColumnMap = Mapping[str, str]


def check_column_map(column_map: ColumnMap | None) -> dict[str, str]:
    """A column map (item field -> the column holding it) checked: every key an item field.

    Raises:
        ConfigError: a key is not a field (with the nearest field: `refernce` -> `reference`).
    """
    out: dict[str, str] = {}
    for field, column in (column_map or {}).items():
        if field not in FIELDS:
            close = difflib.get_close_matches(str(field), FIELDS, n=1, cutoff=0.6)
            hint = f"did you mean `{close[0]}`? " if close else ""
            raise ConfigError(f"column map: {field!r} is not an item field; {hint}"
                              f"map one of: {', '.join(FIELDS)} (FIELD=COLUMN, e.g. reference=gold_text)")
        if not isinstance(column, str) or not column:
            raise ConfigError(f"column map: give the column that holds {field!r} as a name, got {column!r}")
        out[field] = column
    return out


def parse_column_map(pairs: Sequence[str] | None) -> dict[str, str]:
    """`["reference=gold_text", ...]` (the CLI's `--map`) as a checked column map."""
    out: dict[str, str] = {}
    for pair in pairs or ():
        field, eq, column = pair.partition("=")
        if not eq or not field.strip() or not column.strip():
            raise ConfigError(f"--map {pair!r}: write FIELD=COLUMN, e.g. --map reference=gold_text")
        out[field.strip()] = column.strip()
    return check_column_map(out)


class Item(BaseModel):
    """One answer to judge, with the evidence it is judged against."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """Stable identifier, used to join results with labels and to resume runs."""
    answer: str
    """The text under judgement (untrusted)."""
    question: str | None = None
    """The question or task the answer responds to."""
    reference: str | None = None
    """A short gold answer (factual correctness)."""
    source: list[str] | None = None
    """Source documents the answer should be faithful to (RAG, summaries)."""
    spec: str | None = None
    """Requirements the answer (an agent's output) was written against."""
    mode: Family | None = None
    """Route this item to the default criterion of this family, instead of routing by its fields."""
    criterion: str | None = None
    """Explicit criterion name or path for this item."""
    label: Literal[0, 1] | None = None
    """Human label: 1 = hallucination/error, 0 = none."""
    messages: list[TraceMessage] | None = None
    """A trace item: the conversation before the judged turn, labelled (its evidence is `source`)."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Other input fields, carried through to the result untouched."""
    aliases: dict[str, str] = Field(default_factory=dict)
    """canonical field -> the alias it was read from."""
    _line: int | None = PrivateAttr(default=None)
    _path: str | None = PrivateAttr(default=None)
    _checked: int | None = PrivateAttr(default=None)  # the limit `checked_item` passed it under

    @property
    def checked(self) -> bool:
        """Whether `checked_item` passed it (under the reader's --max-input-chars): not checked again."""
        return self._checked is not None

    @property
    def where(self) -> str | None:
        """"file:line" (or "line N") the item was read from, for error messages; None if built in code."""
        if self._path is not None:
            return f"{self._path}:{self._line}" if self._line is not None else self._path
        return f"line {self._line}" if self._line is not None else None

    @property
    def line(self) -> int | None:
        return self._line

    @classmethod
    def from_record(
        cls, record: Mapping[str, Any], *, path: str | None = None, line: int | None = None,
        column_map: ColumnMap | None = None,
    ) -> Item:
        """Build an item from a dict, resolving aliases and normalising `source`.

        `column_map` (field -> column, checked by `check_column_map`) reads a field from a column
        of another name first; the column is recorded in `aliases`. A conversation (`messages` in
        the OpenAI, Anthropic or LangChain format, or a LangSmith run tree) is judged at its last
        assistant turn: see `items_from_record` for every turn.

        Raises:
            InvalidItemError: naming the path, line, field and the fix.
        """
        if _is_trace(record, column_map):
            return items_from_record(record, path=path, line=line, column_map=column_map)[0]
        return cls._from_fields(record, path=path, line=line, column_map=column_map)

    @classmethod
    def _from_fields(cls, record: Mapping[str, Any], *, path: str | None = None, line: int | None = None,
                     column_map: ColumnMap | None = None) -> Item:
        if not isinstance(record, Mapping):
            raise InvalidItemError(
                f"expected a JSON object per line, got {type(record).__name__}",
                path=path, line=line,
            )
        _refuse_surrogates(record, path, line)
        values, aliases, rec = resolve_fields(record, column_map)
        typo = mapped_column_missing(record, values, column_map)
        item_id = values.get("id")
        item_id = str(item_id) if item_id is not None else (f"line-{line}" if line else None)

        def bad(msg: str, field: str) -> InvalidItemError:
            who = f"item '{item_id}' " if item_id else ""
            err = InvalidItemError(who + msg, path=path, line=line, field=field, item_id=item_id)
            err.record = dict(record)
            return err

        if typo is not None:
            raise bad(typo[1], typo[0])
        if item_id is None:
            raise bad("has no 'id'; add an \"id\" field (any unique string)", "id")
        values["id"] = item_id
        _normalise(values, bad)
        try:
            item = cls(**values, extra=rec, aliases=aliases)
        except ValidationError as e:  # any other field of the wrong type: that row's invalid result, never a crash
            first = e.errors()[0]
            field = str(first["loc"][0]) if first.get("loc") else "item"
            raise bad(f"has an unusable '{field}': {first['msg']}; fix that field", field) from None
        item._path, item._line = path, line
        return item

    @property
    def source_text(self) -> str | None:
        """The source documents joined into one text, or None."""
        if not self.source:
            return None
        if len(self.source) == 1:
            return self.source[0]
        return "\n\n".join(f"[Document {i}]\n{d}" for i, d in enumerate(self.source, 1))


def _is_trace(record: Any, column_map: ColumnMap | None = None) -> bool:
    if not isinstance(record, Mapping):
        return False
    column = (column_map or {}).get("messages")
    return is_trace({"messages": record[column]} if column and column in record else record)


def items_from_record(record: Mapping[str, Any], *, path: str | None = None, line: int | None = None,
                      turns: Turns = "last", system: bool = False, column_map: ColumnMap | None = None) -> list[Item]:
    """The items of one row: one, or for a conversation with `turns="all"` one per assistant turn
    (ids `ID#t3`: turn 3), each judged against the messages before it.

    A row that gives its own `answer` beside `messages` judges that answer against the whole
    conversation. `system=True` counts the system prompt as evidence (it is left out by default).
    `column_map` as in `Item.from_record` (`messages` may be mapped from another column too).

    Raises:
        InvalidItemError: naming the path, line, field (e.g. `messages[3].tool_call_id`) and the fix.
    """
    if not _is_trace(record, column_map):
        return [Item._from_fields(record, path=path, line=line, column_map=column_map)]
    _refuse_surrogates(record, path, line)
    rec = dict(record)
    if (column := (column_map or {}).get("messages")) and column in rec:
        rec["messages"] = rec.pop(column)
    item_id = next((rec[k] for k in ("id", *ALIASES["id"]) if not _blank(rec.get(k))), None)
    if item_id is None and "messages" not in rec:
        item_id = rec.get("id")  # a LangSmith run's own id
    try:
        if "messages" in rec:
            system_prompt = rec.pop("system") if isinstance(rec.get("system"), str) else None  # Anthropic's
            messages = read_messages(rec.pop("messages"), system=system_prompt)
        else:
            messages = langsmith_messages(rec)
            rec = {k: v for k, v in rec.items() if k in ("label", "spec", "id", *ALIASES["label"], *ALIASES["spec"])}
    except TraceError as e:
        who = f"item '{item_id}' " if item_id is not None else ""
        err = InvalidItemError(f"{who}{e}", path=path, line=line, field=e.field,
                               item_id=str(item_id) if item_id is not None else None)
        err.record = dict(record)
        raise err from None
    own = any(not _blank(rec.get(k)) for k in ("answer", *ALIASES["answer"]))
    at: list[int | None] = [None] if own else list(judged_turns(messages, turns))
    if not at:
        raise InvalidItemError(f"{'item ' + repr(str(item_id)) + ' ' if item_id is not None else ''}has messages "
                               "but no assistant message with text to judge; add the agent's reply, or give "
                               "\"answer\"", path=path, line=line, field="messages",
                               item_id=str(item_id) if item_id is not None else None)
    out: list[Item] = []
    shared: dict[Any, str] = {}
    for i in at:
        fields = trace_fields(messages, i, system=system, shared=shared,
                              window=TURN_EVIDENCE_CHARS if turns == "all" and i != at[-1] else None)
        given = rec.get("source")
        if not _blank(given):
            fields["source"] += [f"[document {n}]\n{d}" for n, d in enumerate(normalize_source(given), 1)]
        row = {**{k: v for k, v in rec.items() if k != "source"}, **{k: v for k, v in fields.items()
                                                                     if k != "question" or _blank(rec.get(k))}}
        if turns == "all" and i is not None:
            row["id"] = f"{item_id if item_id is not None else f'line-{line}'}#t{messages[i].turn}"
            if i != at[-1]:  # a row's label is about its last reply, not the turns before it
                row = {k: v for k, v in row.items() if k not in ("label", *ALIASES["label"])}
        out.append(Item._from_fields(row, path=path, line=line,
                                     column_map={f: c for f, c in (column_map or {}).items() if f != "messages"}))
    return out

def _refuse_surrogates(record: Mapping[str, Any], path: str | None, line: int | None) -> None:
    """A lone surrogate (half a UTF-16 pair, e.g. a cut emoji) is not text: an invalid row that says where."""
    broken = lone_surrogate(record)
    if broken is None:
        return
    field, at = broken
    err = InvalidItemError(
        f"field '{field}' holds a lone surrogate {at} (half of a UTF-16 pair, e.g. a cut emoji), "
        "which is not text; remove it or write the whole character", path=path, line=line, field=field)
    err.record = scrub_surrogates(dict(record))
    err.item_id = str(err.record.get("id") or "") or None
    raise err


def mapped_column_missing(record: Mapping[str, Any], values: Mapping[str, Any], column_map: ColumnMap | None
                          ) -> tuple[str, str] | None:
    """(field, message) for a `--map FIELD=COLUMN` whose column this row does not have, when that looks like a
    misspelling (a close column name exists) or leaves a required field (id, answer) without a value."""
    for field, column in (column_map or {}).items():
        if column in record:
            continue
        columns = [str(k) for k in record]
        close = difflib.get_close_matches(column, columns, n=1, cutoff=0.75)
        if close or (field in ("id", "answer") and field not in values):
            hint = f"did you mean {close[0]!r}? " if close else ""
            return field, (f"--map {field}={column}: the row has no column {column!r}; {hint}its columns are: "
                           f"{', '.join(columns[:12])}{' ...' if len(columns) > 12 else ''}")
    return None


def _normalise(values: dict[str, Any], bad: Callable[[str, str], InvalidItemError]) -> None:
    """Every known field of a row in its Item form (texts, sources, mode, label), or `bad(...)` raised."""
    answer = values.get("answer")
    if answer is None:
        names = ", ".join(("answer",) + ALIASES["answer"])
        raise bad(f"has no 'answer'; give the text to judge in one of: {names}", "answer")
    if isinstance(answer, (list, tuple)):  # several answers, or a conversation in the wrong field: never joined
        raise bad("'answer' is a list, not text: give the text to judge as one string (join the parts, or give "
                  "each part as an item of its own; a conversation goes in 'messages')", "answer")
    if not isinstance(answer, str):  # a number, or a structured output (an object) judged as its JSON
        answer = json.dumps(answer, ensure_ascii=False) if not isinstance(answer, (int, float)) else str(answer)
    values["answer"] = answer
    for field in ("question", "reference", "spec"):
        v = values.get(field)
        if v is not None and not isinstance(v, str):
            values[field] = _as_text(v, field, bad)
    if "source" in values:
        values["source"] = normalize_source(values["source"], bad)
    if "mode" in values:
        m = str(values["mode"]).strip().lower()
        m = {"auto": None, "faithful": "faithfulness", "factuality": "factual"}.get(m, m)
        if m is not None and m not in FAMILIES:
            raise bad(f"has mode {values['mode']!r}; use one of: auto, {', '.join(FAMILIES)}", "mode")
        values["mode"] = m
    if "label" in values:
        values["label"] = parse_label(values["label"], bad)
    if "criterion" in values and not isinstance(values["criterion"], str):
        raise bad(f"has criterion {values['criterion']!r}; give a criterion name such as "
                  "\"factual_correctness\" (see `judgeflow criteria list`), or leave it out", "criterion")


def resolve_fields(record: Mapping[str, Any], column_map: ColumnMap | None = None,
                   ) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """Split a raw row into (canonical field -> value, canonical field -> alias used, other fields).

    A field named in `column_map` is read from its column first. Each other canonical field takes
    its own name, else the first non-blank alias (ALIASES order); a blank canonical field counts
    as absent. Everything not taken is an "other field", carried through to the result unchanged,
    on valid and invalid rows alike.
    """
    rec = dict(record)
    values: dict[str, Any] = {}
    aliases: dict[str, str] = {}
    for field, column in (column_map or {}).items():
        if column in rec and not _blank(rec[column]):
            values[field] = rec.pop(column)
            if column != field:
                aliases[field] = column
    _langsmith_export(rec)  # an experiment's `to_pandas()` columns, a dataset example: as LangSmith's dicts
    _unpack(rec, aliases)  # openevals / LangSmith dicts (inputs, outputs, reference_outputs) opened first
    for field in _CANONICAL:
        if field in values:  # read from a mapped column; a column of the field's own name is carried through
            continue
        if field in rec and not _blank(rec[field]):
            values[field] = rec.pop(field)
            continue
        if field in rec:  # present but blank: treat as absent
            rec.pop(field)
        for alias in ALIASES.get(field, ()):
            if alias in rec and not _blank(rec[alias]):
                values[field] = rec.pop(alias)
                aliases[field] = alias
                break
    return values, aliases, rec


def passthrough(record: Mapping[str, Any]) -> tuple[Literal[0, 1] | None, dict[str, Any]]:
    """The human label (None if absent or unreadable) and the carried-through fields of a raw row
    (the same other fields a valid row keeps: `resolve_fields`)."""
    values, _, rest = resolve_fields(record)
    try:
        human = parse_label(values.get("label"))
    except InvalidItemError:
        human = None
    return human, rest


_CONTAINERS = {"question": "inputs", "answer": "outputs", "reference": "reference_outputs"}
#: the column prefixes of a LangSmith experiment's `to_pandas()` (inputs.question, outputs.output,
#: reference.answer) -> the dict each is gathered into
_DOTTED = {"inputs.": "inputs", "outputs.": "outputs", "reference.": "reference_outputs"}
#: the fields only a LangSmith dataset example has (`Example`: list_examples, a dataset export)
_EXAMPLE_FIELDS = ("dataset_id", "source_run_id", "modified_at")


def _langsmith_export(rec: dict[str, Any]) -> None:
    """LangSmith's export shapes as its evaluator's dicts, in place.

    An experiment's `ExperimentResults.to_pandas()` row (saved as JSONL, CSV or Parquet) has flat
    columns `inputs.<key>`, `outputs.<key>` and `reference.<key>` (with `feedback.*`, `error`,
    `execution_time`, `example_id`, `id`): they are gathered into `inputs`, `outputs` and
    `reference_outputs`. A dataset example (`dataset_id` beside `inputs` and `outputs`) holds the
    reference in `outputs` (a dataset has no answers): it is read as `reference_outputs`, so the
    answer must come from a column of its own. A column already named `inputs`/`outputs` is kept.
    """
    for prefix, container in _DOTTED.items():
        keys = [k for k in rec if isinstance(k, str) and k.startswith(prefix) and len(k) > len(prefix)]
        if not keys or container in rec:
            continue
        rec[container] = {k[len(prefix):]: rec.pop(k) for k in keys}
    if (isinstance(rec.get("outputs"), Mapping) and isinstance(rec.get("inputs"), Mapping)
            and "reference_outputs" not in rec and any(k in rec for k in _EXAMPLE_FIELDS)):
        rec["reference_outputs"] = rec.pop("outputs")


def _field_of(key: str) -> str | None:
    """The canonical field a key names (itself or an alias), else None."""
    if key in _CANONICAL:
        return key
    return next((f for f, names in ALIASES.items() if key in names), None)


def _unpack(rec: dict[str, Any], aliases: dict[str, str]) -> None:
    """Open the dicts of openevals / LangSmith rows in place: `{"inputs": {"question": q, "context": c},
    "outputs": {"answer": a}, "reference_outputs": {"answer": r}}` -> question, source, answer, reference.

    A dict's keys are read through ALIASES; inside `reference_outputs` an answer-like key is the
    reference. A dict with one entry is that field's value whatever its key. Each dict's own field
    is taken first (an answer in `outputs` wins over one left in `inputs`), then the other fields it
    holds; a dict without its own field stays whole (an answer that is a JSON object). A field given
    at the top level wins over one found inside a dict; what no field takes stays in the dict,
    carried through.
    """
    opened: set[str] = set()
    for own in (True, False):
        for field, container in _CONTAINERS.items():
            inner = rec.get(container)
            if not isinstance(inner, Mapping) or (not own and container not in opened):
                continue
            found: dict[str, str] = {}  # canonical field -> the key holding it
            for key, value in inner.items():
                f = _field_of(str(key))
                if f == "answer" and field == "reference":
                    f = field  # {"answer": ...} inside reference_outputs is the reference
                if f is not None and f not in found and not _blank(value):
                    found[f] = key
            if own:
                if field not in found and len(inner) == 1:
                    found[field] = next(iter(inner))
                if field not in found:
                    continue
                found = {field: found[field]}
                opened.add(container)
            rest = dict(inner)
            for f, key in found.items():
                if any(n in rec and not _blank(rec[n]) for n in (f, *ALIASES.get(f, ())) if n != container):
                    continue  # given at the top level (or by another dict's own field): that wins
                rec[f] = rest.pop(key)
                aliases[f] = f"{container}.{key}"
            if rest:
                rec[container] = rest
            else:
                rec.pop(container)


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, the surrogate as \\uXXXX) for the first string in `record` holding a lone surrogate
    (JSON allows "\\ud83d"; such text cannot be encoded, hashed or written as UTF-8), else None."""
    stack: list[tuple[str, Any]] = [(str(k), v) for k, v in record.items()]
    while stack:
        field, v = stack.pop()
        if isinstance(v, str):
            found = None if v.isascii() else _SURROGATE.search(v)  # a regex, not a loop over characters
            if found is not None:
                return field, f"\\u{ord(found.group()):04x}"
        elif isinstance(v, Mapping):
            stack.extend((field, x) for x in v.values())
            stack.extend((field, x) for x in v.keys())
        elif isinstance(v, (list, tuple)):
            stack.extend((field, x) for x in v)
    for k in record:
        if isinstance(k, str) and not k.isascii() and _SURROGATE.search(k):
            return k.encode("utf-8", "backslashreplace").decode(), "in its name"
    return None


def scrub_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD (for carrying a broken row into an error row)."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8") if any("\ud800" <= c <= "\udfff" for c in value) else value
    if isinstance(value, Mapping):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_surrogates(v) for v in value]
    return value


def _blank(v: Any) -> bool:
    return v is None or (isinstance(v, str) and not v.strip()) or (isinstance(v, (list, dict)) and not v)


def _as_text(v: Any, field: str, bad: Any) -> str:
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "\n".join(v)
    if isinstance(v, (Mapping, list)):  # e.g. LangSmith `inputs` {"messages": [...]}: shown as JSON
        return json.dumps(v, ensure_ascii=False, default=str)
    raise bad(f"field '{field}' must be a string, got {type(v).__name__}", field)


def normalize_source(value: Any, bad: Any = None) -> list[str]:
    """Turn a string, a list of strings/dicts, or langchain-core Documents into a list of texts."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):  # a JSON list inside a CSV cell
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                parsed = _python_list(text)
            if isinstance(parsed, list):
                return normalize_source(parsed, bad)
        return [value]
    items: Sequence[Any] = value if isinstance(value, (list, tuple)) else [value]
    out: list[str] = []
    for doc in items:
        text = getattr(doc, "page_content", None)  # langchain_core Document
        if text is None and isinstance(doc, Mapping):
            text = doc.get("page_content", doc.get("text", doc.get("content")))
            title = doc.get("title")
            if text is not None and title:
                text = f"{title}\n{text}"
        elif text is not None:
            title = (getattr(doc, "metadata", None) or {}).get("title")
            text = f"{title}\n{text}" if title else text
        if text is None and isinstance(doc, str):
            text = doc
        if not isinstance(text, str):
            msg = ("field 'source' must be a string, a list of strings, a list of "
                   "{'page_content'|'text': ...} objects, or langchain-core Documents; "
                   f"got an element of type {type(doc).__name__}")
            if bad is None:
                raise InvalidItemError(msg, field="source")
            raise bad(msg, "source")
        out.append(text)
    return out


def _python_list(text: str) -> list[str] | None:
    """A list of strings written as a Python literal (`pandas.to_csv` of a list column: "['a', 'b']"),
    else None. Only a whole-cell list literal whose elements are all strings counts."""
    if not (text.startswith(("['", '["')) and text.endswith(("']", '"]'))):
        return None
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed):
        return parsed
    return None


_TRUE = {"1", "true", "yes", "y", "hallucination", "hallucinated"}
_FALSE = {"0", "false", "no", "n", "none", "faithful", "correct"}


def parse_label(value: Any, bad: Any = None) -> Literal[0, 1] | None:
    """Accept 0/1, true/false, "yes"/"no" (yes = hallucination); blank -> None."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, (int, float)) and value in (0, 1):
        return 1 if value == 1 else 0
    s = str(value).strip().lower()
    if s in _TRUE or s == "1.0":  # "1.0": a float column written by pandas
        return 1
    if s in _FALSE or s == "0.0":
        return 0
    msg = f"label {value!r} is not a label; use 1 (hallucination) or 0 (none), or true/false"
    if bad is None:
        raise InvalidItemError(msg, field="label")
    raise bad(msg, "label")


def read_records(path: str | Path, *, data: bytes | None = None, name: str | None = None,
                 delimiter: str | None = None) -> Iterator[tuple[int, Any]]:
    """Yield (line number, record or InvalidItemError) for each non-blank row: `io.read_rows` (the text
    formats through `files.read_rows`, and Parquet); `delimiter`: a CSV file's (else sniffed)."""
    from .io import read_rows as any_rows

    return any_rows(path, data=data, name=name, delimiter=delimiter)


def read_items(path: str | Path, *, data: bytes | None = None, name: str | None = None,
               column_map: ColumnMap | None = None, turns: Turns = "last",
               system: bool = False, delimiter: str | None = None) -> Iterator[Item | InvalidItemError]:
    """Yield an Item, or the InvalidItemError that explains why a row is unusable, per row.

    Nothing is dropped: callers turn error rows into error results. `path` "-" reads stdin.
    Each Item knows its line (`Item.where`), so later errors (routing) can name it. `name`: the
    name messages give when `path` is a copy of the input (see `files.read_rows`). `column_map`:
    field -> column, for columns of other names (`check_column_map`). Conversations: `turns="all"`
    gives one item per assistant turn, `system=True` counts the system prompt as evidence
    (`items_from_record`); a flat LangSmith export is read as its run trees, and OTLP JSON trace data
    (OpenInference spans) as one item per trace (`io.openinference`). `delimiter`: a CSV file's
    (`--delimiter`; by default `,`, or `;`, a tab or `|` sniffed from the header).
    """
    shown = str(path) if name is None else name
    column_map = check_column_map(column_map)
    for line, rec in _with_run_trees(otlp_rows(read_records(path, data=data, name=name, delimiter=delimiter), path=shown)):
        if isinstance(rec, InvalidItemError):
            rec.line = rec.line if rec.line is not None else line
            yield rec
            continue
        try:
            yield from items_from_record(rec, path=shown, line=line, turns=turns, system=system, column_map=column_map)
        except InvalidItemError as e:
            yield e


def _with_run_trees(rows: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """The rows; a flat LangSmith export (one run a row, linked by `parent_run_id`) as its root runs
    with their child runs nested (read whole: such exports are one agent session each, not millions)."""
    first = next(rows, None)
    if first is None:
        return
    if not (isinstance(first[1], Mapping) and "run_type" in first[1] and "parent_run_id" in first[1]):
        yield first
        yield from rows
        return
    everything = [first, *rows]
    runs = [rec for _, rec in everything if isinstance(rec, Mapping)]
    line_of = {str(rec.get("id")): line for line, rec in everything if isinstance(rec, Mapping)}
    yield from ((line, rec) for line, rec in everything if not isinstance(rec, Mapping))
    cycles: list[list[str]] = []
    for root in run_trees(runs, cycles=cycles):
        yield line_of.get(str(root.get("id")), 0), root
    for group in cycles:  # runs that lead to no root: one invalid row per cycle, never dropped
        line = line_of.get(group[0], 0)
        yield line, InvalidItemError(cycle_message(group), line=line, field="parent_run_id", item_id=group[0])


def load_items(path: str | Path, *, column_map: ColumnMap | None = None) -> list[Item]:
    """Read every item, raising the first InvalidItemError (for strict callers)."""
    items = []
    for row in read_items(path, column_map=column_map):
        if isinstance(row, InvalidItemError):
            raise row
        items.append(row)
    return items
