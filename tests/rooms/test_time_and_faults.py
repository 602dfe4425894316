"""Time passing with nobody there, and storage failing: a room does no busy
work, retries back off, and a derived record survives a crash.  Waits run on
looptime's fast-forwarded loop with the rooms' clock on it, as in the room
simulator (tests/sim), so an hour takes milliseconds."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import looptime

from app.games import GAMES
from app.rooms.manager import RoomManager
from app.store.records import MemoryRecords
from tests.rooms.harness import drive, new_room, seat_people, settle
from tests.rooms.tinygame import TINY

START = 1_900_000_000.0


def on_virtual_time(test: Callable[[Callable[[], float]], Awaitable[None]]) -> None:
    loop = looptime.new_event_loop(start=0.0, noop_cycles=2)
    try:
        loop.run_until_complete(test(lambda: START + loop.time()))
    finally:
        loop.close()


class StorageAway(MemoryRecords):
    """Storage whose appends and saves fail while `away` is set."""

    away = False

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        if self.away:
            raise ConnectionError("the database is away")
        await super().append_action(game_id, seq, seat, action, epoch)

    async def save_room(self, room: Any, epoch: int = 0) -> None:
        if self.away:
            raise ConnectionError("the database is away")
        await super().save_room(room, epoch)


def test_a_lobby_left_by_its_host_and_everyone_does_nothing_for_a_day() -> None:
    """The reported spin: with the host away and nobody to take the role, the
    presence wait was set for a moment already past, again and again."""

    async def test(clock: Callable[[], float]) -> None:
        room = new_room(TINY, settings={"disconnect_grace": 5}, clock=clock)
        ann, bob = await seat_people(room, 2)
        await room.disconnect(bob)
        await room.disconnect(ann)
        await asyncio.sleep(24 * 3600)
        assert sum(room.timers.fired.values()) == 0, room.timers.fired
        assert room.timers.slots("") == [], "nobody here, no game: nothing to wait for"
        await room.shutdown()

    on_virtual_time(test)


def test_a_timeout_that_storage_refuses_is_retried_later_and_later() -> None:
    """The other spin: a failed timeout re-armed its timer at the deadline that
    had passed, some 70,000 times a second."""

    async def test(clock: Callable[[], float]) -> None:
        records = StorageAway(clock)
        room = new_room(TINY, settings={"posso_window": 2}, records=records, clock=clock)
        ann, _bob = await seat_people(room, 2)
        await room.handle(ann, 1, "cmd", {"type": "start"})
        assert room.timers.get("game") is not None, "the bidding window is open"
        records.away = True
        await asyncio.sleep(600)
        tries = room.timers.fired["posso_window"]
        assert 5 <= tries <= 40, f"{tries} tries in ten minutes: backoff to 15-30 s, not a spin"
        assert room.table.seq == 0
        records.away = False
        await asyncio.sleep(31)
        assert room.table.seq == 1, "once storage is back the window closes"
        await room.shutdown()

    on_virtual_time(test)


async def test_the_series_tally_survives_a_crash_between_result_and_room_save() -> None:
    """Found by a kill -9 at the end of games: the result was stored, the room
    (with the tally) was not, and recovery repaired results but not the tally."""
    records = StorageAway()
    game = GAMES["bigtwo"]
    room = new_room(game, records=records, code="TALLY1")
    conns = await seat_people(room, 4)
    await room.handle(conns[0], 1, "cmd", {"type": "start"})
    await room.save()
    records.save_room = _refuse  # type: ignore[method-assign]  # the room's saves now fail
    await drive(room, conns, random.Random(7))
    await settle()
    assert room.status == "finished" and sum(room.record.tally.values()) == 6
    assert sum(records.rooms["TALLY1"].tally.values()) == 0, "the room save did not happen"
    await room.shutdown()

    rebuilt = await RoomManager(records, {game.name: game}).find("TALLY1")  # the restart
    assert rebuilt is not None
    assert rebuilt.record.tally == room.record.tally
    await rebuilt.shutdown()


async def _refuse(room: Any, epoch: int = 0) -> None:
    raise ConnectionError("killed before the room was saved")


def test_an_away_host_in_the_lobby_hands_the_role_on_after_ten_seconds() -> None:
    """Between games the others wait to start: the role passes after the
    lobby's short grace, not the minute a seat in play gets, and the seat
    says when it will (a countdown)."""

    async def test(clock: Callable[[], float]) -> None:
        room = new_room(TINY, settings={"disconnect_grace": 60}, clock=clock)
        ann, bob = await seat_people(room, 2)
        left_at = clock()
        await room.disconnect(ann)
        seat = room.room_public()["seats"][0]
        assert seat["host"] and seat["host_passes_ms"] == int((left_at + 10) * 1000)
        await asyncio.sleep(9.9)
        assert room.members.host == ann.player_id, "not before the lobby's grace"
        await asyncio.sleep(0.2)
        assert room.members.host == bob.player_id
        assert room.room_public()["seats"][0]["host_passes_ms"] is None
        await room.shutdown()

    on_virtual_time(test)
