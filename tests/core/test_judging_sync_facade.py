"""The sync facade reuses one event loop, so an async SDK client works across calls and inside a running loop."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from fakes import FakeLLM

from judgeflow import Claim, ClaimCheck, ClaimChecks, Claims, Judge

ITEM = {"id": "q", "answer": "Paris is the capital of France.", "reference": "Paris"}


def _replies(n: int) -> list:
    out: list = []
    for _ in range(n):
        out += [Claims(claims=[Claim(id="c1", text="Paris is the capital of France.")]),
                ClaimChecks(checks=[ClaimCheck(claim_id="c1", verdict="supported", basis="reference")])]
    return out


def test_repeated_sync_calls_share_one_loop_and_client() -> None:
    loops: set[int] = set()
    llm = FakeLLM("openai", _replies(3))
    original = llm.handler

    async def handler(request: httpx2.Request) -> httpx2.Response:
        loops.add(id(asyncio.get_running_loop()))
        return original(request)

    llm.http_client = lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(handler))  # type: ignore[method-assign]
    judge = Judge(backend=llm.backend())
    assert [judge.judge(ITEM).label for _ in range(2)] == [0, 0]
    assert [r.label for r in judge.judge_many([ITEM])] == [0]
    assert len(loops) == 1, "every sync call must run on the same event loop"


def test_sync_facade_works_while_a_loop_is_running() -> None:
    judge = Judge("baseline/lexical")

    async def inside() -> int | None:
        return judge.judge(ITEM).label

    assert asyncio.run(inside()) == 0


def test_runnable_batch_uses_the_shared_loop() -> None:
    n = 2
    from judgeflow.integrations.runnable import as_runnable

    r = as_runnable(Judge("baseline/lexical"))
    assert [j.label for j in r.batch([ITEM] * n)] == [0] * n


CLOSING = """
import asyncio, gc, sys
from judgeflow import Judge
url, how, transport = sys.argv[1:4]
item = {"id": "m", "question": "When was Moscow founded?", "answer": "Moscow was founded in 1247.", "reference": "1147"}
judge = Judge("openai/fake", base_url=url, api_key="k", provider_retries=0, http_transport=transport)

async def once():
    if how == "close":
        async with judge:
            return (await judge.ajudge(item)).label
    return (await judge.ajudge(item)).label

def handmade():  # a loop closed by hand, without finalising its async generators
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(once())
    finally:
        loop.close()

run = handmade if how == "handmade" else lambda: asyncio.run(once())
print(run(), run())  # two event loops, one Judge
del judge
gc.collect()
"""


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_one_judge_across_event_loops_with_or_without_closing(tmp_path, transport: str) -> None:
    """The SDK's connections belong to the loop that opened them. `async with Judge(...)` (or
    `await judge.aclose()`) closes them before the loop ends; without it, asyncio.run's end closes
    them (judgeflow's finaliser), and a loop closed by hand leaves them to the next loop's first
    call (the second asyncio.run's items were unscored before). Every way both loops judge, and
    nothing is printed about tasks, closed loops or unclosed aiohttp sessions (with aiohttp, an
    unclosed session prints "Unclosed client session" at exit)."""
    import subprocess
    import sys

    from fakes import FakeProvider

    script = tmp_path / "closing.py"
    script.write_text(CLOSING)
    with FakeProvider() as fake:
        for how in ("close", "keep", "handmade"):
            run = subprocess.run([sys.executable, str(script), fake.base_url + "/v1", how, transport],
                                 capture_output=True, text=True, timeout=120)
            assert run.returncode == 0, run.stderr
            assert run.stdout.split() == ["1", "1"], (how, run.stdout, run.stderr)
            for noise in ("Event loop is closed", "never retrieved", "Unclosed", "Traceback"):
                assert noise not in run.stderr, (how, run.stderr)
