"""What a stranger can learn or take over a real server (issue 34, item 6):
someone else's push subscription, which room codes exist (a code with junk
after dashes, a public-replays room's evening), how many games were played.

The server runs as `make run` runs it: its own uvicorn process, SQLite
migrated by Alembic.  Every client here is a separate browser (its own
cookies).
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from tests.integration.server import LoggedServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoggedServer]:
    # one address plays every part: lift the per-address limits
    limits = {"ROOMS_PER_HOUR": "1000", "JOINS_PER_MINUTE": "1000"}
    limits |= {"LOOKUPS_PER_MINUTE": "1000", "SIGNINS_PER_MINUTE": "1000"}
    s = LoggedServer(tmp_path_factory.mktemp("strangers"), env=limits)
    try:
        yield s
    finally:
        s.stop()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _subscription(endpoint: str, fill: int) -> dict[str, Any]:
    """What a browser's `PushSubscription.toJSON()` gives (keys of its own)."""
    return {
        "endpoint": endpoint,
        "keys": {"p256dh": _b64(b"\x04" + bytes([fill]) * 64), "auth": _b64(bytes([fill]) * 16)},
    }


def test_a_push_endpoint_never_changes_owner_by_a_put(server: LoggedServer) -> None:
    endpoint = "https://fcm.googleapis.com/fcm/send/ann-phone"
    with httpx.Client(base_url=server.base) as ann, httpx.Client(base_url=server.base) as eve:
        assert ann.put("/api/me/push", json=_subscription(endpoint, 1)).status_code == 200
        taken = eve.put("/api/me/push", json=_subscription(endpoint, 2))
        assert taken.status_code == 409, taken.text
        assert taken.json()["detail"]["code"] == "endpoint_taken"
        gone = eve.request("DELETE", "/api/me/push", json={"endpoint": endpoint})
        assert gone.status_code == 200 and gone.json() == {"removed": False}
        # still Ann's: she renews it, and only she removes it
        assert ann.put("/api/me/push", json=_subscription(endpoint, 3)).status_code == 200
        gone = ann.request("DELETE", "/api/me/push", json={"endpoint": endpoint})
        assert gone.json() == {"removed": True}
        # once forgotten it is anyone's to subscribe (a new browser's endpoint)
        assert eve.put("/api/me/push", json=_subscription(endpoint, 2)).status_code == 200


def _room(client: httpx.Client, **settings: Any) -> dict[str, Any]:
    made = client.post("/api/rooms", json={"game": "bigtwo", "name": "Ann", "settings": settings})
    assert made.status_code == 200, made.text
    return dict(made.json())


def test_a_code_is_normalised_whole_before_any_cut(server: LoggedServer) -> None:
    with httpx.Client(base_url=server.base) as ann, httpx.Client(base_url=server.base) as eve:
        code = _room(ann)["code"]
        padded = code + "-" * 88 + "JUNK"
        grouped = f"{code[:4].lower()}-{code[4:8]} {code[8:].lower()}"
        for wrong in (padded, code + "-" * 200 + "X", "-" * 88 + code + "Z"):
            got = eve.get(f"/api/rooms/{wrong}")
            assert got.status_code == 404 and got.json()["detail"]["code"] == "no_room", wrong
            joined = eve.post(f"/api/rooms/{wrong}/join", json={"name": "Eve"})
            assert joined.status_code == 404, joined.text
        assert eve.get(f"/api/rooms/{code}").json()["room"]["seats"][1] is None  # nobody joined
        got = eve.get(f"/api/rooms/{grouped}")
        assert got.status_code == 200 and got.json()["room"]["code"] == code
        joined = eve.post(f"/api/rooms/{code[:6]}--  --{code[6:]}/join", json={"name": "Eve"})
        assert joined.status_code == 200 and joined.json()["code"] == code
        ws_url = f"ws://127.0.0.1:{server.port}/ws/rooms/{padded}"
        with connect(ws_url, open_timeout=10) as ws:
            ws.send(json.dumps({"auth": joined.json()["token"]}))
            refused = json.loads(ws.recv(timeout=10))
            assert refused["error"]["code"] == "no_room", refused


