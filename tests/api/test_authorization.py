"""The authorization matrix: every HTTP route (from the app's own routes) and
every socket command (app/rooms/commands.py, and `action`), asked by every
role (world.py), in every room state - lobby, in a game within a person's
grace and past it, between games, finished, closed.

Each state's room is built once and every cell runs on it: first the cells
that must change nothing (refusals, and reads), each checked to have changed
nothing - the room's stored record and everyone's identity in the database,
the asker's cookies, and what every open socket was sent (nothing, but the
refusal to the asker) - and each row then checks every role's history;
then the cells whose success tells the room something but leaves the others'
answers alone; then joins, which hand people their own places back; then
sign-ups and sign-outs.  A success that changes the room for good (a kick, a
start, leaving) runs on a room of its own, built the same way.

A route or a command without a row fails, and so does a row without one.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute, APIWebSocketRoute
from fastapi.testclient import TestClient
from starlette.routing import Mount, Route, WebSocketRoute

from app.core.config import Settings
from app.main import ROUTERS, create_app
from app.rooms.commands import COMMANDS
from tests.api.authz import table as t
from tests.api.authz.world import (
    ROLES,
    STATES,
    Browsers,
    Closed,
    TestClock,
    WideTiny,
    World,
    build,
    histories,
    refused_at_door,
    stored,
)
from tests.api.conftest import OPEN_DOORS
from tests.api.push_service import Browser
from tests.db.backends import migrate

pytestmark = pytest.mark.timeout(300)

JOIN = "POST /api/rooms/{code}/join"
JOIN_LOCKED = "POST /api/rooms/{code}/join [locked]"
#: rows that change the asker's own identity: run last, on a copy of its cookies
IDENTITY_ROWS = ("POST /api/accounts/signup", "POST /api/accounts/signout")
#: a browser's subscription at a push service the server sends to
PUSH_ENDPOINT = "https://fcm.googleapis.com/fcm/send/matrix"
PUSH_SUBSCRIPTION = Browser().subscription(PUSH_ENDPOINT)
PASSWORD = "correct horse battery"


@dataclass
class Outcome:
    got: Any
    #: what a cell that should have changed nothing changed
    changed: list[str] = field(default_factory=list)


@dataclass
class StateRun:
    cells: dict[tuple[str, str, str], Outcome] = field(default_factory=dict)
    #: per row: whose history a row's refusals changed
    rows: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: per row: what its cells sent the open sockets (read once after the row)
    sent: dict[tuple[str, str], list[str]] = field(default_factory=dict)


def _succeeds(want: Any) -> bool:
    if isinstance(want, int):
        return want < 400
    return want in ("ok", "view") or str(want).startswith(("200", "201", "closed"))


class Matrix:
    """Runs every cell of a state once, and keeps what each got."""

    def __init__(self, b: Browsers) -> None:
        self.b = b
        self.runs: dict[str, StateRun] = {}
        self.n = 0

    def of(self, state: str) -> StateRun:
        if state not in self.runs:
            self.runs[state] = self._run(state)
        return self.runs[state]

    # ------------------------------------------------------------- checking

    def _quiet(
        self, w: World, fn: Callable[[], Any], jar: dict[str, str] | None, *, probe: bool = True
    ) -> Outcome:
        """Run a cell that must change nothing, and say what it changed
        (without `probe`, what the sockets were sent is read after its row)."""
        before = stored(self.b.db, w.code)
        cookies = dict(jar) if jar is not None else None
        got = fn()
        out = Outcome(got)
        after = stored(self.b.db, w.code)
        out.changed += [f"stored {k}" for k in before if before[k] != after[k]]
        if jar is not None and jar != cookies:
            out.changed.append("the asker's cookies")
        if probe:
            out.changed += self._sent(w)
        return out

    def _sent(self, w: World) -> list[str]:
        """What the open sockets were sent since they were last read."""
        out = []
        for role, tab in list(w.tabs.items()):
            try:
                frames = tab.probe()
            except Closed as gone:
                out.append(f"{role}'s socket closed ({gone.code})")
                del w.tabs[role]
                continue
            if frames:
                out.append(f"{role} was sent {_short(frames)}")
        return out

    def _drain(self, w: World) -> None:
        for role, tab in list(w.tabs.items()):
            try:
                tab.probe()
            except Closed:
                del w.tabs[role]

    # ---------------------------------------------------------------- cells

    def _http(self, w: World, row: str, role: str, jar: dict[str, str]) -> Any:
        method, path = t.route_of(row).split(" ", 1)
        code = w.code_for(role)
        path = path.replace("{code}", code).replace("{game_id}", str(w.game))
        path = path.replace("{person}", w.person).replace("{other}", w.other)
        path = path.replace("{stamp}/{path:path}", "0123456789ab/js/main.js")
        if method == "WS":
            return refused_at_door(self.b, code, w.tokens[role])
        if method == "MOUNT":
            method = "GET"
        self.n += 1
        bodies: dict[str, Any] = {
            "/api/rooms": {"game": "tiny", "name": "New"},
            f"/api/rooms/{code}/join": {"name": "Joe"},
            f"/api/rooms/{code}/claim": {"claim": "not a link"},
            "/api/qr": {"text": "http://x/r/ABC"},
            "/api/accounts/signup": {"name": f"new{self.n}x{id(w) % 997}", "password": PASSWORD},
            "/api/accounts/signin": {"name": "nobody here", "password": "wrong password"},
            "/api/replay": {"game": "tiny"},
            # each role's browser its own endpoint: one never becomes another's
            "/api/me/push": {**PUSH_SUBSCRIPTION, "endpoint": f"{PUSH_ENDPOINT}-{role}"},
        }
        with self.b.as_(jar) as c:
            r = c.request(method, path, json=bodies.get(path))
        if r.status_code >= 400:  # a refusal: its status and its code
            detail = r.json().get("detail") if "json" in r.headers.get("content-type", "") else None
            if isinstance(detail, dict) and "code" in detail:
                return f"{r.status_code} {detail['code']}"
        if r.status_code == 200 and path.endswith("/replay"):
            return f"200 {r.json()['perspective']}"
        if r.status_code == 200 and row.startswith(JOIN):
            ticket = r.json()
            if ticket["player"] != w.players.get(role):
                return "200 new"
            w.tokens[role] = ticket["token"]  # their own place, on a new token
            return "200 own"
        return r.status_code

    def _socket(self, w: World, row: str, role: str) -> tuple[Any, list[dict[str, Any]]]:
        fields = t.fields(row, w, role)
        kind = t.route_of(row)
        tab = w.tabs.get(role)
        if tab is not None:
            got, before = tab.command(kind, fields)
            if got.startswith("closed"):
                del w.tabs[role]
            return got, before
        return self.b.once(w.code_for(role), w.tokens[role], kind, fields), []

    # ---------------------------------------------------------------- a state

    def _run(self, state: str) -> StateRun:
        run = StateRun()
        w = build(self.b, state)
        fresh: list[tuple[str, str]] = []
        loud: list[tuple[str, str]] = []
        try:
            base = histories(self.b, w)
            reads: list[str] = []
            writes: list[str] = []
            for row in t.HTTP:
                if row in (JOIN, JOIN_LOCKED, *IDENTITY_ROWS):
                    continue
                method = row.split(" ", 1)[0]
                if method in ("GET", "MOUNT", "WS"):
                    reads.append(row)
                else:
                    writes.append(row)
                # the sockets are read after each cell of a row with a pending
                # cell (what it sends is its own), else once after the row
                each = t.has_pending(t.HTTP, row, state)
                for role in ROLES:
                    jar = w.cookies[role]
                    want = t.expect(t.HTTP, row, state, role).want
                    if _succeeds(want) and method in ("POST", "PUT", "DELETE"):
                        # a room elsewhere, a QR code, a push subscription:
                        # nothing of this room's, and nobody here told
                        run.cells["http", row, role] = Outcome(self._http(w, row, role, jar))
                        continue
                    run.cells["http", row, role] = self._quiet(
                        w,
                        lambda row=row, role=role, jar=jar: self._http(w, row, role, jar),
                        jar,
                        probe=each,
                    )
                run.sent["http", row] = self._sent(w)
            # everyone's history, read once after the reads and once after the
            # writes (each cell's own check above reads the database itself)
            changed = self._history_changes(w, base)
            run.rows.update((("http", row), changed) for row in reads)
            for row in t.SOCKET:
                for role in ROLES:
                    want = t.expect(t.SOCKET, row, state, role).want
                    if _succeeds(want) and row not in t.QUIET_OK:
                        (loud if row in t.LOUD_OK and want == "ok" else fresh).append((row, role))
                        continue
                    run.cells["socket", row, role] = self._socket_quiet(
                        w, row, role, probe=t.has_pending(t.SOCKET, row, state)
                    )
                run.sent["socket", row] = self._sent(w)
            changed = self._history_changes(w, base)
            run.rows.update((("http", row), changed) for row in writes)
            run.rows.update((("socket", row), changed) for row in t.SOCKET)
            for row, role in loud:
                run.cells["socket", row, role] = Outcome(self._socket(w, row, role)[0])
                self._drain(w)
            self._joins(w, run)
            for row in IDENTITY_ROWS:
                for role in ROLES:
                    got = self._http(w, row, role, dict(w.cookies[role]))
                    run.cells["http", row, role] = Outcome(got)
        finally:
            w.close()
        for group in t.one_room_each(fresh):
            w = build(self.b, state, fresh=True)
            try:
                for row, role in group:
                    run.cells["socket", row, role] = Outcome(self._socket(w, row, role)[0])
            finally:
                w.close()
        return run

    def _socket_quiet(self, w: World, row: str, role: str, *, probe: bool) -> Outcome:
        asked: list[list[dict[str, Any]]] = []

        def ask() -> Any:
            got, before = self._socket(w, row, role)
            asked.append(before)
            return got

        out = self._quiet(w, ask, None, probe=probe)
        if asked[0] and not _succeeds(out.got):
            out.changed.append(f"the asker was sent {_short(asked[0])} before its answer")
        return out

    def _history_changes(self, w: World, base: dict[str, Any]) -> list[str]:
        now = histories(self.b, w)
        return [role for role in base if now[role] != base[role]]

    def _joins(self, w: World, run: StateRun) -> None:
        """Refusals first (the room as built), then the host locks the room:
        the refusals of a locked room, then everyone's answer to it; the host
        unlocks, and everyone's answer to the open room."""

        def refusals(row: str) -> list[str]:
            roles = []
            for role in ROLES:
                if _succeeds(t.expect(t.HTTP, row, w.state, role).want):
                    roles.append(role)
                    continue
                jar = w.cookies[role]
                run.cells["http", row, role] = self._quiet(
                    w, lambda role=role, jar=jar: self._http(w, row, role, jar), jar
                )
            return roles

        def successes(row: str, roles: list[str]) -> None:
            for role in roles:
                run.cells["http", row, role] = Outcome(self._http(w, row, role, w.cookies[role]))
                self._drain(w)

        open_ok = refusals(JOIN)
        host = w.tabs.get("host")
        locked = (
            host is not None
            and host.command("set_settings", {"settings": {"locked": True}})[0] == "ok"
        )
        self._drain(w)  # the room told of the lock
        locked_ok = refusals(JOIN_LOCKED)
        successes(JOIN_LOCKED, locked_ok)
        if locked:
            unlock = {"settings": {"locked": False}}
            assert self.b.once(w.code, w.tokens["host"], "set_settings", unlock) == "ok"
        successes(JOIN, open_ok)


