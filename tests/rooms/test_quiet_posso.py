"""Quieter Posso (app/rooms/quiet.py): a person's own "don't ask me this hand"
and "only ask when it could help me" reach nobody else - not in a view, not
in an event, not in when the window closes - and, with nobody else there to
see, the room passes for them at once through the engine."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from app.games.posso.engine import PossoGame
from app.store.records import MemoryRecords
from tests.rooms.harness import (
    Recorder,
    RecordingConnection,
    attach,
    new_room,
    seat_people,
    wait_for,
)

pytestmark = pytest.mark.timeout(30)

WINDOW = 0.4
DEFAULT_QUIET = {"hand": None, "helpful": False}


def seen(conn: RecordingConnection) -> list[Any]:
    """What `conn` was told, without what differs between two runs of one
    game anyway: the incarnation, player ids, the timer's clock."""
    out: list[Any] = []
    for f in conn.recorder.frames:
        if f.player != conn.player_id:
            continue
        msg = f.msg
        if "event" in msg:
            out.append(("event", msg["v"], msg["event"]))
        elif "view" in msg:
            view = msg["view"]
            out.append(("view", msg["v"], view["game"], view["legal"], view["you"]["seat"]))
        else:
            out.append(("reply", msg.get("re"), msg.get("error")))
    return out


async def first_window(quiet: dict[str, Any] | None) -> tuple[list[Any], dict[str, Any]]:
    """Three people at hand one, seat 0 dealing: the upturn's window asks
    seats 0 and 2.  Seat 2 passes at once; seat 0 never answers, with its
    switch `quiet` or none.  What seat 1 and seat 2 were told until the window
    closed, and how it closed."""
    room = new_room(
        PossoGame(),
        options={"first_dealer": 0},
        settings={"posso_window": WINDOW},
        records=MemoryRecords(),
        code="QUIET1",
    )
    recorder = Recorder()
    ann, bob, cy = await seat_people(room, 3, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    assert await wait_for(lambda: room.state.phase == "posso_window")
    assert sorted(room.state.eligible) == [0, 2]
    if quiet is not None:
        await room.handle(ann, 2, "cmd", {"type": "posso_quiet", **quiet})
        assert ann.latest_view is not None
        assert ann.latest_view["you"]["quiet"] != DEFAULT_QUIET
    await room.handle(cy, 1, "action", {"type": "pass_posso"})
    await asyncio.sleep(WINDOW / 2)
    assert room.state.phase == "posso_window", "closed before its timer"
    assert await wait_for(lambda: room.state.phase != "posso_window")
    closed = next(
        f.msg["event"]
        for f in recorder.frames
        if f.player == bob.player_id and f.msg.get("event", {}).get("type") == "posso_closed"
    )
    for conn in (bob, cy):  # each one's own switches only: the defaults
        for f in recorder.frames:
            if f.player == conn.player_id and "view" in f.msg:
                assert f.msg["view"]["you"]["quiet"] == DEFAULT_QUIET
    told = seen(bob) + seen(cy)
    await room.shutdown()
    return told, closed


@pytest.mark.parametrize("quiet", [{"hand": True}, {"helpful": True}])
async def test_with_others_there_a_quiet_person_is_told_to_nobody(quiet: dict[str, Any]) -> None:
    silent, closed_silent = await first_window(None)
    quietly, closed_quietly = await first_window(quiet)
    # the others were told exactly what they are told of a person who lets
    # the window run out: the same frames, and the window ran its full time
    assert quietly == silent
    assert closed_quietly == closed_silent
    assert closed_quietly["silent"] == [0] and closed_quietly["timed_out"] is True


async def solo_room(settings: dict[str, Any]) -> tuple[Any, RecordingConnection, MemoryRecords]:
    records = MemoryRecords()
    room = new_room(
        PossoGame(),
        options={"first_dealer": 0},
        settings={"posso_window": 15, **settings},
        records=records,
        code="QUIET2",
    )
    (ann,) = await seat_people(room, 1)
    await room.handle(ann, 1, "cmd", {"type": "add_bot"})
    await room.handle(ann, 2, "cmd", {"type": "add_bot"})
    await room.handle(ann, 3, "cmd", {"type": "start"})
    assert await wait_for(lambda: room.state.phase == "posso_window" and room.to_act == {0})
    return room, ann, records


async def test_with_only_bots_to_see_the_room_passes_for_a_quiet_person_at_once() -> None:
    room, ann, records = await solo_room({})
    started = time.monotonic()
    await room.handle(ann, 4, "cmd", {"type": "posso_quiet", "hand": True})
    assert await wait_for(lambda: room.state.phase != "posso_window", 2.0)
    assert time.monotonic() - started < 5, "the room waited out the 15 s window"
    (game,) = records.games.values()
    # a pass like any other, in the log, from the person's seat
    assert (0, {"type": "pass_posso"}) in game.actions
    assert ann.latest_view is not None and ann.latest_view["you"]["quiet"]["hand"] == 1
    await room.shutdown()


async def test_a_watcher_connected_keeps_the_window_to_its_timer() -> None:
    room, ann, records = await solo_room({"posso_window": WINDOW})
    await room.join("Watcher", spectator=True)  # joined, not connected: cannot see
    (watcher,) = [p for p in room.members.humans() if p.seat is None]
    await attach(room, watcher, Recorder())
    await room.handle(ann, 4, "cmd", {"type": "posso_quiet", "hand": True})
    await asyncio.sleep(WINDOW / 3)
    assert room.state.phase == "posso_window" and room.to_act == {0}
    assert await wait_for(lambda: room.state.phase != "posso_window", 2.0)
    (game,) = records.games.values()
    assert (0, {"type": "pass_posso"}) not in game.actions  # silence: the timer's pass
    await room.shutdown()


async def test_only_when_it_helps_asks_about_a_card_that_could() -> None:
    room, ann, _ = await solo_room({})
    assert room.state.phase == "posso_window"
    helps = ann.latest_view is not None and ann.latest_view["game"]["posso"]["helps"]
    await room.handle(ann, 4, "cmd", {"type": "posso_quiet", "helpful": True})
    await asyncio.sleep(0.3)
    # asked when the card could help (the window still waits), else passed for
    assert (room.state.phase == "posso_window") is bool(helps)
    await room.shutdown()


@pytest.mark.parametrize(
    ("cmd", "code"),
    [
        ({}, "bad_command"),
        ({"hand": "yes"}, "bad_command"),
        ({"helpful": True, "loud": True}, "bad_command"),
    ],
)
async def test_bad_switches_are_refused_plainly(cmd: dict[str, Any], code: str) -> None:
    room, ann, _ = await solo_room({})
    await room.handle(ann, 9, "cmd", {"type": "posso_quiet", **cmd})
    reply = next(f.msg for f in reversed(ann.recorder.frames) if f.msg.get("re") == 9)
    assert reply["error"]["code"] == code and reply["error"]["message"]
    await room.shutdown()
