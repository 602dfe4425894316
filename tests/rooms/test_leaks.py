"""No frame the room sends ever shows a seat a card it may not know.

Many whole games per engine, every seat a connected person who plays (as a bot
would) from the frames its own socket received, plus a spectator.  Every frame
pushed to every socket is checked against `knowledge.KNOWN` for its recipient,
computed from the engine's true state when the frame was made.
"""

from __future__ import annotations

import importlib
import random
from collections import Counter
from typing import Any, cast

import pytest

from app.games import GAMES
from app.games.base import Event, Game, View
from tests.rooms.harness import Recorder, SpyRoom, drive, new_room, seat_people, settle
from tests.rooms.knowledge import KNOWN, leaks, revealed
from tests.rooms.tinygame import TINY, TinyGame
from tests.rooms.tinygame import tiny_known as TINY_KNOWN

pytestmark = pytest.mark.timeout(120)

#: (game, seats, options, games to play); the room timers are 0 s so windows
#: close as soon as the players stop answering
CASES: list[tuple[str, int, dict[str, Any], int]] = [
    ("tiny", 3, {}, 20),
    ("tiny", 4, {"hand": 5}, 10),
    ("bigtwo", 4, {}, 6),
    ("possum", 4, {}, 10),
    ("possum", 6, {"multi": True}, 5),
    ("posso", 3, {"start_hand": 9}, 2),
    ("posso", 2, {"start_hand": 9, "cutting": "to_win"}, 2),
    ("possession", 2, {}, 6),
    ("possession", 3, {}, 4),
    ("possession", 4, {"open_pile": True}, 3),
]
TIMERS = {"posso_window": 0, "posso_answer": 0, "cut": 0}


def engine(name: str) -> Game[Any]:
    if name == "tiny":
        return TINY
    if name in GAMES:
        return GAMES[name]
    # not registered yet: use the package on disk when it is there
    try:
        module = importlib.import_module(f"app.games.{name}")
    except ImportError:
        pytest.skip(f"{name} is not available yet")
    return cast(Game[Any], getattr(module, name.upper()))


@pytest.mark.parametrize(("name", "seats", "options", "games"), CASES)
async def test_no_frame_shows_a_card_its_recipient_may_not_know(
    name: str, seats: int, options: dict[str, Any], games: int
) -> None:
    game = engine(name)
    cache: dict[tuple[int, int | None], Counter[str]] = {}

    def known(state: Any, seat: int | None) -> Counter[str]:
        key = (id(state), seat)  # frames keep their states alive: ids stay unique
        if key not in cache:
            cache[key] = KNOWN[name](state, seat)
        return cache[key]

    checked = 0
    for g in range(games):
        rng = random.Random(f"{name}:{seats}:{g}")
        room = new_room(game, options=options, settings=TIMERS, code=f"LEAK{g:02d}")
        recorder = Recorder()
        conns = await seat_people(room, seats, recorder, spectators=1)
        host = conns[0]
        await room.handle(host, 0, "cmd", {"type": "start"})
        await drive(room, conns, rng)
        await settle()
        assert room.status == "finished", "the game should have ended"
        cache.clear()  # the last game's states are gone: their ids may be reused
        for f in recorder.frames:
            if f.after is None:
                continue  # lobby frames: no game yet
            msg = f.msg
            if "view" in msg and msg["view"]["game"] is not None:
                gv = msg["view"]["game"]
                assert gv["seat"] == f.seat, "a socket was sent another seat's view"
                # put together from parts (Game.public_view and seat_view), it is
                # the engine's view of that seat, no more and no less
                assert gv == game.view(f.after, f.seat), "a view frame is not the seat's view"
                if f.seat is None:
                    assert "hand" not in gv and msg["view"]["legal"] is None
            before = known(f.before, f.seat) if f.before is not None else known(f.after, f.seat)
            shown = revealed(name, f.before, msg)
            found = leaks(before, known(f.after, f.seat), msg, shown)
            assert not found, f"seat {f.seat} was sent {found} in {msg}"
            checked += 1
        await room.shutdown()
    assert checked > games * 10


class _AllPublic(TinyGame):
    """The tiny game told in parts, its public part as large as it can be:
    a seat's own part is only who it is and the keys a spectator lacks."""

    def public_view(self, state: Any) -> View:
        return {k: v for k, v in self.view(state, None).items() if k != "seat"}

    def seat_view(self, state: Any, seat: int | None) -> View:
        own, watcher = self.view(state, seat), self.view(state, None)
        return {k: v for k, v in own.items() if k == "seat" or k not in watcher}


class _NothingPublic(TinyGame):
    """The tiny game told in parts whose public part is empty."""

    def public_view(self, state: Any) -> View:
        return {}


@pytest.mark.parametrize("game", [_AllPublic(), _NothingPublic()], ids=["all", "nothing"])
async def test_a_view_told_in_parts_reaches_each_socket_whole(game: TinyGame) -> None:
    """However a game splits its view (Game.public_view, seat_view), even
    with one part empty, each socket's frame holds exactly its seat's view."""
    room = new_room(game, settings=TIMERS, code="PARTS1")
    recorder = Recorder()
    conns = await seat_people(room, 3, recorder, spectators=1)
    await room.handle(conns[0], 0, "cmd", {"type": "start"})
    await drive(room, conns, random.Random(5))
    await settle()
    views = [f for f in recorder.frames if f.after is not None and "view" in f.msg]
    assert len(views) > 20
    for f in views:
        assert f.msg["view"]["game"] == game.view(f.after, f.seat)
    await room.shutdown()


class _Misaddressing(SpyRoom):
    """A broken room that forwards private events to everyone."""

    def change(
        self, events: list[Event], *, with_view: bool = True, room_changed: bool = True
    ) -> None:
        super().change(
            [{**e, "to": None} for e in events], with_view=with_view, room_changed=room_changed
        )


async def test_the_check_catches_a_room_that_misaddresses_events() -> None:
    room = new_room(TINY, settings=TIMERS, cls=_Misaddressing)
    recorder = Recorder()
    conns = await seat_people(room, 3, recorder)
    await room.handle(conns[0], 0, "cmd", {"type": "start"})
    await drive(room, conns, random.Random(3))
    found = [
        leaks(TINY_KNOWN(f.before or f.after, f.seat), TINY_KNOWN(f.after, f.seat), f.msg)
        for f in recorder.frames
        if f.after is not None
    ]
    assert any(found), "a private 'drew' event reached other seats and nobody noticed"
    await room.shutdown()
