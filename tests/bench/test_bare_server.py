"""bench/bare_server.py with BARE_STORE (bench/load.py's `barestore`): the
yardstick stores each message before anyone sees its view, as the card room
stores each action.  A real uvicorn, as bench/load.py starts it."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

import orjson
import pytest
from websockets.sync.client import ClientConnection, connect

from bench.load import _free_port, _start_server, stop_server


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The `barestore` server's port, and its store."""
    store, port = tmp_path / "bare.db", _free_port()
    proc = _start_server("barestore", port, extra_env={"BARE_STORE": str(store)})
    try:
        yield port, store
    finally:
        stop_server(proc)


def test_each_message_is_stored_when_its_view_arrives(server: tuple[int, Path]) -> None:
    port, store = server
    with connect(f"ws://127.0.0.1:{port}/ws/R1/0") as ws:
        ws.recv(timeout=10)  # the view on connecting
        for n in (1, 2):
            ws.send(orjson.dumps({"id": n, "type": "action"}).decode())
            view = orjson.loads(ws.recv(timeout=10))
            with sqlite3.connect(store) as db:
                rows = db.execute("SELECT room, v FROM log ORDER BY v").fetchall()
            assert len(rows) == n and rows[-1] == ("R1", view["v"])
            ws.recv(timeout=10)  # the ack


def test_no_view_goes_out_while_its_message_cannot_be_stored(server: tuple[int, Path]) -> None:
    """Another connection holds the write lock: no view of a message sent
    meanwhile arrives until it lets go."""
    port, store = server
    with (
        closing(sqlite3.connect(store, isolation_level=None)) as blocker,
        connect(f"ws://127.0.0.1:{port}/ws/R1/0") as ws,
    ):
        ws.recv(timeout=10)
        blocker.execute("BEGIN IMMEDIATE")
        ws.send(orjson.dumps({"id": 1, "type": "action"}).decode())
        with pytest.raises(TimeoutError):  # planted (views before the store): the view
            ws.recv(timeout=0.5)
        blocker.execute("ROLLBACK")
        view = orjson.loads(ws.recv(timeout=10))
        with sqlite3.connect(store) as db:
            assert db.execute("SELECT room, v FROM log").fetchall() == [("R1", view["v"])]


def test_the_folder_made_for_a_servers_database_goes_with_it() -> None:
    """A bench run starts many servers: the database folder `_start_server`
    made for one is removed when `stop_server` stops it."""
    port = _free_port()
    proc = _start_server("barestore", port)
    try:
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        named = next(e for e in environ if e.startswith(b"BARE_STORE="))
        store = Path(named.partition(b"=")[2].decode())
        assert store.exists()
    finally:
        stop_server(proc)
    assert not store.parent.exists()


def test_barerules_plays_by_the_engine_and_stores_only_legal_moves(tmp_path: Path) -> None:
    """`barerules`: a move the engine refuses gets its refusal and is neither
    stored nor told; a legal one (from the view's `legal`) is stored, and the
    views that follow are the engine's, the next seat's legal moves with them;
    a game over is dealt again."""
    store, port = tmp_path / "bare.db", _free_port()
    proc = _start_server("barerules", port, extra_env={"BARE_STORE": str(store)})
    try:
        with ExitStack() as open_sockets:
            url = f"ws://127.0.0.1:{port}/ws/R1/"
            sockets = [open_sockets.enter_context(connect(f"{url}{s}")) for s in range(4)]
            dealt = _play_past_the_games_end(sockets, _play_one_move(store, sockets))
            assert [len(view["game"]["hand"]) for view in dealt] == [13] * 4
            assert sum(view["legal"] is not None for view in dealt) == 1
    finally:
        stop_server(proc)


def _play_one_move(store: Path, sockets: list[ClientConnection]) -> list[Any]:
    views = [orjson.loads(ws.recv(timeout=10))["view"] for ws in sockets]
    mover = next(seat for seat, view in enumerate(views) if view["legal"])
    assert [view["game"]["seat"] for view in views] == [0, 1, 2, 3]
    assert "3C" in views[mover]["game"]["hand"]  # Big Two's first lead holds it
    other = (mover + 1) % 4
    sockets[other].send(orjson.dumps({"id": 1, "action": {"type": "pass"}}).decode())
    refused = orjson.loads(sockets[other].recv(timeout=10))
    assert refused["re"] == 1 and refused["error"]["code"] == "not_your_turn"
    assert refused["v"] == 0
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM log").fetchone() == (0,)
    move = views[mover]["legal"][0]
    sockets[mover].send(orjson.dumps({"id": 2, "action": move}).decode())
    after = [orjson.loads(ws.recv(timeout=10)) for ws in sockets]
    assert orjson.loads(sockets[mover].recv(timeout=10)) == {"re": 2, "ok": True, "v": 1}
    assert {frame["v"] for frame in after} == {1}
    assert len(after[mover]["view"]["game"]["hand"]) == 13 - len(move["cards"])
    assert after[mover]["view"]["legal"] is None
    assert sum(frame["view"]["legal"] is not None for frame in after) == 1
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT room, v FROM log").fetchall() == [("R1", 1)]
    return [frame["view"] for frame in after]


def _play_past_the_games_end(sockets: list[ClientConnection], views: list[Any]) -> list[Any]:
    """Legal moves until one seat alone holds cards: the change that ends the
    game deals the next one, so the bench's players never stop.  The views
    of that change."""
    rng = random.Random(36)
    for n in range(3, 1000):
        held = sum(len(view["game"]["hand"]) for view in views)
        mover = next(seat for seat, view in enumerate(views) if view["legal"])
        move = rng.choice(views[mover]["legal"])
        sockets[mover].send(orjson.dumps({"id": n, "action": move}).decode())
        views = [orjson.loads(ws.recv(timeout=10))["view"] for ws in sockets]
        assert orjson.loads(sockets[mover].recv(timeout=10))["re"] == n  # its ack
        if held < sum(len(view["game"]["hand"]) for view in views):
            return views  # cards came back: a new deal
    raise AssertionError("no game ended in 1,000 moves")
