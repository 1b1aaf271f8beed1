"""What `tune` writes: the tuned criterion file, its diff against the old one, report.json and a
self-contained report.html (every text from the items and the models HTML-escaped).

    paths = write_tune(result, Path("tune-out"))   # {"report.json": ..., "report.html": ..., ...}
"""

from __future__ import annotations

from pathlib import Path

from ..io.atomic import atomic_file
from .comparison import ComparisonReport, Decision
from .edits import dump_criterion, edited_toml, same_criterion, toml_diff
from .report_html import CSS, e
from .tune import RankResult, TuneReport, TuneResult, held_out_gain

MAX_FLIPS = 50


def shown_rank(report: TuneReport) -> RankResult | None:
    """The accepted rank, else the rank with the largest held-out gain (for the before/after figures)."""
    tested = [r for r in report.ranks if r.comparison is not None and r.comparison.kappa_diff is not None]
    if report.accepted_rank is not None:
        return next(r for r in report.ranks if r.rank == report.accepted_rank)
    return max(tested, key=held_out_gain, default=None)


def spent_text(report: TuneReport) -> str:
    cost = "unknown (no price for " + ", ".join(report.unpriced) + "; pass --prices)" if report.cost is None \
        else f"${report.cost:.4f} (estimated)"
    return (f"{report.calls} model call(s): {report.judge_usage.calls} judging, {report.editor_usage.calls} "
            f"proposing; {report.judge_usage.input_tokens + report.editor_usage.input_tokens} input and "
            f"{report.judge_usage.output_tokens + report.editor_usage.output_tokens} output tokens; "
            f"{report.cached_items} item judgment(s) served from the cache; cost {cost}")


def criterion_files(result: TuneResult) -> tuple[str, str, str] | None:
    """(new file name, new TOML text, diff) for an accepted edit; None when nothing was accepted."""
    if result.criterion is None:
        return None
    old, new = result.original, result.criterion
    old_text = Path(old.path).read_text(encoding="utf-8") if old.path and Path(old.path).is_file() else ""
    old_name = Path(old.path).name if old_text else f"{old.name}.toml"
    if not same_criterion(old_text, old):  # built or changed in code: diff against it written out
        old_text = dump_criterion(old)
    text = edited_toml(old_text, old, new)
    name = f"{old.name}.tuned.toml"
    return name, text, toml_diff(old_text, text, old_name, name)


