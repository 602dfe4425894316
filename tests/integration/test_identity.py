"""A person stays themselves (issue 34, items 1-4), attacked over a real
server: uvicorn on a loopback port, SQLite migrated by Alembic, each browser
an httpx client with its own cookies, each tab a real WebSocket.

The server runs in this process (tests/services.py `serving`) so that its
rooms' clock can be a test clock: a grace of 30 s and the 10 s floor for seat
links (app/rooms/membership.py, SEAT_LINK_FLOOR) pass when the test moves the
clock on, not in real time.  Everything else is what `make run` serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from argon2 import PasswordHasher
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from app.core.config import Settings
from app.main import create_app
from app.rooms.events import CLOSE_KICKED, CLOSE_MOVED
from app.rooms.membership import SEAT_LINK_FLOOR
from tests.api.authz.world import TestClock
from tests.api.conftest import OPEN_DOORS
from tests.db.backends import migrate
from tests.rooms.tinygame import TINY
from tests.services import serving
from tests.sockets import Player

pytestmark = pytest.mark.timeout(120)

Msg = dict[str, Any]
GRACE = 30.0
#: the tiny test game: one card each, no bidding - a game is a few moves
OPTIONS = {"bidding": False, "hand": 1}
SETTINGS = {"disconnect_grace": GRACE, "auto_bot": False, "bot_delay": 0}


@dataclass
class Server:
    base: str  # "127.0.0.1:port"
    clock: TestClock

    @contextlib.contextmanager
    def browser(self) -> Iterator[httpx.Client]:
        with httpx.Client(base_url=f"http://{self.base}", timeout=10) as c:
            yield c

    def tab(self, code: str, ticket: Msg) -> contextlib.closing[Player]:
        return contextlib.closing(Player(self.base, code, ticket))

    def door(self, code: str, token: str) -> tuple[str, int | None]:
        """What a socket with `token` is told at once, and how it is closed."""
        with ws_connect(f"ws://{self.base}/ws/rooms/{code}") as ws:
            ws.send(orjson.dumps({"auth": token}).decode())
            first = orjson.loads(ws.recv(timeout=10))
            while "error" not in first:  # the story it missed, then its view
                if "view" in first:
                    return "view", None
                first = orjson.loads(ws.recv(timeout=10))
            with contextlib.suppress(ConnectionClosed):
                ws.recv(timeout=10)
            assert ws.close_code is not None
            return str(first["error"]["code"]), ws.close_code


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    path: Path = tmp_path_factory.mktemp("identity") / "cardroom.db"
    url = f"sqlite+aiosqlite:///{path}"
    asyncio.run(migrate(url))
    from app.games import GAMES

    GAMES["tiny"] = TINY
    app = create_app(Settings(**OPEN_DOORS, database_url=url))
    clock = TestClock()
    app.state.rooms.clock = clock
    app.state.accounts.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    try:
        with serving(app) as base:
            yield Server(base, clock)
    finally:
        GAMES.pop("tiny", None)


def ok(r: httpx.Response) -> Msg:
    assert r.status_code == 200, r.text
    return dict(r.json())


def create(b: httpx.Client, name: str, **settings: Any) -> Msg:
    body = {"game": "tiny", "name": name, "options": OPTIONS, "settings": SETTINGS | settings}
    return ok(b.post("/api/rooms", json=body))


def join(b: httpx.Client, code: str, name: str, **body: Any) -> Msg:
    return ok(b.post(f"/api/rooms/{code}/join", json={"name": name, **body}))


def refused(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.json()["detail"]["code"] == code, r.text


def answer(tab: Player, kind: str, **fields: Any) -> str:
    reply = tab.cmd(kind, **fields)
    return "ok" if reply.get("ok") else str(reply["error"]["code"])


def settle(*tabs: Player, until: Any = None, within: float = 10) -> None:
    """Read every tab until `until()` holds (or, without one, until they are quiet)."""
    deadline = time.monotonic() + within
    while True:
        got = [tab.read(0.02) for tab in tabs]
        if until is None and not any(got):
            return
        if until is not None and until():
            return
        assert time.monotonic() < deadline, "the tabs never got there"


def play_out(*tabs: Player) -> None:
    """Each tab plays its first legal move until the game is over."""
    deadline = time.monotonic() + 30
    while not all(t.view and t.view["room"]["status"] == "finished" for t in tabs):
        assert time.monotonic() < deadline, "the game never finished"
        for t in tabs:
            while t.read(0.01):
                pass
            view = t.view
            if view and view["room"]["status"] == "playing" and view.get("legal"):
                t.reply(t.send(action=view["legal"][0]))


def started(host: Player) -> str:
    """The game's public id, once the host started it."""
    assert answer(host, "start") == "ok"
    settle(host, until=lambda: host.view and host.view["room"]["status"] == "playing")
    assert host.view is not None
    return str(host.view["room"]["game_id"])


