"""One room, built in one state, with a browser for each role of the matrix.

The room plays the tiny test game with seven seats (tests/rooms/tinygame.py;
one hand card each, so a whole game is a few dozen moves):

- seat 0 Hana, the host; seat 1 Pia, a player;
- seat 2 Olga, signed in on two devices: she joined on device A, then opened
  the room on device B, which holds her place now (A's token is void);
- seat 3 Rita's place: Rita joined and never came; once she was away past
  her grace the host made a seat link for her seat and Eve opened it in her
  own browser (the claimer).  Rita's browser, with its old token, is the
  replaced device.  Rita also plays a game in another room, still running:
  what a claimer must never reach;
- seat 4 Zed, who joined and never came: the seat the seat-link and
  hand-to-bot cells name (within his grace, or past it);
- seat 5 a bot; seat 6 free;
- Wim watches; Sam watched until the host removed him; Ken sat until the
  host kicked him, before any game.

The rooms' clock (the manager's, app/rooms/clock.py) is a test clock that
only moves when told, so "past the grace" costs no waiting.

Every socket a role keeps open is a `Tab`: reading one never waits on a
timeout, because each read ends at the answer to a probe the tab sent (an
unknown command: refused, changing nothing), and the room answers a socket
in order - so whatever a tab was sent before its probe's answer is exactly
what it was sent.
"""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from starlette.testclient import WebSocketTestSession
from starlette.websockets import WebSocketDisconnect

from app.api.identity import GUEST_COOKIE
from app.rooms.tokens import new_code
from tests.api.client import hello
from tests.rooms.tinygame import TinyGame

Msg = dict[str, Any]

STATES = ("lobby", "grace", "past_grace", "between", "finished", "closed")
PLAYING = frozenset({"grace", "past_grace"})
#: lobby, between games (the host chose the next game) and finished (the
#: room's last game over, a rematch possible): no game is being played
BETWEEN = frozenset({"lobby", "between", "finished"})

#: every role, a column of the matrix
ROLES = (
    "host",
    "player",
    "claimer",  # opened a seat link to Rita's seat in her own browser
    "replaced",  # Rita's own browser: the device the seat link replaced
    "spectator",
    "removed",  # a spectator the host removed
    "device_a",  # Olga's first device: signed in, its place moved to device B
    "device_b",  # Olga's second device, which holds her place
    "kicked",  # a player the host removed
    "knows_code",  # a stranger with the room code
    "stranger",  # a stranger without it (asks for a code that names no room)
)
#: the roles with a socket open in the room (closed rooms have none)
TABS = ("host", "player", "claimer", "spectator", "device_b")
SEATED_TABS = ("host", "player", "device_b", "claimer")

GRACE = 30.0
SETTINGS = {"disconnect_grace": GRACE, "auto_bot": False, "bot_delay": 0}
OPTIONS = {"bidding": False, "hand": 1}
PASSWORD = "correct horse battery"
ZED_SEAT = 4
BOT_SEAT = 5
PROBE = "matrix_probe"  # a command no room knows: refused, nothing changes
_names = itertools.count()


class TestClock:
    """Wall-clock seconds that jump forward when told (`advance`)."""

    __test__ = False

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


class WideTiny(TinyGame):
    """The tiny game with seats for every role."""

    max_seats = 7


