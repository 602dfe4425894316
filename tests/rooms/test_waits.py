"""The waits a committed state calls for (app/rooms/waits.py): the turn
timer hands a dawdler's turn to a bot and back, and a room between games
keeps no wait of the table's."""

from __future__ import annotations

import asyncio
import random

from tests.rooms.harness import Recorder, drive, new_room, seat_people
from tests.rooms.tinygame import TINY


async def test_turn_timer_lets_a_bot_play_the_turn_then_hands_back() -> None:
    room = new_room(TINY, options={"bidding": False})
    room.settings = room.settings.model_copy(update={"turn_timer": 0.01})
    recorder = Recorder()
    ann, _bob = await seat_people(room, 2, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    assert room.to_act == {0}
    timer = ann.latest_view["timer"]  # type: ignore[index]
    assert timer["kind"] == "turn" and timer["seat"] == 0
    for _ in range(200):  # Ann dawdles: her turn runs out and a bot plays it
        await asyncio.sleep(0.005)
        if room.seq >= 1:
            break
    assert room.seq >= 1
    autos = [
        f.msg["event"] for f in recorder.frames if f.msg.get("event", {}).get("what") == "auto_on"
    ]
    assert autos and autos[0]["seat"] == 0
    # the next turn is Bob's: Ann's seat is hers again
    assert 0 not in room.table.forced
    await room.shutdown()


async def test_a_finished_game_leaves_no_wait_of_the_tables() -> None:
    room = new_room(TINY, options={"bidding": False}, settings={"turn_timer": 60})
    conns = await seat_people(room, 2)
    await room.handle(conns[0], 1, "cmd", {"type": "start"})
    assert room.timers.get("turn") is not None
    await drive(room, conns, random.Random(3))
    assert room.status == "finished"
    left = [s for s in ("game", "turn", "quiet", *room.timers.slots("bot:")) if room.timers.get(s)]
    assert left == []
    await room.shutdown()
