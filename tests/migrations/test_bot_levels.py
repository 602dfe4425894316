"""Migration 0010_bot_levels: a bot stored by the release before levels reads
back at normal, a level survives a restart, and going down and up again keeps
every room's players and their games' seats (on SQLite and PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import func, pool, select, text

from app.db.models import GameSeat
from app.db.records import DbRecords
from app.db.session import make_engine
from app.store.records import PlayerRecord, RoomRecord
from tests.db.backends import migrate
from tests.migrations import test_migrations

empty_url = test_migrations.empty_url


def _room(code: str, level: str | None) -> RoomRecord:
    return RoomRecord(
        code=code,
        game="bigtwo",
        options={},
        settings={},
        host_player_id="p0",
        players=[
            PlayerRecord("p0", "Ann", "a" * 64, 0),
            PlayerRecord("b1", "Bot 2", "", 1, is_bot=True, bot_level=level),
        ],
    )


async def test_bot_levels_upgrade_and_downgrade_keep_what_exists(empty_url: str) -> None:
    await migrate(empty_url, "0009_push")
    engine = make_engine(empty_url, poolclass=pool.NullPool)
    try:
        async with engine.begin() as conn:  # a bot as the previous release stores it
            room_id = (
                await conn.execute(
                    text(
                        "INSERT INTO rooms (code, game, options, settings, tally, closed,"
                        " created_at, updated_at) VALUES ('OLD234', 'bigtwo', '{}', '{}', '{}',"
                        " false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP) RETURNING id"
                    )
                )
            ).scalar_one()
            await conn.execute(
                text(
                    "INSERT INTO players (room_id, player_id, position, name, seat, token_hash,"
                    " is_bot, present) VALUES (:r, 'b1', 0, 'Bot 1', 0, '', true, true)"
                ),
                {"r": room_id},
            )
    finally:
        await engine.dispose()
    await migrate(empty_url)
    records = DbRecords(make_engine(empty_url))
    try:
        old = await records.load_room("OLD234")
        assert old is not None and old[0].players[0].bot_level is None  # plays at normal
        await records.save_room(_room("NEW234", "strong"))
        game = await records.start_game("NEW234", "bigtwo", {}, 7, ["p0", "b1"])
        assert game > 0
    finally:
        await records.close()
    again = DbRecords(make_engine(empty_url))  # a restart
    try:
        new = await again.load_room("NEW234")
        assert new is not None and [p.bot_level for p in new[0].players] == [None, "strong"]
    finally:
        await again.close()
    await migrate(empty_url, "0009_push", down=True)
    await migrate(empty_url)
    engine = make_engine(empty_url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            assert await conn.scalar(select(func.count()).select_from(GameSeat)) == 2
            names = await conn.execute(text("SELECT name, bot_level FROM players ORDER BY id"))
            assert [tuple(r) for r in names] == [("Bot 1", None), ("Ann", None), ("Bot 2", None)]
    finally:
        await engine.dispose()
