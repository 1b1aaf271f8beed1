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
import importlib
import os
import sys
from typing import Any, NoReturn

from ..errors import JudgeflowError

#: modules under judgeflow.cli that define a subcommand, in help order
COMMANDS = ("run", "criteria_cmd", "calibrate_cmd", "compare_cmd", "tune_cmd", "gate_cmd", "stability_cmd", "sample_cmd",
            "label_cmd", "batch_cmd", "label_app_cmd", "runs_cmd", "bench_cmd", "watch_cmd", "inject_cmd")
#: subcommand (its first word on the command line) -> the module that registers it
COMMAND_NAMES = {module.removesuffix("_cmd"): module for module in COMMANDS if module != "label_app_cmd"}
COMMAND_NAMES["review"] = "label_app_cmd"  # `judgeflow review` opens the labelling app (not spec_review.review)

#: subcommand -> its line in `judgeflow --help` (listed without importing any command's module)
SUMMARIES = {
    "run": "judge a JSONL or CSV file of items",
    "criteria": "list or show the judging criteria",
    "calibrate": "agreement of a results file with human labels (kappa, false alarms, misses)",
    "compare": "two runs on the same items (two criteria, models or strategies) against human labels: "
               "kappa difference, McNemar",
    "tune": "propose edits to a criterion from your labels; keep one only if held-out agreement (k-fold) rises "
            "beyond noise",
    "gate": "CI gate: is a bot's new run worse than its baseline? (paired McNemar, rate intervals; exit 1 "
            "when worse)",
    "stability": "test-retest: how often the same judge flips its verdict on the same item (flip rate, kappa "
                 "between repeats, the claims that flip)",
    "sample": "pick a stratified, reproducible sample of items to label by hand",
    "label": "label a sample by hand: 1 / 0 / s(kip) / b(ack) / q(uit); saves every label and resumes where it "
             "stopped",
    "batch": "follow runs submitted with `judgeflow run --batch`",
    "runs": "the run history in the store: list the runs, show one, diff two (settings, rates, flipped items)",
    "bench": "reproduce a public benchmark (faithbench, ragtruth, halueval_qa, truthfulqa): download it at a "
             "pinned commit, judge it as a run, print its own metric beside the published figures",
    "watch": "judge new production traces as they come (a Phoenix project, an OTLP receiver, a growing OTLP file): "
             "sampled by trace id, under a call budget per period, verdicts written back as OTel spans",
    "inject": "known positives without labels: inject hallucinations (date, number, name, entity, negation, "
              "invented detail) into correct answers at known offsets; --report gives the judge's recall per type",
    "review": "label items and inspect the judge's verdicts in a local browser app "
              "(needs `pip install judgeflow[review]`)",
}


def err_console() -> Any:
    """The console for errors on stderr (rich is imported only when something is printed)."""
    from .render import console

    return console(stderr=True)

EXIT_CODES = """exit codes:
  0    done
  1    done, but the share of unscored rows is above --max-unscored
  2    bad input or configuration (the message names the file, line, field and the fix)
  3    stopped on a systemic provider error (authentication, refused connection, unknown model):
       fix it, then run the same command with --resume
  130  interrupted (Ctrl-C or SIGTERM); `judgeflow run ... --resume` continues"""


class Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for misspelt options (`--modle` -> `--model`), and errors in one
    line that point at --help instead of a usage dump."""

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = _chosen(self, ns)
            hints = [f"{a} (did you mean {m}?)" if (m := _suggest(parser, a)) else a for a in extras]
            parser.error(f"unrecognized arguments: {' '.join(hints)}")
        return ns

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}; see {self.prog} --help\n")


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
    return nearest(arg.split("=", 1)[0], list(parser._option_string_actions))


def edit_distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cost = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, prev2[j - 2] + 1)
            cur.append(cost)
        prev2, prev = prev, cur
    return prev[-1]


def nearest(word: str, choices: list[str]) -> str | None:
    """The choice fewest edits away (ties: the one of the same length, a swap), if close enough."""
    limit = max(1, len(word.lstrip("-")) // 3)
    ranked = sorted((edit_distance(word, c), abs(len(c) - len(word)), c) for c in choices)
    return ranked[0][2] if ranked and ranked[0][0] <= limit else None


def build_parser(argv: list[str] | None = None, *, stubs: bool = False) -> argparse.ArgumentParser:
    """The parser; given `argv` that starts with a known subcommand, with that subcommand only.
    `stubs`: the subcommands by name and summary only (`judgeflow --help`, `--version`: no command
    module is imported)."""
    from .. import __version__

    parser = Parser(
        prog="judgeflow",
        description="LLM-as-judge hallucination detection. Labels: 1 = hallucination, 0 = none found, null = unscored.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"judgeflow {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = COMMAND_NAMES.get(argv[0]) if argv else None
    if stubs and not chosen:
        for name, summary in SUMMARIES.items():
            sub.add_parser(name, help=summary)
        return parser
    for name in (chosen,) if chosen else COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and not argv[0].startswith("-") and argv[0] not in COMMAND_NAMES:
        guess = nearest(argv[0], list(COMMAND_NAMES))
        err_console().print(f"judgeflow: error: unknown command {argv[0]!r}"
                          + (f"; did you mean {guess}?" if guess else "") + " see judgeflow --help",
                          markup=False, soft_wrap=True)
        return 2
    args = build_parser(argv, stubs=not argv or argv[0].startswith("-")).parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()
    except JudgeflowError as e:
        from rich.markup import escape

        err_console().print(f"[red]error:[/red] {escape(str(e))}", soft_wrap=True)  # `judgeflow[review]` stays as written
        return 2
    except KeyboardInterrupt:
        err_console().print("[yellow]interrupted[/yellow]")
        return 130
    except BrokenPipeError:
        # the reader stopped early (`| head`): not an error; keep Python from complaining at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
