"""Run history over the run store: list the runs, show one, diff two.

    with RunStore(path) as store:
        runs = run_list(store)                       # newest first: id, when, status, model, rows, rate
        card = run_card(store, "20261201-...")       # settings, rates, answer rate, cost in calls
        d = run_diff(store, id_a, id_b)               # settings that differ, both rates, flipped items

Everything is read from the store (`runs/store.py`); no run is changed. A diff pairs the two runs'
rows by id: the items whose label changed (0 -> 1, 1 -> 0), the ids only one run has, and the
result settings that differ (the recorded `RunSpec`s), so "what changed between Tuesday and today"
is one command.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, Field

from ..config.run import flat_view, results_view
from ..results import Judgment
from .store import RunInfo, RunStore


class RunCard(BaseModel):
    """One run: what it was and what it found."""

    run_id: str
    created: str
    """UTC, ISO 8601 to the second."""
    status: str
    model: str | None = None
    criterion: str | None = None
    input_path: str | None = None
    output_path: str | None = None
    total: int | None = None
    rows: int = 0
    ones: int = 0
    scored: int = 0
    unscored: int = 0
    invalid: int = 0
    answered: int = 0
    """Scored rows whose answer had something checkable (the answer rate's count)."""
    calls: int = 0
    output_tokens: int = 0
    """Completion tokens of its rows, reasoning tokens included."""
    reasoning_tokens: int = 0
    """Hidden reasoning tokens (reasoning judges; part of output_tokens)."""
    rate: float | None = None
    answer_rate: float | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    command: str | None = None
    criteria: dict[str, int] = Field(default_factory=dict)
    """The criterion each judged row was judged by (routed runs judge by several) -> rows."""
    input_sha: str | None = None


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def card(info: RunInfo, rows: list[Judgment]) -> RunCard:
    """The card of `info` from its result rows."""
    out = RunCard(run_id=info.run_id, created=_when(info.created), status=info.status,
                  model=info.model, criterion=info.settings.get("criterion"),
                  input_path=info.input_path, output_path=info.output_path, total=info.total,
                  settings=flat_view(info.spec) if info.spec else info.settings, command=info.command,
                  rows=len(rows), input_sha=info.input_sha)
    for j in rows:
        out.calls += j.usage.calls
        if j.criterion:
            out.criteria[j.criterion] = out.criteria.get(j.criterion, 0) + 1
        out.output_tokens += j.usage.output_tokens
        out.reasoning_tokens += j.usage.reasoning_tokens
        if j.status == "invalid":
            out.invalid += 1
        elif j.label is None:
            out.unscored += 1
        else:
            out.scored += 1
            out.ones += j.label
            out.answered += bool(j.claims or j.requirements)
    if out.scored:
        out.rate, out.answer_rate = out.ones / out.scored, out.answered / out.scored
    return out


def run_list(store: RunStore) -> list[RunCard]:
    """Every run in the store, newest first."""
    infos = sorted(store.runs(), key=lambda r: r.created, reverse=True)
    return [card(i, list(store.results(i.run_id))) for i in infos]


def run_card(store: RunStore, run_id: str) -> RunCard:
    """One run's card. Raises ConfigError (from the store) for an unknown id."""
    info = store.get_run(run_id)
    return card(info, list(store.results(info.run_id)))


class Flipped(BaseModel):
    id: str
    a: int
    b: int
    reason: str | None = None
    """Run B's reason for its label."""
    answer_changed: bool | None = None
    """The item's judged text (answer, question, evidence) differs between the runs' inputs: an answer
    change; False: the same text judged differently (a judge change); None: an input file is gone."""


class RunDiff(BaseModel):
    """Two runs side by side: settings, rates and the items whose label changed (A -> B)."""

    a: RunCard
    b: RunCard
    settings: list[str] = Field(default_factory=list)
    """"name: A-value -> B-value" for each result setting that differs."""
    paired: int = 0
    """Items scored in both runs."""
    flipped: list[Flipped] = Field(default_factory=list)
    only_a: list[str] = Field(default_factory=list)
    only_b: list[str] = Field(default_factory=list)
    same_input: bool | None = None
    """Both runs judged the same input file (by content); None when a checksum is missing."""

    def answer_changes(self) -> list[Flipped]:
        return [f for f in self.flipped if f.answer_changed]

    def judge_changes(self) -> list[Flipped]:
        return [f for f in self.flipped if f.answer_changed is False]


def judged_texts(info: RunInfo) -> dict[str, str] | None:
    """Item id -> a hash of what was judged of it, read again from the run's input file; None when
    the file is gone (or unreadable, or stdin)."""
    import hashlib
    import json
    from pathlib import Path

    from .._judge import JUDGED_FIELDS
    from ..items import Item, read_items

    path, s = info.input_path, info.spec
    if not path or path == "-" or not Path(path).is_file() or s is None:
        return None
    try:
        rows = read_items(path, column_map=s.column_map, turns=s.turns, delimiter=s.delimiter)
        return {it.id: hashlib.sha256(json.dumps(it.model_dump(include=set(JUDGED_FIELDS)), sort_keys=True,
                                                 default=str).encode("utf-8", "surrogatepass")).hexdigest()
                for it in rows if isinstance(it, Item)}
    except Exception:  # noqa: BLE001 - a diff never fails on an input it can no longer read
        return None


def _settings_diff(a: RunInfo, b: RunInfo) -> list[str]:
    """The recorded fields that differ, those that change results first."""
    sa, sb = a.spec, b.spec
    results = [*flat_view(results_view(sa)), *flat_view(results_view(sb))] if sa and sb else []
    fa, fb = (flat_view(sa) if sa else a.settings), (flat_view(sb) if sb else b.settings)
    keys = dict.fromkeys([*results, *sorted({*fa, *fb} - set(results))])
    return [f"{k}: {fa.get(k)!r} -> {fb.get(k)!r}" for k in keys if fa.get(k) != fb.get(k)]


def run_diff(store: RunStore, run_a: str, run_b: str) -> RunDiff:
    """Run A against run B, paired by id."""
    ia, ib = store.get_run(run_a), store.get_run(run_b)
    ra, rb = list(store.results(ia.run_id)), list(store.results(ib.run_id))
    out = RunDiff(a=card(ia, ra), b=card(ib, rb), settings=_settings_diff(ia, ib))
    by_b = {j.id: j for j in rb}
    ids_a = {j.id for j in ra}
    if ia.input_sha and ib.input_sha:
        out.same_input = ia.input_sha == ib.input_sha
    texts_a, texts_b = (None, None) if out.same_input else (judged_texts(ia), judged_texts(ib))
    out.only_a = sorted(ids_a - set(by_b))
    out.only_b = sorted(set(by_b) - ids_a)
    for ja in ra:
        jb = by_b.get(ja.id)
        if jb is None or ja.label is None or jb.label is None:
            continue
        out.paired += 1
        if ja.label != jb.label:
            changed = (False if out.same_input else None if texts_a is None or texts_b is None
                       else texts_a.get(ja.id) != texts_b.get(ja.id))
            out.flipped.append(Flipped(id=ja.id, a=ja.label, b=jb.label, reason=jb.reason, answer_changed=changed))
    return out
