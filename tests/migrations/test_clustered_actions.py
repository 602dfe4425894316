"""Migration 0014_clustered_actions, on SQLite and PostgreSQL: SQLite's action
log becomes one B-tree clustered on (game_id, seq) with every row kept; the
release before still appends and reads on it; its key and foreign key still
hold; and down and up again keep every action.  PostgreSQL's is untouched."""

from __future__ import annotations

from sqlalchemy import pool, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.records import DbRecords
from app.db.session import make_engine
from app.store.records import PlayerRecord, RoomRecord
from tests.db.backends import migrate
from tests.migrations import test_migrations
from tests.migrations.test_public_ids import OLD_GAME, _old_room

empty_url = test_migrations.empty_url

#: how the release before appends an action (app/db/records.py at 0013)
OLD_APPEND = text(
    "INSERT INTO actions (game_id, seq, seat, action, created_at, epoch)"
    ' VALUES (:g, :s, 0, \'{"type": "pass"}\', CURRENT_TIMESTAMP, 0)'
)
ACTIONS = text("SELECT game_id, seq, seat, action, created_at, epoch FROM actions")


async def _clustered(engine: AsyncEngine) -> bool | None:
    """SQLite: whether `actions` is WITHOUT ROWID; None elsewhere."""
    if engine.dialect.name != "sqlite":
        return None
    async with engine.connect() as conn:
        sql = await conn.scalar(text("SELECT sql FROM sqlite_master WHERE name = 'actions'"))
    return "WITHOUT ROWID" in sql


async def test_the_log_is_clustered_keeps_every_action_and_the_release_before_runs_on(
    empty_url: str,
) -> None:
    await migrate(empty_url, "0013_public_game_ids")
    engine = make_engine(empty_url, poolclass=pool.NullPool)
    try:
        async with engine.begin() as conn:  # a log as the release before wrote it
            room = await _old_room(conn, "OLD234")
            games = [(await conn.execute(OLD_GAME, {"r": room})).scalar_one() for _ in range(3)]
            for g in games:
                for s in range(40):
                    await conn.execute(OLD_APPEND, {"g": g, "s": s})
        async with engine.connect() as conn:
            before = sorted((await conn.execute(ACTIONS)).all())
        assert await _clustered(engine) in (False, None)
        await migrate(empty_url)
        assert await _clustered(engine) in (True, None)
        async with engine.connect() as conn:
            assert sorted((await conn.execute(ACTIONS)).all()) == before
            floor = await conn.scalar(text("SELECT revision FROM schema_floor"))
        assert floor == "0011_schema_floor"  # the release before runs on it
        async with engine.begin() as conn:
            await conn.execute(OLD_APPEND, {"g": games[0], "s": 40})
        for bad in ({"g": games[0], "s": 40}, {"g": 10**9, "s": 0}):  # key, then foreign key
            try:
                async with engine.begin() as conn:
                    if engine.dialect.name == "sqlite":
                        await conn.execute(text("PRAGMA foreign_keys=ON"))
                    await conn.execute(OLD_APPEND, bad)
                raise AssertionError(f"the log took {bad}")
            except IntegrityError:
                pass
        # deleting a game still takes its actions with it
        async with engine.begin() as conn:
            if engine.dialect.name == "sqlite":
                await conn.execute(text("PRAGMA foreign_keys=ON"))
            await conn.execute(text("DELETE FROM games WHERE id = :g"), {"g": games[2]})
        async with engine.connect() as conn:
            left = sorted((await conn.execute(ACTIONS)).all())
        assert [r for r in before if r[0] != games[2]] == [r for r in left if r[1] < 40]
        # down and up again keep every action
        await migrate(empty_url, "0013_public_game_ids", down=True)
        assert await _clustered(engine) in (False, None)
        async with engine.connect() as conn:
            assert sorted((await conn.execute(ACTIONS)).all()) == left
        await migrate(empty_url)
        async with engine.connect() as conn:
            assert sorted((await conn.execute(ACTIONS)).all()) == left
    finally:
        await engine.dispose()
    # this release appends and reads its games on the rebuilt table
    records = DbRecords(make_engine(empty_url))
    try:
        await records.save_room(
            RoomRecord("NEW234", "bigtwo", {}, {}, "p0", [PlayerRecord("p0", "Ann", "h", 0)])
        )
        game = await records.start_game("NEW234", "bigtwo", {}, 1, ["p0"])
        for s in range(5):
            await records.append_action(game, s, 0, {"type": "pass", "n": s})
        assert [a for _, a in await records.game_actions(game)] == [
            {"type": "pass", "n": s} for s in range(5)
        ]
    finally:
        await records.close()
