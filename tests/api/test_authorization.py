"""The authorization matrix: every HTTP route and every socket command, asked
by every kind of person, against the real app (SQLite, accounts, sockets).

One table, a row per route (from the app's own routes) and per socket
command (from app/rooms/commands.py, and `action`), a column per role, the
expected answer in each cell.  Each cell runs on a room of its own, set up
the same way: a game of four is being played -

- seat 0 the host (to act), seat 1 a player, seat 2 the owner of an account,
  seat 3 Rita, whose device is gone: the host made a seat link for her seat
  and someone opened it, so her old token is replaced; she is away;
- Ken was seated and kicked by the host before the game;
- a spectator watches;
- the owner signed in on a second device and opened the room there: that
  device holds her place now.

A route or a command without a row fails the test, and so does a row without
a route or command: the table is the whole of who may do what.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute, APIWebSocketRoute
from fastapi.testclient import TestClient
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.websockets import WebSocketDisconnect

from app.api.identity import GUEST_COOKIE
from app.core.config import Settings
from app.main import ROUTERS, create_app
from app.rooms.commands import COMMANDS
from app.rooms.tokens import new_code
from tests.api.client import hello
from tests.api.conftest import OPEN_DOORS
from tests.api.push_service import Browser
from tests.db.backends import migrate

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("no_link_floor")]

ROLES = (
    "stranger",  # does not know the code
    "knows_code",  # knows the code, is no one in the room
    "spectator",
    "player",
    "host",
    "kicked",  # a player the host removed
    "replaced",  # the old device of a place a seat link moved
    "owner_elsewhere",  # the signed-in owner of a place, on another device
)
#: the socket of someone who is not in the room never gets to send a command
OUTSIDERS = {
    "stranger": "no_room",
    "knows_code": "bad_token",
    "kicked": "bad_token",
    "replaced": "seat_moved",
}
IN_ROOM = ("spectator", "player", "host", "owner_elsewhere")


def every(answer: Any) -> dict[str, Any]:
    return dict.fromkeys(ROLES, answer)


def command(spectator: str, player: str, host: str, owner: str | None = None) -> dict[str, str]:
    """A socket command's row: outsiders are turned away at the socket; the
    owner on her other device may do what a player may, unless said."""
    return {
        **OUTSIDERS,
        "spectator": spectator,
        "player": player,
        "host": host,
        "owner_elsewhere": owner or player,
    }


ROOM_CODE = {**every(200), "stranger": 404}
#: a running game (app/db/history.py has the rules): its players (the owner
#: by her account, and Rita's own browser too: a seat link moves the seat,
#: not the person) and the people of its room (the spectator; Ken, who was
#: in the room before he was removed) see its facts; strangers do not
GAME_FACTS = {**every(200), "stranger": 403, "knows_code": 403}
#: its replay while it runs: only those who hold one of its seats now - not
#: Rita's old device, whose seat a seat link moved to Eve's browser
RUNNING_REPLAY = {**GAME_FACTS, "spectator": 403, "kicked": 403, "replaced": 403}

#: the host's person id: only the host sees their records yet
OWN_RECORDS = {**every(403), "host": 200}

#: HTTP routes: the status code each role gets
HTTP: dict[str, dict[str, Any]] = {
    "GET /api/health": every(200),
    "GET /api/ready": every(200),
    "GET /api/games": every(200),
    "GET /api/room-settings": every(200),
    "POST /api/rooms": every(200),
    # Ken's browser, removed by the host, stays out until she lets him in
    "POST /api/rooms/{code}/join": {**ROOM_CODE, "kicked": 403},
    # a bad link gets one answer, whether or not the room exists (and Ken's
    # browser may not come back in through one)
    "POST /api/rooms/{code}/claim": {**every(400), "kicked": 403},
    "GET /api/rooms/{code}": ROOM_CODE,
    "POST /api/qr": every(200),
    "POST /api/accounts/signup": every(201),
    "POST /api/accounts/signin": every(401),  # with a wrong password
    "POST /api/accounts/signout": every(200),
    "GET /api/me": every(200),
    "GET /api/me/games": every(200),
    "GET /api/history/games/{game_id}": GAME_FACTS,
    # tiny keeps no score sheet: those who may see the game are told so
    "GET /api/history/games/{game_id}/sheet": {
        k: 404 if v == 200 else v for k, v in GAME_FACTS.items()
    },
    "GET /api/history/games/{game_id}/replay": RUNNING_REPLAY,
    # people's records (app/api/records.py): a person's are for them and for
    # those who finished a game with them; the game here is still running
    "GET /api/me/person": every(200),
    "GET /api/people/{person}": OWN_RECORDS,
    "GET /api/people/{person}/rivals": OWN_RECORDS,
    "GET /api/people/{person}/games.csv": OWN_RECORDS,
    "GET /api/people/{person}/versus/{other}": every(403),
    "GET /api/history/games/{game_id}/sheet.csv": {
        k: 404 if v == 200 else v for k, v in GAME_FACTS.items()
    },
    # a game's full record holds every hand: nobody's while it runs
    "GET /api/history/games/{game_id}/record": every(403),
    "POST /api/replay": every(422),  # a record that is not one
    # a room's evening: for the people who were in it; anyone else is told
    # there is no such room, as for a code that names none
    "GET /api/history/rooms/{code}/evening": {**GAME_FACTS, "stranger": 404, "knows_code": 404},
    # turn nudges (app/api/push.py): anyone may have their own browser nudged;
    # a DELETE drops only the asker's own subscription (`removed` says if any)
    "GET /api/push": every(200),
    "PUT /api/me/push": every(200),
    "DELETE /api/me/push": every(200),
    # the installable app's files (app/api/pwa.py)
    "GET /manifest.webmanifest": every(200),
    "GET /sw.js": every(200),
    "GET /r/{code}": every(200),  # the client's page: no lookup, nothing about the room
    "GET /": every(200),  # the same page
    "GET /index.html": every(200),
    "GET /b/{stamp}/{path:path}": every(200),  # the client's files under a build id
    "MOUNT /": every(200),  # the client's files
    # the socket: the first thing it says
    "WS /ws/rooms/{code}": {**OUTSIDERS, **dict.fromkeys(IN_ROOM, "view")},
}

#: socket commands during the game: "ok" or the error code
SOCKET: dict[str, dict[str, str]] = {
    "sit": command("not_between_games", "not_between_games", "not_between_games"),
    "start": command("not_host", "not_host", "not_between_games"),
    "rematch": command("not_host", "not_host", "not_finished"),
    "add_bot": command("not_host", "not_host", "not_between_games"),
    "remove_bot": command("not_host", "not_host", "not_between_games"),
    "kick": command("not_host", "not_host", "ok"),
    # the socket closes with 1000 "you left the room" (no ack after it)
    "leave": command("closed 1000", "closed 1000", "closed 1000"),
    "chat": command("ok", "ok", "ok"),
    "set_game": command("not_host", "not_host", "not_between_games"),
    "set_settings": command("not_host", "not_host", "ok"),
    "make_host": command("not_host", "not_host", "ok"),
    # Rita has been away past the grace (0 s here)
    "hand_to_bot": command("not_seated", "ok", "ok"),
    "seat_link": command("not_seated", "ok", "ok"),
    "move_link": command("ok", "ok", "ok"),
    # Ken was removed: only the host lets him back in
    "let_in": command("not_host", "not_host", "ok"),
    "resync": command("ok", "ok", "ok"),
    # older pages of the game's story, each asker's own (app/rooms/story.py)
    "story": command("ok", "ok", "ok"),
    # a person's own Posso switches: anyone's own, told to nobody else
    "posso_quiet": command("ok", "ok", "ok"),
    # a card nobody holds: the host is to act, the others wait their turn
    "action": command("not_seated", "not_your_turn", "bad_card"),
}

#: commands whose success changes what the next role would find: each of
#: their cells gets a room of its own (the others share one per row)
CHANGING = frozenset({"kick", "leave", "make_host", "set_settings", "hand_to_bot", "let_in"})

#: each command's fields in the matrix
FIELDS: dict[str, dict[str, Any]] = {
    "sit": {"seat": None},
    "remove_bot": {"seat": 3},
    "kick": {"seat": 1},
    "chat": {"text": "hello"},
    "set_game": {"game": "tiny"},
    "set_settings": {"settings": {}},
    "make_host": {"seat": 1},
    "hand_to_bot": {"seat": 3},
    "seat_link": {"seat": 3},
    "let_in": {"player": "ken"},
    "posso_quiet": {"helpful": True},
    "story": {"before": 1},
}

#: a browser's subscription at a push service the server sends to (nobody is
#: due a nudge in this room: the host, connected, is to act)
PUSH_ENDPOINT = "https://fcm.googleapis.com/fcm/send/matrix"
PUSH_SUBSCRIPTION = Browser().subscription(PUSH_ENDPOINT)
SETTINGS = {"disconnect_grace": 0, "auto_bot": False, "bot_delay": 0}
PASSWORD = "correct horse battery"
_names = itertools.count()


@dataclass
class World:
    """One room set up as the module's docstring says."""

    code: str
    game_id: int
    #: the host's and the player's public person ids (records pages)
    person: str = ""
    other: str = ""
    #: Ken's player id (the host removed him)
    ken: str = ""
    tokens: dict[str, str | None] = field(default_factory=dict)
    cookies: dict[str, dict[str, str]] = field(default_factory=dict)


