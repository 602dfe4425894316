"""How the room socket's frames reach the server (Starlette's own WebSocket),
and what happens when a send fails because the peer is gone."""

from __future__ import annotations

import socket
import time
from typing import Any

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocket
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from app.core.config import Settings
from app.main import create_app
from app.store.records import MemoryRecords
from tests.api.client import connect, create, hello
from tests.services import serving

pytestmark = pytest.mark.timeout(60)

FAST = {"bot_delay": 0}


def test_room_traffic_goes_through_starlettes_websocket(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every frame a client gets was sent through Starlette's public
    `WebSocket.send`, and every message read through its `receive`: the room
    socket uses the framework's documented API, nothing beneath it."""
    seen: list[str] = []
    send, receive = WebSocket.send, WebSocket.receive

    async def counting_send(self: WebSocket, message: Any) -> None:
        seen.append(message["type"])
        await send(self, message)

    async def counting_receive(self: WebSocket) -> Any:
        message = await receive(self)
        seen.append(message["type"])
        return message

    monkeypatch.setattr(WebSocket, "send", counting_send)
    monkeypatch.setattr(WebSocket, "receive", counting_receive)
    t = create(client, "tiny", settings=FAST)
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        ann.ok(ann.cmd("add_bot"))
        ann.ok(ann.cmd("start"))
        received = len(ann.frames)
    assert seen[:2] == ["websocket.connect", "websocket.accept"]
    assert seen.count("websocket.send") >= received > 3
    assert seen.count("websocket.receive") == 3  # the token, add_bot, start


# ---------------------------------------------------------------- real server


def _until(ws: ClientConnection, pred: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        frame = orjson.loads(ws.recv(timeout=10))
        for msg in frame if isinstance(frame, list) else [frame]:
            if pred(msg):
                return dict(msg)
    raise AssertionError("expected message never came")


def test_a_peer_that_vanishes_is_dropped_and_the_table_plays_on() -> None:
    """Ann's connection is cut without a close frame; the next change fails to
    reach her socket through the server's send.  Bob keeps playing, sees Ann
    disconnected, and Ann comes back to the same seat."""
    with serving(create_app(Settings(), MemoryRecords())) as base:
        ann_t = httpx.post(
            f"http://{base}/api/rooms", json={"game": "bigtwo", "name": "Ann", "settings": FAST}
        ).json()
        code = ann_t["code"]
        bob_t = httpx.post(f"http://{base}/api/rooms/{code}/join", json={"name": "Bob"}).json()
        url = f"ws://{base}/ws/rooms/{code}"
        with ws_connect(url) as ann, ws_connect(url) as bob:
            ann.send(orjson.dumps(hello(ann_t["token"], batch=True)).decode())
            bob.send(orjson.dumps(hello(bob_t["token"], batch=True)).decode())
            _until(ann, lambda m: "view" in m)
            _until(bob, lambda m: "view" in m)
            ann.send(orjson.dumps({"id": 1, "cmd": {"type": "add_bot"}}).decode())
            ann.send(orjson.dumps({"id": 2, "cmd": {"type": "add_bot"}}).decode())
            ann.send(orjson.dumps({"id": 3, "cmd": {"type": "start"}}).decode())
            _until(ann, lambda m: m.get("re") == 3)
            ann.socket.shutdown(socket.SHUT_RDWR)  # gone, without a goodbye
            ann.socket.close()
            bob.send(
                orjson.dumps({"id": 1, "cmd": {"type": "chat", "text": "still here?"}}).decode()
            )
            _until(bob, lambda m: m.get("event", {}).get("text") == "still here?")

            def ann_away(m: dict[str, Any]) -> bool:
                room = m.get("view", {}).get("room")
                return room is not None and room["seats"][0]["connected"] is False

            bob.send(orjson.dumps({"id": 2, "cmd": {"type": "resync"}}).decode())
            _until(bob, ann_away)
            with ws_connect(url) as again:
                again.send(orjson.dumps(hello(ann_t["token"], batch=True)).decode())
                view = _until(again, lambda m: "view" in m)["view"]
                assert view["you"]["seat"] == 0 and len(view["game"]["hand"]) == 13
