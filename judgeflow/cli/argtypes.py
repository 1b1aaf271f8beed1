"""argparse number types: each refuses a value with a message saying what it wants (e.g. `'-1' is not a
whole number of at least 1`)."""

from __future__ import annotations

import argparse
import math
from typing import Any, TypeAlias

#: what every subcommand's `register` gets: argparse's subparsers (generic to type checkers only)
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    return _number(text, int, lambda v: v >= 1, "a whole number of at least 1")


def non_negative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    return _number(text, int, lambda v: v >= 0, "a whole number of at least 0")


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0."""
    return _number(text, float, lambda v: math.isfinite(v) and v > 0, "a number of seconds above 0, e.g. 120")


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (a rate, e.g. requests per minute)."""
    return _number(text, float, lambda v: math.isfinite(v) and v > 0, "a number above 0, e.g. 500")


def temperature(text: str) -> float:
    """argparse type: a finite sampling temperature >= 0."""
    return _number(text, float, lambda v: math.isfinite(v) and v >= 0, "a number of at least 0, e.g. 0 or 0.7")


def share(text: str) -> float:
    """argparse type: a share between 0 and 1."""
    return _number(text, float, lambda v: math.isfinite(v) and 0 <= v <= 1, "a share between 0 and 1, e.g. 0.5")


def _number(text: str, kind: Any, ok: Any, what: str) -> Any:
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return value
