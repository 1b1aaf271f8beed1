"""`judgeflow review RESULTS.jsonl [--items ITEMS] [--labels L] [--compare OTHER] [--port 0] [--open]`.

The command keeps its short name; in code the feature is the labelling app (`calibration/label_app/`),
so it cannot be confused with spec review (`judgeflow.spec_review.review()`: an agent's output
against a spec)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import ConfigError
from . import SUMMARIES
from .argtypes import Subparsers


def register(sub: Subparsers) -> None:
    p = sub.add_parser("review", help=SUMMARIES["review"])
    p.add_argument("results", type=Path, help="results .jsonl from `judgeflow run`")
    p.add_argument("--items", type=Path, help="the items file given to `judgeflow run` (results carry no texts); "
                                              "default: the file the run read, as its run store recorded it")
    p.add_argument("--store", type=Path, metavar="FILE", help="the run store that knows which items file the run "
                                                              "read (default: .judgeflow/runs.sqlite here or beside "
                                                              "RESULTS)")
    p.add_argument("--labels", type=Path, help="labels file in `judgeflow label`'s format: resumed if it exists, "
                                               "else made from --items (default: RESULTS.labels.jsonl)")
    p.add_argument("--compare", type=Path, metavar="OTHER", help="a second run's results on the same items (A/B view)")
    p.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--reveal", action="store_true", help="show the judge's verdict before you label (default: blind)")
    p.add_argument("--seed", type=int, default=0, help="seed of the stratified order of a new labels file")
    p.add_argument("--keep-labels", action="store_true", help="a new labels file keeps the items' own labels "
                                                             "(default: dropped, so you label blind)")
    p.add_argument("--as", dest="labeller", metavar="NAME",
                   help="who labels: each label is saved with labelled_by NAME (see `judgeflow label --as`)")
    p.set_defaults(func=cmd_review)


#: files beside the results looked at for a sample's labels (at most), and the largest read
MAX_CANDIDATES, MAX_CANDIDATE_BYTES = 50, 20_000_000


def sample_beside(results: Path) -> Path | None:
    """The labels file of a sample of `results`' items beside it (`judgeflow sample ITEMS --results
    RESULTS -o to_label.jsonl`, labelled with `judgeflow label` or not yet): a .jsonl/.csv whose every
    row carries the judge's verdict (`judge`, as `sample --results` writes it) and an id among the
    results'; the most recently changed when several are. None when there is none."""
    from ..files import read_rows

    try:
        ids = {str(r.get("id")) for _, r in read_rows(results) if isinstance(r, dict) and r.get("id") is not None}
        near = sorted((p for p in results.parent.iterdir() if p.suffix in (".jsonl", ".csv") and p != results
                       and p.is_file() and p.stat().st_size <= MAX_CANDIDATE_BYTES),
                      key=lambda p: p.stat().st_mtime, reverse=True)[:MAX_CANDIDATES]
    except (OSError, ValueError):
        return None
    return next((p for p in near if _a_sample_of(p, ids)), None)


def _a_sample_of(path: Path, ids: set[str]) -> bool:
    from ..calibration.labels import label_rows

    try:
        rows = list(label_rows(path))
    except Exception:  # noqa: BLE001 - not a labels file (an unreadable row, no ids): not a sample
        return False
    return bool(rows) and all(isinstance(rec.get("judge"), dict) and item_id in ids for _, rec, item_id in rows)


def cmd_review(args: argparse.Namespace) -> int:
    try:
        from ..calibration.label_app.server import serve
    except ImportError as e:
        raise ConfigError(f"judgeflow review needs the review extra ({e.name} is missing): "
                          "pip install 'judgeflow[review]'") from None
    from ..calibration.label_app.session import ReviewSession

    labels = args.labels or args.results.with_name(f"{args.results.stem}.labels.jsonl")
    if args.labels is None and not labels.exists():
        found = sample_beside(args.results)
        if found is not None:
            labels = found
            print(f"labels: found {labels} beside the results (a sample of their items; --labels FILE picks "
                  "another)", flush=True)
    items = args.items
    if items is None and not labels.exists():
        from ..runs.output import run_input

        items = run_input(args.results, args.store)
        if items is not None:
            print(f"items: {items} (the file the run read, unchanged since; from the run store)", flush=True)
    s = ReviewSession(args.results, labels, items=items, other=args.compare, reveal=args.reveal,
                      seed=args.seed, keep_labels=args.keep_labels, name=args.labeller)
    made = f"made {len(s)} items to label (stratified by the judge's label)" if s.created else f"{len(s)} items"
    print(f"labels: {labels} ({made}; `judgeflow label {labels}` resumes the same file)", flush=True)
    if s.dropped_labels:
        print(f"note: the items' own labels ({s.dropped_labels}) were left out so that you label blind; "
              "--keep-labels (with a new --labels file) keeps them", flush=True)
    if s.without_results:
        print(f"note: {s.without_results} items have no result row and were left out", flush=True)
    if s.not_in_results:
        print(f"note: {len(s.not_in_results)} labelled items have no result row in {args.results}", flush=True)
    print(f"{'revealed' if args.reveal else 'blind'} review; press Ctrl+C to stop", flush=True)
    serve(s, host=args.host, port=args.port, open_browser=args.open,
          announce=lambda url: print(f"open {url}", flush=True))
    return 0
