"""Migration 0013_public_game_ids, on SQLite and PostgreSQL: every stored game
gets a public id of its own; the release before keeps running on the upgraded
schema (its games start without one and are shown by their number); and going
down and up again keeps every game."""

from __future__ import annotations

from sqlalchemy import pool, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db import history as h
from app.db.records import DbRecords
from app.db.session import make_engine
from app.store.records import PlayerRecord, RoomRecord
from tests.db.backends import migrate
from tests.migrations import test_migrations

empty_url = test_migrations.empty_url

#: how the release before 0013 starts a game: every column but public_id
OLD_GAME = text(
    "INSERT INTO games (room_id, game, options, seed, seats, started_at)"
    " VALUES (:r, 'bigtwo', '{}', '7', '[\"p0\"]', CURRENT_TIMESTAMP) RETURNING id"
)


async def _old_room(conn: AsyncConnection, code: str) -> int:
    found = await conn.execute(
        text(
            "INSERT INTO rooms (code, game, options, settings, tally, closed,"
            " created_at, updated_at) VALUES (:c, 'bigtwo', '{}', '{}', '{}',"
            " false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP) RETURNING id"
        ),
        {"c": code},
    )
    return int(found.scalar_one())


async def test_public_ids_fill_every_game_and_the_release_before_runs_on(empty_url: str) -> None:
    await migrate(empty_url, "0012_seat_holders")
    engine = make_engine(empty_url, poolclass=pool.NullPool)
    try:
        async with engine.begin() as conn:  # games as the release before stored them
            room = await _old_room(conn, "OLD234")
            old = [(await conn.execute(OLD_GAME, {"r": room})).scalar_one() for _ in range(5)]
        await migrate(empty_url)
        async with engine.connect() as conn:
            refs = dict((await conn.execute(text("SELECT id, public_id FROM games"))).all())
            floor = await conn.scalar(text("SELECT revision FROM schema_floor"))
        assert sorted(refs) == old
        assert len(set(refs.values())) == len(old)
        assert all(len(r) == 16 and not r.isdigit() for r in refs.values()), refs
        # expand only: the release before still runs on it
        assert floor == "0011_schema_floor"
        async with engine.begin() as conn:
            during = (await conn.execute(OLD_GAME, {"r": room})).scalar_one()
        with_one = next(iter(refs.values()))
        try:
            async with engine.begin() as conn:
                await conn.execute(
                    text("UPDATE games SET public_id = :p WHERE id = :g"),
                    {"p": with_one, "g": during},
                )
            raise AssertionError("two games took one public id")
        except IntegrityError:
            pass
    finally:
        await engine.dispose()
    records = DbRecords(make_engine(empty_url))
    try:
        async with records.sessions() as s:
            info = await h.game_info(s, during)
            assert info is not None and info.public_id == str(during)  # shown by its number
            assert await h.game_of_ref(s, str(during)) == during
            assert await h.game_of_ref(s, refs[old[0]]) == old[0]
        # this release's games have theirs
        await records.save_room(
            RoomRecord("NEW234", "bigtwo", {}, {}, "p0", [PlayerRecord("p0", "Ann", "h", 0)])
        )
        made = await records.start_game("NEW234", "bigtwo", {}, 7, ["p0"])
        async with records.sessions() as s:
            info = await h.game_info(s, made)
            assert info is not None and len(info.public_id) == 16
    finally:
        await records.close()
    await migrate(empty_url, "0012_seat_holders", down=True)
    await migrate(empty_url)
    engine = make_engine(empty_url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            again = dict((await conn.execute(text("SELECT id, public_id FROM games"))).all())
        assert sorted(again) == sorted([*old, during, made])
        assert all(r and not r.isdigit() for r in again.values())
        assert len(set(again.values())) == len(again)
    finally:
        await engine.dispose()