def test_a_rooms_evening_is_for_its_people_whatever_the_replay_policy(
    server: LoggedServer,
) -> None:
    with httpx.Client(base_url=server.base) as ann, httpx.Client(base_url=server.base) as eve:
        nowhere = eve.get("/api/history/rooms/ZZZZZZZZZZZZ/evening")
        assert nowhere.status_code == 404
        for settings in ({"public_replays": True}, {"public_replays": False}):
            code = _room(ann, **settings)["code"]
            assert ann.get(f"/api/history/rooms/{code}/evening").status_code == 200
            got = eve.get(f"/api/history/rooms/{code}/evening")
            assert got.status_code == 404, (settings, got.text)
            assert got.json()["detail"]["code"] == nowhere.json()["detail"]["code"]
            assert (
                got.json()["detail"]["message"].replace(code, "ZZZZZZZZZZZZ")
                == (nowhere.json()["detail"]["message"])
            )


def _start_game(server: LoggedServer, ann: httpx.Client) -> tuple[str, str]:
    """A Big Two room of Ann's with three bots, its game started: the room's
    code and the game's id as the room's view names it."""
    room = _room(ann)
    with connect(f"ws://127.0.0.1:{server.port}/ws/rooms/{room['code']}") as ws:
        ws.send(json.dumps({"auth": room["token"]}))
        for n in range(3):
            ws.send(json.dumps({"id": n + 1, "cmd": {"type": "add_bot"}}))
        ws.send(json.dumps({"id": 9, "cmd": {"type": "start"}}))
        for _ in range(200):
            got = json.loads(ws.recv(timeout=10))
            for msg in got if isinstance(got, list) else [got]:
                assert "error" not in msg, msg
                view = msg.get("view") or {}
                if view.get("room", {}).get("status") == "playing":
                    return room["code"], str(view["room"]["game_id"])
    raise AssertionError("the game did not start")


def test_game_ids_count_nothing_and_old_numbers_answer_only_those_shown_the_game(
    server: LoggedServer,
) -> None:
    with httpx.Client(base_url=server.base) as ann, httpx.Client(base_url=server.base) as eve:
        started = [_start_game(server, ann) for _ in range(3)]
        listed = [g["id"] for g in ann.get("/api/me/games").json()["games"]]
        assert listed[::-1] == [ref for _, ref in started]  # newest first, as views named them
        assert len(set(listed)) == 3
        for ref in listed:
            assert len(ref) >= 16 and not ref.isdigit(), ref
        with sqlite3.connect(server.data / "cardroom.db") as db:
            rows = dict(db.execute("SELECT public_id, id FROM games").fetchall())
        numbers = [rows[ref] for ref in listed]
        nowhere = eve.get(f"/api/history/games/{max(rows.values()) + 1}")
        assert nowhere.status_code == 404
        for ref, number in zip(listed, numbers, strict=True):
            facts = ann.get(f"/api/history/games/{number}")  # an old link: still Ann's
            assert facts.status_code == 200 and facts.json()["id"] == ref
            assert facts.json() == ann.get(f"/api/history/games/{ref}").json()
            replay = ann.get(f"/api/history/games/{number}/replay?limit=1")
            assert replay.status_code == 200 and replay.json()["game_id"] == ref
            assert replay.json()["perspective"] == "seats"
            # the record waits for the end, whichever way the game is named
            for name in (ref, number):
                record = ann.get(f"/api/history/games/{name}/record")
                assert record.json()["detail"]["code"] == "record_refused", name
            # a stranger: by the public id, refused as before; by a number,
            # the answer a number no game has
            assert eve.get(f"/api/history/games/{ref}").json()["detail"]["code"] == "private_game"
            for path in ("", "/replay", "/record", "/sheet", "/sheet.csv"):
                got = eve.get(f"/api/history/games/{number}{path}")
                assert got.status_code == 404, (path, got.text)
                assert got.json()["detail"] == {
                    "code": "no_such_game",
                    "message": f"there is no game {number}",
                }
