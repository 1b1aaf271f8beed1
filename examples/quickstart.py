"""Quickstart: judge a small mixed file (QA bot answers, RAG answers, agent output) from Python.

Shows routing (each item goes to the criterion its evidence calls for), the per-claim verdicts
behind every label, and that an item with nothing to judge against becomes an `invalid` row
instead of being dropped. Runs offline with the lexical baseline; pass a model to use an LLM:

    python examples/quickstart.py                          # offline, no key
    python examples/quickstart.py --model openai/gpt-4o-mini
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from judgeflow import ConfigError, Judge, read_items
from judgeflow.backends import default_model
from judgeflow.cli.render import console

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=default_model(), help="provider/model (default: $JUDGEFLOW_MODEL or baseline/lexical)")
    parser.add_argument("--items", type=Path, default=HERE / "qa_items.jsonl")
    args = parser.parse_args()

    judge = Judge(args.model)
    results = judge.judge_many(read_items(args.items))

    con = console()  # never wrapped when the output goes to a file or a pipe
    con.print(f"judge: [bold]{judge.model}[/bold]  (1 = hallucination, 0 = none found, - = unscored/invalid)")
    table = Table("id", "criterion (why)", "label", "human", "deciding claim / error")
    for r in results:
        why = f"{r.criterion}\n({r.routed_by})" if r.criterion else "-"
        label = "-" if r.label is None else str(r.label)
        human = "-" if r.human_label is None else str(r.human_label)
        table.add_row(escape(r.id), escape(why), label, human,
                      escape(r.reason or "") if r.status == "judged" else f"[red]{r.status}[/red]: {escape(str(r.error))}")
    con.print(table)
    first_error = next((r for r in results if r.label == 1), None)
    if first_error:
        con.print(f"\nclaims behind [bold]{escape(first_error.id)}[/bold]:")
        for c in first_error.claims:
            con.print(f"  {c.id} [{c.kind}] {c.verdict:<13} {c.text!r}  basis={c.basis}  evidence={c.evidence!r}  ({c.reason})",
                      markup=False)


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:  # e.g. --model without its key: the fix, not a traceback
        raise SystemExit(f"error: {e}") from None
