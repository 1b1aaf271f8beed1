"""Ctrl-C and SIGTERM stop a command's event loop the way Python 3.11's asyncio.run stops it on Ctrl-C,
on every version: the main task is cancelled at an await, its clean-up (and that of the tasks it
started) runs in the loop, then KeyboardInterrupt. On Python 3.10 asyncio.run let KeyboardInterrupt
land in whatever the main thread was running: the CI's Ctrl-C test saw the loop closed with tasks
pending and their `finally` run with no loop, and a run that went on to the end and exited 0."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

_CHILD = textwrap.dedent("""
    import asyncio, os, signal, sys
    from judgeflow import interrupts

    sig = getattr(signal, sys.argv[1])
    if sys.argv[2] == "ignored":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # as `batch collect` sets it
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

    async def helper():
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(0)  # clean-up that needs the loop
            print("helper cleaned up in its loop", flush=True)

    async def main():
        task = asyncio.create_task(helper())
        await asyncio.sleep(0)
        os.kill(os.getpid(), sig)
        n = 0
        for i in range(300_000):  # plain Python: where 3.10 raised KeyboardInterrupt
            n += 1
        print("sync work finished", n, flush=True)
        try:
            await asyncio.sleep(1)
            print("not stopped", flush=True)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    try:
        interrupts.run(main())
        print("returned", flush=True)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
    after = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    print("handlers restored" if after == before else f"handlers changed: {before} -> {after}", flush=True)
""")


def _child(sig: str, sigint: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", _CHILD, sig, sigint], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout.splitlines()


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_cancels_at_an_await_cleans_up_in_the_loop_then_raises_keyboard_interrupt(sig: str) -> None:
    assert _child(sig, "default") == ["sync work finished 300000", "helper cleaned up in its loop",
                                      "KeyboardInterrupt", "handlers restored"]


def test_ctrl_c_ignored_by_a_background_process_stays_ignored_and_sigterm_still_stops_it() -> None:
    assert _child("SIGINT", "ignored") == ["sync work finished 300000", "not stopped",
                                          "helper cleaned up in its loop", "returned", "handlers restored"]
    assert _child("SIGTERM", "ignored")[-2:] == ["KeyboardInterrupt", "handlers restored"]
