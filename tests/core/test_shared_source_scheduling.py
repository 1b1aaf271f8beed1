"""judge_stream's scheduling of items that share a source: a source's later items wait for its first
(the provider's prompt cache) without holding a concurrency slot, so other sources are judged
meanwhile; the later items still start only once their first is judged, and every item's result
comes back."""

from __future__ import annotations

import asyncio
from typing import Any

from judgeflow.items import Item
from judgeflow.judging import judge_stream
from judgeflow.results import Judgment


class Recorder:
    """A Judging whose items finish when the test says; records starts and finishes."""

    model = "fake/recorder"

    def __init__(self, release: dict[str, asyncio.Event]) -> None:
        self.release = release
        self.events: list[str] = []

    def fingerprint(self, item: Item) -> str | None:
        return None

    async def ajudge(self, item: Any) -> Judgment:
        self.events.append(f"start {item.id}")
        gate = self.release.get(item.id)
        if gate is not None:
            await gate.wait()
        self.events.append(f"end {item.id}")
        return Judgment.unscored(item.id, "recorded", model=self.model)

    async def aclose(self) -> None:
        pass


def item(id_: str, source: str) -> Item:
    return Item(id=id_, answer=f"answer {id_}", source=[source])


async def collect(judging: Recorder, items: list[Item], concurrency: int) -> list[str]:
    return [j.id async for _, j in judge_stream(judging, items, concurrency=concurrency)]


def test_a_later_item_waiting_for_its_first_leaves_the_slot_to_another_source() -> None:
    async def scenario() -> Recorder:
        # a1 is judged until b1 has started: with a1's slot and a2 waiting in the second one, b1
        # could never start (a2's wait would hold the only other slot)
        release = {"a1": asyncio.Event()}
        judging = Recorder(release)

        async def watch() -> None:
            while "start b1" not in judging.events:
                await asyncio.sleep(0.001)
            release["a1"].set()

        watcher = asyncio.create_task(watch())
        done = await asyncio.wait_for(collect(judging, [item("a1", "A"), item("a2", "A"), item("b1", "B")], 2), 10)
        watcher.cancel()
        assert sorted(done) == ["a1", "a2", "b1"]
        return judging

    events = asyncio.run(scenario()).events
    assert events.index("start b1") < events.index("end a1")


def test_later_items_of_a_source_start_only_after_its_first_is_judged() -> None:
    async def scenario() -> list[str]:
        release = {"a1": asyncio.Event()}
        judging = Recorder(release)
        loop = asyncio.get_running_loop()
        loop.call_later(0.05, release["a1"].set)
        ids = await asyncio.wait_for(
            collect(judging, [item("a1", "A"), item("b1", "B"), item("a2", "A"), item("a3", "A")], 16), 10)
        assert sorted(ids) == ["a1", "a2", "a3", "b1"]
        return judging.events

    events = asyncio.run(scenario())
    end_a1 = events.index("end a1")
    assert events.index("start a2") > end_a1 and events.index("start a3") > end_a1
    assert events.index("start b1") < end_a1


def test_a_failing_first_releases_its_later_items_and_the_failure_is_raised() -> None:
    class Failing(Recorder):
        async def ajudge(self, item: Any) -> Judgment:
            if item.id == "a1":
                raise RuntimeError("provider gone")
            return await super().ajudge(item)

    async def scenario() -> None:
        judging = Failing({})
        try:
            await asyncio.wait_for(collect(judging, [item("a1", "A"), item("a2", "A")], 1), 10)
        except RuntimeError as e:
            assert "provider gone" in str(e)
        else:
            raise AssertionError("the failure was not raised")

    asyncio.run(scenario())
