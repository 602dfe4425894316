"""A backup taken while games go on restores, and the card room plays on
from it (app/db/backup.py, `make backup`), on SQLite and on PostgreSQL.

A real server plays an evening: a Posso game and a Big Two game finish (a
score sheet, a person's records), a Big Two game waits on its host's turn,
and three rooms of bots are mid-game when `python -m app.db.backup` runs.
The backup is restored into a fresh data directory (SQLite: the one file;
PostgreSQL: `pg_restore` into an empty database) and a new server started
on it: every finished game, score sheet and record is there as it was, the
waiting game is played to its end by its host, and the bots' rooms finish
their games.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from app.api.identity import GUEST_COOKIE, guest_key
from app.db.backup import libpq_url
from app.db.people import person_of
from tests.browser.play import room_command, until_finished
from tests.db.backends import (
    create_pg_database,
    drop_pg_database,
    migrate,
    pg_database_url,
    require_postgres,
)
from tests.integration.test_recovery import Server
from tests.services import free_port, missing

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parents[2]
HOST = "guest-backup-host-" + "h" * 40  # the finished games' host
WAITER = "guest-backup-wait-" + "w" * 40  # the host whose turn the game waits on
BOTS = "guest-backup-bots-" + "b" * 40  # hosts the rooms of bots
#: stand-ins at once for a host who is not there, bots at once
AWAY = {"bot_delay": 0, "disconnect_grace": 0, "posso_window": 1, "posso_answer": 1}


def _open(base: str, guest: str, game: str, settings: dict[str, Any], **more: Any) -> Any:
    with httpx.Client(base_url=base, cookies={GUEST_COOKIE: guest}) as http:
        made = http.post(
            "/api/rooms", json={"game": game, "name": "Host", "settings": settings, **more}
        )
        assert made.status_code == 200, made.text
        return made.json()


def _what_is_kept(base: str) -> dict[str, Any]:
    """The host's finished games, each score sheet, and their records."""
    me = person_of(guest_key(HOST), None)
    with httpx.Client(base_url=base, cookies={GUEST_COOKIE: HOST}) as http:
        games = http.get("/api/me/games").json()["games"]
        sheets = {
            g["id"]: http.get(f"/api/history/games/{g['id']}/sheet").json()
            for g in games
            if g["game"] == "posso"
        }
        records = http.get(f"/api/people/{me}").json()
    return {"games": games, "sheets": sheets, "records": records}


def _play_seat_to_the_end(base: str, code: str, token: str, seed: int) -> None:
    rng = random.Random(seed)
    with connect(base.replace("http", "ws") + f"/ws/rooms/{code}", max_size=2**22) as ws:
        ws.send(json.dumps({"auth": token}))
        next_id = 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            msg = json.loads(ws.recv(timeout=20))
            assert "error" not in msg, msg
            view = msg.get("view")
            if view is None:
                continue
            if view["room"]["status"] == "finished":
                return
            assert view["room"]["status"] == "playing", view["room"]["status"]
            if view.get("legal"):
                next_id += 1
                ws.send(json.dumps({"id": next_id, "action": rng.choice(view["legal"])}))
        raise AssertionError("the restored game did not end")


def _backup(url: str, dest: Path) -> None:
    env = {**os.environ, "DATABASE_URL": url}
    done = subprocess.run(
        [sys.executable, "-m", "app.db.backup", str(dest)],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(dest)


def _server(url: str) -> Server:
    server = Server({**os.environ, "DATABASE_URL": url}, free_port())
    server.start()
    return server


class Sqlite:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp

    def fresh(self) -> str:
        path = self.tmp / "live" / "cardroom.db"
        path.parent.mkdir()
        url = f"sqlite+aiosqlite:///{path}"
        asyncio.run(migrate(url))
        return url

    def restore(self, backup: Path) -> str:
        """A fresh data directory holding the backup as its database."""
        data = self.tmp / "restored"
        data.mkdir()
        shutil.copy(backup, data / "cardroom.db")
        return f"sqlite+aiosqlite:///{data / 'cardroom.db'}"

    def close(self) -> None:
        pass


class Postgres:
    def __init__(self) -> None:
        require_postgres()
        if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
            missing("pg_dump/pg_restore are not installed (apt-get install postgresql-client)")
        self.names: list[str] = []

    def _new(self) -> str:
        name = asyncio.run(create_pg_database())
        self.names.append(name)
        return pg_database_url(name)

    def fresh(self) -> str:
        url = self._new()
        asyncio.run(migrate(url))
        return url

    def restore(self, backup: Path) -> str:
        """An empty database, restored from the dump as README.md says."""
        url = self._new()
        done = subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", "--dbname", libpq_url(url),
             str(backup)],
            capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return url

    def close(self) -> None:
        for name in self.names:
            asyncio.run(drop_pg_database(name))


#: PostgreSQL's run (pg_dump, pg_restore, two databases) is the longer: `make test-slow`
@pytest.fixture(
    params=["sqlite", pytest.param("postgres", marks=[pytest.mark.postgres, pytest.mark.slow])]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Sqlite | Postgres]:
    made = Sqlite(tmp_path) if request.param == "sqlite" else Postgres()
    try:
        yield made
    finally:
        made.close()


def test_a_backup_taken_during_play_restores_and_plays_on(
    backend: Sqlite | Postgres, tmp_path: Path
) -> None:
    live = _server(backend.fresh())
    try:
        base = live.base
        posso = _open(base, HOST, "posso", AWAY, options={"start_hand": 8, "cutting": "off"})
        for _ in range(2):
            room_command(base, posso["code"], posso["token"], "add_bot")
        room_command(base, posso["code"], posso["token"], "start")
        bigtwo = _open(base, HOST, "bigtwo", AWAY)
        room_command(base, bigtwo["code"], bigtwo["token"], "start")
        # the host stays: the game waits on their turn (or goes round to it)
        waiting = _open(base, WAITER, "bigtwo", {"bot_delay": 0, "disconnect_grace": 600})
        room_command(base, waiting["code"], waiting["token"], "start")
        with httpx.Client(base_url=base) as http:
            until_finished(http, posso["code"], 1)
            until_finished(http, bigtwo["code"], 1)
            kept = _what_is_kept(base)
            assert len(kept["games"]) == 2 and len(kept["sheets"]) == 1
            assert all(g["status"] == "finished" for g in kept["games"])
            # bots playing on while the backup runs
            busy = [_open(base, BOTS, "bigtwo", {**AWAY, "bot_delay": 0.05}) for _ in range(3)]
            for room in busy:
                room_command(base, room["code"], room["token"], "start")

            def status(code: str) -> str:
                return str(http.get(f"/api/rooms/{code}").json()["room"]["status"])

            backup = tmp_path / "backups" / "cardroom.backup"
            _backup(live.env["DATABASE_URL"], backup)
            assert [status(r["code"]) for r in busy] == ["playing"] * 3, "play stopped"
            assert status(waiting["code"]) == "playing"
    finally:
        live.stop()

    restored = _server(backend.restore(backup))
    try:
        assert _what_is_kept(restored.base) == kept
        _play_seat_to_the_end(restored.base, waiting["code"], waiting["token"], seed=37)
        with httpx.Client(base_url=restored.base) as http:
            for room in busy:
                until_finished(http, room["code"], 1)
    finally:
        restored.stop()
