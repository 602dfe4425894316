"""Migration 0006_guest_hashes: guest cookies stored by earlier releases are
replaced by their hashes - the same the server computes from the cookie - on
SQLite and PostgreSQL; a value that is a hash already is left alone, so the
contract step may run it again."""

from __future__ import annotations

import importlib.util

from sqlalchemy import pool, text

from app.api.identity import guest_key
from app.db.session import make_engine
from tests.db.backends import ROOT, migrate
from tests.migrations.test_migrations import empty_url  # noqa: F401 - the fixture

COOKIE = "Zq3-raw-cookie-value-of-43-characters-xxxxx"


async def test_raw_guest_cookies_become_their_hashes(empty_url: str) -> None:  # noqa: F811
    url = empty_url
    await migrate(url, "0003")
    engine = make_engine(url, poolclass=pool.NullPool)
    already = guest_key("another browser")
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO rooms (id, code, game, options, settings, tally, closed,"
                    " created_at, updated_at) VALUES (1, 'ROOM01', 'posso', '{}', '{}', '{}',"
                    " false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            for i, guest in enumerate([COOKIE, COOKIE, already, None]):
                await conn.execute(
                    text(
                        "INSERT INTO players (room_id, player_id, position, name, token_hash,"
                        " is_bot, guest_id, present) VALUES (1, :pid, :i, 'P', '', false, :g, true)"
                    ),
                    {"pid": f"p{i}", "i": i, "g": guest},
                )
            await conn.execute(
                text(
                    "INSERT INTO accounts (id, name, name_key, password_hash, created_at)"
                    " VALUES (1, 'Ana', 'ana', 'x', CURRENT_TIMESTAMP)"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO login_sessions (token_hash, account_id, guest_id, created_at,"
                    " expires_at) VALUES ('t', 1, :g, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {"g": COOKIE},
            )
        await migrate(url)
        async with engine.connect() as conn:
            players = (
                await conn.execute(text("SELECT guest_id FROM players ORDER BY position"))
            ).scalars()
            assert list(players) == [guest_key(COOKIE), guest_key(COOKIE), already, None]
            sessions = (await conn.execute(text("SELECT guest_id FROM login_sessions"))).scalars()
            assert list(sessions) == [guest_key(COOKIE)]
            # the contract step runs the same function again: nothing changes
            again = await conn.run_sync(lambda c: _migration().hash_raw_guests(c))
            assert again == 0
    finally:
        await engine.dispose()


def _migration() -> object:
    path = ROOT / "migrations" / "versions" / "0006_guest_hashes.py"
    spec = importlib.util.spec_from_file_location("guest_hashes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
