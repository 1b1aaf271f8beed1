"""An interactive terminal labeller for a sample made by `judgeflow sample`.

    label_file("to_label.jsonl")                    # input_fn=input, a rich Console

It shows each item's question, reference / source / spec (long texts truncated) and answer,
and reads one key per item: 1 (hallucination), 0 (none), s (skip), b (back), q (quit). Every
label is saved at once (the file is rewritten atomically), so it resumes at the first item
neither labelled nor skipped. The judge's verdict, if the sample carries one, is shown only
after the person has labelled the item, so it cannot anchor them. The labelled file is a
labels file for `judgeflow calibrate --labels`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from ..errors import ConfigError, InvalidItemError
from ..files import file_lock
from ..io.jsonl import json_line, write_results
from ..items import Item, read_records
from .annotators import LABELLER_FIELD
from .labels import ID_FIELDS, LABEL_FIELDS

HELP = "1 = hallucination/error · 0 = no error · s = skip · b = back · q = quit (progress is saved)"
SKIPPED = "label_skipped"


def _stamp(path: Path) -> tuple[int, int, int] | None:
    st = path.stat()
    return st.st_ino, st.st_mtime_ns, st.st_size


class LabelSummary(BaseModel):
    """Where labelling stands."""

    path: str
    total: int
    labelled: int
    ones: int
    zeros: int
    skipped: int
    remaining: int
    agree: int = 0
    """Labelled items whose judge verdict matches the person's (when the sample carries one)."""
    false_alarms: int = 0
    misses: int = 0
    invalid: int = 0
    """Items whose input row the judge found invalid: not asked (there is no verdict to calibrate)."""


def truncate(text: str, limit: int) -> str:
    """`text` cut at a word boundary near `limit`, saying how much was left out."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    cut = cut if cut > limit * 0.8 else limit
    return f"{text[:cut].rstrip()} … [+{len(text) - cut} characters not shown]"


def atomic_write(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write JSONL rows to a temporary file beside `path`, then rename it over `path`."""
    write_results(path, rows)


