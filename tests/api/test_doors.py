"""Limits on every door: opening rooms, joining, signing in, looking rooms up,
and holding sockets.  Each refusal is a 429 with a message and Retry-After
(or an error and close code 4429 on a socket), and nothing was done."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.core.config import Settings
from app.main import create_app
from app.store.records import MemoryRecords
from tests.api.client import connect, create, hello, join
from tests.api.conftest import OPEN_DOORS
from tests.integration.test_cluster import private_redis
from tests.services import require_redis


def _app(**limits: int | str) -> TestClient:
    return TestClient(create_app(Settings(**{**OPEN_DOORS, **limits}), MemoryRecords()))


@pytest.fixture
def tight(tiny: None) -> Iterator[TestClient]:
    with _app(rooms_per_hour=3, joins_per_minute=2, lookups_per_minute=4) as c:
        yield c


def _refused(r: object, limit: str) -> None:
    assert r.status_code == 429, r.text  # type: ignore[attr-defined]
    detail = r.json()["detail"]  # type: ignore[attr-defined]
    assert detail["code"] == "rate_limited" and limit in detail["message"], detail
    assert 1 <= int(r.headers["Retry-After"]) <= 3600  # type: ignore[attr-defined]


def test_opening_rooms_is_limited_per_hour(tight: TestClient) -> None:
    for i in range(3):
        create(tight, "tiny", name=f"A{i}")
    r = tight.post("/api/rooms", json={"game": "tiny", "name": "A3"})
    _refused(r, "at most 3 per hour")
    assert len(tight.app.state.rooms.rooms) == 3  # type: ignore[attr-defined]


def test_joining_is_limited_per_minute(tight: TestClient) -> None:
    t = create(tight, "tiny")
    join(tight, t["code"], "B")
    join(tight, t["code"], "C")
    r = tight.post(f"/api/rooms/{t['code']}/join", json={"name": "D"})
    _refused(r, "at most 2 per minute")
    room = tight.app.state.rooms.get(t["code"])  # type: ignore[attr-defined]
    assert sorted(p.name for p in room.players.values()) == ["Ann", "B", "C"]


def test_looking_rooms_up_is_limited_over_http_and_sockets(tight: TestClient) -> None:
    """Guessing codes is lookups: a GET of a room and a socket opened to one
    with a token that is not one count alike, and past the limit neither tells
    whether the room exists."""
    t = create(tight, "tiny")
    for code in (t["code"], "NOPE99", "NOPE98"):
        assert tight.get(f"/api/rooms/{code}").status_code in (200, 404)
    with tight.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
        ws.send_json(hello(t["token"]))  # a seat's own socket counts on the seat
        assert "view" in ws.receive_json()
    with tight.websocket_connect(f"/ws/rooms/{t['code']}") as ws:  # the 4th lookup
        ws.send_json(hello("not-a-token"))
        assert ws.receive_json()["error"]["code"] == "bad_token"
    _refused(tight.get(f"/api/rooms/{t['code']}"), "room lookups")
    with tight.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
        msg = ws.receive_json()
        assert msg["error"]["code"] == "rate_limited" and msg["error"]["retry_after"] >= 1
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4429


def test_a_page_reconnecting_in_a_loop_never_locks_out_its_household(tiny: None) -> None:
    """Friends behind one address: a page whose socket reconnects in a loop
    spends its own seat's lookups, not the address's, so a housemate still
    gets in and can look the room up; guesses still count on the address."""
    with _app(lookups_per_minute=4) as c:
        t = create(c, "tiny")
        bob = join(c, t["code"], "Bob")
        looped = 0
        for _ in range(10):  # Ann's page, in a loop
            with c.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
                ws.send_json(hello(t["token"]))
                msg = ws.receive_json()
                if "view" in msg:
                    looped += 1
                else:
                    assert msg["error"]["code"] == "rate_limited", msg
                    assert "retry_after" in msg["error"]
        assert looped == 4  # its own seat's limit holds it back
        with connect(c, t["code"], bob["token"]) as housemate:
            assert "view" in housemate.recv()
        assert c.get(f"/api/rooms/{t['code']}").status_code == 200
        # a page guessing tokens (or codes) spends the address's lookups
        # (Bob's join and the GET above were two of its four)
        for code in (t["code"], "NOPE99"):
            with c.websocket_connect(f"/ws/rooms/{code}") as ws:
                ws.send_json(hello("guess"))
                assert ws.receive_json()["error"]["code"] in ("bad_token", "no_room")
        with c.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
            assert ws.receive_json()["error"]["code"] == "rate_limited"


def test_a_seat_holds_a_bounded_number_of_sockets(tiny: None) -> None:
    with _app(max_sockets_per_seat=2) as c:
        t = create(c, "tiny")
        with connect(c, t["code"], t["token"]) as one, connect(c, t["code"], t["token"]) as two:
            one.recv()
            two.recv()
            with c.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
                ws.send_json(hello(t["token"]))
                msg = ws.receive_json()
                assert (
                    msg["error"]["code"] == "too_many_sockets"
                    and "close a tab" in (msg["error"]["message"])
                )
                with pytest.raises(WebSocketDisconnect) as closed:
                    ws.receive_json()
                assert closed.value.code == 4429
            assert "re" in one.cmd("resync")  # the open ones are untouched
        with connect(c, t["code"], t["token"]) as again:  # closed tabs free their places
            assert "view" in again.recv()


def test_an_address_holds_a_bounded_number_of_sockets(tiny: None) -> None:
    with _app(max_sockets_per_address=2) as c:
        t = create(c, "tiny")
        b = join(c, t["code"], "Bob")
        with connect(c, t["code"], t["token"]) as ann, connect(c, t["code"], b["token"]) as bob:
            ann.recv()
            bob.recv()
            with c.websocket_connect(f"/ws/rooms/{t['code']}") as ws:
                msg = ws.receive_json()  # refused before it could even authenticate
                assert msg["error"]["code"] == "too_many_sockets"
                with pytest.raises(WebSocketDisconnect) as closed:
                    ws.receive_json()
                assert closed.value.code == 4429
        with connect(c, t["code"], b["token"]) as bob_again:
            assert "view" in bob_again.recv()


def test_with_redis_the_limits_hold_across_processes(tiny: None) -> None:
    """Two apps sharing one Redis, as two server processes would, keep one
    count per address."""
    settings = Settings(**{**OPEN_DOORS, "redis_url": require_redis(), "rooms_per_hour": 2})
    address = (f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.7", 50000)
    apps = [create_app(settings, MemoryRecords()) for _ in range(2)]
    with TestClient(apps[0], client=address) as one, TestClient(apps[1], client=address) as two:
        create(one, "tiny")
        create(two, "tiny")
        _refused(one.post("/api/rooms", json={"game": "tiny", "name": "C"}), "at most 2")
        _refused(two.post("/api/rooms", json={"game": "tiny", "name": "C"}), "at most 2")
    elsewhere = (f"10.251.{uuid.uuid4().int % 250}.8", 50000)
    with TestClient(create_app(settings, MemoryRecords()), client=elsewhere) as other:
        assert other.post("/api/rooms", json={"game": "tiny", "name": "D"}).status_code == 200


def test_with_redis_away_requests_are_uncounted_and_refused_only_plainly(
    tiny: None, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis goes away under a running app (several processes' mode): what
    needs only the rate limits goes through uncounted, with one warning for
    the whole outage; what must ask who owns a room is refused plainly - 503
    `unavailable` over HTTP, `unavailable` and close 1013 on a socket - never
    a bare 500 or an unhandled error."""
    with private_redis() as redis:
        settings = Settings(**{**OPEN_DOORS, "redis_url": redis.url, "lookups_per_minute": 1})
        with TestClient(create_app(settings, MemoryRecords())) as c:
            room = create(c, "tiny")
            redis.stop()
            with caplog.at_level(logging.WARNING, logger="app.api.doors"):
                for _ in range(3):  # over the cap of 1 a minute: uncounted
                    qr = c.post("/api/qr", json={"text": "http://127.0.0.1:8000/r/ABCD"})
                    assert qr.status_code == 200, qr.text
                lookup = c.get(f"/api/rooms/{room['code']}")
                assert lookup.status_code == 503, lookup.text
                assert lookup.json()["detail"]["code"] == "unavailable"
                assert lookup.headers["Retry-After"] == "5"
                with connect(c, room["code"], room["token"]) as ws:
                    assert ws.recv()["error"]["code"] == "unavailable"
                    with pytest.raises(WebSocketDisconnect) as closed:
                        ws.recv()
                    assert closed.value.code == 1013
    warnings = [r for r in caplog.records if "not counted" in r.getMessage()]
    assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
