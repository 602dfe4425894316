"""Quieter Posso (app/rooms/quiet.py): a person's own "don't ask me this hand"
and "only ask when it could help me" are told to nobody else, and the room
passes for them at once through the engine, whoever else is there: a window
waits for its timer only on someone asked who has not answered."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from app.bots import bot_for
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
from tests.seeds import TEST_SEED

pytestmark = pytest.mark.timeout(30)

DEFAULT_QUIET = {"hand": None, "helpful": False}


@pytest.mark.parametrize("quiet", [{"hand": True}, {"helpful": True}])
async def test_with_others_there_a_quiet_person_passes_at_once_and_their_switch_is_theirs(
    quiet: dict[str, Any],
) -> None:
    """RULES.md: quiet settings pass for a person at once. The window closes as
    soon as the person asked has answered, with the quiet person's pass in
    it; the switch itself reaches nobody else (the others' views hold their
    own defaults only)."""
    room = new_room(
        PossoGame(),
        options={"first_dealer": 0},
        settings={"posso_window": 15},
        records=MemoryRecords(),
        code="QUIET1",
    )
    recorder = Recorder()
    ann, bob, cy = await seat_people(room, 3, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    assert await wait_for(lambda: room.state.phase == "posso_window")
    assert sorted(room.state.eligible) == [0, 2]
    helps = ann.latest_view is not None and ann.latest_view["game"]["posso"]["helps"]
    await room.handle(ann, 2, "cmd", {"type": "posso_quiet", **quiet})
    started = time.monotonic()
    await room.handle(cy, 1, "action", {"type": "pass_posso"})
    if quiet.get("helpful") and helps:  # asked after all: Ann's to answer
        assert room.state.phase == "posso_window"
    else:
        assert await wait_for(lambda: room.state.phase != "posso_window", 2.0)
        assert time.monotonic() - started < 5, "the 15 s window ran to its timer"
        closed = next(
            f.msg["event"]
            for f in recorder.frames
            if f.player == bob.player_id and f.msg.get("event", {}).get("type") == "posso_closed"
        )
        assert closed["timed_out"] is False and closed.get("silent") in (None, [])
    for conn in (bob, cy):  # each one's own switches only: the defaults
        for f in recorder.frames:
            if f.player == conn.player_id and "view" in f.msg:
                assert f.msg["view"]["you"]["quiet"] == DEFAULT_QUIET
    await room.shutdown()


async def solo_room(
    settings: dict[str, Any], records: MemoryRecords | None = None, code: str = "QUIET2"
) -> tuple[Any, RecordingConnection, MemoryRecords]:
    records = records or MemoryRecords()
    room = new_room(
        PossoGame(),
        options={"first_dealer": 0},
        settings={"posso_window": 15, **settings},
        records=records,
        code=code,
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


async def test_a_watcher_connected_does_not_hold_the_window_open() -> None:
    room, ann, records = await solo_room({})
    await room.join("Watcher", spectator=True)
    (watcher,) = [p for p in room.members.humans() if p.seat is None]
    await attach(room, watcher, Recorder())
    await room.handle(ann, 4, "cmd", {"type": "posso_quiet", "hand": True})
    assert await wait_for(lambda: room.state.phase != "posso_window", 2.0)
    (game,) = records.games.values()
    assert (0, {"type": "pass_posso"}) in game.actions  # the room's pass, at once
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


async def play_quietly(
    room: Any, conns: list[RecordingConnection], rng: Any, check: Any = None
) -> None:
    """Each person plays from their own last view, as a bot would, and answers
    a Posso window only when it asks them (their switches say whether);
    `check()` runs between moves."""
    bot = bot_for("posso")
    by_seat = {room.game_seat[c.player_id]: c for c in conns}
    ids = 0
    for _ in range(200_000):
        if room.status != "playing":
            return
        if check is not None:
            check()
        ready = []
        for seat in sorted(room.to_act):
            conn = by_seat.get(seat)
            view = conn.latest_view if conn is not None else None
            if not view or not view.get("legal"):
                continue
            game = view["game"]
            asked = game.get("phase") != "posso_window" or (
                not (view["you"]["quiet"]["helpful"] and game["posso"]["helps"] is False)
            )
            if asked:
                ready.append((conn, view))
        if not ready:
            await asyncio.sleep(0.001)  # the room's pass, a bot, or a timer
            continue
        conn, view = rng.choice(ready)
        ids += 1
        action = bot.choose(view["game"], view["legal"], view["you"]["seat"], rng)
        await room.handle(conn, ids, "action", action)
    raise AssertionError("the game did not end")


@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", [TEST_SEED])
async def test_with_every_person_quiet_no_window_waits_for_its_timer(seed: int) -> None:
    """A scripted game from hand 9: three people, all connected, each with
    "only ask if it helps me" on; a window asks someone only when the card
    could help them, and they answer at once. No window may wait for its
    timer (each would have cost the room's whole `posso_window`)."""
    records = MemoryRecords()
    room = new_room(
        PossoGame(),
        options={"start_hand": 9},
        settings={"posso_window": 2, "posso_answer": 0, "cut": 0},
        records=records,
        code="QUIET3",
    )
    recorder = Recorder()
    conns = await seat_people(room, 3, recorder)
    for i, conn in enumerate(conns):
        await room.handle(conn, 100 + i, "cmd", {"type": "posso_quiet", "helpful": True})
    await room.handle(conns[0], 1, "cmd", {"type": "start"})

    def closed() -> list[dict[str, Any]]:
        return [
            f.msg["event"]
            for f in recorder.frames
            if f.player == conns[0].player_id
            and f.msg.get("event", {}).get("type") == "posso_closed"
        ]

    def none_waited() -> None:
        waited = [e for e in closed() if e.get("timed_out")]
        assert not waited, f"seed {seed}: a window waited for its timer: {waited[0]}"

    await play_quietly(room, conns, random.Random(seed), none_waited)
    none_waited()
    print(f"seed {seed}: {len(closed())} windows, none waited for the timer")
    assert closed(), f"seed {seed}: no window in the game"
    await room.shutdown()


class LostAnswer(MemoryRecords):
    """The first quiet pass is written, but its answer is lost and the log
    cannot be read back at once: the room does not know whether it landed."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = True
        self.unreadable = 0

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        await super().append_action(game_id, seq, seat, action, epoch)
        if self.armed and seat == 0 and action == {"type": "pass_posso"}:
            self.armed, self.unreadable = False, 1
            raise ConnectionError("the answer was lost")

    async def action_at(self, game_id: int, seq: int) -> Any:
        if self.unreadable:
            self.unreadable -= 1
            raise ConnectionError("the log cannot be read")
        return await super().action_at(game_id, seq)


async def test_a_quiet_pass_whose_answer_was_lost_is_settled_not_played_twice(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The pass landed after all: the retry finds it in the log, tells the
    table of it, and does not pass again into a window that has closed."""
    records = LostAnswer()
    room, ann, _ = await solo_room({}, records, "QUIET3")
    await room.handle(ann, 4, "cmd", {"type": "posso_quiet", "hand": True})
    assert await wait_for(lambda: not records.armed and not room.table.unsettled, 5.0)
    assert await wait_for(lambda: room.state.phase != "posso_window", 5.0)
    (game,) = records.games.values()
    first = game.actions.index((0, {"type": "pass_posso"}))  # the one whose answer was lost
    # The window's close is not yet the next action: wait for that to be logged.
    assert await wait_for(lambda: len(game.actions) > first + 1, 5.0), "no action after the pass"
    assert game.actions[first + 1] != (0, {"type": "pass_posso"}), "passed twice in one window"
    assert "quiet pass refused" not in caplog.text
    await room.shutdown()