def _short(frames: list[dict[str, Any]]) -> str:
    out = []
    for f in frames:
        if "event" in f:
            e = f["event"]
            out.append(f"event {e.get('type')}/{e.get('what', '')}")
        elif "view" in f:
            out.append("a view")
        else:
            out.append(str(f)[:80])
    return ", ".join(out)


# ------------------------------------------------------------------ the app


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    path: Path = tmp_path_factory.mktemp("matrix") / "cardroom.db"
    url = f"sqlite+aiosqlite:///{path}"
    asyncio.run(migrate(url))
    from app.games import GAMES

    GAMES["tiny"] = WideTiny()
    settings = Settings(
        **OPEN_DOORS,
        database_url=url,
        max_sockets_per_seat=100,
        max_messages_per_second=100_000,
        idle_room_close_after=3600,
    )
    app = create_app(settings)
    clock = TestClock()
    app.state.rooms.clock = clock  # the rooms' wall clock: moved forward, never waited for
    try:
        with TestClient(app) as c:
            # sign-ups and sign-ins by the hundred: a cheap hash for the test
            app.state.accounts.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
            yield Matrix(Browsers(c, clock, path))
    finally:
        GAMES.pop("tiny", None)


# ------------------------------------------------------------- the tables


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


def test_every_route_and_command_has_a_row() -> None:
    app = create_app(Settings(**OPEN_DOORS))
    rows = {t.route_of(row) for row in t.HTTP}
    assert _routes(app) == rows, "a route without a row, or a row without a route"
    commands = {t.route_of(row) for row in t.SOCKET}
    assert commands == {*COMMANDS, "action"}, "a command without a row, or a row without one"


