"""A person on a second device takes their place back: with a seat link from
another player once they have been away past the grace, or with a move link
they made themselves; over the real routes.  The old device's token stops
working and, if it comes back, it is told what happened and by whom."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.api.identity import GUEST_COOKIE, guest_key
from app.core.config import Settings
from app.db.setup import open_records
from app.main import create_app
from app.store.records import MemoryRecords, PlayerRecord
from tests.api.client import connect, create, join
from tests.api.conftest import OPEN_DOORS
from tests.db import backends

backend_url = backends.backend_url
db_url = backends.db_url
pg_url = backends.pg_url
sqlite_template = backends.sqlite_template

FAST = {"bot_delay": 0}

#: seat links at once after a grace of 0 (the 10 s floor is tested in tests/rooms/test_identity.py)
pytestmark = pytest.mark.usefixtures("no_link_floor")


def _as_browser(client: TestClient, cookie: str) -> None:
    """The next requests come from the browser holding this guest cookie."""
    client.cookies.set(GUEST_COOKIE, cookie)


def _stored(client: TestClient, records: MemoryRecords, code: str, pid: str) -> PlayerRecord:
    return next(p for p in records.rooms[code].players if p.player_id == pid)


def _refused_plainly(client: TestClient, code: str, old_token: str) -> None:
    """Bob's old device is refused, told in plain words whose link took his seat."""
    with (
        pytest.raises(WebSocketDisconnect) as closed,
        connect(client, code, old_token) as old,
    ):
        error = old.recv()["error"]
        assert error["code"] == "seat_moved"
        assert "Bob's seat moved to a new device with a seat link Ann made" in error["message"]
        old.recv()
    assert closed.value.code == 4401


def test_a_seat_link_moves_an_away_seat_to_a_new_device(
    client: TestClient, records: MemoryRecords
) -> None:
    """After the grace, Ann makes a link for Bob's seat (announced by name);
    Eve's browser opens it: the seat moves, Bob's record and history stay
    his, and Bob's old device, back, is told plainly what happened."""
    _as_browser(client, "ann-browser")
    t = create(client, "tiny", settings={**FAST, "disconnect_grace": 0}, options={"bidding": False})
    _as_browser(client, "bob-browser")
    b = join(client, t["code"], "Bob")
    bob_before = _stored(client, records, t["code"], b["player"])
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        with connect(client, t["code"], b["token"]) as bob:
            bob.recv()
            ann.ok(ann.cmd("start"))
        ann.until_view(lambda v: not v["room"]["seats"][1]["connected"])
        link = ann.ok(ann.cmd("seat_link", seat=1))["data"]
        assert link["seat"] == 1 and link["name"] == "Bob"
        (made,) = [e for e in ann.events if e.get("what") == "link_made"]
        assert (made["name"], made["by"]) == ("Bob", "Ann")
        _as_browser(client, "eve-browser")
        r = client.post(f"/api/rooms/{t['code']}/claim", json={"claim": link["claim"]})
        assert r.status_code == 200, r.text
        ticket = r.json()
        assert ticket["seat"] == 1 and ticket["player"] == b["player"]
        assert ticket["token"] != b["token"]
        again = client.post(f"/api/rooms/{t['code']}/claim", json={"claim": link["claim"]})
        assert again.status_code == 400 and again.json()["detail"]["code"] == "bad_claim"
        bob_after = _stored(client, records, t["code"], b["player"])
        assert (bob_after.guest_id, bob_after.account_id) == (
            bob_before.guest_id,
            bob_before.account_id,
        ), "a claim writes nothing of the claimer's onto Bob's record"
        # the old device is refused, in plain words; the new one has the seat, mid-game
        _refused_plainly(client, t["code"], b["token"])
        with connect(client, t["code"], ticket["token"]) as phone:
            view = phone.until_view(lambda v: v["game"] is not None)
            assert view["you"]["seat"] == 1 and view["room"]["status"] == "playing"
            assert "hand" in view["game"]
        moved = ann.until(lambda m: m.get("event", {}).get("what") == "moved")
        assert (moved["event"]["name"], moved["event"]["by"]) == ("Bob", "Ann")


def test_a_move_link_takes_a_persons_own_place_to_their_new_device(
    client: TestClient, records: MemoryRecords
) -> None:
    """The place moves and its record stays the person's: the person moves
    with it (tests/api/test_moving.py follows their games and records on a
    server with a database; this one keeps none, so no cookie is given)."""
    _as_browser(client, "ann-laptop")
    t = create(client, "tiny")
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        link = ann.ok(ann.cmd("move_link"))["data"]
        _as_browser(client, "ann-phone")
        r = client.post(f"/api/rooms/{t['code']}/claim", json={"claim": link["claim"]})
        assert r.status_code == 200, r.text
        assert r.json()["player"] == t["player"] and r.json()["seat"] == 0
        assert GUEST_COOKIE not in r.cookies
    assert _stored(client, records, t["code"], t["player"]).guest_id == guest_key("ann-laptop")
    qr = client.post("/api/qr", json={"text": f"http://x/r/{t['code']}#claim={link['claim']}"})
    assert qr.status_code == 200 and qr.json()["svg"].startswith("data:image/svg+xml")


def test_a_bad_claim_is_refused_plainly(client: TestClient) -> None:
    t = create(client, "tiny")
    r = client.post(f"/api/rooms/{t['code']}/claim", json={"claim": "nope"})
    assert r.status_code == 400
    assert r.json()["detail"] == {
        "code": "bad_claim",
        "message": "this seat link is not valid any more: ask for a new one",
    }


def test_the_old_device_is_told_what_happened_after_a_restart(tiny: None, db_url: str) -> None:
    """The note for the old device is stored with the room: a new server
    over the same database, rebuilding the room from storage, still tells
    Bob's old device in plain words whose link took his seat."""
    settings = Settings(**OPEN_DOORS)
    with TestClient(create_app(settings, open_records(db_url))) as client:
        _as_browser(client, "ann-browser")
        t = create(client, "tiny", settings={**FAST, "disconnect_grace": 0})
        _as_browser(client, "bob-browser")
        b = join(client, t["code"], "Bob")  # and his phone dies before it connects
        with connect(client, t["code"], t["token"]) as ann:
            ann.recv()
            link = ann.ok(ann.cmd("seat_link", seat=1))["data"]
        _as_browser(client, "eve-browser")
        r = client.post(f"/api/rooms/{t['code']}/claim", json={"claim": link["claim"]})
        assert r.status_code == 200, r.text
    with TestClient(create_app(settings, open_records(db_url))) as client:
        _refused_plainly(client, t["code"], b["token"])
        with connect(client, t["code"], r.json()["token"]) as new:
            assert new.until_view(lambda v: v["you"] is not None)["you"]["seat"] == 1
