"""A room's waits (app/rooms/timers.py): they fire at their wall-clock
deadline and never before, once, through the room's runner; a dropped or
replaced wait never fires; and dropping one leaves no garbage that only the
collector could free (the server freezes its heap every second, so such
garbage stayed until the next full sweep)."""

from __future__ import annotations

import asyncio
import gc
import random
import time
from collections.abc import Awaitable, Callable, Iterator

import pytest

from app.rooms.timers import Backoff, Timer, Timers


class Room:
    """A runner that counts its runs, as the room's lock-taking runner would."""

    def __init__(self) -> None:
        self.runs = 0
        self.fired: list[tuple[str, float]] = []
        self.timers = Timers(self.run)

    async def run(self, job: Callable[[], Awaitable[None]]) -> None:
        self.runs += 1
        await job()

    async def fire(self, t: Timer) -> None:
        self.fired.append((t.slot, time.time()))


async def test_a_wait_fires_once_at_its_deadline_never_before() -> None:
    room = Room()
    deadline = time.time() + 0.05
    room.timers.start("game", "cut", deadline, room.fire)
    await asyncio.sleep(0.15)
    assert [slot for slot, _ in room.fired] == ["game"]
    assert room.fired[0][1] >= deadline
    assert room.timers.get("game") is None  # a fired wait leaves its slot


async def test_a_deadline_already_past_fires_at_once() -> None:
    room = Room()
    room.timers.start("game", "cut", time.time() - 5, room.fire)
    await asyncio.sleep(0.02)
    assert [slot for slot, _ in room.fired] == ["game"]


async def test_the_same_wait_started_again_goes_on_and_a_new_one_replaces_it() -> None:
    room = Room()
    first = room.timers.start("turn", "turn", time.time() + 0.05, room.fire, key=1)
    again = room.timers.start("turn", "turn", time.time() + 10, room.fire, key=1)
    assert again is first  # same kind and key: the running wait is kept
    other = room.timers.start("turn", "turn", time.time() + 0.05, room.fire, key=2)
    assert other is not first
    await asyncio.sleep(0.15)
    assert [slot for slot, _ in room.fired] == ["turn"]  # the replaced one never fired


async def test_a_dropped_wait_never_fires() -> None:
    room = Room()
    room.timers.start("bot:1", "bot", time.time() + 0.03, room.fire, seat=1)
    room.timers.start("bot:2", "bot", time.time() + 0.03, room.fire, seat=2)
    room.timers.drop("bot:1")
    await asyncio.sleep(0.1)
    assert [slot for slot, _ in room.fired] == ["bot:2"]
    room.timers.start("game", "cut", time.time() + 0.03, room.fire)
    room.timers.drop_all()
    await asyncio.sleep(0.1)
    assert [slot for slot, _ in room.fired] == ["bot:2"]
    assert room.runs == 1


async def test_a_wait_dropped_while_its_callback_waits_for_the_lock_does_nothing() -> None:
    lock = asyncio.Lock()
    fired: list[str] = []

    async def run(job: Callable[[], Awaitable[None]]) -> None:
        async with lock:
            await job()

    async def fire(t: Timer) -> None:
        fired.append(t.slot)

    timers = Timers(run)
    async with lock:  # the room is busy when the deadline comes
        timers.start("game", "cut", time.time() + 0.01, fire)
        await asyncio.sleep(0.05)
        timers.drop("game")
    await asyncio.sleep(0.05)
    assert fired == []


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def test_dropped_waits_leave_nothing_for_the_collector(collector_off: None) -> None:
    room = Room()
    for _round in range(3):
        for seat in range(100):
            room.timers.start(f"bot:{seat}", "bot", time.time() + 60, room.fire, seat=seat)
        await asyncio.sleep(0)  # the waits are under way
        for seat in range(100):
            room.timers.drop(f"bot:{seat}")
        await asyncio.sleep(0)
    for _ in range(3):
        room.timers.start("game", "cut", time.time(), room.fire)
        await asyncio.sleep(0.01)
    assert len(room.fired) == 3
    found = gc.collect()
    # before waits were timer handles, each dropped wait left a cancelled task
    # in a cycle: about 17 objects apiece, 5,000 here
    assert found < 20, f"{found} objects freed only by the collector"


def test_a_backoff_failing_all_night_stays_at_its_cap() -> None:
    """The simulator's planted-bug run found it: 2.0**1024 overflowed, the save
    retry's timer failed, and the room stopped retrying its save."""
    backoff = Backoff(first=0.5, cap=30.0)
    rng = random.Random(1)
    delays = [backoff.next(rng) for _ in range(3000)]
    assert all(15.0 <= d <= 30.0 for d in delays[10:])
