"""A move link moves the person, not only the place: over the real routes, on
SQLite and PostgreSQL, a guest who played in two rooms continues on a new
browser with the move link from one of them, and finds all their games and
records there; the old browser is nobody any more."""

from __future__ import annotations

import random
from contextlib import ExitStack
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.api.identity import GUEST_COOKIE
from app.core.config import Settings
from app.main import create_app
from tests.api.client import connect, create, join
from tests.api.conftest import OPEN_DOORS
from tests.api.evenings import Evening, Person, evening, play_games
from tests.db import backends
from tests.services import require_redis

backend_url = backends.backend_url
db_url = backends.db_url
pg_url = backends.pg_url
sqlite_template = backends.sqlite_template

pytestmark = pytest.mark.timeout(300)
SEED = 27


def _browser(ev: Evening, name: str, cookie: str | None = None) -> Person:
    """Requests as `name` from now on: a browser holding `cookie` (a
    browser's jar holds one guest cookie, so the client's is emptied first)."""
    if cookie is not None:
        ev.people[name] = Person(name, cookie)
    ev.client.cookies.clear()
    ev.as_(name)
    return ev.person(name)


def _get(ev: Evening, name: str, path: str) -> Any:
    _browser(ev, name)
    r = ev.client.get(path)
    assert r.status_code == 200, r.text
    return r.json()


def _move(ev: Evening, code: str, token: str, new_browser: str) -> dict[str, Any]:
    """The place's device asks for a move link; `new_browser` opens it.
    Returns the ticket, and the new browser keeps the cookie it was given."""
    with connect(ev.client, code, token) as old:
        old.recv()
        link = old.ok(old.cmd("move_link"))["data"]
    _browser(ev, new_browser, f"{new_browser}-" + "y" * 40)
    r = ev.client.post(f"/api/rooms/{code}/claim", json={"claim": link["claim"]})
    assert r.status_code == 200, r.text
    given = r.cookies.get(GUEST_COOKIE)
    assert given and given != ev.person(new_browser).guest, "a fresh cookie for the person"
    _browser(ev, new_browser, given)
    return dict(r.json())


