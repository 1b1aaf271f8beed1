"""The `judgeflow` command line: thin subcommands over the Python API.

Each subcommand lives in its own module with `register(subparsers)` that adds its parser and
sets `func`. Only the named subcommand's module is imported (`judgeflow run ...` does not load
calibration, review or batch code); `judgeflow --help`, a misspelt command and `build_parser()`
without arguments register them all. A JudgeflowError prints one red line to stderr and exits 2;
anything else keeps its traceback. The exit codes are listed once, in `EXIT_CODES` (shown by `judgeflow --help`).
A misspelt option gets a "did you mean" (argparse has it only from Python 3.14), and a reader
that closes the pipe early (`| head`) ends the output quietly.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from typing import Any

from rich.console import Console

from ..errors import JudgeflowError

#: modules under judgeflow.cli that define a subcommand, in help order
COMMANDS = ("run", "criteria_cmd", "calibrate_cmd", "compare_cmd", "gate_cmd", "stability_cmd", "sample_cmd",
            "label_cmd", "batch_cmd", "review_cmd")
#: subcommand (its first word on the command line) -> the module that registers it
COMMAND_NAMES = {module.removesuffix("_cmd"): module for module in COMMANDS}

err_console = Console(stderr=True, highlight=False)

EXIT_CODES = """exit codes:
  0    done
  1    done, but the share of unscored rows is above --max-unscored
  2    bad input or configuration (the message names the file, line, field and the fix)
  3    stopped on a systemic provider error (authentication, refused connection, unknown model):
       fix it, then run the same command with --resume
  130  interrupted (Ctrl-C or SIGTERM); `judgeflow run ... --resume` continues"""


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for misspelt options (`--concurency` -> `--concurrency`)."""

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = _chosen(self, ns)
            hints = [f"{a} (did you mean {m}?)" if (m := _suggest(parser, a)) else a for a in extras]
            parser.error(f"unrecognized arguments: {' '.join(hints)}")
        return ns


def _chosen(parser: argparse.ArgumentParser, ns: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest subcommand parser that parsed `ns` (e.g. `criteria show`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices.get(getattr(ns, action.dest, None) or "")
            if sub is not None:
                return _chosen(sub, ns)
    return parser


def _suggest(parser: argparse.ArgumentParser, arg: str) -> str | None:
    if not arg.startswith("-"):
        return None
    flag = arg.split("=", 1)[0]
    close = difflib.get_close_matches(flag, list(parser._option_string_actions), n=1, cutoff=0.75)
    return close[0] if close else None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given `argv` that starts with a known subcommand, with that subcommand only."""
    from .. import __version__

    parser = Parser(
        prog="judgeflow",
        description="LLM-as-judge hallucination detection. Labels: 1 = hallucination, 0 = none found, null = unscored.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"judgeflow {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = COMMAND_NAMES.get(argv[0]) if argv else None
    for name in (chosen,) if chosen else COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()
    except JudgeflowError as e:
        err_console.print(f"[red]error:[/red] {e}", soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/yellow]")
        return 130
    except BrokenPipeError:
        # the reader stopped early (`| head`): not an error; keep Python from complaining at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
