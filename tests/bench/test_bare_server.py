"""bench/bare_server.py with BARE_STORE (bench/load.py's `barestore`): the
yardstick stores each message before anyone sees its view, as the card room
stores each action.  A real uvicorn, as bench/load.py starts it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import orjson
import pytest
from websockets.sync.client import connect

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