class Closed(Exception):
    """The tab's socket was closed (code)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Tab:
    """One open socket of a role."""

    def __init__(self, ws: WebSocketTestSession) -> None:
        self.ws = ws
        self.ids = itertools.count(1_000)
        self.view: Msg | None = None
        self.closed: int | None = None

    def read(self) -> Msg:
        try:
            msg: Msg = self.ws.receive_json()
        except WebSocketDisconnect as gone:
            self.closed = gone.code
            raise Closed(gone.code) from None
        if "view" in msg:
            self.view = msg["view"]
        return msg

    def until_reply(self, msg_id: int) -> tuple[Msg, list[Msg]]:
        """The answer to `msg_id`, and every other frame read before it."""
        before: list[Msg] = []
        while True:
            msg = self.read()
            if msg.get("re") == msg_id:
                return msg, before
            before.append(msg)

    def send(self, body: Msg) -> int:
        msg_id = next(self.ids)
        self.ws.send_json({"id": msg_id, **body})
        return msg_id

    def probe(self) -> list[Msg]:
        """Every frame this tab was sent since the last read."""
        reply, before = self.until_reply(self.send({"cmd": {"type": PROBE}}))
        assert reply.get("error", {}).get("code") == "unknown_command", reply
        return before

    def command(self, kind: str, fields: Msg) -> tuple[str, list[Msg]]:
        """What the room answers ("ok" or the error code), and what the tab
        was sent before that answer."""
        body: Msg
        body = {"action": fields} if kind == "action" else {"cmd": {"type": kind, **fields}}
        try:
            reply, before = self.until_reply(self.send(body))
        except Closed as gone:
            return f"closed {gone.code}", []
        return ("ok" if reply.get("ok") else str(reply["error"]["code"])), before

    @property
    def status(self) -> str:
        assert self.view is not None
        return str(self.view["room"]["status"])


class Browsers:
    """One TestClient, many cookie jars: each role is its own browser."""

    def __init__(self, client: TestClient, clock: TestClock, db: Path) -> None:
        self.c = client
        self.clock = clock
        self.db = db

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

    def post(self, jar: dict[str, str], path: str, body: Any) -> Msg:
        with self.as_(jar) as c:
            r = c.post(path, json=body)
        assert r.status_code in (200, 201), (path, r.text)
        return dict(r.json())

    def get(self, jar: dict[str, str], path: str) -> Any:
        with self.as_(jar) as c:
            r = c.get(path)
        assert r.status_code == 200, (path, r.text)
        return r.json()

    def open(self, stack: contextlib.ExitStack[Any], code: str, token: str) -> Tab:
        ws = stack.enter_context(self.c.websocket_connect(f"/ws/rooms/{code}"))
        ws.send_json(hello(token))
        tab = Tab(ws)
        tab.probe()
        assert tab.view is not None, "an open socket is sent its view"
        return tab

    def once(self, code: str, token: str, kind: str, fields: Msg) -> str:
        """A socket opened for one command: its refusal at the door, or the
        command's answer."""
        with self.c.websocket_connect(f"/ws/rooms/{code}") as ws:
            ws.send_json(hello(token))
            tab = Tab(ws)
            while tab.view is None:
                try:
                    msg = tab.read()
                except Closed as gone:
                    return f"closed {gone.code}"
                if "error" in msg:
                    return str(msg["error"]["code"])
            return tab.command(kind, fields)[0]


def refused_at_door(b: Browsers, code: str, token: str) -> str:
    """The error a socket is refused with at its first message (or "view")."""
    with b.c.websocket_connect(f"/ws/rooms/{code}") as ws:
        ws.send_json(hello(token))
        while True:
            m = ws.receive_json()
            if "error" in m:
                return str(m["error"]["code"])
            if "view" in m:
                return "view"


@dataclass
class World:
    """One room in one state, and every role's browser."""

    state: str
    code: str
    game_id: str | None = None
    #: Rita's game in another room, still running
    elsewhere_game: str = ""
    #: Rita's public person id (the seat's person) and the host's
    person: str = ""
    other: str = ""
    sam: str = ""  # the removed spectator's old player id
    #: each person's player id in the room, by role
    players: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, dict[str, str]] = field(default_factory=dict)
    tabs: dict[str, Tab] = field(default_factory=dict)
    stack: contextlib.ExitStack[Any] = field(default_factory=contextlib.ExitStack)

    @property
    def game(self) -> str:
        """The game the history rows ask about: the room's, or before its
        first one, Rita's game elsewhere."""
        return self.game_id if self.game_id is not None else self.elsewhere_game

    def code_for(self, role: str) -> str:
        return new_code() if role == "stranger" else self.code

    def close(self) -> None:
        self.stack.close()
        self.tabs.clear()