class Labeller:
    """The labelling session over one JSONL file."""

    def __init__(
        self,
        path: str | Path,
        *,
        input_fn: Callable[[str], str] | None = None,
        console: Console | None = None,
        max_chars: int = 1500,
        name: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.name = name.strip() if name and name.strip() else None
        """Who labels (`--as NAME`): written into each label as `labelled_by`."""
        if self.path.suffix.lower() != ".jsonl":
            raise InvalidItemError(
                "the labeller works on .jsonl files; make one with `judgeflow sample INPUT -o "
                "TO_LABEL.jsonl`",
                path=str(path),
            )
        self.input_fn = input_fn or (lambda prompt: input(prompt))  # looked up at call time
        self.max_chars = max_chars
        self.con = console or Console(highlight=False)
        self.rows: list[dict[str, Any]] = []
        self.items: list[Item] = []
        self._lines: list[str | None] = []
        """Row k's JSONL line while row k is unchanged (None: encode it again)."""
        self._stamp = _stamp(self.path) if self.path.exists() else None
        """The file as this process last read or wrote it (taken before reading): if it is still so, no one
        else wrote since."""
        for line, rec in read_records(self.path):
            if isinstance(rec, InvalidItemError):
                raise rec
            self.items.append(Item.from_record(rec, path=str(self.path), line=line))
            self.rows.append(dict(rec))
        if not self.rows:
            raise InvalidItemError("no items to label", path=str(self.path))
        self._lines = [None] * len(self.rows)
        if self.name:
            check_labeller(self.path, self.rows, self.name)

    def label_of(self, i: int) -> int | None:
        return self.items[i].label

    def done(self, i: int) -> bool:
        return self.label_of(i) is not None or bool(self.rows[i].get(SKIPPED)) or self.invalid(i)

    def invalid(self, i: int) -> bool:
        """The judge found item i's input row invalid: there is nothing judged to label (never asked)."""
        judge = self.rows[i].get("judge")
        return (
            isinstance(judge, dict)
            and judge.get("status") == "invalid"
            and self.label_of(i) is None
        )

    def next_open(self, after: int = -1) -> int | None:
        """The next item neither labelled nor skipped after `after`, wrapping round; None if none."""
        n = len(self.rows)
        return next(
            ((after + k) % n for k in range(1, n + 1) if not self.done((after + k) % n)), None
        )

    def set_label(self, i: int, label: int | None, *, row: dict[str, Any] | None = None) -> None:
        """Label item i (None = skip) and save; `row` is item i's row with other edits (a note)."""
        row = dict(self.rows[i] if row is None else row)
        for f in LABEL_FIELDS:
            row.pop(f, None)
        if label is None:
            row[SKIPPED] = True
        else:
            row.pop(SKIPPED, None)
            row["label"] = label
            if self.name:
                row[LABELLER_FIELD] = self.name
            row["labelled_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.write_row(i, row)

    def write_row(self, i: int, row: dict[str, Any]) -> None:
        """Save item i as `row`, merged with what other processes wrote to the file, under a file lock.

        Every other row is taken from the file as it is now (another `review` or `label` on the
        same file may have labelled it since this one read it), so no one's label is lost. If
        the write fails (a full disk), nothing changes in memory: item i stays as it was.

        Raises:
            OutputError: the file cannot be written (the message names it and why).
        """
        with file_lock(self.path):
            self._merge_from_disk(skip=i)
            lines, line = self._lines_now(), json_line(row)
            write_results(self.path, [*lines[:i], line, *lines[i + 1 :]])
            self._stamp = _stamp(self.path)
        self._lines[i] = line
        self.rows[i] = row
        self.items[i] = Item.from_record(row, path=str(self.path), line=i + 1)

    def _lines_now(self) -> list[str]:
        """Each row as its JSONL line, encoded once and again only when the row changes (5,000 rows stay quick)."""
        out = []
        for k, line in enumerate(self._lines):
            if line is None:
                line = self._lines[k] = json_line(self.rows[k])
            out.append(line)
        return out

    def _merge_from_disk(self, *, skip: int) -> None:
        """Take every row but `skip` from the file on disk; rows only the file has are added at the end."""
        if (
            not self.path.exists() or _stamp(self.path) == self._stamp
        ):  # no one wrote since this process did
            return
        index = {it.id: k for k, it in enumerate(self.items)}
        for line, rec in read_records(self.path):
            if isinstance(rec, InvalidItemError):
                raise rec
            k = index.get(str(next((rec[f] for f in ID_FIELDS if f in rec), "")))
            if k is not None and (k == skip or rec == self.rows[k]):
                continue
            item = Item.from_record(rec, path=str(self.path), line=line)
            if k is None:
                self.items.append(item)
                self.rows.append(dict(rec))
                self._lines.append(None)
            else:
                self.items[k], self.rows[k], self._lines[k] = item, dict(rec), None

    def show(self, i: int) -> None:
        it, n = self.items[i], len(self.rows)
        s = self.summary()
        self.con.rule(
            f"item {i + 1} of {n} · {escape(it.id)} · labelled {s.labelled}, skipped {s.skipped}"
        )
        if it.question:
            self.con.print(
                Panel(
                    escape(truncate(it.question, self.max_chars)),
                    title="question",
                    title_align="left",
                )
            )
        if it.reference:
            self.con.print(
                Panel(
                    escape(truncate(it.reference, self.max_chars)),
                    title="reference",
                    title_align="left",
                )
            )
        if it.source:
            per_doc = max(300, self.max_chars * 2 // len(it.source))
            for k, doc in enumerate(it.source[:8], 1):
                title = f"source {k} of {len(it.source)}" if len(it.source) > 1 else "source"
                self.con.print(
                    Panel(escape(truncate(doc, per_doc)), title=title, title_align="left")
                )
            if len(it.source) > 8:
                self.con.print(f"… {len(it.source) - 8} more source documents not shown")
        if it.spec:
            self.con.print(
                Panel(escape(truncate(it.spec, self.max_chars)), title="spec", title_align="left")
            )
        self.con.print(
            Panel(
                escape(truncate(it.answer, self.max_chars * 2)),
                title="answer",
                title_align="left",
                border_style="bold",
            )
        )
        if self.label_of(i) is not None:
            self.con.print(
                f"your label: {self.label_of(i)} (type 1 or 0 to change it, s to keep it)"
            )

    def reveal(self, i: int) -> None:
        """After the person labelled item i: what the judge said, and whether they agree."""
        judge = self.rows[i].get("judge")
        if not isinstance(judge, dict) or "label" not in judge:
            return
        mine, theirs = self.label_of(i), judge.get("label")
        claim = judge.get("claim") or {}
        why = f"{claim.get('verdict')}: {claim.get('text')}" if claim else judge.get("reason") or ""
        if theirs is None:
            outcome = "the judge left it unscored"
        elif theirs == mine:
            outcome = "[green]you agree[/green]"
        else:
            outcome = (
                "[yellow]a false alarm by the judge[/yellow]"
                if theirs == 1
                else "[magenta]a miss by the judge[/magenta]"
            )
        said = (
            "nothing (invalid input)"
            if judge.get("status") == "invalid"
            else "unscored"
            if theirs is None
            else theirs
        )
        crit = f" ({escape(str(judge['criterion']))})" if judge.get("criterion") else ""
        self.con.print(f"judge said {said}{crit}: {escape(why)} → {outcome}")

    def summary(self) -> LabelSummary:
        labels = [self.label_of(i) for i in range(len(self.rows))]
        s = LabelSummary(
            path=str(self.path),
            total=len(labels),
            labelled=sum(x is not None for x in labels),
            ones=labels.count(1),
            zeros=labels.count(0),
            skipped=sum(1 for i, x in enumerate(labels) if x is None and self.rows[i].get(SKIPPED)),
            remaining=sum(1 for i in range(len(labels)) if not self.done(i)),
            invalid=sum(1 for i in range(len(labels)) if self.invalid(i)),
        )
        for i, mine in enumerate(labels):
            judge = self.rows[i].get("judge")
            theirs = judge.get("label") if isinstance(judge, dict) else None
            if mine is None or theirs is None:
                continue
            s.agree += theirs == mine
            s.false_alarms += theirs == 1 and mine == 0
            s.misses += theirs == 0 and mine == 1
        return s

    def run(self, *, start: int | None = None) -> LabelSummary:
        """Label until every item is labelled or skipped, or the person quits."""
        i = start if start is not None else self.next_open()
        if i is None:
            self.con.print(
                f"all {len(self.rows)} items are labelled or skipped; `--start N` revisits item N",
                markup=False,
            )
            return self.finish()
        i = max(0, min(i, len(self.rows) - 1))
        if any(r.get("sample_focus") for r in self.rows):
            from .sampling import FOCUS_NOTE

            self.con.print(f"[yellow]note:[/yellow] {FOCUS_NOTE}")
        self.con.print(HELP)
        while True:
            self.show(i)
            try:
                key = self.input_fn("label [1/0/s/b/q]: ").strip().lower()
            except (EOFError, KeyboardInterrupt):
                key = "q"
            if key in ("1", "0"):
                self.set_label(i, int(key))
                self.reveal(i)
            elif key in ("s", "skip"):
                if self.label_of(i) is None:
                    self.set_label(i, None)
            elif key in ("b", "back"):
                i = max(0, i - 1)
                continue
            elif key in ("q", "quit"):
                self.con.print(
                    f"saved; run `judgeflow label {self.path}` again to resume", markup=False
                )
                return self.finish()
            else:
                self.con.print(f"[red]unknown key {escape(key)!r}[/red]: {HELP}")
                continue
            nxt = self.next_open(i)
            if nxt is None:
                self.con.print("[bold]every item is labelled or skipped[/bold]")
                return self.finish()
            i = nxt

    def finish(self) -> LabelSummary:
        s = self.summary()
        self.con.print(
            f"{s.labelled} of {s.total} labelled ({s.ones} × 1, {s.zeros} × 0), {s.skipped} skipped, "
            f"{s.remaining} to go -> {self.path}"
        )
        if s.invalid:
            self.con.print(
                f"{s.invalid} item(s) not asked: the judge found their input invalid (no verdict to "
                "compare a label with; fix the rows and run again)",
                markup=False,
            )
        if s.agree + s.false_alarms + s.misses:
            self.con.print(
                f"the judge agrees on {s.agree}; {s.false_alarms} false alarm(s), {s.misses} miss(es). "
                f"Full report: judgeflow calibrate RESULTS.jsonl --labels {self.path}"
            )
        return s


def label_file(
    path: str | Path,
    *,
    input_fn: Callable[[str], str] | None = None,
    console: Console | None = None,
    start: int | None = None,
    max_chars: int = 1500,
    name: str | None = None,
) -> LabelSummary:
    """Label the items in `path` interactively (see the module docstring); returns where it stands.
    `name`: who labels (written as `labelled_by`; a file someone else labelled is refused)."""
    return Labeller(path, input_fn=input_fn, console=console, max_chars=max_chars, name=name).run(
        start=start
    )


def check_labeller(path: Path, rows: list[dict[str, Any]], name: str) -> None:
    """Refuse to relabel a file another person labelled: each labeller labels their own copy.

    Raises:
        ConfigError: a row of `path` is labelled by someone other than `name`.
    """
    others = sorted(
        {
            str(r[LABELLER_FIELD])
            for r in rows
            if r.get(LABELLER_FIELD) not in (None, "", name)
            and any(r.get(f) not in (None, "") for f in LABEL_FIELDS)
        }
    )
    if others:
        raise ConfigError(
            f"{path} holds labels by {', '.join(others)}; label your own copy so both sets are kept: "
            f"judgeflow sample {path} --overlap -n 20 -o {path.stem}.{name}.jsonl, then "
            f"judgeflow label {path.stem}.{name}.jsonl --as {name}"
        )
