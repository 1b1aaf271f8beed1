"""Agent output review against a spec: claim-level spec compliance plus requirement coverage.

What it shows: an agent wrote release notes (as JSON or text) against a spec. judgeflow splits
the spec into requirements and marks each met / not_met / not_applicable, and checks each claim
of the output against the spec. An output that adds harmless extras passes; one that leaves out
a requirement fails with the unmet requirement named; one that states a wrong value fails on
both counts. The same review from the command line:

    python examples/agent_spec_review.py                              # offline, no key
    python examples/agent_spec_review.py --model openai/gpt-4o-mini   # or set JUDGEFLOW_MODEL
    judgeflow run agent_outputs.jsonl -o results.jsonl --mode spec    # rows with id, spec, answer
"""

from __future__ import annotations

import argparse

from rich.markup import escape

from judgeflow import ConfigError, Judge, review
from judgeflow.backends import default_model
from judgeflow.cli.render import console

SPEC = """Release notes for the 2.1 release must:
- Name the release version 2.1.
- Link to the changelog at https://example.com/changelog.
- Say that Python 3.10 is now the minimum supported version.
- If the release has breaking changes, list them under a "Breaking changes" heading.
"""

OUTPUTS = {
    "extras_ok": {
        "title": "judgeflow 2.1 released",
        "body": "Version 2.1 is out. Python 3.10 is now the minimum supported version. "
                "Full changelog: https://example.com/changelog. Thanks to all contributors!",
    },
    "missing_link": "Version 2.1 is out. Python 3.10 is now the minimum supported version. Enjoy the faster startup!",
    "wrong_value": {
        "title": "judgeflow 2.1 released",
        "body": "Version 2.1 is out. Python 3.8 is now the minimum supported version. "
                "Changelog: https://example.com/changelog.",
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=default_model(), help="provider/model (default: $JUDGEFLOW_MODEL or baseline/lexical)")
    args = parser.parse_args()

    judge = Judge(args.model, mode="spec", coverage=True)  # shared: the spec is split into requirements once
    con = console()  # never wrapped when the output goes to a file or a pipe
    con.print(f"judge: [bold]{judge.model}[/bold] (1 = the output fails the spec, 0 = it passes)\n")
    for name, output in OUTPUTS.items():
        result = review(output, SPEC, id=name, judge=judge)
        con.print(f"[bold]{escape(name)}[/bold]: label [bold]{result.label}[/bold]  {escape(result.reason or '')}")
        for r in result.requirements or []:
            colour = {"met": "green", "not_met": "red"}.get(r.status, "yellow")
            con.print(f"    [{colour}]{r.status:<14}[/{colour}] " + escape(f"{r.id} {r.text}  ({r.reason})"))
        for c in result.claims:
            colour = "red" if c.error else "dim"
            con.print(f"    [{colour}]claim {c.id} {c.verdict:<13} {escape(c.text)}[/{colour}]")
        con.print()


if __name__ == "__main__":
    try:
        main()
    except ConfigError as e:  # e.g. --model without its key: the fix, not a traceback
        raise SystemExit(f"error: {e}") from None
