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
url, transports, hows = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
item = {"id": "m", "question": "When was Moscow founded?", "answer": "Moscow was founded in 1247.", "reference": "1147"}

# each transport and way with its own Judge, in one process (what is left at exit is checked once, for all)
for transport, how in [(t, h) for t in transports for h in hows]:
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
    print(f"{transport}:{how}", run(), run(), flush=True)  # two event loops, one Judge
    del judge
    gc.collect()
"""


@pytest.mark.slow
def test_one_judge_across_event_loops_with_or_without_closing(tmp_path) -> None:
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
    hows, transports = ("close", "keep", "handmade"), ("aiohttp", "httpx")
    with FakeProvider() as fake:  # one child for all six (a child's start-up was most of the CPU)
        run = subprocess.run([sys.executable, str(script), fake.base_url + "/v1", ",".join(transports), *hows],
                             capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [w for t in transports for how in hows for w in (f"{t}:{how}", "1", "1")], (
        run.stdout, run.stderr)
    for noise in ("Event loop is closed", "never retrieved", "Unclosed", "Traceback"):
        assert noise not in run.stderr, run.stderr


MOSCOW = {"id": "m", "question": "When was Moscow founded?", "answer": "Moscow was founded in 1247.",
          "reference": "1147"}


@pytest.fixture(scope="module")
def provider_url():
    from fakes import FakeProvider

    with FakeProvider() as fake:
        yield fake.base_url + "/v1"


def _judge(url: str, transport: str) -> Judge:
    return Judge("openai/fake", base_url=url, api_key="k", provider_retries=0, http_transport=transport)


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_sync_then_async_then_sync_on_one_judge_judges_every_item(provider_url: str, transport: str) -> None:
    """`judge()` runs on the facade's background loop, which keeps running; `asyncio.run(ajudge())`
    then runs in another loop beside it. Each loop has its own SDK client (before, the second
    call used the background loop's connections and ended unscored with APIConnectionError)."""
    pytest.importorskip("aiohttp")
    judge = _judge(provider_url, transport)
    first = judge.judge(MOSCOW)
    second = asyncio.run(judge.ajudge(MOSCOW))
    third = asyncio.run(judge.ajudge(MOSCOW))  # a second asyncio.run: a new loop, a new client
    fourth = judge.judge_many([MOSCOW, MOSCOW])
    assert [r.label for r in [first, second, third, *fourth]] == [1] * 5, [r.error for r in [second, third]]


def test_runnable_invoke_batch_then_abatch(provider_url: str) -> None:
    """As docs/integrations.md shows: invoke, batch, then `await abatch` on one runnable."""
    from judgeflow.integrations.runnable import as_runnable

    runnable = as_runnable(_judge(provider_url, "auto"))
    assert runnable.invoke(MOSCOW).label == 1
    assert [r.label for r in runnable.batch([MOSCOW, MOSCOW])] == [1, 1]
    assert [r.label for r in asyncio.run(runnable.abatch([MOSCOW, MOSCOW]))] == [1, 1]
    assert runnable.invoke(MOSCOW).label == 1


def test_inside_an_already_running_loop_sync_and_async_alternate(provider_url: str) -> None:
    """A running loop (Jupyter, FastAPI, pytest-asyncio): the sync facade from inside it (it runs
    on the background loop) and `await ajudge` in it, alternately, on one Judge."""
    judge = _judge(provider_url, "auto")

    async def inside() -> list[int | None]:
        labels = [(await judge.ajudge(MOSCOW)).label, judge.judge(MOSCOW).label]
        labels.append((await judge.ajudge(MOSCOW)).label)
        await judge.aclose()  # closes this loop's client; the background loop's stays usable
        labels.append(judge.judge(MOSCOW).label)
        return labels

    assert asyncio.run(inside()) == [1, 1, 1, 1]
    assert judge.judge(MOSCOW).label == 1


def test_the_client_of_an_asyncio_run_closes_with_its_loop(provider_url: str) -> None:
    from judgeflow.backends.connections import LoopClient

    judge = _judge(provider_url, "auto")
    sdk = judge.backend.client.sdk
    assert isinstance(sdk, LoopClient)
    judge.judge(MOSCOW)
    asyncio.run(judge.ajudge(MOSCOW))
    loops = {o.loop() for o in sdk.opened()}
    assert len([lp for lp in loops if lp is not None and not lp.is_closed()]) == 1  # the background loop's


def test_the_langsmith_evaluators_on_one_judge_alternate(provider_url: str) -> None:
    """The sync evaluator runs on the facade's loop; the async one under the caller's `asyncio.run`:
    one Judge behind both scores every call (the evaluator and scorer are built on `ajudge`)."""
    pytest.importorskip("langsmith")
    from judgeflow.integrations.langsmith import alangsmith_evaluator, langsmith_evaluator

    judge = _judge(provider_url, "auto")
    sync, async_ = langsmith_evaluator(judge), alangsmith_evaluator(judge)
    args = {"inputs": {"question": MOSCOW["question"]}, "outputs": {"answer": MOSCOW["answer"]},
            "reference_outputs": {"answer": MOSCOW["reference"]}}
    scores = [sync(**args)["score"], asyncio.run(async_(**args))["score"], sync(**args)["score"]]
    assert scores == [1, 1, 1], scores
