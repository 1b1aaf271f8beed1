"""The `judgeflow` command line: thin subcommands over the Python API.

Each subcommand lives in its own module with `register(subparsers)` that adds its parser and
sets `func`. A JudgeflowError prints one red line to stderr and exits 2; anything else keeps
its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from rich.console import Console

from ..errors import JudgeflowError

#: modules under judgeflow.cli that define a subcommand, in help order
COMMANDS = ("run", "criteria_cmd", "calibrate_cmd", "compare_cmd", "sample_cmd", "label_cmd", "batch_cmd",
            "review_cmd")

err_console = Console(stderr=True, highlight=False)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judgeflow",
        description="LLM-as-judge hallucination detection. Labels: 1 = hallucination, 0 = none found, null = unscored.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
    except JudgeflowError as e:
        err_console.print(f"[red]error:[/red] {e}", soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/yellow]")
        return 130
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
