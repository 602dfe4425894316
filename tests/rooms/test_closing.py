"""How a room ends (app/rooms/closing.py): idle rooms close, rooms in use
do not, and a room told of a newer owner steps down once."""

from __future__ import annotations

import asyncio

from app.rooms.room import Room
from app.store.records import MemoryRecords
from tests.rooms.harness import new_room, seat_people
from tests.rooms.tinygame import TINY


async def test_a_room_nobody_uses_any_more_closes_and_one_in_use_does_not() -> None:
    records = MemoryRecords()
    room = new_room(TINY, options={"bidding": False}, records=records)
    ann, bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    assert not await room.close_if_idle(0)  # people are connected
    await room.disconnect(ann)
    assert not await room.close_if_idle(0)  # Bob still is
    await room.disconnect(bob)
    assert not await room.close_if_idle(3600)  # nobody, but only just
    assert await room.close_if_idle(0)
    assert room.closed and records.rooms[room.code].closed
    assert not await room.close_if_idle(0)  # closing twice does nothing


async def test_a_room_left_by_its_last_connected_member_goes_idle() -> None:
    """Ann leaves while Bob, still a member, is away: the room stays open for
    Bob, and the idle clock runs from Ann's leaving."""
    room = new_room(TINY, options={"bidding": False})
    ann, bob = await seat_people(room, 2)
    await room.disconnect(bob)
    await room.handle(ann, 1, "cmd", {"type": "leave"})
    assert not room.closed and not room.delivery.conns
    assert await room.close_if_idle(0)


async def test_a_room_steps_down_once_however_many_writes_are_refused() -> None:
    room = new_room(TINY)
    moved: list[Room] = []
    room.on_moved = moved.append
    room.closing.moved_away()
    room.closing.moved_away()
    await asyncio.sleep(0)
    assert moved == [room]


async def test_a_closed_room_does_not_step_down() -> None:
    room = new_room(TINY)
    moved: list[Room] = []
    room.on_moved = moved.append
    await room.close()
    room.closing.moved_away()
    await asyncio.sleep(0)
    assert moved == []
