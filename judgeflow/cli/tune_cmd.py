"""`judgeflow tune ITEMS --criterion NAME --model M [--labels F] [-o DIR]`: improve a criterion from
30-50 labels; an edit is accepted only when held-out agreement rises beyond noise.

Writes DIR/report.json and DIR/report.html, and, when an edit is accepted, DIR/<name>.tuned.toml
with DIR/<name>.diff. Judged items go through the run store's cache and the editor's replies are
kept beside the store, so the same command after a kill (or with a larger --budget) resumes.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..backends.llm_judge import DEFAULT_MODEL_ENV
from ..errors import ConfigError
from ..runs.store import DEFAULT_STORE
from . import SUMMARIES
from .argtypes import Subparsers, positive_int, positive_seconds, share
from .render import console, fit

EXIT_CODES = """exit codes: 0 done (an edit accepted or not); 1 stopped at --budget (the same command with a larger
budget resumes from the caches), or the editor model never gave a usable reply (nothing was tuned);
2 bad input or configuration; 130 interrupted (the same command resumes)"""


def register(sub: Subparsers) -> None:
    p = sub.add_parser("tune", help=SUMMARIES["tune"], epilog=EXIT_CODES)
    p.add_argument("items", type=Path, help="labelled items (.jsonl/.csv with a label per row, or see --labels)")
    p.add_argument("--criterion", required=True, help="the criterion to tune: a shipped name or a .toml path")
    p.add_argument("--model", help=f"the judge, provider/model or provider/model@BASE_URL (default ${DEFAULT_MODEL_ENV})")
    p.add_argument("--editor-model", help="the model that proposes edits, provider/model or provider/model@BASE_URL "
                                          "(default: the judge's model)")
    p.add_argument("--base-url", help="the judge's OpenAI- or Anthropic-compatible endpoint; the editor's too when it "
                                      "speaks the same requests (else give it its own as --editor-model MODEL@URL)")
    p.add_argument("--editor-key-env", metavar="VAR", help="the environment variable holding the editor's API key "
                                                          "(default: its provider's, e.g. ANTHROPIC_API_KEY)")
    p.add_argument("--labels", type=Path, help="human labels (.jsonl/.csv with id and label) instead of the items' own")
    p.add_argument("-o", "--output", type=Path, help="directory for the report and the tuned criterion "
                                                     "(default tune-<criterion>)")
    p.add_argument("--folds", type=positive_int, default=5, help="cross-validation folds (default 5)")
    p.add_argument("--candidates", type=positive_int, default=3, help="edits asked of the editor per fold (default 3)")
    p.add_argument("--strategy", default="graph", choices=["graph", "single"], help="as in `judgeflow run`")
    p.add_argument("--budget", help="cap: a number of calls (500) or an estimated cost ($2.50); a step that would "
                                    "pass it is not started, and the same command with a larger budget resumes")
    p.add_argument("--prices", type=Path, help="a TOML/JSON price table (or $JUDGEFLOW_PRICES)")
    p.add_argument("--store", type=Path, default=DEFAULT_STORE, help=f"the run store and cache (default {DEFAULT_STORE})")
    p.add_argument("--concurrency", type=positive_int, default=16, help="items judged at once (default 16)")
    p.add_argument("--timeout", type=positive_seconds, default=120.0, help="seconds per request (default 120)")
    p.add_argument("--seed", type=int, default=0, help="fold assignment seed (default 0)")
    p.add_argument("--detect", type=share, metavar="SHARE", help="a held-out gain to plan for (0.10 = 10 points of agreement): "
                                                "the labels it needs for 80%% power are printed")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_tune)


def cmd_tune(args: argparse.Namespace) -> int:
    from ..calibration.labels import read_labels
    from ..calibration.tune import tune
    from ..calibration.tune_report import write_tune
    from ..items import read_items
    from ..runs.pricing import load_prices

    labels = read_labels(args.labels).labels if args.labels else None
    model, judge_url, editor_model, editor = endpoints(args)
    kwargs = {"timeout": args.timeout, **({"base_url": judge_url} if judge_url else {})}
    result = tune(read_items(args.items), args.criterion, model, editor_model=editor_model, labels=labels,
                  editor_options=editor,
                  folds=args.folds, candidates=args.candidates, strategy=args.strategy, store=args.store,
                  budget=args.budget, prices=load_prices(args.prices), seed=args.seed,
                  concurrency=args.concurrency, detect=args.detect, **kwargs)
    out = args.output or Path(f"tune-{result.original.name}")
    paths = write_tune(result, out)
    if args.json:
        print(result.report.model_dump_json(indent=2))
    else:
        render(result, paths)
    failed = editor_failed(result.report)
    if failed:
        console(stderr=True).print(f"[red]{escape(failed)}[/red]", soft_wrap=True)
    return 1 if result.report.status == "budget" or failed else 0


def endpoints(args: argparse.Namespace) -> tuple[str | None, str | None, str | None, dict[str, Any]]:
    """(judge model, its base URL, editor model, the editor's own client options): each model's
    endpoint from MODEL@URL, else --base-url; the editor takes --base-url only when it speaks the
    judge's requests (an Anthropic editor sent to an OpenAI proxy got `/v1/v1/messages`)."""
    from ..backends.llm_judge import default_model
    from .ensemble import wire_family

    model, _, model_url = (args.model or "").partition("@")
    judge_url = model_url or args.base_url or None
    editor_model, _, editor_url = (args.editor_model or "").partition("@")
    options: dict[str, Any] = {}
    if editor_model:
        judge_model = model or default_model()
        same = bool(judge_model) and wire_family(editor_model) == wire_family(judge_model)
        options["base_url"] = editor_url or (judge_url if same else None)
    if args.editor_key_env:
        key = os.environ.get(args.editor_key_env)
        if not key:
            raise ConfigError(f"--editor-key-env {args.editor_key_env}: that variable is not set; export it with "
                              "the editor's API key")
        options["api_key"] = key
    return model or None, judge_url, editor_model or None, options


def editor_failed(report: object) -> str | None:
    """Why nothing could be tuned when every fold that asked the editor got no usable reply, else None."""
    asked = [f for f in getattr(report, "fold_info", []) if f.error or f.proposed or f.cached]
    failed = [f for f in asked if f.error and not f.proposed]
    if not asked or len(failed) < len(asked):
        return None
    return (f"the editor never gave a usable reply ({len(failed)} of {len(asked)} folds failed; first: "
            f"{failed[0].error}): nothing was tuned; check --editor-model, its API key and endpoint")


def render(result: object, paths: dict[str, Path]) -> None:
    from ..calibration.tune import TuneResult
    from ..calibration.tune_report import shown_rank, spent_text

    assert isinstance(result, TuneResult)
    r, con = result.report, console()
    con.print(f"[bold]tune[/bold] {r.criterion}: judge {r.model}, editor {r.editor_model}; {r.labelled} labelled "
              f"items, {r.folds} folds, up to {r.candidates} edit(s) per fold", markup=True, soft_wrap=True)
    if r.unlabelled or r.invalid:
        con.print(f"not used: {r.unlabelled} row(s) without a label, {len(r.invalid)} unusable row(s)"
                  + (f" (first: {r.invalid[0]})" if r.invalid else ""), markup=False, soft_wrap=True)
    shown = shown_rank(r)
    if shown is not None and shown.comparison is not None:
        c = shown.comparison
        t = Table("held-out", "kappa [95% CI]", "false alarms", "misses", title_justify="left",
                  title="the accepted edit" if shown.accepted else f"best edit rank tried ({shown.rank + 1}), not accepted")
        for name, s in (("before", c.a), ("after", c.b)):
            a = s.agreement
            ci = f" [{a.kappa_ci[0]:.2f}, {a.kappa_ci[1]:.2f}]" if a.kappa_ci else ""
            t.add_row(name, "n/a" if a.kappa is None else f"{a.kappa:.2f}{ci}", str(a.false_alarms), str(a.misses))
        con.print(fit(t))
        for d in c.disagreements[:10]:
            claim = d.b.claim or d.a.claim
            con.print(f"  flipped {d.id}: person {d.human}, before {d.a.label}, after {d.b.label}"
                      + (f" ({claim.verdict}: {claim.text[:80]})" if claim else ""), markup=False)
    for rank in r.ranks:
        con.print(f"  edit rank {rank.rank + 1}: {rank.why}", markup=False)
    con.print(f"[bold]verdict:[/bold] {r.verdict}", soft_wrap=True)
    if r.power is not None:
        con.print(f"power: {r.power.text()}", markup=False, soft_wrap=True)
    con.print(f"spent: {spent_text(r)}", markup=False, soft_wrap=True)
    for name, path in paths.items():
        con.print(f"{name} -> {path}", markup=False)