def _ask(tab: Tab, kind: str, **fields: Any) -> Msg:
    reply, _ = tab.until_reply(tab.send({"cmd": {"type": kind, **fields}}))
    assert reply.get("ok"), (kind, reply)
    return reply


def build(b: Browsers, state: str, *, fresh: bool = False) -> World:
    """The room in `state`, every role's browser ready (`fresh`: a room for
    one command that changes it for good - no game elsewhere for Rita, no
    strangers, nobody's person looked up)."""
    host, player, rita, eve, olga_a, olga_b = (b.new() for _ in range(6))
    wim, sam, ken, zed, hal = (b.new() for _ in range(5))
    name = f"olga{next(_names)}"
    b.post(olga_a, "/api/accounts/signup", {"name": name, "password": PASSWORD})
    b.post(olga_b, "/api/accounts/signin", {"name": name, "password": PASSWORD})
    elsewhere = ""
    if not fresh:  # Rita's game elsewhere, running
        h = b.post(hal, "/api/rooms", {"game": "tiny", "name": "Hal", "options": OPTIONS})
        b.post(rita, f"/api/rooms/{h['code']}/join", {"name": "Rita"})
        assert b.once(h["code"], h["token"], "start", {}) == "ok"
        elsewhere = b.get(rita, "/api/me/games")["games"][0]["id"]

    t = b.post(host, "/api/rooms", {"game": "tiny", "name": "Hana", "settings": SETTINGS,
                                    "options": OPTIONS})  # fmt: skip
    code = t["code"]
    w = World(state, code, elsewhere_game=elsewhere)
    try:
        _populate(b, w, t, host, player, rita, eve, olga_a, olga_b, wim, sam, ken, zed)
    except BaseException:
        w.close()
        raise
    w.cookies.update(knows_code={} if fresh else b.new(), stranger={} if fresh else b.new())
    w.tokens.update(knows_code="not a token", stranger=t["token"])
    for tab in w.tabs.values():
        tab.probe()  # what the build told them: read, so each cell starts clean
    if not fresh:
        w.person = b.get(rita, "/api/me/person")["person"]
        w.other = b.get(host, "/api/me/person")["person"]
    return w


def _populate(b: Browsers, w: World, t: Msg, *jars: dict[str, str]) -> None:
    host, player, rita, eve, olga_a, olga_b, wim, sam, ken, zed = jars
    code = w.code
    w.tabs["host"] = ht = b.open(w.stack, code, t["token"])
    p = b.post(player, f"/api/rooms/{code}/join", {"name": "Pia"})
    k = b.post(ken, f"/api/rooms/{code}/join", {"name": "Ken"})
    _ask(ht, "kick", seat=k["seat"])
    a = b.post(olga_a, f"/api/rooms/{code}/join", {"name": "Olga"})
    r = b.post(rita, f"/api/rooms/{code}/join", {"name": "Rita"})
    assert (p["seat"], a["seat"], r["seat"]) == (1, 2, 3)
    b.clock.advance(GRACE + 1)  # Rita: away past her grace
    claim = _ask(ht, "seat_link", seat=3)["data"]["claim"]
    e = b.post(eve, f"/api/rooms/{code}/claim", {"claim": claim})
    o = b.post(olga_b, f"/api/rooms/{code}/join", {"name": "Olga"})
    assert o["seat"] == 2, "Olga's own place, on her other device"
    z = b.post(zed, f"/api/rooms/{code}/join", {"name": "Zed"})
    assert z["seat"] == ZED_SEAT
    _ask(ht, "add_bot", seat=BOT_SEAT)
    s = b.post(wim, f"/api/rooms/{code}/join", {"name": "Wim", "spectator": True})
    gone = b.post(sam, f"/api/rooms/{code}/join", {"name": "Sam", "spectator": True})
    _ask(ht, "kick", player=gone["player"])
    w.sam = gone["player"]
    w.tokens = {
        "host": t["token"],
        "player": p["token"],
        "claimer": e["token"],
        "replaced": r["token"],
        "spectator": s["token"],
        "removed": gone["token"],
        "device_a": a["token"],
        "device_b": o["token"],
        "kicked": k["token"],
    }
    w.players = {
        "host": t["player"],
        "player": p["player"],
        "claimer": e["player"],
        "replaced": r["player"],
        "spectator": s["player"],
        "device_a": a["player"],
        "device_b": o["player"],
    }
    w.cookies = {
        "host": host,
        "player": player,
        "claimer": eve,
        "replaced": rita,
        "spectator": wim,
        "removed": sam,
        "device_a": olga_a,
        "device_b": olga_b,
        "kicked": ken,
    }
    for role in TABS[1:]:
        w.tabs[role] = b.open(w.stack, code, w.tokens[role])
    if w.state == "lobby":
        return
    _ask(ht, "start")
    w.game_id = next(g["id"] for g in b.get(host, "/api/me/games")["games"] if g["room"] == code)
    if w.state == "grace":
        return
    if w.state == "past_grace":
        b.clock.advance(GRACE + 1)  # Zed: away past his grace
        return
    _ask(ht, "hand_to_bot", seat=ZED_SEAT)
    _play_to_end(w)
    if w.state == "between":
        _ask(ht, "set_game", game="tiny", options=OPTIONS)
    elif w.state == "closed":
        w.close()
        closed = b.c.portal.call(b.c.app.state.rooms.close_idle, 0.0)  # type: ignore[union-attr]
        assert closed >= 1


