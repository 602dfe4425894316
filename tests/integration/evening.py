"""A scripted evening against a real server (tests/integration/server.py),
for the tests that check what the server says about it: its metrics
(test_metrics.py) and its log (test_logs.py).

Four friends and a stranger, all from one address:

- Ann opens a Big Two room, Bob joins it, Ann adds two bots and starts, and
  Ann and Bob play their seats to the end (every move acknowledged);
- Cat opens a Posso room and, in its lobby, sends a move: refused
  (`not_playing`);
- Dee opens a Possum room; Eve joins Cat's room, and Fay's join is the third
  in a minute, over the server's limit of two: refused at the door (429);
- Ann asks for a move link ("continue on another device") and claims it
  from another browser, which gets a new seat token and cookie; Cat turns
  on turn alerts for a browser (a push subscription with its keys);
- everyone signs up, signs out and in again (passwords and session cookies).

Everything secret the server handed out or was given is kept in `secrets`,
and every count the metrics must match in `counts`.
"""

from __future__ import annotations

import base64
import json
import random
import secrets as random_secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
from websockets.sync.client import ClientConnection

from tests.integration.server import LoggedServer

#: the join limit the evening's server runs with (Fay's join is the third)
JOINS_PER_MINUTE = 2


@dataclass
class EveningRun:
    codes: dict[str, str] = field(default_factory=dict)
    game_ids: list[int] = field(default_factory=list)
    people: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)
    #: handled messages by (kind, result, code), as app/core/metrics.py labels them
    handled: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    sockets: int = 0
    refused_joins: int = 0


def _recv(ws: ClientConnection, timeout: float = 20.0) -> dict[str, Any]:
    return dict(json.loads(ws.recv(timeout=timeout)))


def _reply(ws: ClientConnection, msg_id: int) -> dict[str, Any]:
    """The ack or error for `msg_id` (views before it are skipped)."""
    while True:
        msg = _recv(ws)
        if msg.get("re") == msg_id:
            return msg


def _cmd(run: EveningRun, ws: ClientConnection, msg_id: int, cmd: dict[str, Any]) -> Any:
    ws.send(json.dumps({"id": msg_id, "cmd": cmd}))
    reply = _reply(ws, msg_id)
    assert reply.get("ok"), reply
    run.handled["cmd", "applied", ""] += 1
    return reply.get("data")


def _play_to_the_end(run: EveningRun, ws: ClientConnection, rng: random.Random) -> None:
    """Play this seat's turns until the game is over; each move acknowledged."""
    next_id = 100
    waiting: int | None = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        msg = _recv(ws)
        assert "error" not in msg, msg
        if waiting is not None and msg.get("re") == waiting:
            run.handled["action", "applied", ""] += 1
            waiting = None
        view = msg.get("view")
        if view is None:
            continue
        if view["room"]["status"] == "finished" and waiting is None:
            return
        if view.get("legal") and waiting is None:
            time.sleep(0.06)  # a brisk player, within the per-socket rate
            next_id += 1
            waiting = next_id
            ws.send(json.dumps({"id": next_id, "action": rng.choice(view["legal"])}))
    raise AssertionError("the game did not end")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _sign_up(run: EveningRun, who: httpx.Client, name: str, rng: random.Random) -> None:
    password = f"pw-{name}-{rng.getrandbits(64):x}"
    run.secrets.append(password)
    up = who.post("/api/accounts/signup", json={"name": name, "password": password})
    assert up.status_code == 201, up.text
    assert who.post("/api/accounts/signout").status_code == 200
    back = who.post("/api/accounts/signin", json={"name": name, "password": password})
    assert back.status_code == 200, back.text
    run.secrets += [c.value for c in who.cookies.jar if c.value]


def evening(server: LoggedServer, seed: int = 37) -> EveningRun:
    import threading

    rng = random.Random(seed)
    run = EveningRun()
    clients = {n: httpx.Client(base_url=server.base) for n in ("Ann", "Bob", "Cat", "Dee", "Eve")}
    ann, bob, cat, dee, eve = clients.values()
    try:
        made = ann.post(
            "/api/rooms", json={"game": "bigtwo", "name": "Ann", "settings": {"bot_delay": 0}}
        ).json()
        code = run.codes["bigtwo"] = made["code"]
        joined = bob.post(f"/api/rooms/{code}/join", json={"name": "Bob"}).json()
        posso = cat.post("/api/rooms", json={"game": "posso", "name": "Cat"}).json()
        run.codes["posso"] = posso["code"]
        possum = dee.post("/api/rooms", json={"game": "possum", "name": "Dee"}).json()
        run.codes["possum"] = possum["code"]
        eve_in = eve.post(f"/api/rooms/{posso['code']}/join", json={"name": "Eve"})
        assert eve_in.status_code == 200, eve_in.text
        fay = httpx.post(f"{server.base}/api/rooms/{posso['code']}/join", json={"name": "Fay"})
        assert fay.status_code == 429, fay.text
        run.refused_joins += 1
        tickets = (made, joined, posso, possum, eve_in.json())
        run.secrets += [t["token"] for t in tickets]
        run.people += [t["player"] for t in tickets]

        with server.socket(posso["code"], posso["token"]) as c:
            run.sockets += 1
            c.send(json.dumps({"id": 1, "action": {"type": "pass_posso"}}))
            assert _reply(c, 1)["error"]["code"] == "not_playing"
            run.handled["action", "refused", "not_playing"] += 1
            # turn alerts for Cat's browser: the subscription's keys are secrets
            p256dh = _b64(b"\x04" + random_secrets.token_bytes(64))
            auth = _b64(random_secrets.token_bytes(16))
            endpoint = f"https://fcm.googleapis.com/fcm/send/{random_secrets.token_urlsafe(24)}"
            sub = {"endpoint": endpoint, "keys": {"p256dh": p256dh, "auth": auth}}
            assert cat.put("/api/me/push", json=sub).status_code == 200
            run.secrets += [p256dh, auth, endpoint.rsplit("/", 1)[1]]

        with server.socket(code, made["token"]) as a, server.socket(code, joined["token"]) as b:
            run.sockets += 2
            _cmd(run, a, 1, {"type": "add_bot"})
            _cmd(run, a, 2, {"type": "add_bot"})
            _cmd(run, a, 3, {"type": "start"})
            bob_thread = threading.Thread(
                target=_play_to_the_end, args=(run, b, random.Random(seed + 1))
            )
            bob_thread.start()
            _play_to_the_end(run, a, rng)
            bob_thread.join(120)
            assert not bob_thread.is_alive()
            games = ann.get("/api/me/games").json()["games"]
            run.game_ids = [g["id"] for g in games]
            assert len(run.game_ids) == 1 and games[0]["status"] == "finished", games
            link = _cmd(run, a, 4, {"type": "move_link"})
            run.secrets.append(link["claim"])
        with httpx.Client(base_url=server.base) as phone:
            moved = phone.post(f"/api/rooms/{code}/claim", json={"claim": link["claim"]})
            assert moved.status_code == 200, moved.text
            run.secrets.append(moved.json()["token"])
            run.secrets += [c.value for c in phone.cookies.jar if c.value]

        for name, who in clients.items():
            _sign_up(run, who, name, rng)
            run.secrets += [c.value for c in who.cookies.jar if c.value]
    finally:
        for c in clients.values():
            c.close()
    return run
