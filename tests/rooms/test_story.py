"""Every socket gets in however long the game: a spectator, a new tab and a
returning player each get a first frame of bounded size (the game's story in
pages), before and after the room is rebuilt from storage, and the older
pages come on demand, each event once and none addressed to another seat.

Before pages, a spectator joining a 2-player Posso game 300 moves in was sent
more frames than a socket may queue and was dropped as it joined."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import orjson
import pytest

from app.games import GAMES
from app.rooms import story
from app.rooms.connection import Connection
from app.rooms.delivery import Resume
from app.rooms.room import Room
from app.store.records import PlayerRecord
from tests.rooms.harness import new_room, seat_people, settle
from tests.rooms.test_recovery import POSSO_FAST, play_out, restart
from tests.seeds import TEST_SEED

pytestmark = pytest.mark.timeout(300)

#: the first frame's bound: a page of events and a view (a few KB)
FIRST_FRAME_MAX = story.PAGE_BYTES + 8_192


class Socket:
    """Every text frame a batching connection sends, as a browser gets it."""

    def __init__(self) -> None:
        self.frames: list[str] = []
        self.closed: tuple[int, str] | None = None

    async def send_text(self, text: str) -> None:
        self.frames.append(text)

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)

    def messages(self, start: int = 0) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for f in self.frames[start:]:
            body = orjson.loads(f)
            out += body if isinstance(body, list) else [body]
        return out


async def join(
    room: Room, player: PlayerRecord, since: Resume | None = None
) -> tuple[Connection, Socket]:
    sock = Socket()
    conn = Connection(sock.send_text, sock.close, batch=True)
    conn.player_id = player.player_id
    await room.connect(conn, since)
    for _ in range(10):
        await asyncio.sleep(0)
    return conn, sock


def assert_got_in(conn: Connection, sock: Socket, who: str) -> None:
    assert not conn.dead and sock.closed is None, f"{who}: dropped as it joined (seed {TEST_SEED})"
    assert sock.frames, f"{who}: nothing sent"
    first = len(sock.frames[0].encode())
    assert first <= FIRST_FRAME_MAX, f"{who}: first frame {first} bytes (seed {TEST_SEED})"
    assert any("view" in m for m in sock.messages()), f"{who}: no view"


async def play_moves(room: Room, rng: random.Random, moves: int) -> None:
    for _ in range(moves):
        if room.status != "playing":
            return
        for _ in range(1000):
            if room.to_act:
                break
            await asyncio.sleep(0.001)  # a window closing by its timer
        seat = min(room.to_act)
        await room.play(seat, rng.choice(room.game.legal_actions(room.state, seat)))


async def page_back(
    room: Room, conn: Connection, sock: Socket, msg_id: int
) -> list[dict[str, Any]]:
    """Every older page, asked for as the log would, oldest event first."""
    start = next(m for m in sock.messages() if "story" in m)["story"]["before"]
    events: list[dict[str, Any]] = []
    before: int | None = start
    while before is not None:
        sent = len(sock.frames)
        await room.handle(conn, msg_id, "cmd", {"type": "story", "before": before})
        await settle()
        (ack,) = [m for m in sock.messages(sent) if m.get("re") == msg_id]
        data = ack["data"]
        assert len(orjson.dumps(data)) <= FIRST_FRAME_MAX
        assert all(e["v"] < before for e in data["events"])
        events = data["events"] + events
        before = data["before"]
        msg_id += 1
    return events


async def test_a_long_two_player_posso_game_lets_everyone_in_and_pages_its_story() -> None:
    posso = GAMES["posso"]
    room = new_room(posso, settings=POSSO_FAST)
    ann, bob = await seat_people(room, 2)
    await room.handle(ann, 1, "cmd", {"type": "start"})
    await play_moves(room, random.Random(TEST_SEED), 400)
    assert room.status == "playing" and room.seq >= 400

    watcher, _ = await room.join("Watcher", spectator=True)
    conn, sock = await join(room, watcher)
    assert_got_in(conn, sock, "spectator")
    # the older pages: each kept event a spectator may see, once, in order
    told = [m for m in sock.messages() if "event" in m]
    older = await page_back(room, conn, sock, 100)
    seen = [e["v"] for e in older + told]
    kept = [
        orjson.loads(f)["v"]
        for _, frames in room.delivery.history
        for to, f in frames
        if to is None
    ]
    assert seen == kept, "paging lost or repeated an event"
    assert all("to" not in e["event"] for e in older + told)

    # a second tab of a seated person, and a page that comes back from far behind
    ann_rec = room.players[ann.player_id]
    conn2, sock2 = await join(room, ann_rec)
    assert_got_in(conn2, sock2, "new tab")
    far = Resume(room.delivery.incarnation, room.delivery.history_floor)
    conn3, sock3 = await join(room, room.players[bob.player_id], far)
    assert_got_in(conn3, sock3, "returning player")
    # a private event reaches only its own seat's pages
    bob_seat = room.game_seat[bob.player_id]
    for m in sock3.messages() + await page_back(room, conn3, sock3, 500):
        to = m.get("event", {}).get("to")
        assert to in (None, bob_seat)

    # and once the room is rebuilt from storage
    records = room.records
    await room.shutdown()
    again = await restart(records, room.code, {"posso": posso})
    for who, player in (("spectator", watcher), ("player", ann_rec)):
        c, s = await join(again, again.players[player.player_id])
        assert_got_in(c, s, f"{who} after a restart")
    await again.shutdown()


async def test_a_bad_before_is_refused_and_changes_nothing() -> None:
    room = new_room(GAMES["posso"], settings=POSSO_FAST)
    ann, _ = await seat_people(room, 2)
    v = room.v
    for bad in (None, "3", -1, True, 1.5):
        sent = len(ann.sock.sent)
        await room.handle(ann, 7, "cmd", {"type": "story", "before": bad})
        await settle()
        (reply,) = [m for m in ann.sock.sent[sent:] if m.get("re") == 7]
        assert reply["error"]["code"] == "bad_before", bad
    assert room.v == v
    await room.shutdown()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "seats"),
    # Posso to 4 seats: 5 and 6 add nearly two minutes and no new kind of story
    [(g.name, n) for g in GAMES.values() for n in range(g.min_seats, min(g.max_seats, 4) + 1)],
)
async def test_every_game_and_seat_count_lets_everyone_in_near_its_end(
    name: str, seats: int
) -> None:
    """Each game and seat count played by random legal moves to its last move:
    a spectator and a returning player get in, live and after a rebuild."""
    game = GAMES[name]
    settings = POSSO_FAST if name == "posso" else {"bot_delay": 0}
    room = new_room(game, settings=settings, code=f"LONG{seats}")
    conns = await seat_people(room, seats)
    await room.handle(conns[0], 1, "cmd", {"type": "start"})
    await play_out(room, random.Random(f"{TEST_SEED}:{name}:{seats}"), stop_before_end=True)
    watcher, _ = await room.join("Watcher", spectator=True)
    player = room.players[conns[-1].player_id]
    for who, p in (("spectator", watcher), ("player", player)):
        c, s = await join(room, p)
        assert_got_in(c, s, f"{name} x{seats} {who}")
    records = room.records
    await room.shutdown()
    again = await restart(records, room.code, {name: game})
    for who, p in (("spectator", watcher), ("player", player)):
        c, s = await join(again, again.players[p.player_id])
        assert_got_in(c, s, f"{name} x{seats} {who} after a restart")
    await again.shutdown()
