"""TimedRecords: every call gives up at its deadline, and only then.

The deadline is shared per slot (app/store/timed.py), so these check what a
room relies on: a call with no answer raises TimeoutError within
`seconds + slot`; a call that answers is never cancelled afterwards; a cancel
from elsewhere stays a cancel; many calls at once each keep their own fate.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.store.timed import TimedRecords

SECONDS, SLOT = 0.2, 0.1


class Storage:
    """Answers `action_count` after `delay` seconds (None: never)."""

    def __init__(self) -> None:
        self.delays: dict[int, float | None] = {}
        self.finished: list[int] = []

    async def action_count(self, game_id: int) -> int:
        delay = self.delays.get(game_id, 0.0)
        if delay is None:
            await asyncio.Event().wait()
        else:
            await asyncio.sleep(delay)
        self.finished.append(game_id)
        return game_id * 10


def timed(storage: Storage) -> TimedRecords:
    return TimedRecords(storage, SECONDS, SLOT)  # type: ignore[arg-type]


async def test_a_call_with_no_answer_times_out_between_its_deadline_and_the_slots_end() -> None:
    storage = Storage()
    storage.delays[1] = None
    records = timed(storage)
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(TimeoutError, match="no answer"):
        await records.action_count(1)
    took = loop.time() - began
    assert SECONDS <= took < SECONDS + SLOT + 0.15, took


async def test_an_answer_in_time_is_returned_and_its_task_is_never_cancelled_later() -> None:
    storage = Storage()
    storage.delays[2] = SECONDS / 4
    records = timed(storage)
    assert await records.action_count(2) == 20
    # the slot's timer still fires; it must find nothing of ours to cancel
    await asyncio.sleep(SECONDS + 2 * SLOT)
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_calls_sharing_a_slot_each_keep_their_own_fate() -> None:
    storage = Storage()
    records = timed(storage)
    for game in range(40):
        storage.delays[game] = None if game % 2 else 0.01 * (game % 5)

    async def one(game: int) -> Any:
        try:
            return await records.action_count(game)
        except TimeoutError:
            return "timeout"

    got = await asyncio.gather(*(one(g) for g in range(40)))
    assert got == ["timeout" if g % 2 else g * 10 for g in range(40)]
    assert sorted(storage.finished) == [g for g in range(40) if g % 2 == 0]


async def test_a_cancel_from_elsewhere_stays_a_cancel() -> None:
    storage = Storage()
    storage.delays[3] = None
    records = timed(storage)
    task = asyncio.create_task(records.action_count(3))
    await asyncio.sleep(SECONDS / 4)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_cancel_racing_the_deadline_is_not_swallowed_as_a_timeout() -> None:
    """The task is cancelled from elsewhere and by its deadline in one turn of
    the loop: the outside cancel must win (asyncio.timeout's rule), or a room
    being shut down would carry on as if storage had merely been slow."""
    storage = Storage()
    storage.delays[4] = None
    records = timed(storage)
    task = asyncio.create_task(records.action_count(4))
    loop = asyncio.get_running_loop()
    await asyncio.sleep(0)
    # the slot's timer is due at its end; cancel just as it is
    slot_end = (int((loop.time() + SECONDS) / SLOT) + 1) * SLOT
    loop.call_at(slot_end, task.cancel)
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_deadline_already_past_gives_up_at_once_and_once() -> None:
    storage = Storage()
    storage.delays[5] = None
    records = TimedRecords(storage, 0.0, SLOT)  # type: ignore[arg-type]
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(TimeoutError):
        await records.action_count(5)
    assert loop.time() - began < SLOT + 0.1