def _play_to_end(w: World) -> None:
    """Each seated tab plays its first legal move when it has one; the bots
    play Zed's seat and their own."""
    tabs = [w.tabs[r] for r in SEATED_TABS]
    for _ in range(500):
        for tab in tabs:
            tab.probe()
        if all(tab.status == "finished" for tab in tabs):
            return
        acted = False
        for tab in tabs:
            legal = (tab.view or {}).get("legal")
            if legal and tab.status == "playing":
                tab.command("action", legal[0])
                acted = True
                break
        if not acted:
            time.sleep(0.005)  # a bot's move, on its timer
    raise AssertionError("the game never finished")


# ---------------------------------------------------------------- snapshots

_ROOM_TABLES = {
    "rooms": "code = :code",
    "players": "room_id IN (SELECT id FROM rooms WHERE code = :code)",
    "games": "room_id IN (SELECT id FROM rooms WHERE code = :code)",
}
_GAME_TABLES = ("game_seats", "actions", "snapshots", "seat_results", "score_hands",
                "score_lines")  # fmt: skip
#: (a person's records, person_totals and person_pairs, are summed from
#: seat_results in the background after any game ends: the records rows read them)
_PEOPLE_TABLES = ("accounts", "login_sessions", "guest_aliases", "series_points",
                  "push_subscriptions")  # fmt: skip


def stored(db: Path, code: str) -> dict[str, list[tuple[Any, ...]]]:
    """What the database holds of the room (its record, people, games and
    their moves) and of everyone's identity (accounts, sessions, guest
    aliases, push subscriptions)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out: dict[str, list[tuple[Any, ...]]] = {}
        for table, where in _ROOM_TABLES.items():
            out[table] = sorted(
                con.execute(f"SELECT * FROM {table} WHERE {where}", {"code": code}).fetchall(),
                key=repr,
            )
        games = f"SELECT id FROM games WHERE {_ROOM_TABLES['games']}"
        for table in _GAME_TABLES:
            out[table] = sorted(
                con.execute(
                    f"SELECT * FROM {table} WHERE game_id IN ({games})", {"code": code}
                ).fetchall(),
                key=repr,
            )
        for table in _PEOPLE_TABLES:
            out[table] = sorted(con.execute(f"SELECT * FROM {table}").fetchall(), key=repr)
        return out
    finally:
        con.close()


def histories(b: Browsers, w: World) -> dict[str, Any]:
    """Each role's browser's history and person, as it would read them."""
    out: dict[str, Any] = {}
    for role, jar in w.cookies.items():
        out[role] = (
            b.get(dict(jar), "/api/me/games")["games"],
            b.get(dict(jar), "/api/me/person")["person"],
        )
    return out
