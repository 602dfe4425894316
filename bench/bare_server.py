"""The yardstick for bench/load.py: a bare FastAPI WebSocket fan-out server.

No rules, no rooms layer, no storage (but see BARE_STORE below): each
message from a player bumps its room's version and sends every player of
that room its own ~1 KB JSON view (orjson-encoded, as the real server does),
then an ack to the sender.  It speaks just enough of docs/protocol.md for
the load client to drive it: views carry `legal` for the seat whose turn it
is (version mod 4).

With BARE_STORE naming a file (bench/load.py's `barestore`), each message
is first stored there, as the card room stores each action before anyone
sees it: SQLite in WAL mode with `synchronous` NORMAL, what a turn of the
loop asked for committed together on the loop itself (`_Store`).  It is the
yardstick for what storing before the broadcast costs on its own.

With BARE_RULES=1 as well (bench/load.py's `barerules`), each room plays
real Big Two: a message is an action that the engine (app/games/bigtwo)
checks and applies before it is stored, each view's game part is the
engine's (the part every seat shares made once a change, `Game.public_view`,
and each seat's own part) and its `legal` the engine's legal actions for a
seat to act, and a game over is dealt again at once.  Nothing else of the
card room is there (no events, rooms, people, timers, or parts kept between
changes): a floor under what any server that plays by the rules and stores
before it tells must do per action.

Run: uvicorn bench.bare_server:app --ws websockets-sansio
Connect: /ws/{room}/{seat}  (seat 0..3)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import zlib
from typing import Any

import orjson
from fastapi import FastAPI, WebSocket
from starlette.websockets import WebSocketDisconnect

from app.games import IllegalAction
from app.games.bigtwo import BIGTWO

SEATS = 4
CARDS = [
    r + s
    for s in "CDHS"
    for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
]

app = FastAPI()
rooms: dict[str, dict[str, Any]] = {}


class _Store:
    """Messages stored before their views go out: each waits for the commit
    of the batch that the loop's turn gathered (one commit for many rooms'
    messages at a busy time, as the card room's appends)."""

    def __init__(self, path: str) -> None:
        # opened on import, used on the loop's thread alone from then on
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS log (room TEXT, v INTEGER, body TEXT,"
            " PRIMARY KEY (room, v)) WITHOUT ROWID"
        )
        self.waiting: list[tuple[tuple[str, int, str], asyncio.Future[None]]] = []

    def add(self, room: str, v: int, body: str) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        if not self.waiting:
            loop.call_soon(self._commit)
        self.waiting.append(((room, v, body), done))
        return done

    def _commit(self) -> None:
        batch, self.waiting = self.waiting, []
        try:
            self.db.execute("BEGIN")
            self.db.executemany("INSERT INTO log VALUES (?, ?, ?)", [row for row, _ in batch])
            self.db.execute("COMMIT")
        except sqlite3.Error as err:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            for _, done in batch:
                done.set_exception(err)
            return
        for _, done in batch:
            done.set_result(None)


store = _Store(os.environ["BARE_STORE"]) if os.environ.get("BARE_STORE") else None
rules = os.environ.get("BARE_RULES") == "1"


def _deal(code: str, game: int) -> Any:
    """A room's `game`-th deal, the same in every run."""
    return BIGTWO.new_game(SEATS, {}, seed=zlib.crc32(f"{code}:{game}".encode()))


def _room(code: str) -> dict[str, Any]:
    room = rooms.get(code)
    if room is None:
        room = rooms[code] = {"v": 0, "sockets": [None] * SEATS, "games": 0}
        room["state"] = _deal(code, 0) if rules else None
    return room


def _game_parts(state: Any) -> list[tuple[dict[str, Any], Any]]:
    """Each seat's game view and legal moves from the engine, the way its
    contract allows at least cost: the part every seat shares made once, legal
    moves only for a seat to act."""
    public, acting = BIGTWO.public_view(state), BIGTWO.to_act(state)
    return [
        (
            {**BIGTWO.seat_view(state, seat), **public},
            BIGTWO.legal_actions(state, seat) if seat in acting else None,
        )
        for seat in range(SEATS)
    ]


def _view(
    code: str, v: int, seat: int, parts: list[tuple[dict[str, Any], Any]] | None = None
) -> bytes:
    """About 1 KB: a room part, a hand, public counts and (for the mover) legal
    moves; with `parts` (`_game_parts`), the game part and the legal moves are
    the engine's."""
    if parts is None:
        turn = v % SEATS
        hand = CARDS[seat * 13 : seat * 13 + 13]
        game: dict[str, Any] = {
            "seat": seat,
            "turn": turn,
            "phase": "play",
            "hand": hand,
            "counts": [13, 13, 13, 13],
            "trick": {"cards": hand[:2], "seat": turn, "category": "pair"},
            "played_count": v % 52,
        }
        legal = [{"type": "play", "cards": [c]} for c in hand[:8]] if seat == turn else None
    else:
        game, legal = parts[seat]
    view = {
        "room": {
            "code": code,
            "game": "bare",
            "status": "playing",
            "seats": [
                {"player": f"p{i:010d}", "name": f"Player {i}", "bot": False, "connected": True}
                for i in range(SEATS)
            ],
            "settings": {"posso_window": 3.0, "posso_answer": 5.0, "cut": 15.0, "bot_delay": 0.8},
        },
        "you": {"seat": seat, "host": seat == 0, "name": f"Player {seat}"},
        "game": game,
        "legal": legal,
        "timer": None,
    }
    return orjson.dumps({"v": v, "view": view})


def _refusal(room: dict[str, Any], code: str, seat: int, msg: dict[str, Any]) -> str | None:
    """The message's action, checked and applied by the engine (a game over
    dealt again at once); the engine's refusal if it was not legal."""
    action = msg.get("action")
    try:
        if not isinstance(action, dict):
            raise IllegalAction("bad_action", 'a message is {"action": {...}}')
        state, _events = BIGTWO.apply(room["state"], seat, action)
    except IllegalAction as err:
        return orjson.dumps({"re": msg.get("id"), "error": err.as_dict(), "v": room["v"]}).decode()
    if BIGTWO.is_over(state):
        room["games"] += 1
        state = _deal(code, room["games"])
    room["state"] = state
    return None


@app.websocket("/ws/{code}/{seat}")
async def socket(websocket: WebSocket, code: str, seat: int) -> None:
    await websocket.accept()
    room = _room(code)
    room["sockets"][seat] = websocket
    parts = _game_parts(room["state"]) if rules else None
    await websocket.send_text(_view(code, room["v"], seat, parts).decode())
    try:
        while True:
            text = await websocket.receive_text()
            msg = orjson.loads(text)
            refused = _refusal(room, code, seat, msg) if rules else None
            if refused is not None:
                await websocket.send_text(refused)
                continue
            room["v"] += 1
            v = room["v"]
            if store is not None:
                await store.add(code, v, text)
            parts = _game_parts(room["state"]) if rules else None
            for s, ws in enumerate(room["sockets"]):
                if ws is not None:
                    with contextlib.suppress(Exception):
                        await ws.send_text(_view(code, v, s, parts).decode())
            ack = orjson.dumps({"re": msg.get("id"), "ok": True, "v": v}).decode()
            await websocket.send_text(ack)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        if room["sockets"][seat] is websocket:
            room["sockets"][seat] = None
