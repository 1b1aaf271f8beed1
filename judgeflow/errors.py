"""Exceptions raised by judgeflow.

    JudgeflowError            base: the CLI prints its message and exits 2
    ├── InvalidItemError      an input row is unusable (.path, .line, .field)
    ├── CriterionError        a criterion is unknown or malformed (.path, .key)
    ├── ConfigError           a model string, provider or option is invalid
    ├── RunsDiffer            two runs cannot be compared (other items, criterion or judge; .differences)
    └── LLMError              the judge model failed after retries (.attempts, .last_reply)
        └── BudgetExceeded    a call would pass the spend cap (--budget): not sent

A judge failure is never a verdict: an item whose judge raised LLMError is recorded
as unscored (label None) with the message as its reason.
"""

from __future__ import annotations

from typing import Any


class JudgeflowError(Exception):
    """Base class for every error judgeflow raises on purpose."""


class InvalidItemError(JudgeflowError):
    """An input item is missing a field or has a bad value."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
        item_id: str | None = None,
    ) -> None:
        self.path, self.line, self.field, self.item_id = path, line, field, item_id
        self.record: dict[str, Any] | None = None
        """The input row, when it was read (so an error row can carry its label and other fields)."""
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)
        self.bare_message = message


class CriterionError(JudgeflowError):
    """A criterion could not be found, parsed or validated."""

    def __init__(self, message: str, *, path: str | None = None, key: str | None = None) -> None:
        self.path, self.key = path, key
        super().__init__(f"{path}: {message}" if path else message)


class ConfigError(JudgeflowError):
    """A model string, provider, base URL or option is invalid."""


class LLMError(JudgeflowError):
    """The judge model failed: provider errors or unparseable output after retries."""

    def __init__(self, message: str, *, attempts: int | None = None, last_reply: str | None = None):
        self.attempts, self.last_reply = attempts, last_reply
        super().__init__(message)


#: how the reason of a row whose calls the spend cap refused starts (BudgetExceeded's messages do)
OVER_BUDGET = "budget"


class BudgetExceeded(LLMError):
    """A call would pass the spend cap (`--budget`, `Judge(budget=...)`): it is not sent, and its item
    ends unscored with a reason starting "budget" (a resume judges it)."""


class ProviderUnavailable(JudgeflowError):
    """The provider failed the same systemic way several times in a row (authentication, a refused
    connection, an unknown model or path, a rejected request shape): the run stops rather than
    spending on items that cannot succeed. Not an LLMError, so no node turns it into an
    unscored row: it ends the run (exit code 3 from `judgeflow run`)."""


class StoreError(JudgeflowError):
    """The run store cannot be opened, read or written (corrupted file, full disk, read-only)."""


class RunsDiffer(JudgeflowError):
    """Two runs cannot be compared: they judged other items, or under another criterion or judge.
    `.differences` lists each difference in words (the gate exits 2 with them)."""

    def __init__(self, message: str, differences: list[str]) -> None:
        self.differences = differences
        super().__init__(message + ": " + "; ".join(differences))