def test_a_move_link_takes_a_guests_games_and_records_to_the_new_browser(db_url: str) -> None:
    rng = random.Random(SEED)
    with evening(db_url, SEED) as ev:
        mine, bob_token = ev.open_room("bigtwo", "Bob", ["Ann"])
        with ev.host(mine, bob_token) as bob:
            play_games(bob, 1, rng)
        theirs, ann_token = ev.open_room("bigtwo", "Ann", [])
        _browser(ev, "Bob")
        joined = ev.client.post(f"/api/rooms/{theirs}/join", json={"name": "Bob"})
        bob_there = joined.json()["token"]
        with ev.host(theirs, ann_token) as ann:
            play_games(ann, 1, rng)
        games = {g["id"] for g in _get(ev, "Bob", "/api/me/games")["games"]}
        person = _get(ev, "Bob", "/api/me/person")["person"]
        assert len(games) == 2 and _get(ev, "Bob", f"/api/people/{person}")["played"] == 2

        # Bob continues on his phone with the move link from his own room
        ticket = _move(ev, mine, bob_token, "Phone")
        assert ticket["seat"] == 0 and ticket["token"] != bob_token
        assert {g["id"] for g in _get(ev, "Phone", "/api/me/games")["games"]} == games
        assert _get(ev, "Phone", "/api/me/person")["person"] == person
        assert _get(ev, "Phone", f"/api/people/{person}")["played"] == 2
        # the laptop's cookie acts as nobody: it is given a fresh identity
        _browser(ev, "Bob")
        laptop = ev.client.get("/api/me/games")
        assert laptop.json()["games"] == [] and laptop.cookies.get(GUEST_COOKIE)
        _browser(ev, "Bob")
        refused = ev.client.get(f"/api/people/{person}")
        assert refused.status_code == 403, "the laptop may not read Bob's records any more"
        # the person moved, so the laptop's place in Ann's room left it too: its
        # token is refused, told why, and the place waits for the phone
        assert ticket["moved_with"] == [theirs]
        with pytest.raises(WebSocketDisconnect), connect(ev.client, theirs, bob_there) as gone:
            assert gone.recv()["error"]["code"] == "seat_moved"
            gone.recv()
        # the laptop, a new guest now, cannot take it: joining makes a new person
        _browser(ev, "Bob")
        stranger = ev.client.post(f"/api/rooms/{theirs}/join", json={"name": "Not Bob"})
        assert stranger.json()["player"] != joined.json()["player"]
        # the phone opens Ann's room and joins: Bob's own place, seat 1
        _browser(ev, "Phone")
        back = ev.client.post(f"/api/rooms/{theirs}/join", json={"name": "Bob"})
        assert back.status_code == 200, back.text
        assert back.json()["player"] == joined.json()["player"] and back.json()["seat"] == 1
        with connect(ev.client, theirs, back.json()["token"]) as phone_there:
            assert phone_there.until_view(lambda v: v["you"] is not None)["you"]["seat"] == 1
        # Ann keeps her games, and still plays with the same Bob
        assert len(_get(ev, "Ann", "/api/me/games")["games"]) == 2

        # the phone plays on in Bob's room, then moves on to a tablet
        with connect(ev.client, mine, ticket["token"]) as phone:
            view = phone.until_view(lambda v: v["you"] is not None)
            assert view["you"]["seat"] == 0
        tablet = _move(ev, mine, ticket["token"], "Tablet")
        assert {g["id"] for g in _get(ev, "Tablet", "/api/me/games")["games"]} == games
        assert _get(ev, "Phone", "/api/me/games")["games"] == [], "the phone's alias is revoked"
        # a game the tablet joins is Bob's too
        with ev.host(mine, tablet["token"]) as bob:
            play_games(bob, 1, rng)
        assert len(_get(ev, "Tablet", "/api/me/games")["games"]) == 3
        assert _get(ev, "Tablet", f"/api/people/{person}")["played"] == 3


@pytest.mark.postgres
def test_a_move_link_answered_by_another_process_moves_the_person(tiny: None) -> None:
    """Three processes on one Redis and one PostgreSQL database: Bob's move
    link, made through one process and opened through another, both
    relaying to the room's owner, moves Bob's guest identity all the same."""
    redis = require_redis()
    with ExitStack() as stack:
        url = stack.enter_context(backends.fresh_pg_database())
        settings = Settings(
            **{**OPEN_DOORS, "redis_url": redis, "lease_seconds": 3, "database_url": url}
        )
        owner, other, third = (stack.enter_context(TestClient(create_app(settings))) for _ in "abc")
        owner.cookies.set(GUEST_COOKIE, "ann-laptop-" + "z" * 40)
        t = create(owner, "tiny")
        other.cookies.set(GUEST_COOKIE, "bob-laptop-" + "z" * 40)
        b = join(other, t["code"], "Bob")
        bob_person = other.get("/api/me/person").json()["person"]
        with connect(other, t["code"], b["token"]) as bob:
            bob.until_view(lambda v: True)
            link = bob.ok(bob.cmd("move_link"))["data"]["claim"]
        third.cookies.set(GUEST_COOKIE, "bob-phone-" + "z" * 40)
        r = third.post(f"/api/rooms/{t['code']}/claim", json={"claim": link})
        assert r.status_code == 200 and r.json()["player"] == b["player"], r.text
        given = r.cookies.get(GUEST_COOKIE)
        assert given, "the new browser is given the person's identity"
        third.cookies.clear()
        third.cookies.set(GUEST_COOKIE, given)
        assert third.get("/api/me/person").json()["person"] == bob_person
        other_now = other.get("/api/me/person")
        assert other_now.json()["person"] != bob_person, "the laptop's cookie is revoked"
