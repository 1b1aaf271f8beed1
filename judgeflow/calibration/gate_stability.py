"""The gate and the judge's own noise: items the judge flips on are unstable, not regressions.

    gate(cand, baseline, stability=["cand_again.jsonl"])   # cand re-judged: items whose label differs are unstable
    gate(cand, baseline, repeats=3)                        # rows made with `run --repeats 3` (checked)

An item is unstable when the judge's own verdicts on the same answer differ: its repeats (`judgeflow
run --repeats K`) or the candidate's answers judged again (`--stability RUN...`). A label that
changes between baseline and candidate on such an item may be the judge's coin, not the bot: the
gate sets those flips aside (`GateResult.unstable_flips`), tests only the stable ones, and says how
many it set aside.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError
from ..results import Judgment


class GateFlips(Protocol):
    """What `set_aside` and `stability_note` read and set on a gate's result (gate.GateResult), named
    here so this module does not import gate (gate imports it)."""

    got_worse: list[Any]
    got_better: list[Any]
    unstable_flips: list[Any]
    unstable: Any


def check_repeats(rows: Iterable[Judgment], k: int, name: str) -> None:
    """Every scored row of a run carries at least `k` repeats.

    Raises:
        ConfigError: a scored row with fewer (the message says how to make them).
    """
    if k < 2:
        raise ConfigError(f"--repeats is the judge's verdicts per item, at least 2, got {k}")
    short = [j.id for j in rows if j.label is not None and len(j.repeats or []) < k]
    if short:
        raise ConfigError(f"{name}: {len(short)} scored row(s) carry fewer than {k} repeats (e.g. {short[0]!r}); "
                          f"judge the run with `judgeflow run ... --repeats {k}`, or give re-judged runs with "
                          "--stability RUN...")


def unstable_from_runs(candidate: Sequence[Judgment], runs: Sequence[Any], store: str | Path | None) -> set[str]:
    """Ids whose label differs between the candidate and its answers judged again (`runs`)."""
    from .stability import stability

    return stability([list(candidate), *runs], store=store).unstable_ids


def judge_unstable(rows_b: Sequence[Judgment], rows_c: Sequence[Judgment], names: tuple[str, str], *,
                   stability: Sequence[Any] | None, repeats: int | None, store: str | Path | None) -> set[str]:
    """Ids whose verdicts the judge itself flips: in either run's repeats, or between the candidate and `stability`."""
    from .stability import verdicts_of

    if repeats is not None:
        check_repeats(rows_b, repeats, names[0])
        check_repeats(rows_c, repeats, names[1])
    out = {j.id for j in (*rows_b, *rows_c) if len({v.label for v in verdicts_of(j) if v.label is not None}) > 1}
    return out | (unstable_from_runs(rows_c, stability, store) if stability else set())


def set_aside(result: GateFlips) -> None:
    """Move the flips on unstable items out of got_worse / got_better into unstable_flips."""
    result.unstable_flips = [f for f in (*result.got_worse, *result.got_better) if f.unstable]
    result.got_worse = [f for f in result.got_worse if not f.unstable]
    result.got_better = [f for f in result.got_better if not f.unstable]


def stability_note(result: GateFlips) -> str:
    """The summary's sentence on the judge's noise ("" when no instability could be seen or none was found)."""
    flips = result.unstable_flips
    if not flips:
        return f" {len(result.unstable)} item(s) are unstable; none of them flipped." if result.unstable else ""
    worse = sum(f.candidate == 1 for f in flips)
    return (f" {len(flips)} flip(s) on items the judge itself flips on ({worse} 0 -> 1, {len(flips) - worse} 1 -> 0) "
            f"were set aside as unstable, not counted as regressions; {len(result.unstable)} item(s) are unstable.")