def connected(tab: Player, seat: int) -> bool:
    assert tab.view is not None
    return bool(tab.view["room"]["seats"][seat]["connected"])


def whats(tab: Player, what: str) -> list[Msg]:
    return tab.room_events(what)


# ---------------------------------------------------------------------- 1


def test_a_seat_link_moves_a_seat_never_a_person(server: Server) -> None:
    """The whole chain of issue 34's first attack: a stranger with the code
    sits in a free seat, waits out Bob's grace, makes a seat link to Bob's
    seat and opens it in a second browser.  That browser plays Bob's seat in
    this room and nothing more: it may not move "Bob" on, and it is not Bob
    anywhere else - not his person, history, records, nor his running game
    in another room.  Bob's own browser keeps all of it."""
    with (
        server.browser() as bob,
        server.browser() as carl,
        server.browser() as hana,
        server.browser() as mal,
        server.browser() as mal2,
    ):
        # Bob's history: a finished game and a running one, with Carl
        f = create(bob, "Bob")
        fc = join(carl, f["code"], "Carl")
        with server.tab(f["code"], f) as b1, server.tab(f["code"], fc) as c1:
            started(b1)
            play_out(b1, c1)
            finished_id = str(b1.view["room"]["game_id"])  # type: ignore[index]
        g = create(bob, "Bob")
        gc = join(carl, g["code"], "Carl")
        with server.tab(g["code"], g) as b2:
            running_id = started(b2)
        bob_person = ok(bob.get("/api/me/person"))["person"]
        bob_games = ok(bob.get("/api/me/games"))["games"]
        assert {x["id"] for x in bob_games} == {finished_id, running_id}
        assert gc["seat"] == 1

        # Bob closes his lobby tab in Hana's room; Mal, who has the code, sits
        h = create(hana, "Hana")
        code = h["code"]
        bt = join(bob, code, "Bob")
        with server.tab(code, h) as host:
            with server.tab(code, bt) as gone:
                settle(gone, until=lambda: gone.view is not None)
            settle(host, until=lambda: not connected(host, bt["seat"]))
            m = join(mal, code, "Mal")
            with server.tab(code, m) as mt:
                settle(mt, until=lambda: mt.view is not None)
                assert answer(mt, "seat_link", seat=bt["seat"]) == "too_early"
                server.clock.advance(GRACE + 1)
                reply = mt.cmd("seat_link", seat=bt["seat"])
                assert reply.get("ok"), reply
                claim = reply["data"]["claim"]
                # the second browser holds Bob's seat now, lent
                taken = ok(mal2.post(f"/api/rooms/{code}/claim", json={"claim": claim}))
                assert taken["seat"] == bt["seat"] and taken["player"] == bt["player"]
                with server.tab(code, taken) as stolen:
                    settle(stolen, until=lambda: stolen.view is not None)
                    assert answer(stolen, "move_link") == "not_yours"
                settle(host, until=lambda: whats(host, "moved"))
                # the room is told who made the link and who opened it
                assert [e["by"] for e in whats(host, "link_made")] == ["Mal"]
                assert [e["by"] for e in whats(host, "moved")] == ["Mal"]

        # the second browser is nobody outside the room
        assert ok(mal2.get("/api/me/person"))["person"] != bob_person
        theirs = {x["id"] for x in ok(mal2.get("/api/me/games"))["games"]}
        assert not theirs & {finished_id, running_id}
        for path in (
            f"/api/people/{bob_person}",
            f"/api/people/{bob_person}/rivals",
            f"/api/people/{bob_person}/games.csv",
            f"/api/history/games/{finished_id}",
            f"/api/history/games/{finished_id}/replay",
            f"/api/history/games/{finished_id}/record",
            f"/api/history/games/{running_id}",
            f"/api/history/games/{running_id}/replay",
        ):
            assert mal2.get(path).status_code == 403, path

        # Bob's own browser is still Bob, with all his history
        assert ok(bob.get("/api/me/person"))["person"] == bob_person
        assert ok(bob.get("/api/me/games"))["games"] == bob_games
        assert ok(bob.get(f"/api/people/{bob_person}"))["me"] is True
        mine = ok(bob.get(f"/api/history/games/{running_id}/replay"))
        assert mine["perspective"] == "seats"


# ---------------------------------------------------------------------- 2