def write_tune(result: TuneResult, out_dir: Path) -> dict[str, Path]:
    """Write the report (json, html) and, when an edit was accepted, the new criterion and its diff."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"report.json": out_dir / "report.json", "report.html": out_dir / "report.html"}
    files = criterion_files(result)
    diff = ""
    if files is not None:
        name, text, diff = files
        paths["criterion"], paths["diff"] = out_dir / name, out_dir / f"{result.original.name}.diff"
        _write(paths["criterion"], text)
        loaded_back(paths["criterion"])
        _write(paths["diff"], diff)
    _write(paths["report.json"], result.report.model_dump_json(indent=2))
    _write(paths["report.html"], tune_html(result.report, diff))
    return paths


def loaded_back(path: Path) -> None:
    """The tuned criterion file as judgeflow will load it: a file that does not load is removed and
    the error raised, so "accepted" is never said of a criterion no run could use."""
    from ..criteria import load_criterion
    from ..errors import CriterionError

    try:
        load_criterion(path)
    except CriterionError as err:
        path.unlink(missing_ok=True)
        raise CriterionError(f"the tuned criterion written to {path} does not load back ({err}); it was removed "
                             "and nothing is accepted") from None


def _write(path: Path, text: str) -> None:
    with atomic_file(path) as f:
        f.write(text)


def _decision(d: Decision) -> str:
    if d.claim is not None:
        return f"{d.label}: {e(d.claim.verdict)} &ldquo;{e(d.claim.text)}&rdquo;"
    return f"{d.label}: {e(d.reason or 'no claim in error')}"


def _before_after(c: ComparisonReport) -> str:
    rows = []
    for name, s in (("before (current criterion)", c.a), ("after (with the edit)", c.b)):
        a = s.agreement
        ci = f"{a.kappa_ci[0]:.2f} to {a.kappa_ci[1]:.2f}" if a.kappa_ci else "–"
        rows.append(f"<tr><td>{name}</td><td class=num>{'–' if a.kappa is None else f'{a.kappa:.2f}'}</td>"
                    f"<td class=num>{ci}</td><td class=num>{a.false_alarms}</td><td class=num>{a.misses}</td>"
                    f"<td class=num>{s.unscored}</td></tr>")
    return ("<table><tr><th>held-out</th><th>kappa</th><th>95% CI</th><th>false alarms</th><th>misses</th>"
            "<th>unscored</th></tr>" + "".join(rows) + "</table>")


def _flips(c: ComparisonReport) -> str:
    if not c.disagreements:
        return "<p class=muted>No item changed its label.</p>"
    rows = [f"<tr><td>{e(d.id)}</td><td class=num>{d.human}</td><td>{_decision(d.a)}</td><td>{_decision(d.b)}</td>"
            f"<td>{'after' if d.right == 'b' else 'before'}</td></tr>" for d in c.disagreements[:MAX_FLIPS]]
    more = f"<p class=muted>... {len(c.disagreements) - MAX_FLIPS} more in report.json</p>" \
        if len(c.disagreements) > MAX_FLIPS else ""
    return ("<table><tr><th>id</th><th>person</th><th>before (deciding claim)</th><th>after</th><th>right</th></tr>"
            + "".join(rows) + "</table>" + more)


def _ranks(report: TuneReport) -> str:
    rows = []
    for r in report.ranks:
        edits = "<br>".join(f"fold {c.fold + 1}: {e(c.edit.describe())}" + (f" <i>({e(c.error)})</i>" if c.error else "")
                            for c in r.candidates)
        rows.append(f"<tr><td class=num>{r.rank + 1}</td><td>{edits}</td><td>{e(r.why)}</td>"
                    f"<td>{'<b>accepted</b>' if r.accepted else 'no'}</td></tr>")
    return "<table><tr><th>rank</th><th>edits by fold</th><th>held-out result</th><th>accepted</th></tr>" + \
        "".join(rows) + "</table>"


def tune_html(report: TuneReport, diff: str = "") -> str:
    """The report as one self-contained HTML page."""
    shown = shown_rank(report)
    parts = [f"<h1>tune: {e(report.criterion)}</h1>",
             f"<p class=sub>judge {e(report.model)}, editor {e(report.editor_model)}; {report.labelled} labelled "
             f"items, {report.folds} folds, up to {report.candidates} edit(s) per fold, seed {report.seed}</p>",
             f"<div class=diag>{e(report.verdict)}</div>", f"<p>{e(spent_text(report))}</p>"]
    if report.before is not None:
        parts.append(f"<p>The current criterion on every labelled item: {e(report.before.diagnosis)}</p>")
    if shown is not None and shown.comparison is not None:
        label = "the accepted edit" if shown.accepted else f"the best edit rank tried ({shown.rank + 1}), not accepted"
        parts += [f"<h2>Held-out agreement: {label}</h2>", _before_after(shown.comparison),
                  f"<p>{e(shown.comparison.verdict)}</p>", "<h2>Items that flipped</h2>", _flips(shown.comparison)]
    parts += ["<h2>Edits tried</h2>", _ranks(report)]
    if diff:
        parts += ["<h2>The new criterion (diff)</h2>", f"<pre>{e(diff)}</pre>"]
    return (f"<!doctype html><html><head><meta charset=utf-8><title>tune {e(report.criterion)}</title>"
            f"<style>{CSS}</style></head><body>{''.join(parts)}</body></html>")
