"""A Posso cut that can change nothing holds nobody up: the room gives its
wait no time, so hand 1 starts at once with the timeout (a miss) in the log,
while a cut that could lower the dealer's total waits the room's `cut` time
for the dealer, who is offered it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.games.posso.engine import PossoGame
from app.games.posso.model import PossoState
from app.store.records import MemoryRecords
from tests.rooms.harness import Recorder, new_room, seat_people, wait_for

pytestmark = pytest.mark.timeout(30)

LONG_CUT = {"cut": 60, "posso_window": 15}


class BehindAtHandTwo(PossoGame):
    """Posso dealt at hand 2 as if hand 1 had left the dealer 40 points behind
    the others: a hit would bring the dealer down to 0, so the cut matters."""

    def new_game(
        self, seats: int, options: dict[str, Any], seed: int, deck: list[str] | None = None
    ) -> PossoState:
        state = super().new_game(seats, {**options, "start_hand": 2}, seed, deck)
        state.totals = [40 if seat == state.dealer else 0 for seat in range(seats)]
        return state


async def test_hand_one_starts_without_waiting_for_its_cut() -> None:
    records = MemoryRecords()
    room = new_room(PossoGame(), settings=LONG_CUT, records=records)
    recorder = Recorder()
    conns = await seat_people(room, 3, recorder)
    await room.handle(conns[0], 1, "cmd", {"type": "start"})
    assert await wait_for(lambda: room.state.phase != "cut"), "hand 1 still waits on its cut"
    (game,) = records.games.values()
    assert game.actions[0] == (None, {"type": "timeout"})  # logged like any timeout
    assert room.state.hand_no == 1 and room.state.cut["moot"] is True
    # nobody was asked to cut: every view of the cut said moot and offered nothing
    cut_views = [
        f.msg["view"]
        for f in recorder.frames
        if "view" in f.msg and (f.msg["view"]["game"] or {}).get("phase") == "cut"
    ]
    assert cut_views, "the cut phase was never shown"
    for view in cut_views:
        assert view["game"]["cut"]["moot"] is True and view["game"]["to_act"] == []
        assert view["legal"] is None
    await room.shutdown()


async def test_a_cut_that_matters_waits_for_the_dealer() -> None:
    records = MemoryRecords()
    room = new_room(BehindAtHandTwo(), settings=LONG_CUT, records=records)
    conns = await seat_people(room, 3)
    await room.handle(conns[0], 1, "cmd", {"type": "start"})
    await asyncio.sleep(0.2)
    state = room.state
    assert state.hand_no == 2 and state.phase == "cut"
    timer = room.waits.timer_json()
    assert timer is not None and timer["kind"] == "cut" and timer["ms_left"] > 55_000
    dealer = next(c for c in conns if room.game_seat[c.player_id] == state.dealer)
    view = dealer.latest_view
    assert view is not None and view["game"]["cut"]["moot"] is False
    assert view["legal"] and all(a["type"] == "cut" for a in view["legal"])
    (game,) = records.games.values()
    assert game.actions == []
    await room.handle(dealer, 2, "action", view["legal"][0])
    assert room.state.phase != "cut" and game.actions[0][0] == state.dealer
    await room.shutdown()
