"""What a batch run's lifecycle reports, step by step: typed events, no text.

`lifecycle.submit`, `lifecycle.collect`, `lifecycle.status` and `lifecycle.settle` yield these; the
CLI (`cli/batch_cmd.py`) prints them, a Python caller reads their fields. Every event names its run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..summary import Tally


@dataclass(frozen=True)
class Event:
    """Something that happened to a batch run."""

    run_id: str


@dataclass(frozen=True)
class Adopted(Event):
    """A batch submitted before an interruption, found at the provider under its intent's tag: followed."""

    batch_id: str


@dataclass(frozen=True)
class Abandoned(Event):
    """An intent the provider has no batch for: abandoned (its requests go into the next submission), and
    the upload it may have left (every prompt in it) deleted; `left` names what could not be deleted."""

    provider: str
    tag: str
    left: tuple[str, ...] = ()


@dataclass(frozen=True)
class Busy(Event):
    """Another judgeflow process holds the run (it is submitting a batch right now): nothing was settled."""


@dataclass(frozen=True)
class StillOpen(Event):
    """Some of the run's batches are still at the provider: collect them before the next round."""

    batch_ids: tuple[str, ...]


@dataclass(frozen=True)
class Submitted(Event):
    """One round submitted: `requests` model calls as the batches `batch_ids`."""

    round: int
    provider: str
    batch_ids: tuple[str, ...]
    requests: int
    done: int
    """Rows of the run done so far."""
    total: int


@dataclass(frozen=True)
class Polled(Event):
    """A batch's status at the provider (`done`: ended, in any state; its replies can be collected)."""

    round: int
    part: int
    provider: str
    batch_id: str | None
    status: str
    """The ledger's status of the batch (submitted, completed, intent, abandoned...)."""
    requests: int
    state: str | None = None
    """The provider's own status word; None when the batch was not asked about (not open)."""
    done: bool = False
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Collected(Event):
    """An ended batch's replies stored: `ok` completed lines; `failed` failed or missing (sent again,
    except the `cancelled` ones); `problems`: up to 3 unreadable output lines, each naming its line."""

    batch_id: str
    state: str
    ok: int
    failed: int
    cancelled: int = 0
    problems: tuple[str, ...] = ()

    @property
    def partial(self) -> bool:
        """Some lines failed, or the batch did not end normally."""
        return bool(self.failed) or self.state not in ("completed", "ended")


@dataclass(frozen=True)
class FilesDeleted(Event):
    """What a collected batch left at the provider (input and output files) deleted; `left`: what failed."""

    batch_id: str
    provider: str
    left: tuple[str, ...] = ()


@dataclass(frozen=True)
class Waiting(Event):
    """No batch of the run has ended yet; with `wait`, the next poll is in `seconds`."""

    seconds: float | None = None


@dataclass(frozen=True)
class Rejudged(Event):
    """Items whose batch reply was invalid or failed, judged again online (`collect(online=True)`)."""

    items: int


@dataclass(frozen=True)
class Finished(Event):
    """The run is done: its output (re)written from the store."""

    output: str | None
    model: str
    tally: Tally
    failure: str | None = None
    """Why the run is not a success (nothing judged, too many rows unscored), else None: exit 1."""
    unreadable: str | None = None
    """A note on store rows that could not be read, if any."""


@dataclass(frozen=True)
class RunState(Event):
    """Where a run is (`lifecycle.status`): its status and rows done; `batches`: its batches so far."""

    status: str
    done: int
    total: int | None
    """Rows of its input (None: not counted yet)."""
    batches: int