class Browsers:
    """One TestClient, many cookie jars: each role is its own browser."""

    def __init__(self, client: TestClient) -> None:
        self.c = client

    @contextlib.contextmanager
    def as_(self, jar: dict[str, str]) -> Iterator[TestClient]:
        self.c.cookies.clear()
        for k, v in jar.items():
            self.c.cookies.set(k, v)
        yield self.c
        jar.clear()
        jar.update({cookie.name: cookie.value or "" for cookie in self.c.cookies.jar})

    def new(self) -> dict[str, str]:
        jar: dict[str, str] = {}
        with self.as_(jar) as c:
            assert c.get("/api/me").status_code == 200
        assert GUEST_COOKIE in jar
        return jar

    def post(self, jar: dict[str, str], path: str, body: Any) -> dict[str, Any]:
        with self.as_(jar) as c:
            r = c.post(path, json=body)
        assert r.status_code in (200, 201), (path, r.text)
        return dict(r.json())


def _command(c: TestClient, code: str, token: str, kind: str, fields: dict[str, Any]) -> str:
    """What the socket answers: its refusal, or the command's ack or error."""
    with c.websocket_connect(f"/ws/rooms/{code}") as ws:
        ws.send_json(hello(token))
        first = ws.receive_json()
        if "error" in first:
            return str(first["error"]["code"])
        if kind == "action":
            ws.send_json({"id": 1, "action": {"type": "play", "card": "nope"}})
        else:
            ws.send_json({"id": 1, "cmd": {"type": kind, **fields}})
        try:
            while True:
                msg = ws.receive_json()
                for m in msg if isinstance(msg, list) else [msg]:
                    if m.get("re") == 1:
                        return "ok" if m.get("ok") else str(m["error"]["code"])
        except WebSocketDisconnect as gone:
            return f"closed {gone.code}"


