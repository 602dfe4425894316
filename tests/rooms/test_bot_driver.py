"""The bot driver on its own (app/rooms/bot_driver.py): a table with a bot
seat, and the room's steps it calls back into (a move, stepping down for a
newer owner) replaced by the test's, so each path shows what the driver
itself decides: which move, which fallback, when to try again, when to stop."""

from __future__ import annotations

import random
from typing import Any

import pytest

from app.bots.thinking import InlineThinker
from app.games.base import Event, IllegalAction
from app.rooms.bot_driver import BotDriver
from app.rooms.errors import RoomError
from app.rooms.room import Room
from app.rooms.timers import Backoff, Timers
from tests.rooms.harness import new_room, seat_people, settle
from tests.rooms.tinygame import TINY

pytestmark = pytest.mark.timeout(30)


class Steps:
    """The room's side: each move is recorded, and refused as the test says."""

    def __init__(self, refuse: list[Exception | None]) -> None:
        self.refuse = refuse
        self.moves: list[tuple[int | None, dict[str, Any]]] = []
        self.moved_away = 0

    async def play(self, seat: int | None, action: dict[str, Any]) -> None:
        self.moves.append((seat, action))
        err = self.refuse.pop(0) if self.refuse else None
        if err is not None:
            raise err

    async def moved_on(self, events: list[Event]) -> None:
        raise AssertionError("nothing here leaves a move unsettled")

    def check_moved(self, err: Exception) -> bool:
        moved = isinstance(err, RoomError) and err.code == "moved"
        self.moved_away += moved
        return moved


async def bot_table() -> tuple[Room, int]:
    """A started game with a person in seat 0 and a bot in seat 1; the room's
    own bot waits dropped, so only the driver under test acts."""
    room = new_room(TINY)
    (ann,) = await seat_people(room, 1)
    await room.handle(ann, 1, "cmd", {"type": "add_bot"})
    await room.handle(ann, 2, "cmd", {"type": "start"})
    room.timers.drop_all()
    await settle()
    return room, 1


def driver_for(room: Room, steps: Steps, clock: list[float]) -> tuple[BotDriver, Timers]:
    async def runner(step: Any) -> None:
        await step()

    timers = Timers(runner, lambda: clock[0])
    driver = BotDriver(
        room.code,
        room.table,
        room.members,
        timers,
        room.quiet,
        lambda: clock[0],
        play=steps.play,
        moved_on=steps.moved_on,
        check_moved=steps.check_moved,
        thinker=InlineThinker(),
        jitter=random.Random(36),
        retry=Backoff(),
    )
    return driver, timers


async def test_who_a_bot_drives_follows_the_seat_and_its_stand_in() -> None:
    room, bot = await bot_table()
    driver, _ = driver_for(room, Steps([]), [0.0])
    assert driver.bot_drives(bot) and not driver.bot_drives(0)
    room.table.auto.add(0)  # the person is away past the grace: a bot stands in
    assert driver.bot_drives(0)
    assert driver.bot_level(0) == "normal"
    room.table.auto.discard(0)
    assert not driver.bot_drives(0)


async def test_a_refused_bot_move_falls_back_to_the_safe_move() -> None:
    room, bot = await bot_table()
    steps = Steps([IllegalAction("not_legal", "no")])
    driver, _ = driver_for(room, steps, [0.0])
    await driver._play_bot(bot, {"type": "odd"}, {"type": "safe"})
    assert steps.moves == [(bot, {"type": "odd"}), (bot, {"type": "safe"})]


async def test_a_move_storage_did_not_take_is_tried_again_later_and_later() -> None:
    room, bot = await bot_table()
    clock = [100.0]
    steps = Steps([RoomError("storage_error", "x"), RoomError("storage_error", "x")])
    driver, timers = driver_for(room, steps, clock)
    move = {"type": "go"}
    await driver._play_bot(bot, move, move)
    first = timers.get(f"bot:{bot}")
    assert first is not None and first.kind == "bot" and first.deadline > clock[0]
    timers.drop(f"bot:{bot}")  # as its firing would
    await driver._play_bot(bot, move, move)
    second = timers.get(f"bot:{bot}")
    assert second is not None
    # backed off: the second wait's floor is the first's ceiling
    assert second.deadline - clock[0] >= 0.5
    assert first.deadline - clock[0] <= 0.5
    timers.drop_all()


async def test_a_move_refused_for_a_newer_owner_is_not_tried_again() -> None:
    room, bot = await bot_table()
    steps = Steps([RoomError("moved", "gone")])
    driver, timers = driver_for(room, steps, [0.0])
    move = {"type": "go"}
    await driver._play_bot(bot, move, move)
    assert steps.moved_away == 1
    assert timers.get(f"bot:{bot}") is None


async def test_a_bot_whose_turn_it_is_not_plays_nothing() -> None:
    room, bot = await bot_table()
    steps = Steps([])
    driver, _ = driver_for(room, steps, [0.0])
    person = next(s for s in range(2) if s != bot)
    await driver._bot_turn(person)  # a person's seat: the driver leaves it alone
    assert steps.moves == []
