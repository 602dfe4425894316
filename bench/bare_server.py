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

Run: uvicorn bench.bare_server:app --ws websockets-sansio
Connect: /ws/{room}/{seat}  (seat 0..3)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from typing import Any

import orjson
from fastapi import FastAPI, WebSocket
from starlette.websockets import WebSocketDisconnect

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


def _room(code: str) -> dict[str, Any]:
    room = rooms.get(code)
    if room is None:
        room = rooms[code] = {"v": 0, "sockets": [None] * SEATS}
    return room


def _view(code: str, v: int, seat: int) -> bytes:
    """About 1 KB: a room part, a hand, public counts and (for the mover) legal moves."""
    turn = v % SEATS
    hand = CARDS[seat * 13 : seat * 13 + 13]
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
        "game": {
            "seat": seat,
            "turn": turn,
            "phase": "play",
            "hand": hand,
            "counts": [13, 13, 13, 13],
            "trick": {"cards": hand[:2], "seat": turn, "category": "pair"},
            "played_count": v % 52,
        },
        "legal": [{"type": "play", "cards": [c]} for c in hand[:8]] if seat == turn else None,
        "timer": None,
    }
    return orjson.dumps({"v": v, "view": view})


@app.websocket("/ws/{code}/{seat}")
async def socket(websocket: WebSocket, code: str, seat: int) -> None:
    await websocket.accept()
    room = _room(code)
    room["sockets"][seat] = websocket
    await websocket.send_text(_view(code, room["v"], seat).decode())
    try:
        while True:
            text = await websocket.receive_text()
            msg = orjson.loads(text)
            room["v"] += 1
            v = room["v"]
            if store is not None:
                await store.add(code, v, text)
            for s, ws in enumerate(room["sockets"]):
                if ws is not None:
                    with contextlib.suppress(Exception):
                        await ws.send_text(_view(code, v, s).decode())
            ack = orjson.dumps({"re": msg.get("id"), "ok": True, "v": v}).decode()
            await websocket.send_text(ack)
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        if room["sockets"][seat] is websocket:
            room["sockets"][seat] = None