@contextlib.contextmanager
def _room(b: Browsers) -> Iterator[World]:
    """A room set up as the module's docstring says, its host's first tab
    open throughout (with a grace of 0 s, a host away would hand the role on)."""
    with contextlib.ExitStack() as stack:
        yield _set_up(b, stack)


def _set_up(b: Browsers, stack: contextlib.ExitStack[Any]) -> World:
    host, player, ken, rita, eve, watcher = (b.new() for _ in range(6))
    owner_a, owner_b = b.new(), b.new()
    name = f"owner{next(_names)}"
    b.post(owner_a, "/api/accounts/signup", {"name": name, "password": PASSWORD})
    t = b.post(
        host,
        "/api/rooms",
        {"game": "tiny", "name": "Hana", "settings": SETTINGS, "options": {"bidding": False}},
    )
    code = t["code"]
    world = World(code, 0)
    tab = stack.enter_context(b.c.websocket_connect(f"/ws/rooms/{code}"))
    tab.send_json(hello(t["token"]))
    assert "view" in tab.receive_json()
    p = b.post(player, f"/api/rooms/{code}/join", {"name": "Pia"})
    k = b.post(ken, f"/api/rooms/{code}/join", {"name": "Ken"})
    assert _command(b.c, code, t["token"], "kick", {"seat": k["seat"]}) == "ok"
    world.ken = k["player"]
    b.post(owner_a, f"/api/rooms/{code}/join", {"name": "Olga"})
    r = b.post(rita, f"/api/rooms/{code}/join", {"name": "Rita"})
    assert _command(b.c, code, t["token"], "start", {}) == "ok"
    with b.as_(host) as c, c.websocket_connect(f"/ws/rooms/{code}") as ws:
        ws.send_json(hello(t["token"]))
        ws.send_json({"id": 1, "cmd": {"type": "seat_link", "seat": 3}})
        while True:
            m = ws.receive_json()
            if isinstance(m, dict) and m.get("re") == 1:
                claim = m["data"]["claim"]
                break
    b.post(eve, f"/api/rooms/{code}/claim", {"claim": claim})
    b.post(owner_b, "/api/accounts/signin", {"name": name, "password": PASSWORD})
    o = b.post(owner_b, f"/api/rooms/{code}/join", {"name": "Olga"})
    assert o["seat"] == 2, "the owner's own place, on her other device"
    s = b.post(watcher, f"/api/rooms/{code}/join", {"name": "Wim", "spectator": True})
    with b.as_(host) as c:
        games = c.get("/api/me/games").json()["games"]
    world.game_id = games[0]["id"]
    with b.as_(host) as c:
        world.person = c.get("/api/me/person").json()["person"]
    with b.as_(player) as c:
        world.other = c.get("/api/me/person").json()["person"]
    world.tokens = {
        "stranger": t["token"],
        "knows_code": None,
        "spectator": s["token"],
        "player": p["token"],
        "host": t["token"],
        "kicked": k["token"],
        "replaced": r["token"],
        "owner_elsewhere": o["token"],
    }
    world.cookies = {
        "stranger": b.new(),
        "knows_code": b.new(),
        "spectator": watcher,
        "player": player,
        "host": host,
        "kicked": ken,
        "replaced": rita,
        "owner_elsewhere": owner_b,
    }
    return world


