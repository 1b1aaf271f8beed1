"""`runs.budget.Budget`: a hard spend cap reserved before each call, shared by every call of a run (#37).

The first version (`production` branch) hung when its test file ran whole: a call that could not fit
waited, polling, whenever any reservation was held, also one its own task held or one whose task had
ended without settling it, which could never come back. Each scenario below runs in a thread that
must end within seconds (`within`), so a hang fails the test instead of stopping the suite.
"""

from __future__ import annotations

import asyncio
import math
import socket
import threading
from collections.abc import Callable
from typing import Any

import pytest

from judgeflow.errors import BudgetExceeded, ConfigError
from judgeflow.results import Usage
from judgeflow.runs.budget import Budget, Cost
from judgeflow.runs.pricing import Price

PRICES = {"openai/x": Price(input=1.0, output=4.0)}


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    """fn() in a daemon thread; fails (instead of hanging the suite) if it has not ended in time."""
    out: dict[str, Any] = {}

    def go() -> None:
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out["error"] = e

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"still waiting after {seconds} s: the budget hung"
    if "error" in out:
        raise out["error"]
    return out.get("value")


@pytest.mark.parametrize("text", ["nan", "inf", "-1", "$-0.5", "$inf", "$nan", "abc", "2.5", "$"])
def test_a_budget_refuses_non_finite_negative_or_fractional_calls(text: str) -> None:
    with pytest.raises(ConfigError):
        Budget.parse(text)


def test_a_budget_parses_calls_and_dollars() -> None:
    calls, money = Budget.parse("200"), Budget.parse("$1.50", prices=PRICES)
    assert calls is not None and (calls.calls_cap, calls.usd_cap) == (200, None)
    assert money is not None and (money.calls_cap, money.usd_cap) == (None, 1.5)
    assert Budget.parse("0.5usd", prices=PRICES).usd_cap == 0.5  # type: ignore[union-attr]
    assert Budget.parse(None) is None and Budget.parse("") is None
    with pytest.raises(ConfigError):
        Budget(usd=math.inf)
    with pytest.raises(ConfigError, match="needs a cap"):
        Budget()


def test_a_call_waits_for_another_call_in_flight_and_is_woken_by_its_settling() -> None:
    budget = Budget(calls=2)

    async def go() -> None:
        first = asyncio.Event()
        release = asyncio.Event()

        async def in_flight() -> None:
            hold = await budget.reserve(Cost(calls=2))
            first.set()
            await release.wait()
            hold.settle(Usage(calls=1), "openai/x")  # it used 1 of the 2 it held

        other = asyncio.ensure_future(in_flight())
        await first.wait()
        waiting = asyncio.ensure_future(budget.reserve(Cost(calls=1)))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # it may fit once the call in flight settles
        release.set()
        hold = await waiting
        hold.settle(Usage(calls=1), "openai/x")
        await other

    within(10, lambda: asyncio.run(go()))
    assert budget.spent == Cost(calls=2) and budget.reserved == Cost() and budget.denied == 0


def test_a_task_asking_for_more_than_its_own_hold_leaves_is_refused_not_left_waiting_on_itself() -> None:
    """The old code waited here forever: 1 of 2 was held (by the asking task itself) and 1 + 1 fit the cap."""
    budget = Budget(calls=2)

    async def go() -> None:
        held = await budget.reserve(Cost(calls=1))
        with pytest.raises(BudgetExceeded, match="^budget: "):
            await budget.reserve(Cost(calls=2))
        held.release()

    within(10, lambda: asyncio.run(go()))
    assert budget.denied == 1 and budget.reserved == Cost()


def test_a_hold_left_unsettled_by_an_ended_task_counts_in_full_and_never_blocks_a_waiter() -> None:
    """The old test's own scenario: a reservation taken by a task that ended without settling it. The
    old code polled for it forever; now it is spent at its bound, and the next call is refused at once."""
    budget = Budget(calls=2)

    async def go() -> None:
        held = await budget.reserve(Cost(calls=1))
        leaked = await asyncio.ensure_future(budget.reserve(Cost(calls=1)))  # that task has ended
        assert leaked.open
        held.settle(Usage(calls=1), "openai/x")
        with pytest.raises(BudgetExceeded):
            await budget.reserve(Cost(calls=1))

    within(10, lambda: asyncio.run(go()))
    assert budget.spent == Cost(calls=2) and budget.reserved == Cost()


