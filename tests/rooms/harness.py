"""Driving rooms directly in one event loop, with sockets that record every frame.

`FakeSocket` stands where a WebSocket would: the room's Connection sends it the
exact text a browser would receive.  `SpyRoom` notes the game state before and
after each change, and `RecordingConnection` files every frame it is given with
the states it was built from, so a test can compare each frame with what its
recipient may know at that moment.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from app.bots import bot_for
from app.games.base import Event, Game
from app.rooms.clock import Clock, system_clock
from app.rooms.connection import Connection
from app.rooms.room import PLAYING, Room
from app.rooms.settings import RoomSettings, parse_settings
from app.store.records import MemoryRecords, PlayerRecord
from tests.seeds import seeded

FAST: dict[str, Any] = {"bot_delay": 0}


class FakeSocket:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed: tuple[int, str] | None = None

    async def send_text(self, text: str) -> None:
        self.sent.append(orjson.loads(text))

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


@dataclass
class Frame:
    player: str
    seat: int | None  # the recipient's game seat when the frame was made
    msg: dict[str, Any]
    before: Any  # game state before the change (None outside a change)
    after: Any  # game state the frame was built from


class SpyRoom(Room):
    """A Room that remembers the state before and after the change being sent."""

    spy_last: Any = None
    spy_ctx: tuple[Any, Any] | None = None

    def change(
        self, events: list[Event], *, with_view: bool = True, room_changed: bool = True
    ) -> None:
        self.spy_ctx = (self.spy_last, self.state)
        try:
            super().change(events, with_view=with_view, room_changed=room_changed)
        finally:
            self.spy_ctx = None
            self.spy_last = self.state


@dataclass
class Recorder:
    frames: list[Frame] = field(default_factory=list)


class RecordingConnection(Connection):
    def __init__(self, room: Room, recorder: Recorder, sock: FakeSocket) -> None:
        super().__init__(sock.send_text, sock.close)
        self.room = room
        self.recorder = recorder
        self.sock = sock
        self.latest_view: dict[str, Any] | None = None

    def push_all(self, frames: Sequence[str]) -> None:
        """Every frame for this socket passes here (`push` too comes here)."""
        room = self.room
        ctx = getattr(room, "spy_ctx", None)
        before, after = ctx if ctx is not None else (room.state, room.state)
        seat = room.game_seat.get(self.player_id)
        for frame in frames:
            msg = orjson.loads(frame)
            self.recorder.frames.append(Frame(self.player_id, seat, msg, before, after))
            if "view" in msg:
                self.latest_view = msg["view"]
        super().push_all(frames)


def new_room(
    game: Game[Any],
    *,
    options: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    records: MemoryRecords | None = None,
    cls: type[Room] = SpyRoom,
    code: str = "TEST01",
    clock: Clock = system_clock,
) -> Room:
    """A room of `game`; its parts keep the `clock` they are made with."""
    parsed = game.parse_options(options or {}).model_dump(mode="json")
    room_settings: RoomSettings = parse_settings({**FAST, **(settings or {})})
    games = {game.name: game}
    return cls.new(
        code,
        game,
        parsed,
        room_settings,
        games,
        records or MemoryRecords(),
        seeds=seeded(code),
        clock=clock,
    )


async def seat_people(
    room: Room, n: int, recorder: Recorder | None = None, *, spectators: int = 0
) -> list[RecordingConnection]:
    """n seated people and some spectators, each with a connected recording socket."""
    recorder = recorder or Recorder()
    conns: list[RecordingConnection] = []
    for i in range(n + spectators):
        player, _ = await room.join(f"P{i}", spectator=i >= n)
        conns.append(await attach(room, player, recorder))
    return conns


async def attach(room: Room, player: PlayerRecord, recorder: Recorder) -> RecordingConnection:
    conn = RecordingConnection(room, recorder, FakeSocket())
    conn.player_id = player.player_id
    await room.connect(conn)
    return conn


async def wait_for(check: Any, seconds: float = 2.0) -> bool:
    """Poll `check` until it holds or `seconds` pass; whether it holds."""
    for _ in range(int(seconds / 0.01)):
        if check():
            return True
        await asyncio.sleep(0.01)
    return bool(check())


async def settle() -> None:
    """Let queued writers, timers and bots run."""
    for _ in range(5):
        await asyncio.sleep(0)


async def drive(
    room: Room,
    conns: list[RecordingConnection],
    rng: random.Random,
    *,
    max_steps: int = 20_000,
    patience: float = 0.3,
) -> None:
    """Play the room's game to the end: each person acts, as a bot would, from
    the last view the server sent to that person's own socket.  Between moves the
    loop sometimes yields so that room timers (Posso windows...) can run out."""
    bot = bot_for(room.game.name)
    by_player = {c.player_id: c for c in conns}
    ids = 0
    for _ in range(max_steps):
        if room.status != PLAYING:
            return
        if rng.random() < patience or not room.to_act:
            await asyncio.sleep(0)
            if not room.to_act:
                await asyncio.sleep(0.001)
            continue
        seat = rng.choice(sorted(room.to_act))
        conn = by_player.get(room.table.game_seats[seat])
        if conn is None or conn.latest_view is None:
            await asyncio.sleep(0)
            continue
        view = conn.latest_view
        legal = view.get("legal")
        if not legal:
            await asyncio.sleep(0)
            continue
        ids += 1
        action = bot.choose(view["game"], legal, seat, rng)
        await room.handle(conn, ids, "action", action)
    raise AssertionError("the game did not end")


def events(conn: object, what: str) -> list[dict[str, object]]:
    """The room events named `what` that reached `conn`'s own socket."""
    frames = conn.recorder.frames  # type: ignore[attr-defined]
    return [
        f.msg["event"]
        for f in frames
        if f.player == conn.player_id  # type: ignore[attr-defined]
        and f.msg.get("event", {}).get("what") == what
    ]


def replies(conn: object, msg_id: int) -> list[dict[str, object]]:
    """The replies (ack or error) `conn` got to its message `msg_id`."""
    frames = conn.recorder.frames  # type: ignore[attr-defined]
    return [
        f.msg
        for f in frames
        if f.player == conn.player_id and f.msg.get("re") == msg_id  # type: ignore[attr-defined]
    ]
