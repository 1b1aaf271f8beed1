"""Ctrl-C and SIGTERM for a command's event loop, the same on every Python version.

    results = interrupts.run(judge_everything())   # raises KeyboardInterrupt once cleaned up

Python 3.11's `asyncio.run` turns the first Ctrl-C into a cancellation of the main task, so its
`finally` blocks (committing results, closing connections) run inside the loop, and raises
KeyboardInterrupt afterwards. Python 3.10's raises KeyboardInterrupt wherever the main thread
happens to be: inside a task (the loop then closes with the others still pending, and their clean-up
runs later with no loop), or inside a weakref callback, which prints it and carries on, so the run
went on to the end and exited 0. `run` gives 3.10 the 3.11 behaviour, and handles SIGTERM (a
container stop, `kill`) the same way on every version: a second signal stops at once.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)`, where Ctrl-C or SIGTERM cancels `main` and then raises KeyboardInterrupt."""
    return asyncio.run(_stopped_by_signals(main))


async def _stopped_by_signals(main: Coroutine[Any, Any, T]) -> T:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    signalled = False

    def stop() -> None:
        nonlocal signalled
        if signalled:  # the second: the clean-up itself is stuck, so stop now
            raise KeyboardInterrupt
        signalled = True
        task.cancel()

    # SIGINT only while Python's own handler has it: not when the shell started us in the
    # background (SIG_IGN), nor on 3.11+, whose asyncio.run installed its own that does the same
    mine = [signal.SIGTERM] + ([signal.SIGINT] if signal.getsignal(signal.SIGINT) is signal.default_int_handler else [])
    before = {}
    for sig in mine:
        old = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, stop)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals (Windows)
            continue
        before[sig] = old
    try:
        return await main
    except asyncio.CancelledError:
        if signalled:
            raise KeyboardInterrupt from None
        raise
    finally:
        for sig, old in before.items():
            loop.remove_signal_handler(sig)
            signal.signal(sig, old)  # what was there (remove_signal_handler would leave SIG_DFL)
