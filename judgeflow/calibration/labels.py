"""Human labels: read from a labels file (JSONL or CSV) or from results rows, joined by `id`.

A labels file has one row per item with an `id` and a `label` (aliases: `human_label`,
`is_hallucination`, `hallucination`). Accepted label values (case-insensitive):

    1, true, yes, y, hallucination, hallucinated  -> 1 (the answer has an error)
    0, false, no, n, none, faithful, correct      -> 0 (no error)
    blank / null                                  -> not labelled (the row is ignored, and counted)

Anything else is an error naming the file, line and field. Rows are never dropped silently:
ids present on one side only are reported by `join_labels`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..errors import InvalidItemError
from ..io.results import read_results
from ..items import ALIASES, parse_label, read_records
from ..results import Judgment

Label = Literal[0, 1]
LABEL_FIELDS = ("label", *ALIASES["label"])
ID_FIELDS = ("id", *ALIASES["id"])


class HumanLabels(BaseModel):
    """Labels read from one file: id -> 0/1, plus the ids the file left unlabelled."""

    path: str
    labels: dict[str, Label] = Field(default_factory=dict)
    """id -> human label, for rows with a 0/1 label."""
    unlabelled: list[str] = Field(default_factory=list)
    """ids whose label is blank or null (skipped while labelling)."""


def first_field(rec: Mapping[str, Any], names: Iterable[str]) -> tuple[str | None, Any]:
    for name in names:
        if name in rec:
            return name, rec[name]
    return None, None


def label_rows(path: str | Path) -> Iterator[tuple[int, Mapping[str, Any], str]]:
    """(line, row, item id) for each row of a labels file.

    Raises:
        InvalidItemError: an unreadable row, a row that is not an object, or one with no id.
    """
    p = str(path)
    for line, rec in read_records(path):
        if isinstance(rec, InvalidItemError):
            raise rec
        if not isinstance(rec, Mapping):
            raise InvalidItemError(f"expected a JSON object per line, got {type(rec).__name__}", path=p, line=line)
        _, raw_id = first_field(rec, ID_FIELDS)
        if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
            raise InvalidItemError("row has no 'id'; each label row needs the id of the item it labels",
                                   path=p, line=line, field="id")
        yield line, rec, str(raw_id)


def read_labels(path: str | Path) -> HumanLabels:
    """Read a labels file (.jsonl or .csv) with `id` and `label` columns.

    Raises:
        InvalidItemError: a row without an id, a label that is not one of the accepted
            values, a duplicated id, or a file with no label column at all.
    """
    p = str(path)
    out = HumanLabels(path=p)
    seen: dict[str, int] = {}
    any_label_field = False
    for line, rec, item_id in label_rows(path):
        if item_id in seen:
            raise InvalidItemError(f"id {item_id!r} is labelled twice (first on line {seen[item_id]}); "
                                   "keep one label per id", path=p, line=line, field="id", item_id=item_id)
        seen[item_id] = line
        field, raw = first_field(rec, LABEL_FIELDS)
        any_label_field = any_label_field or field is not None

        def bad(msg: str, f: str, _line: int = line, _id: str = item_id) -> InvalidItemError:
            return InvalidItemError(f"item '{_id}': {msg} (also accepted: yes/no)",
                                    path=p, line=_line, field=field or f, item_id=_id)

        value = parse_label(raw, bad)
        if value is None:
            out.unlabelled.append(item_id)
        else:
            out.labels[item_id] = value
    if not seen:
        raise InvalidItemError("the labels file has no rows", path=p)
    if not any_label_field:
        raise InvalidItemError(f"no label column; give each row one of {list(LABEL_FIELDS)} (1 = error, 0 = none)",
                               path=p, field="label")
    return out


class Joined(BaseModel):
    """Results paired with human labels, and what could not be paired."""

    pairs: list[tuple[Judgment, Label]] = Field(default_factory=list)
    """Results that have a human label (scored or not)."""
    unlabelled: list[str] = Field(default_factory=list)
    """Result ids with no human label (not used in the statistics)."""
    only_in_labels: list[str] = Field(default_factory=list)
    """Label ids with no result row: the labels file and results do not match there."""
    label_source: str = "results"
    """Where the human labels came from: "results" (human_label) or the labels file path."""


def join_labels(results: Iterable[Judgment], labels: HumanLabels | Mapping[str, Label] | None = None) -> Joined:
    """Pair each result with its human label: from `labels` if given, else its `human_label`.

    Raises:
        InvalidItemError: a result id appears twice.
    """
    source = "results"
    table: Mapping[str, Label] | None = None
    skipped: set[str] = set()
    if isinstance(labels, HumanLabels):
        table, source, skipped = labels.labels, labels.path, set(labels.unlabelled)
    elif labels is not None:
        table, source = labels, "labels"
    joined = Joined(label_source=source)
    seen: set[str] = set()
    for j in results:
        if j.id in seen:
            raise InvalidItemError(f"result id {j.id!r} appears twice; each item must be judged once "
                                   "(did two runs get concatenated?)", field="id", item_id=j.id)
        seen.add(j.id)
        human = j.human_label if table is None else table.get(j.id)
        if human is None:
            joined.unlabelled.append(j.id)
        else:
            joined.pairs.append((j, human))
    if table is not None:
        joined.only_in_labels = [i for i in table if i not in seen]
        joined.only_in_labels += [i for i in skipped if i not in seen and i not in table]
    return joined


def read_run(source: Iterable[Judgment] | str | Path, *, store: str | Path | None = None) -> tuple[list[Judgment], str]:
    """A run's result rows and a name for it: rows as given, a results file, or a run id in `store`.

    A path that exists is read as a results file; anything else is looked up as a run id in the
    run store (`store`, default `.judgeflow/runs.sqlite`), which must exist and hold a finished run.

    Raises:
        InvalidItemError: an unreadable results file.
        ConfigError: neither a file nor a run id in the store, or a run that did not finish.
    """
    if not isinstance(source, (str, Path)):
        return list(source), "results"
    if Path(source).exists():
        return read_results(source), str(source)
    from ..errors import ConfigError
    from ..runs.store import (  # only for run ids: sqlite is not needed for files
        DEFAULT_STORE,
        RunStore,
    )

    where = Path(store) if store is not None else DEFAULT_STORE
    if not where.exists():
        raise ConfigError(f"{source}: no such results file, and no run store at {where} to look it up as a run id "
                          "(give the file written by `judgeflow run -o`, or --store STORE with the run id)")
    with RunStore(where, readonly=True) as runs:
        info = runs.get_run(str(source))
        if info.status != "done":
            raise ConfigError(f"run {info.run_id} in {where} is {info.status}, not done: finish it with "
                              f"`{info.command}` before comparing it")
        rows = list(runs.results(info.run_id))
    if not rows:
        raise ConfigError(f"run {info.run_id} in {where} has no results")
    return rows, f"run {info.run_id}"