def test_a_waiter_is_woken_when_the_task_holding_what_it_waits_for_ends_unsettled() -> None:
    budget = Budget(calls=3)

    async def go() -> None:
        gate = asyncio.Event()

        async def holder() -> None:
            await budget.reserve(Cost(calls=3))
            gate.set()
            await asyncio.sleep(0.05)  # ends without settling: its 3 are taken as spent

        task = asyncio.ensure_future(holder())
        await gate.wait()
        with pytest.raises(BudgetExceeded):
            await budget.reserve(Cost(calls=1))  # waits, is woken as the holder ends, then refused
        await task

    within(10, lambda: asyncio.run(go()))
    assert budget.spent == Cost(calls=3)


def test_one_budget_shared_by_two_event_loops_in_two_threads_never_overspends() -> None:
    budget = Budget(calls=10)
    sent: list[int] = []

    async def calls(n: int) -> None:
        async def one() -> None:
            try:
                hold = await budget.reserve(Cost(calls=2))
            except BudgetExceeded:
                return
            await asyncio.sleep(0.001)
            sent.append(1)
            hold.settle(Usage(calls=1), "openai/x")

        await asyncio.gather(*(one() for _ in range(n)))

    def both() -> None:
        threads = [threading.Thread(target=lambda: asyncio.run(calls(16))) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    within(20, both)
    assert len(sent) <= 10 and budget.spent.calls == len(sent) and budget.reserved == Cost()
    assert len(sent) >= 9  # a 2-call hold that used 1 leaves room: waiters got it, not refusals


def test_a_new_period_starts_the_cap_again() -> None:
    budget = Budget(calls=1)

    async def go() -> None:
        (await budget.reserve(Cost(calls=1))).settle(Usage(calls=1), "openai/x")
        with pytest.raises(BudgetExceeded):
            await budget.reserve(Cost(calls=1))
        assert budget.exhausted and budget.remaining.calls == 0
        budget.new_period()
        assert not budget.exhausted and budget.remaining == Cost(calls=1, usd=math.inf)
        (await budget.reserve(Cost(calls=1))).settle(Usage(calls=1), "openai/x")

    within(10, lambda: asyncio.run(go()))
    assert budget.usage.calls == 2 and budget.spent == Cost(calls=1)


def test_a_money_budget_bounds_a_call_above_what_it_can_cost() -> None:
    budget = Budget(usd=1.0, prices=PRICES)
    one = budget.bound("openai/x", attempts=1, request_bytes=1000, max_tokens=100)
    assert one.usd >= (1000 * 1.0 + 100 * 4.0) / 1e6 and one.calls == 1
    three = budget.bound("openai/x", attempts=3, request_bytes=1000, max_tokens=100)
    assert three.usd > 3 * one.usd  # re-asks carry the rejected reply and the error
    assert budget.cost("openai/x", Usage(calls=1, input_tokens=1000, output_tokens=100)).usd <= one.usd


def test_an_unknown_price_with_a_money_budget_is_refused_at_start_naming_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"--prices FILE.*--budget 200"):
        Budget(usd=1.0, prices={}).check_model("acme/unknown-model")
    Budget(calls=5).check_model("acme/unknown-model")  # a calls budget needs no price


def test_a_price_lookup_for_an_unknown_openai_model_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """genai-prices prices from its bundled database; only its opt-in updater fetches. Any
    connection attempt fails this test."""
    from judgeflow.runs import pricing

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a price lookup opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    pricing.maintained_price.cache_clear()
    assert within(30, lambda: pricing.price_for("openai/judgeflow-no-such-model-2099")) is None
    with pytest.raises(ConfigError, match="--prices"):
        Budget(usd=1.0).check_model("openai/judgeflow-no-such-model-2099")
