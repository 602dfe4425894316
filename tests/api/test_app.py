"""The app factory: static client, invite links, optional routers, recovery at
startup, the collector's settings."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import subprocess
import sys
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
from app.api.client import build_id, stamped_index
from app.core.config import Settings
from app.db.models import Account, LoginSession, utcnow
from app.main import GC_YOUNG_THRESHOLD, STATIC_DIR, UNFENCED, create_app
from app.store.records import MemoryRecords
from tests.api.client import connect, create, hello, join
from tests.api.conftest import OPEN_DOORS
from tests.db.backends import migrate
from tests.services import serving


def test_client_and_invite_links_serve_index(client: TestClient) -> None:
    if not (STATIC_DIR / "index.html").is_file():
        return
    index = stamped_index((STATIC_DIR / "index.html").read_text(), build_id(STATIC_DIR))
    assert client.get("/").text == index
    assert client.get("/r/ABC234").text == index
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


def test_the_lifespan_owns_the_pool_strong_bots_think_in() -> None:
    """Open while the app runs (its worker starts with the first search, at a
    lower priority), closed with it, its worker gone."""
    app = create_app(Settings(bot_workers=1, bot_queue=2), MemoryRecords())
    thinker = app.state.rooms.thinker
    assert thinker.closed, "nothing is taken before the app starts"

    async def worker() -> tuple[int, int]:
        pid = await thinker.call(10, os.getpid)
        niceness = await thinker.call(10, os.nice, 0)
        return pid, niceness

    with TestClient(app) as c:
        assert not thinker.closed
        pid, niceness = c.portal.call(worker)
        assert pid != os.getpid() and niceness > os.nice(0)
    assert thinker.closed
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


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


def test_the_collectors_housekeeping_sleeps_while_nobody_is_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server everyone has left must not wake every second to freeze a heap
    nothing changes (bench/idle.py); a request or a socket wakes it again."""
    monkeypatch.setattr(main, "GC_FREEZE_EVERY", 0.02)
    freezes = 0
    real_freeze = gc.freeze

    def counting() -> None:
        nonlocal freezes
        freezes += 1
        real_freeze()

    monkeypatch.setattr(gc, "freeze", counting)
    app = create_app(Settings(), MemoryRecords())
    with serving(app) as base:
        time.sleep(0.2)  # start-up's requests settle; then nobody comes
        idle_from = freezes
        time.sleep(0.5)
        assert freezes - idle_from <= 1, "asleep while nobody is there"
        room = httpx.post(f"http://{base}/api/rooms", json={"game": "bigtwo", "name": "Ann"})
        ticket = room.json()
        with ws_connect(f"ws://{base}/ws/rooms/{ticket['code']}") as ws:
            ws.send(orjson.dumps(hello(ticket["token"])).decode())
            ws.recv()
            before = freezes
            time.sleep(0.3)
            assert freezes - before >= 5, "someone is here: the heap is frozen each interval"
    gc.unfreeze()


def test_a_resume_after_a_restart_gets_a_full_view_never_the_new_process_events(
    tiny: None,
) -> None:
    """Versions start again at 0 in a restarted process: a `since` from before
    the restart names another incarnation of the room, so the tab gets a full
    view - not the new process's events that happen to carry later numbers."""
    records = MemoryRecords()
    settings = Settings()
    with TestClient(create_app(settings, records)) as c:
        t = create(c, "tiny", settings={"bot_delay": 0})
        with connect(c, t["code"], t["token"]) as ann:
            ann.recv()
            join(c, t["code"], "Bob", spectator=True)
            assert ann.recv()["event"]["name"] == "Bob"
            since, inc = ann.v, ann.inc
    assert since is not None and inc is not None
    with (
        TestClient(create_app(settings, records)) as c2,
        connect(c2, t["code"], t["token"]) as ann2,
    ):
        ann2.recv()
        for i in range(since + 3):  # the new process's versions pass the old one
            join(c2, t["code"], f"W{i}", spectator=True)
        while ann2.recv().get("event", {}).get("name") != f"W{since + 2}":
            pass
        assert ann2.inc != inc and ann2.v is not None and ann2.v > since + 2
        with connect(c2, t["code"], t["token"], since=since, inc=inc) as back:
            first = back.recv()
            assert "view" in first and first["inc"] == ann2.inc, first
        # a resume in the new incarnation still gets what it missed
        mark = ann2.v
        join(c2, t["code"], "Late", spectator=True)
        with connect(c2, t["code"], t["token"], since=mark, inc=ann2.inc) as back:
            first = back.recv()
            assert first["event"]["what"] == "joined" and first["event"]["name"] == "Late"


def test_several_processes_on_sqlite_are_refused_with_one_message(tmp_path: Path) -> None:
    """REDIS_URL with SQLite would run several owners with no fence: the server
    does not start, and says why in one line (no traceback)."""
    env = {
        **os.environ,
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'x.db'}",
    }
    done = subprocess.run(
        [sys.executable, "-c", "import app.main"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [UNFENCED.format(dialect="sqlite")], done.stderr
    assert not (tmp_path / "x.db").exists()  # refused before anything was opened
    with pytest.raises(SystemExit, match="DATABASE_URL is sqlite"):
        create_app(Settings(redis_url="redis://127.0.0.1:6379/0", data_dir=tmp_path))


def test_a_deal_cycle_deals_the_same_games_over_and_over() -> None:
    """DEAL_CYCLE with DEAL_SEED: bench/guard.py's windows each deal the same
    games, so they differ only by the machine."""

    def seeds(**cycle: int) -> list[int]:
        app = create_app(Settings(deal_seed=36, **cycle), MemoryRecords())
        return [app.state.rooms.seeds() for _ in range(7)]

    plain, cycled = seeds(), seeds(deal_cycle=3)
    assert len(set(plain)) == 7
    assert cycled == plain[:3] * 2 + plain[:1]
