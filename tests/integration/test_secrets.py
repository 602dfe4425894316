"""What a real server writes to its log, and what it does with oversized frames.

The server runs as `make run` runs it (its own uvicorn process, SQLite
migrated by Alembic) but at log level info, access log on: everything uvicorn
and the app would log in production.  A person opens a room, a friend joins,
both sign up, sign in and out, and a whole game of Big Two is played over the
sockets; then the log holds not one seat token, password or cookie value,
though it does hold every request and socket it saw.
"""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection

from app.core.config import WS_MAX_SIZE
from tests.integration import server as serving
from tests.integration.server import LoggedServer

logged_server = serving.logged_server


def _recv(ws: ClientConnection, timeout: float = 20.0) -> dict[str, Any]:
    return dict(json.loads(ws.recv(timeout=timeout)))


def _play_to_the_end(ws: ClientConnection, rng: random.Random) -> dict[str, Any]:
    """Play this seat's turns (a random legal action) until the game is over;
    any refusal fails the test."""
    next_id = 100
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        msg = _recv(ws)
        assert "error" not in msg, msg
        view = msg.get("view")
        if view is None:
            continue
        if view["room"]["status"] == "finished":
            return dict(view)
        if view.get("legal"):
            time.sleep(0.06)  # a brisk player, within the per-socket rate
            next_id += 1
            ws.send(json.dumps({"id": next_id, "action": rng.choice(view["legal"])}))
    raise AssertionError("the game did not end")


def test_no_token_password_or_cookie_reaches_the_server_log(logged_server: LoggedServer) -> None:
    server = logged_server
    rng = random.Random(20)
    secrets: list[str] = []
    ann, bob = httpx.Client(base_url=server.base), httpx.Client(base_url=server.base)
    with ann, bob:
        settings = {"bot_delay": 0}
        t = ann.post("/api/rooms", json={"game": "bigtwo", "name": "Ann", "settings": settings})
        assert t.status_code == 200, t.text
        ticket = t.json()
        code = ticket["code"]
        joined = bob.post(f"/api/rooms/{code}/join", json={"name": "Bob"}).json()
        secrets += [ticket["token"], joined["token"]]
        for who, name in ((ann, "Ann"), (bob, "Bob")):
            password = f"pw-{name}-{rng.getrandbits(64):x}"
            secrets.append(password)
            up = who.post("/api/accounts/signup", json={"name": name, "password": password})
            assert up.status_code == 201, up.text
            assert who.post("/api/accounts/signout").status_code == 200
            wrong = who.post("/api/accounts/signin", json={"name": name, "password": "x" * 12})
            assert wrong.status_code == 401
            back = who.post("/api/accounts/signin", json={"name": name, "password": password})
            assert back.status_code == 200
            assert who.get("/api/me").json()["signed_in"] is True
            secrets += [c.value for c in who.cookies.jar if c.value]
        with server.socket(code, ticket["token"]) as a, server.socket(code, joined["token"]) as b:
            for n in (1, 2):
                a.send(json.dumps({"id": n, "cmd": {"type": "add_bot"}}))
            a.send(json.dumps({"id": 3, "cmd": {"type": "start"}}))
            bob_done: list[dict[str, Any]] = []  # Bob plays his seat in a thread of his own
            bob_thread = threading.Thread(
                target=lambda: bob_done.append(_play_to_the_end(b, random.Random(21)))
            )
            bob_thread.start()
            final = _play_to_the_end(a, rng)
            bob_thread.join(120)
        assert (
            final["game"] is not None and bob_done and bob_done[0]["room"]["status"] == "finished"
        )
        games = ann.get("/api/me/games").json()["games"]
        assert games and games[0]["status"] == "finished"
    log = server.stop()
    assert f'"WebSocket /ws/rooms/{code}" [accepted]' in log, log[-2000:]
    assert "POST /api/accounts/signin" in log and f"POST /api/rooms/{code}/join" in log
    assert len(secrets) >= 8
    found = [s for s in secrets if s in log]
    assert not found, f"{len(found)} secret(s) in the server log"
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]


def test_the_server_cuts_off_frames_over_its_limit_and_floods_of_big_ones(
    logged_server: LoggedServer,
) -> None:
    """Between the app's limit and the server's, a frame is answered with
    `too_large` and counts toward the flood limit (4429); over the server's
    limit the server closes the socket (1009) without reading it whole."""
    server = logged_server
    ticket = httpx.post(f"{server.base}/api/rooms", json={"game": "bigtwo", "name": "A"}).json()
    with server.socket(ticket["code"], ticket["token"]) as ws:
        assert "view" in _recv(ws)
        ws.send("x" * 20_000)  # over the app's 16 KiB, under the server's 64 KiB
        assert _recv(ws)["error"]["code"] == "too_large"
        answered = 0
        with pytest.raises(ConnectionClosed) as closed:
            for _ in range(300):
                ws.send("x" * 20_000)
            while True:
                if _recv(ws).get("error", {}).get("code") == "too_large":
                    answered += 1
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4429
        assert answered < 110
    with server.socket(ticket["code"], ticket["token"]) as ws:
        assert "view" in _recv(ws)
        with pytest.raises(ConnectionClosed) as closed:
            ws.send("x" * (WS_MAX_SIZE + 1))
            _recv(ws)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    with server.socket(ticket["code"], ticket["token"]) as ws:  # the seat still works
        assert "view" in _recv(ws)