def _http(b: Browsers, w: World, row: str, role: str) -> Any:
    method, path = row.split(" ", 1)
    code = new_code() if role == "stranger" else w.code
    path = path.replace("{code}", code).replace("{game_id}", str(w.game_id))
    path = path.replace("{person}", w.person).replace("{other}", w.other)
    path = path.replace("{stamp}/{path:path}", "0123456789ab/js/main.js")
    if method == "WS":
        with b.c.websocket_connect(path) as ws:
            ws.send_json(hello(w.tokens[role] or "not a token"))
            while True:  # what it missed may come before its view
                got = ws.receive_json()
                for m in got if isinstance(got, list) else [got]:
                    if "view" in m or "error" in m:
                        return "view" if "view" in m else m["error"]["code"]
    if method == "MOUNT":
        method = "GET"
    bodies: dict[str, Any] = {
        "/api/rooms": {"game": "tiny", "name": "New"},
        f"/api/rooms/{code}/join": {"name": "Joe"},
        f"/api/rooms/{code}/claim": {"claim": "not a link"},
        "/api/qr": {"text": "http://x/r/ABC"},
        "/api/accounts/signup": {"name": f"new{next(_names)}", "password": PASSWORD},
        "/api/accounts/signin": {"name": "nobody here", "password": "wrong password"},
        "/api/replay": {"game": "tiny"},
        # each role's browser its own endpoint: one never becomes another's
        "/api/me/push": {**PUSH_SUBSCRIPTION, "endpoint": f"{PUSH_ENDPOINT}-{role}"},
    }
    with b.as_(dict(w.cookies[role])) as c:
        r = c.request(method, path, json=bodies.get(path))
    return r.status_code