def test_a_route_without_a_row_fails_the_matrix() -> None:
    """The check above fails for a new socket route in a listed router, a new
    page route left out of the schema, and a router included but not listed."""
    app = create_app(Settings(**OPEN_DOORS))
    extra = APIRouter(prefix="/more")

    @extra.websocket("/ws/{code}")
    async def more_socket() -> None: ...

    app.include_router(extra)
    found = _routes(app, (*ROUTERS, extra))
    assert found - {t.route_of(row) for row in t.HTTP} == {"WS /more/ws/{code}"}
    n = len(ROUTERS)
    with pytest.raises(AssertionError, match=f"{n + 1} routers, and {n} are listed"):
        _routes(app)
    bare = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)

    @bare.get("/hidden", include_in_schema=False)
    async def hidden() -> None: ...

    assert _routes(bare, ()) == {"GET /hidden"}


def _rows() -> list[Any]:
    out = []
    for state in STATES:
        for kind, table in (("http", t.HTTP), ("socket", t.SOCKET)):
            out += [pytest.param(state, kind, row, id=f"{state}-{row}") for row in table]
    return out


def _pending() -> list[Any]:
    out = []
    for state in STATES:
        for kind, table in (("http", t.HTTP), ("socket", t.SOCKET)):
            for row in table:
                for role in ROLES:
                    cell = t.expect(table, row, state, role)
                    if cell.pending is not None:
                        mark = pytest.mark.xfail(strict=True, reason=cell.pending)
                        out.append(
                            pytest.param(
                                state, kind, row, role, marks=mark, id=f"{state}-{row}-{role}"
                            )
                        )
    return out


