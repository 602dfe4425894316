"""The app factory: static client, invite links, optional routers, recovery at
startup, the collector's settings."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from datetime import timedelta
from pathlib import Path

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from websockets.sync.client import connect as ws_connect

from app import main
from app.core.config import Settings
from app.db.models import Account, LoginSession, utcnow
from app.main import GC_YOUNG_THRESHOLD, STATIC_DIR, create_app
from app.store.records import MemoryRecords
from tests.api.client import connect, create, hello
from tests.api.conftest import OPEN_DOORS
from tests.db.backends import migrate
from tests.services import serving


def test_client_and_invite_links_serve_index(client: TestClient) -> None:
    if not (STATIC_DIR / "index.html").is_file():
        return
    index = (STATIC_DIR / "index.html").read_bytes()
    assert client.get("/").content == index
    assert client.get("/r/ABC234").content == index
    assert client.get("/api/health").json()["status"] == "ok"  # not shadowed by the mount


def test_a_restarted_app_recovers_rooms_from_its_records(tiny: None) -> None:
    records = MemoryRecords()
    settings = Settings()
    with TestClient(create_app(settings, records)) as c:
        t = create(c, "tiny", settings={"bot_delay": 0, "posso_window": 15})
        with connect(c, t["code"], t["token"]) as ann:
            ann.recv()
            ann.ok(ann.cmd("add_bot"))
            ann.ok(ann.cmd("start"))
            hand = ann.game["hand"]
            ann.ok(ann.act({"type": "bid", "n": 1}))
    # a new process over the same records: same room, same seat, same hand
    with (
        TestClient(create_app(settings, records)) as c2,
        connect(c2, t["code"], t["token"], since=3) as ann2,
    ):
        view = ann2.until_view(lambda v: True)
        assert view["you"]["seat"] == 0
        assert view["game"]["hand"] == hand and view["game"]["my_bid"] == 1
        assert view["room"]["status"] == "playing"


def test_rooms_nobody_connects_to_close_after_the_idle_limit(tiny: None) -> None:
    records = MemoryRecords()
    with TestClient(create_app(Settings(idle_room_close_after=1.0), records)) as c:
        used = create(c, "tiny")
        with connect(c, used["code"], used["token"]) as ann:
            ann.recv()
            quiet = create(c, "tiny")
            deadline = time.monotonic() + 10
            while c.get(f"/api/rooms/{quiet['code']}").status_code != 404:
                assert time.monotonic() < deadline, "the idle room never closed"
                time.sleep(0.05)
            assert records.rooms[quiet["code"]].closed
            assert c.get(f"/api/rooms/{used['code']}").status_code == 200  # in use


def test_the_app_purges_expired_sessions_while_it_runs(tmp_path: Path) -> None:
    """Over a real (SQLite) database: an expired session is gone soon after
    the app starts, and then every SESSION_PURGE_EVERY seconds; a live one stays."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'cardroom.db'}"
    asyncio.run(migrate(url))
    settings = Settings(data_dir=tmp_path, session_purge_every=0.05, **OPEN_DOORS)
    with TestClient(create_app(settings)) as c:
        for name in ("Ann", "Bob"):
            body = {"name": name, "password": "correct horse"}
            assert c.post("/api/accounts/signup", json=body).status_code == 201
        accounts = c.app.state.accounts  # type: ignore[attr-defined]

        async def expire_ann() -> None:
            async with accounts.sessions.begin() as s:
                ann = select(Account.id).where(Account.name == "Ann").scalar_subquery()
                await s.execute(
                    update(LoginSession)
                    .where(LoginSession.account_id == ann)
                    .values(expires_at=utcnow() - timedelta(seconds=1))
                )

        async def left() -> list[str]:
            async with accounts.sessions() as s:
                rows = await s.execute(
                    select(Account.name).join(LoginSession, LoginSession.account_id == Account.id)
                )
                return sorted(rows.scalars())

        c.portal.call(expire_ann)  # type: ignore[union-attr]
        deadline = time.monotonic() + 10
        while c.portal.call(left) != ["Bob"]:  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the expired session was never purged"
            time.sleep(0.05)


def test_the_app_raises_the_young_gc_threshold_while_it_runs_and_puts_it_back() -> None:
    """Process-wide state: a server tunes it for its rooms (app/main.py), and a
    process that outlives the app (the test run, an embedding program) gets
    its own setting back."""
    before = gc.get_threshold()
    with TestClient(create_app(Settings(), MemoryRecords())):
        assert gc.get_threshold() == (GC_YOUNG_THRESHOLD, *before[1:])
    assert gc.get_threshold() == before


def test_cycles_that_sockets_leave_behind_are_collected_before_they_are_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """uvicorn leaves each upgraded connection's HTTP protocol in a reference
    cycle.  The app freezes the heap every GC_FREEZE_EVERY seconds and young
    passes are rare (app/main.py), so unless a young pass runs first, every
    socket ever opened - to a room or to no route at all - would stay in memory
    until the next full sweep: a flood of connections would grow the heap."""
    monkeypatch.setattr(main, "GC_FREEZE_EVERY", 0.05)
    app = create_app(Settings(), MemoryRecords())
    was_enabled = gc.isenabled()
    gc.disable()  # only the app's own collections run, so only they can pass this
    try:
        with serving(app, http="httptools") as base:
            room = httpx.post(f"http://{base}/api/rooms", json={"game": "bigtwo", "name": "Ann"})
            ticket = room.json()
            for _ in range(10):
                with ws_connect(f"ws://{base}/ws/rooms/{ticket['code']}") as ws:
                    ws.send(orjson.dumps(hello(ticket["token"])).decode())
                    ws.recv()
                with contextlib.suppress(Exception), ws_connect(f"ws://{base}/ws/nowhere") as ws:
                    ws.recv()
            time.sleep(0.3)  # a few housekeeping rounds
    finally:
        gc.unfreeze()  # what was frozen is countable again
        left = sum(type(o) is HttpToolsProtocol for o in gc.get_objects())
        if was_enabled:
            gc.enable()
    assert left <= 2, f"{left} abandoned HTTP protocols were kept, not collected"
