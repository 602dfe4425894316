"""A friend on a second device takes their seat back: with a one-time seat link
from another player, over the real routes; the old device's token stops working."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tests.api.client import connect, create, join

FAST = {"bot_delay": 0}


def test_a_seat_link_moves_an_away_seat_to_a_new_device(client: TestClient) -> None:
    t = create(client, "tiny", settings=FAST, options={"bidding": False})
    b = join(client, t["code"], "Bob")
    with connect(client, t["code"], t["token"]) as ann:
        ann.recv()
        with connect(client, t["code"], b["token"]) as bob:
            bob.recv()
            ann.ok(ann.cmd("start"))
        ann.until_view(lambda v: not v["room"]["seats"][1]["connected"])
        link = ann.ok(ann.cmd("seat_link", seat=1))["data"]
        assert link["seat"] == 1 and link["name"] == "Bob"
        r = client.post(f"/api/rooms/{t['code']}/claim", json={"claim": link["claim"]})
        assert r.status_code == 200, r.text
        ticket = r.json()
        assert ticket["seat"] == 1 and ticket["player"] == b["player"]
        assert ticket["token"] != b["token"]
        again = client.post(f"/api/rooms/{t['code']}/claim", json={"claim": link["claim"]})
        assert again.status_code == 400 and again.json()["detail"]["code"] == "bad_claim"
        # the old device is refused; the new one has the seat, mid-game
        with (
            pytest.raises(WebSocketDisconnect) as closed,
            connect(client, t["code"], b["token"]) as old,
        ):
            assert old.recv()["error"]["code"] == "bad_token"
            old.recv()
        assert closed.value.code == 4401
        with connect(client, t["code"], ticket["token"]) as phone:
            view = phone.until_view(lambda v: v["game"] is not None)
            assert view["you"]["seat"] == 1 and view["room"]["status"] == "playing"
            assert "hand" in view["game"]
        moved = ann.until(lambda m: m.get("event", {}).get("what") == "moved")
        assert moved["event"]["name"] == "Bob"


def test_a_bad_claim_is_refused_plainly(client: TestClient) -> None:
    t = create(client, "tiny")
    r = client.post(f"/api/rooms/{t['code']}/claim", json={"claim": "nope"})
    assert r.status_code == 400
    assert r.json()["detail"] == {
        "code": "bad_claim",
        "message": "this seat link is not valid any more: ask for a new one",
    }