@pytest.mark.parametrize(("state", "kind", "row"), _rows())
def test_row(matrix: Matrix, state: str, kind: str, row: str) -> None:
    """Every role's answer in this state, but the cells still pending; and
    no refusal changed anything."""
    table = t.HTTP if kind == "http" else t.SOCKET
    run = matrix.of(state)
    want, got, changed = {}, {}, {}
    for role in ROLES:
        cell = t.expect(table, row, state, role)
        if cell.pending is not None:
            continue
        out = run.cells[kind, row, role]
        want[role], got[role] = cell.want, out.got
        if out.changed:
            changed[role] = out.changed
    assert got == want
    assert changed == {}, "refusals that changed something"
    assert run.sent.get((kind, row), []) == [], "what the row's cells sent the open sockets"
    assert run.rows.get((kind, row), []) == [], (
        "histories a refusal changed (this row's or another's)"
    )


PENDING = _pending()
if PENDING:  # cells the app does not give yet (none now): each an xfail(strict)

    @pytest.mark.parametrize(("state", "kind", "row", "role"), PENDING)
    def test_pending_cell(matrix: Matrix, state: str, kind: str, row: str, role: str) -> None:
        table = t.HTTP if kind == "http" else t.SOCKET
        out = matrix.of(state).cells[kind, row, role]
        assert out.got == t.expect(table, row, state, role).want
        assert out.changed == []
