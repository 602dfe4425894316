""" "Play my turns this hand" (the `autoplay` command, app/rooms/commands.py;
its bot in app/rooms/bot_driver.py): the seat's own person hands their turns
to the normal bot until the hand ends, and takes them back with one tap;
nobody else may; and with nobody left who plays their own turns, bots go at
the fastest delay."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.rooms.room import Room
from app.rooms.settings import FASTEST_BOT_DELAY
from tests.rooms.harness import (
    Recorder,
    RecordingConnection,
    attach,
    new_room,
    seat_people,
    settle,
    wait_for,
)
from tests.rooms.tinygame import TINY, TinyGame, TinyState

pytestmark = pytest.mark.timeout(60)

PLAY = {"bidding": False, "hand": 3}


class Rounds(TinyGame):
    """The tiny game in hands: a public `hand_ended` each time every seat has
    played once (Posso's end of a hand, as the room sees it)."""

    def apply(self, state: TinyState, seat: int | None, action: Any) -> Any:
        new, events = super().apply(state, seat, action)
        if new.pile != state.pile and len(new.pile) % new.seats == 0 and new.phase != "over":
            hand = len(new.pile) // new.seats
            events.append({"type": "hand_ended", "to": None, "hand": hand, "row": {}})
        return new, events


def reply(conn: RecordingConnection, msg_id: int) -> dict[str, Any]:
    (msg,) = [
        f.msg
        for f in conn.recorder.frames
        if f.msg.get("re") == msg_id and f.player == conn.player_id
    ]
    return msg


def said(recorder: Recorder, what: str) -> list[dict[str, Any]]:
    """Each room event `what` told (once per change, whoever got it first)."""
    seen: dict[int, dict[str, Any]] = {}
    for f in recorder.frames:
        ev = f.msg.get("event", {})
        if ev.get("what") == what:
            seen[f.msg["v"]] = ev
    return list(seen.values())


def seats_seen(conn: RecordingConnection) -> list[dict[str, Any]]:
    assert conn.latest_view is not None
    return list(conn.latest_view["room"]["seats"])


async def two_playing(game: TinyGame = TINY, **settings: Any) -> tuple[Room, Any, Any, Recorder]:
    room = new_room(game, options=PLAY, settings=settings)
    recorder = Recorder()
    ann, bob = await seat_people(room, 2, recorder)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    assert room.to_act == {0}
    return room, ann, bob, recorder


async def test_the_bot_plays_my_turns_while_i_am_here_and_one_tap_takes_them_back() -> None:
    room, ann, bob, recorder = await two_playing()
    await room.handle(ann, 2, "cmd", {"type": "autoplay", "on": True})
    assert reply(ann, 2)["ok"]
    (on,) = said(recorder, "autoplay_on")
    assert (on["seat"], on["name"]) == (0, "P0")
    # everyone sees the seat on it (and not as an away seat's stand-in)
    assert [s["autoplay"] for s in seats_seen(bob)] == [True, False]
    assert [s["auto"] for s in seats_seen(bob)] == [False, False]
    assert await wait_for(lambda: room.seq == 1)  # Ann is here; the bot played her turn
    assert room.table.game_seats[0] == ann.player_id and room.members.connected(ann.player_id)
    assert room.bots.bot_level(0) == "normal"  # the normal bot, as for any stand-in
    # Bob plays his own; the bot plays Ann's next one again
    await room.handle(bob, 3, "action", room.game.legal_actions(room.state, 1)[0])
    assert await wait_for(lambda: room.seq == 3)
    # Ann's own move is refused while it is on, and changes nothing
    await room.handle(bob, 4, "action", room.game.legal_actions(room.state, 1)[0])
    assert room.to_act == {0}
    room.bots.release(0)  # (hold the bot's wait back, so that her move is hers to make)
    seq = room.seq
    await room.handle(ann, 5, "action", room.game.legal_actions(room.state, 0)[0])
    assert reply(ann, 5)["error"]["code"] == "autoplay_on"
    assert room.seq == seq
    # one tap: her turns are hers again, at once
    await room.handle(ann, 6, "cmd", {"type": "autoplay", "on": False})
    assert reply(ann, 6)["ok"] and 0 not in room.table.autoplay
    assert [e["seat"] for e in said(recorder, "autoplay_off")] == [0]
    await asyncio.sleep(0.05)
    assert room.seq == seq and room.to_act == {0}  # no bot plays for her now
    assert [s["autoplay"] for s in seats_seen(bob)] == [False, False]
    await room.handle(ann, 7, "action", room.game.legal_actions(room.state, 0)[0])
    assert reply(ann, 7)["ok"] and room.seq == seq + 1
    await room.shutdown()


async def test_it_ends_with_the_hand() -> None:
    """After the hand's last move the person's turns are theirs: the next
    hand waits for them, and the table is told why."""
    room, ann, bob, recorder = await two_playing(Rounds())
    await room.handle(ann, 2, "cmd", {"type": "autoplay", "on": True})
    assert await wait_for(lambda: room.seq == 1)  # the bot's move for Ann
    await room.handle(bob, 3, "action", room.game.legal_actions(room.state, 1)[0])  # hand over
    assert room.seq == 2 and room.to_act == {0}
    (off,) = said(recorder, "autoplay_off")
    assert (off["seat"], off["reason"]) == (0, "hand_over")
    assert not room.table.autoplay
    await asyncio.sleep(0.05)
    assert room.seq == 2  # the next hand waits for Ann
    await room.shutdown()


async def test_a_game_of_one_deal_ends_it_with_the_game() -> None:
    room, ann, bob, _ = await two_playing()
    await room.handle(ann, 2, "cmd", {"type": "autoplay", "on": True})
    for i in range(20):
        if room.status != "playing":
            break
        if room.to_act == {1}:
            await room.handle(bob, 10 + i, "action", room.game.legal_actions(room.state, 1)[0])
        await wait_for(lambda: room.to_act != {0}, 1.0)
    assert room.status == "finished" and not room.table.autoplay
    assert [s["autoplay"] for s in seats_seen(ann) if s] == [False, False]
    await room.shutdown()


async def test_it_outlasts_a_dropped_socket() -> None:
    """A phone that sleeps and comes back keeps what its person asked for
    (unlike a stand-in for an away seat, which ends when they are back)."""
    room, ann, _bob, _ = await two_playing(bot_delay=5)
    await room.handle(ann, 2, "cmd", {"type": "autoplay", "on": True})
    await room.disconnect(ann)
    ann2 = await attach(room, room.members.players[ann.player_id], Recorder())
    assert room.table.autoplay == {0}
    assert seats_seen(ann2)[0]["autoplay"] is True
    await room.shutdown()


async def test_only_the_seats_own_person_may_set_it() -> None:
    room = new_room(TINY, options=PLAY, settings={"bot_delay": 5})
    recorder = Recorder()
    ann, bob, wim = await seat_people(room, 2, recorder, spectators=1)

    async def refused(conn: RecordingConnection, msg_id: int, cmd: dict[str, Any]) -> str:
        frames = len(recorder.frames)
        await room.handle(conn, msg_id, "cmd", {"type": "autoplay", **cmd})
        told = recorder.frames[frames:]
        assert [f.player for f in told] == [conn.player_id], "only the asker is answered"
        assert not room.table.autoplay
        return str(told[0].msg["error"]["code"])

    assert await refused(ann, 1, {"on": True}) == "not_playing"  # in the lobby
    await room.handle(ann, 2, "cmd", {"type": "start"})
    assert await refused(wim, 3, {"on": True}) == "not_seated"
    assert await refused(ann, 4, {"on": True, "seat": 1}) == "not_your_seat"
    assert await refused(bob, 5, {"on": True, "seat": 0}) == "not_your_seat"
    assert await refused(ann, 6, {"on": "yes"}) == "bad_command"
    assert await refused(ann, 7, {}) == "bad_command"
    assert await refused(ann, 8, {"on": True, "hand": 3}) == "bad_command"
    await room.handle(ann, 9, "cmd", {"type": "autoplay", "on": True, "seat": 0})
    assert reply(ann, 9)["ok"] and room.table.autoplay == {0}
    await room.shutdown()


async def test_bots_go_at_the_fastest_delay_once_nobody_plays_their_own_turns() -> None:
    """Ann and a bot: with Ann's turns handed over, the bot's wait is the
    fastest, not the room's 10 s; with Bob still playing his own, the room's."""
    room = new_room(TINY, options=PLAY, settings={"bot_delay": 10})
    (ann,) = await seat_people(room, 1, Recorder())
    await room.handle(ann, 1, "cmd", {"type": "add_bot"})
    await room.handle(ann, 2, "cmd", {"type": "start"})
    assert room.bots.pace(10) == 10
    await room.handle(ann, 3, "cmd", {"type": "autoplay", "on": True})
    assert room.bots.pace(10) == FASTEST_BOT_DELAY
    assert await wait_for(lambda: room.status == "finished")  # the whole deal, at once
    await room.shutdown()

    room, ann, _bob, _ = await two_playing(bot_delay=10)
    await room.handle(ann, 2, "cmd", {"type": "autoplay", "on": True})
    assert room.bots.pace(10) == 10  # Bob plays his own turns
    wait = room.timers.get("bot:0")
    assert wait is not None and wait.deadline - room.clock() >= 10 * 0.5 - 0.1
    await settle()
    assert room.seq == 0
    await room.shutdown()


async def test_a_person_who_leaves_takes_the_fast_pace_with_them() -> None:
    """Ann leaves mid-hand: her seat is a bot's now, at the room's pace for
    whoever watches, and no seat shows autoplay."""
    room = new_room(TINY, options=PLAY, settings={"bot_delay": 10})
    ann, wim = await seat_people(room, 1, Recorder(), spectators=1)
    await room.handle(ann, 1, "cmd", {"type": "add_bot"})
    await room.handle(ann, 2, "cmd", {"type": "start"})
    await room.handle(ann, 3, "cmd", {"type": "autoplay", "on": True})
    assert room.bots.pace(10) == FASTEST_BOT_DELAY
    room.bots.release(0)  # (hold the bot back: the game must still be on)
    await room.handle(ann, 4, "cmd", {"type": "leave"})
    assert room.status == "playing"
    assert room.bots.pace(10) == 10
    assert not any(s and s["autoplay"] for s in seats_seen(wim))
    await room.shutdown()
