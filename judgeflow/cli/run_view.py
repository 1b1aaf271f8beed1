"""What `judgeflow run` shows while it judges and once it is done: the progress bar with the
session's counts, and the end-of-run summary (or its JSON).

    session = Session(exporter)                      # what this invocation judged
    with progress_bar(con, total=n, completed=done, disable=False) as go: ...
    code = report(run, judge, spec, tally, session, con, resume=False, as_json=False)
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from .._judge import Judge
from ..config.judging import RepeatsSpec
from ..config.run import RunSpec
from ..errors import OVER_BUDGET
from ..files import STDIO
from ..judging import Judging
from ..results import Judgment, Usage
from ..runs.pricing import load_prices
from ..runs.run import Run
from ..runs.summary import (
    Tally,
    answer_line,
    citation_line,
    decided_line,
    run_failure,
    summarize,
    summary_json,
)


class Session:
    """What this invocation judged (a resumed run's earlier sessions are not in it); each result is
    also sent to `exporter` (OpenTelemetry), if any."""

    def __init__(self, exporter: Any = None) -> None:
        self.exporter = exporter
        self.usage = Usage()
        self.items = self.cached = self.errors = 0
        self.start = time.monotonic()
        self.elapsed = 0.0

    def add(self, j: Judgment) -> None:
        self.usage.add(j.usage)
        self.items += 1
        self.cached += j.cached
        # a row the spend cap left unsent is not an error: the run stops there, --resume judges it
        self.errors += j.status == "unscored" and not (j.error or "").startswith(OVER_BUDGET)
        self.elapsed = time.monotonic() - self.start
        if self.exporter is not None:
            self.exporter.export(j)

    def fields(self) -> dict[str, Any]:
        """The progress bar's fields."""
        u = self.usage
        return {"rate": f"{self.items / max(self.elapsed, 1e-9):.1f} items/s", "calls": u.calls,
                "tokens": f"{u.input_tokens + u.output_tokens:,}", "cached": self.cached,
                "errors": self.errors}


def report(run: Run, judge: Judging, settings: RunSpec, tally: Tally, session: Session,
           con: Console, *, resume: bool, as_json: bool, budget: Any = None) -> int:
    """Print the summary (or its JSON); 1 when nothing was judged or too many rows are unscored."""
    prices = load_prices(Path(settings.prices) if settings.prices else None)
    failed = run_failure(tally, settings.max_unscored)
    output = Path(settings.output or "-")
    if as_json:
        summary = summary_json(tally, run_id=run.run_id, model=judge.model, output=output,
                               prices=prices, elapsed=session.elapsed, session_items=session.items)
        if budget is not None:
            summary["budget"] = budget.summary()
        # with -o - the results are stdout: the summary goes to stderr (stdout: one result a line)
        print(json.dumps({**summary, "unreadable": dict(run.store.unreadable), "failure": failed}),
              file=sys.stderr if str(output) == STDIO else sys.stdout)
        return 1 if failed else 0
    lines = summarize(tally, model=judge.model, prices=prices, elapsed=session.elapsed,
                      session=session.usage, session_items=session.items)
    if resume:
        from .batch_cmd import cost_line  # a batch run finished online: each call priced by its way

        lines[-1] = cost_line(run.store, run.run_id, judge.model, prices) or lines[-1]
    lines += _more_lines(settings, tally, budget, output)
    con.print(f"run {run.run_id}: judged with {judge.model} -> {output}", markup=False,
              soft_wrap=True)
    unreadable = run.store.unreadable_note()
    for note in [*client_notes(judge), *([unreadable] if unreadable else [])]:
        con.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    from ..calibration.corrected import rate_line  # numpy: loaded once a run has finished

    tail = answer_line(tally) + rate_line(tally) + citation_line(tally) + decided_line(tally)
    for line in lines + tail + limit_report(session.elapsed, session.items):
        con.print("  " + line, markup=False, soft_wrap=True)
    if failed:
        fix = "; fix the invalid rows (each row's error names the field and the fix) and run again"
        again = (f"; re-judge the unscored rows with: {run.command}" if tally.unscored
                 else fix if tally.invalid else f" in {settings.input}")
        con.print(f"[red]{escape(failed)}[/red]{escape(again)}", soft_wrap=True)
        return 1
    return 0


def _more_lines(settings: RunSpec, tally: Tally, budget: Any, output: Path) -> list[str]:
    """The summary's lines on the spend cap and on repeats."""
    lines = []
    if budget is not None:
        lines.append(f"budget: {budget.describe()} spent"
                     + (f"; {budget.denied} call(s) refused at the cap" if budget.denied else "")
                     + (f"; {tally.cached} row(s) served from the cache cost nothing"
                        if tally.cached else ""))
    if isinstance(settings.judging, RepeatsSpec):
        lines.append(f"{settings.judging.k} verdicts per item (--repeats), the calls above "
                     f"included: `judgeflow stability {output}` reports the items that flip")
    return lines


def limit_report(elapsed: float, items: int) -> list[str]:
    """The rate limits met this session (no provider SDK is imported for it)."""
    from ..backends.limits import report

    return report(elapsed, items)


def client_notes(judging: Judging) -> list[str]:
    """What the model client wants the user to know (e.g. a structured-output fallback taken)."""
    # a panel or cascade: no one backend
    return judging.backend.notes if isinstance(judging, Judge) else []


def progress_bar(con: Console, *, total: int, completed: int,
                 disable: bool) -> contextlib.AbstractContextManager[Any]:
    """The judging progress bar, as a context that gives `advance(**fields)` (one item done).
    With --no-progress it is a no-op, and rich.progress is not even imported."""
    if disable:
        return contextlib.nullcontext(lambda **fields: None)
    return _rich_bar(con, total=total, completed=completed)


@contextlib.contextmanager
def _rich_bar(con: Console, *, total: int, completed: int) -> Iterator[Any]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    from ..backends.limits import progress_note

    class LimitColumn(ProgressColumn):
        """The pace the provider's rate limit allows and the requests waiting on it (read live)."""

        def render(self, task: Any) -> Text:
            return Text(progress_note(), style="yellow")

    columns = (
        TextColumn("[bold]judging[/bold]"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"), TimeRemainingColumn(),
        TextColumn("calls {task.fields[calls]} · tokens {task.fields[tokens]} · "
                   "cached {task.fields[cached]} · "
                   "errors {task.fields[errors]}"), LimitColumn(),
    )
    with Progress(*columns, console=con, refresh_per_second=4) as progress:
        task = progress.add_task("judge", total=total, completed=completed, rate="", calls=0,
                                 tokens=0,
                                 cached=0, errors=0)
        yield lambda **fields: progress.update(task, advance=1, **fields)


def note_aliases(used: Counter[tuple[str, str]], con: Console) -> None:
    """Say which input fields were read under another name (e.g. 'context' as source, or a --map
    column): counts of (field, alias), as `check_input` returns them."""
    if used:
        said = ", ".join(f"'{alias}' as {field} ({n} rows)"
                         for (field, alias), n in sorted(used.items()))
        con.print(f"fields read by alias: {said}", soft_wrap=True, markup=False, style="dim")