def test_the_host_cannot_skip_a_grace(server: Server) -> None:
    """Mid-game Bob drops with a grace of 30 s; the host sets the grace to 0
    and asks for a seat link at once: too early until Bob has been away his
    own 30 s.  Carol, who drops after the change, has a grace of 0 - and no
    seat link comes before the floor of 10 s all the same.  Bob, back before
    anyone opened the link, has his seat."""
    assert SEAT_LINK_FLOOR == 10.0
    with server.browser() as hana, server.browser() as bob, server.browser() as carol:
        h = create(hana, "Hana")
        code = h["code"]
        bt, ct = join(bob, code, "Bob"), join(carol, code, "Carol")
        with server.tab(code, h) as host:
            with server.tab(code, bt) as b, server.tab(code, ct) as c:
                started(host)
                settle(b, c, until=lambda: b.view and c.view and b.status == c.status == "playing")
                b.close()  # Bob's phone drops, under a grace of 30 s
                settle(host, until=lambda: whats(host, "away"))
                assert answer(host, "set_settings", settings={"disconnect_grace": 0}) == "ok"
                assert answer(host, "seat_link", seat=1) == "too_early"
            # Carol drops under the grace of 0
            settle(host, until=lambda: len(whats(host, "away")) == 2)
            assert answer(host, "seat_link", seat=1) == "too_early"
            assert answer(host, "seat_link", seat=2) == "too_early"
            # (each step leaves a second or more for the real time between the drops)
            server.clock.advance(SEAT_LINK_FLOOR - 1)
            assert answer(host, "seat_link", seat=2) == "too_early"
            server.clock.advance(2)  # Carol: 11 s away
            assert answer(host, "seat_link", seat=2) == "ok"
            assert answer(host, "seat_link", seat=1) == "too_early"
            server.clock.advance(GRACE - SEAT_LINK_FLOOR - 4)  # Bob: 28 s away
            assert answer(host, "seat_link", seat=1) == "too_early"
            server.clock.advance(3)
            assert answer(host, "seat_link", seat=1) == "ok"
        # nobody opened it: Bob's own device has his seat
        assert server.door(code, bt["token"])[0] == "view"


# ---------------------------------------------------------------------- 3


def test_a_replaced_device_loses_the_seats_cards(server: Server) -> None:
    """Bob's seat moves to Eve's browser with a seat link while Bob's old
    device is open again: that socket is closed (seat_moved), it is refused
    at the door from then on, and Bob's browser may not replay the running
    game - Eve's live hand.  Once the game is over, Bob reads it whole."""
    with server.browser() as hana, server.browser() as bob, server.browser() as eve:
        h = create(hana, "Hana")
        code = h["code"]
        bt = join(bob, code, "Bob")
        with server.tab(code, h) as host:
            with server.tab(code, bt) as b:
                game_id = started(host)
                settle(b, until=lambda: b.view is not None and b.status == "playing")
            settle(host, until=lambda: whats(host, "away"))
            server.clock.advance(GRACE + 1)
            claim = host.cmd("seat_link", seat=1)["data"]["claim"]
            mine = ok(bob.get(f"/api/history/games/{game_id}/replay"))
            assert mine["perspective"] == "seats", "Bob's while the seat is his"
            with server.tab(code, bt) as old:  # Bob's old device, open again
                settle(old, until=lambda: old.view is not None)
                e = ok(eve.post(f"/api/rooms/{code}/claim", json={"claim": claim}))
                with pytest.raises(ConnectionClosed):
                    while True:
                        old.read(1)
                assert old.ws.close_code == CLOSE_MOVED
            assert server.door(code, bt["token"]) == ("seat_moved", CLOSE_MOVED)
            refused(bob.get(f"/api/history/games/{game_id}/replay"), 403, "replay_refused")
            with server.tab(code, e) as et:
                play_out(host, et)
        whole = ok(bob.get(f"/api/history/games/{game_id}/replay"))
        assert whole["status"] == "finished" and whole["perspective"] == "full"


# ---------------------------------------------------------------------- 4


def test_removal_sticks_until_the_host_lets_them_in(server: Server) -> None:
    """A spectator the host removed comes back from the same browser: refused
    `removed`, as a spectator or a player, until the host lets them in."""
    with server.browser() as hana, server.browser() as sam:
        h = create(hana, "Hana")
        code = h["code"]
        s = join(sam, code, "Sam", spectator=True)
        with server.tab(code, h) as host, server.tab(code, s) as watcher:
            settle(watcher, until=lambda: watcher.view is not None)
            assert answer(host, "kick", player=s["player"]) == "ok"
            with pytest.raises(ConnectionClosed):
                while True:
                    watcher.read(1)
            assert watcher.ws.close_code == CLOSE_KICKED
            settle(host, until=lambda: host.view and host.view["room"]["removed"])
            assert host.view is not None
            assert host.view["room"]["removed"] == [{"player": s["player"], "name": "Sam"}]
            for body in ({"name": "Sam", "spectator": True}, {"name": "Sammy"}):
                refused(sam.post(f"/api/rooms/{code}/join", json=body), 403, "removed")
            assert server.door(code, s["token"])[0] == "bad_token"
            assert answer(host, "let_in", player=s["player"]) == "ok"
            back = join(sam, code, "Sam", spectator=True)
            with server.tab(code, back) as again:
                settle(again, until=lambda: again.view is not None)
                assert answer(again, "chat", text="sorry") == "ok"