def _routes(app: Any, routers: tuple[APIRouter, ...] = ROUTERS) -> set[str]:
    """Every door of the app: the HTTP routes of its OpenAPI schema, and those
    it leaves out of the schema (the page route, the client's files, the
    socket).  Read through public API only: the app's own routes, and the
    routers it includes (`routers`, as app/main.py lists them: FastAPI keeps
    an included router whole, behind a private class) - each of whose socket
    routes `app.url_path_for` must find in the app.  Anything else in the app
    fails: a router included but not listed would hide its routes."""
    out = {
        f"{method.upper()} {path}" for path, ops in app.openapi()["paths"].items() for method in ops
    }
    plain = (APIWebSocketRoute, WebSocketRoute, APIRoute, Route, Mount)
    own = [r for r in app.routes if isinstance(r, plain)]
    included = len(app.routes) - len(own)
    assert included == len(routers), (
        f"the app holds {included} routers, and {len(routers)} are listed: "
        "include routers through app/main.py's ROUTERS"
    )
    for r in own + [x for router in routers for x in router.routes]:
        if isinstance(r, APIWebSocketRoute | WebSocketRoute):
            params = {name: f"{{{name}}}" for name in re.findall(r"{(\w+)", r.path)}
            out.add(f"WS {app.url_path_for(r.name, **params)}")
        elif isinstance(r, APIRoute | Route):
            out.update(f"{m} {r.path}" for m in sorted(r.methods or ()) if m != "HEAD")
        elif isinstance(r, Mount):
            out.add(f"MOUNT {r.path or '/'}")
        else:
            raise AssertionError(f"a route of a kind the matrix cannot read: {r!r}")
    return out


@pytest.fixture(scope="module")
def browsers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browsers]:
    path: Path = tmp_path_factory.mktemp("matrix") / "cardroom.db"
    url = f"sqlite+aiosqlite:///{path}"
    asyncio.run(migrate(url))
    from app.games import GAMES
    from tests.rooms.tinygame import TINY

    GAMES["tiny"] = TINY
    settings = Settings(**OPEN_DOORS, database_url=url, max_sockets_per_seat=100)
    app = create_app(settings)
    try:
        with TestClient(app) as c:
            # sign-ups and sign-ins by the hundred: a cheap hash for the test
            app.state.accounts.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
            yield Browsers(c)
    finally:
        GAMES.pop("tiny", None)


def test_every_route_and_command_has_a_row(browsers: Browsers) -> None:
    assert _routes(browsers.c.app) == set(HTTP), "a route without a row, or a row without a route"
    assert set(SOCKET) == {*COMMANDS, "action"}, "a command without a row, or a row without one"
    for table in (HTTP, SOCKET):
        for row, cells in table.items():
            assert set(cells) == set(ROLES), f"{row}: a role without a cell"


def test_a_route_without_a_row_fails_the_matrix() -> None:
    """The check above fails for a new socket route in a listed router, a new
    page route left out of the schema, and a router included but not listed."""
    app = create_app(Settings(**OPEN_DOORS))
    extra = APIRouter(prefix="/more")

    @extra.websocket("/ws/{code}")
    async def more_socket() -> None: ...

    app.include_router(extra)
    found = _routes(app, (*ROUTERS, extra))
    assert found - set(HTTP) == {"WS /more/ws/{code}"}
    n = len(ROUTERS)
    with pytest.raises(AssertionError, match=f"{n + 1} routers, and {n} are listed"):
        _routes(app)
    bare = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @bare.get("/hidden", include_in_schema=False)
    async def hidden() -> None: ...

    assert _routes(bare, ()) == {"GET /hidden"}


@pytest.mark.parametrize("row", sorted(HTTP))
def test_http_row(browsers: Browsers, row: str) -> None:
    with _room(browsers) as w:  # no route changes what another role's cell sees
        got = {role: _http(browsers, w, row, role) for role in ROLES}
    assert got == HTTP[row]


@pytest.mark.parametrize("row", sorted(SOCKET))
def test_socket_row(browsers: Browsers, row: str) -> None:
    got: dict[str, str] = {}
    with _room(browsers) as shared:
        for role in ROLES:
            with _room(browsers) if row in CHANGING else contextlib.nullcontext(shared) as w:
                code = new_code() if role == "stranger" else w.code
                token = w.tokens[role] or "x"
                fields = FIELDS.get(row, {})
                if fields.get("player") == "ken":
                    fields = {**fields, "player": w.ken}
                got[role] = _command(browsers.c, code, token, row, fields)
    assert got == SOCKET[row]
