"""Which turns a room nudges (app/rooms/nudges.py): the person of a seat to
act who is not here, once per turn; never for a wait the game closes by
itself (the tiny game's sealed bids run on Posso's window timer)."""

from __future__ import annotations

import pytest

from app.rooms.manager import RoomManager
from app.rooms.nudges import Nudge
from app.store.records import MemoryRecords
from tests.rooms.tinygame import TINY

pytestmark = pytest.mark.timeout(30)

SETTINGS = {"auto_bot": False, "disconnect_grace": 3600, "posso_window": 15, "bot_delay": 10}


async def test_a_timed_wait_wakes_nobody_and_a_turn_wakes_its_person_once() -> None:
    manager = RoomManager(MemoryRecords(), {"tiny": TINY}, seeds=lambda: 3)
    sent: list[Nudge] = []
    manager.nudge = sent.append
    room, _ann, _ = await manager.create(
        "tiny", {"bidding": True}, "Ann", SETTINGS, guest_id="guest-ann"
    )
    await room.join("Bob", guest_id="guest-bob")
    async with room.lock:
        await room.start()
    assert room.table.game.timer(room.table.state) == "posso_window"
    assert room.to_act == {0, 1} and sent == [], "the bids close by themselves"
    async with room.lock:
        await room.play(None, {"type": "timeout"})
    (seat,) = room.to_act
    assert len(sent) == 1 and sent[0].still_due()
    who = "guest-ann" if seat == 0 else "guest-bob"
    assert (sent[0].room, sent[0].guest_id) == (room.code, who)
    at = "at your table" if seat == 0 else "at Ann's table"
    assert sent[0].text == f"Your turn in Tiny {at}"
    room.change([])  # anything else in the same turn
    assert len(sent) == 1
    async with room.lock:
        await room.play(seat, room.game.legal_actions(room.state, seat)[0])
    assert not sent[0].still_due(), "that turn is over: a late send is dropped"
    assert len(sent) == 2 and sent[1].guest_id != who, "the next seat's turn"
    await manager.shutdown()
