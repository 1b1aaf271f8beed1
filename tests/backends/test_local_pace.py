"""The local pace's rule (#50): a local endpoint is paced by what its replies show, never by its host
name. Replies are fed to `LocalPace` directly (latencies in seconds, requests waiting as a caller's
queue): a server that serves many at once is given them in a few round trips, one that queues is held."""

from __future__ import annotations

import asyncio

from judgeflow.backends.local_pace import REPROBE, LocalPace


def paced(waiting: int = 16) -> LocalPace:
    pace = LocalPace("local", floor=900.0)
    loop = asyncio.new_event_loop()
    pace.waiters.extend(loop.create_future() for _ in range(waiting))  # requests that want to be sent
    return pace


def round_trip(pace: LocalPace, latency_of: dict[int, float] | None = None, solo: float = 0.5) -> None:
    """One round trip: `pace.limit` requests sent together (k = 1..limit in flight), each answered at
    `latency_of[k]` (default: flat at `solo`)."""
    for k in range(1, pace.limit + 1):
        pace._learn((latency_of or {}).get(k, solo), k)


def test_a_server_that_serves_many_at_once_reaches_them_in_two_round_trips() -> None:
    pace = paced()
    limits = []
    for _ in range(3):
        round_trip(pace)
        limits.append(pace.limit)
    # the caller's --concurrency (16) caps what is asked for: 16 in flight after two round trips
    assert limits[:2] == [3, 18] and limits[2] >= 18, limits
    assert pace.ceiling is None


def test_the_first_of_a_round_served_flat_by_a_one_slot_server_does_not_open_it() -> None:
    # a one-slot server serves one of three first: its reply is flat whatever it was sent beside; the
    # queue shows only in the other two, so the limit waits for them (it opened to 18 before #50's fix)
    pace = paced()
    round_trip(pace)  # alone: 0.5 s
    pace._learn(0.5, 3)  # sent third, served first
    assert pace.limit == 3
    pace._learn(1.0, 1)
    pace._learn(1.5, 2)
    assert pace.limit == pace.ceiling == 1


def test_a_one_slot_server_is_held_at_one_by_its_queued_second_reply() -> None:
    pace = paced()
    round_trip(pace)  # alone: 0.5 s
    assert pace.limit == 3
    round_trip(pace, {1: 0.5, 2: 1.0, 3: 1.5})  # the second waited for the first, the third too
    assert pace.limit == pace.ceiling == 1


def test_latency_growing_with_the_requests_in_flight_sets_the_slots_it_showed() -> None:
    pace = paced()
    for _ in range(3):
        round_trip(pace)
    assert pace.limit >= 12
    # a 2-slot server: the request sent with 12 in flight took 6x a request alone
    pace._learn(3.0, 12)
    assert pace.limit == pace.ceiling == 2


def test_a_batching_server_that_slows_a_little_under_load_is_not_held() -> None:
    pace = paced()
    for _ in range(3):
        round_trip(pace)
    pace._learn(0.5 * 2.5, 12)  # 2.5x a request alone with 12 in flight: batched, not queued
    assert pace.ceiling is None and pace.limit >= 12


def test_a_503_no_slot_holds_below_what_was_in_flight_and_a_ceiling_is_probed_again() -> None:
    pace = paced()
    for _ in range(3):
        round_trip(pace)
    pace.in_flight = 6
    pace.release(0.0, 6, "busy", 900.0)
    assert pace.limit == pace.ceiling == 5
    for _ in range(max(REPROBE, 5) - 1):
        pace._learn(0.5, 5)
    assert pace.limit == 5
    pace._learn(0.5, 5)
    assert pace.limit == pace.ceiling == 6  # one more after a round trip of flat replies at the ceiling


def test_a_first_reply_slowed_by_opening_the_connection_does_not_hide_a_queue() -> None:
    pace = paced()
    pace._learn(0.35, 1)  # 0.1 s of work and the connection's set-up
    round_trip(pace, {1: 0.1, 2: 0.2, 3: 0.3})  # warm: 0.1 s alone, the others queued behind it
    assert pace.limit == 1


def test_the_first_reply_opens_the_limit_before_the_runs_other_requests_reach_the_pace() -> None:
    # the run's other requests wait behind the client's first answer (its health gate), not here:
    # finding the limit still at one when they arrive cost a 16-slot server a whole round trip
    pace = paced(waiting=0)
    pace._learn(0.5, 1)
    assert pace.limit == 3
    pace._learn(1.0, 2)  # the second queued behind the first: held, not probed with none waiting
    assert pace.limit == pace.ceiling == 1
    for _ in range(10):
        pace._learn(0.5, 1)
    assert pace.limit == 1
