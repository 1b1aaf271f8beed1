"""Run history over the run store: list the runs, show one, diff two.

    with RunStore(path) as store:
        runs = run_list(store)                       # newest first: id, when, status, model, rows, rate
        card = run_card(store, "20261201-...")       # settings, rates, answer rate, cost in calls
        d = run_diff(store, id_a, id_b)               # settings that differ, both rates, flipped items

Everything is read from the store (`runs/store.py`); no run is changed. A diff pairs the two runs'
rows by id: the items whose label changed (0 -> 1, 1 -> 0), the ids only one run has, and the
result settings that differ (`RunSettings`' record), so "what changed between Tuesday and today"
is one command.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, Field

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


def _when(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def card(info: RunInfo, rows: list[Judgment]) -> RunCard:
    """The card of `info` from its result rows."""
    out = RunCard(run_id=info.run_id, created=_when(info.created), status=info.status,
                  model=info.settings.get("model"), criterion=info.settings.get("criterion"),
                  input_path=info.input_path, output_path=info.output_path, total=info.total,
                  settings=info.settings, command=info.command, rows=len(rows))
    for j in rows:
        out.calls += j.usage.calls
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


def _settings_diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    from .settings import RESULT_SETTINGS

    keys = [k for k in RESULT_SETTINGS if k in a or k in b] + sorted(k for k in {*a, *b} - set(RESULT_SETTINGS))
    return [f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in keys if a.get(k) != b.get(k)]


def run_diff(store: RunStore, run_a: str, run_b: str) -> RunDiff:
    """Run A against run B, paired by id."""
    ia, ib = store.get_run(run_a), store.get_run(run_b)
    ra, rb = list(store.results(ia.run_id)), list(store.results(ib.run_id))
    out = RunDiff(a=card(ia, ra), b=card(ib, rb), settings=_settings_diff(ia.settings, ib.settings))
    by_b = {j.id: j for j in rb}
    ids_a = {j.id for j in ra}
    out.only_a = sorted(ids_a - set(by_b))
    out.only_b = sorted(set(by_b) - ids_a)
    for ja in ra:
        jb = by_b.get(ja.id)
        if jb is None or ja.label is None or jb.label is None:
            continue
        out.paired += 1
        if ja.label != jb.label:
            out.flipped.append(Flipped(id=ja.id, a=ja.label, b=jb.label, reason=jb.reason))
    return out
