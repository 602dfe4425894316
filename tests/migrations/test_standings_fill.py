"""Migration 0005 fills the records' summary for games finished
before it, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import pool, select

from app.db.models import SeatResult
from app.db.records import DbRecords
from app.db.session import make_engine
from tests.db.backends import migrate
from tests.db.stored import store, summary_sums
from tests.db.tinygame import TINY, play
from tests.migrations import test_migrations

empty_url = test_migrations.empty_url


async def _rows(url: str) -> list[tuple[int, int, str | None, int]]:
    engine = make_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            found = await conn.execute(
                select(
                    SeatResult.game_id, SeatResult.seat, SeatResult.person, SeatResult.place
                ).order_by(SeatResult.game_id, SeatResult.seat)
            )
            return [tuple(r) for r in found.all()]  # type: ignore[misc]
    finally:
        await engine.dispose()


async def _sums(url: str) -> list[list[Any]]:
    engine = make_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.connect() as conn:
            return await summary_sums(conn)
    finally:
        await engine.dispose()


async def test_upgrading_fills_seat_results_for_finished_games(
    empty_url: str,
) -> None:
    await migrate(empty_url)
    records = DbRecords(make_engine(empty_url))
    played = play(TINY, 2, {}, seed=4)
    try:
        # guest ids as the server stores them: cookie hashes (0006_guest_hashes
        # would hash anything else on the way up again)
        done = await store(records, played, "ROOM01", ["a" * 64, None])
        for k in range(3):  # three people, three games: every sum has something in it
            three = play(TINY, 3, {}, seed=10 + k)
            await store(records, three, f"ROOM1{k}", ["a" * 64, "b" * 64, "c" * 64])
        await store(records, play(TINY, 2, {}, seed=5, max_actions=1), "ROOM02", [None, None])
    finally:
        await records.close()
    written, sums = await _rows(empty_url), await _sums(empty_url)
    assert len({r[0] for r in written}) == 4  # the running game has none
    assert len(sums[0]) >= 3 and len(sums[1]) >= 6  # three people, both ways round
    await migrate(empty_url, "0004", down=True)
    await migrate(empty_url)
    assert await _rows(empty_url) == written
    # counted afresh from the seats, the sums are the sums added game by game
    assert await _sums(empty_url) == sums
    places = {s: i + 1 for i, group in enumerate(played.result["places"]) for s in group}  # type: ignore[index]
    assert [r[3] for r in written[:2]] == [places[0], places[1]]
    # a seat with no guest or account is nobody
    assert written[0][0] == done and written[0][2] is not None and written[1][2] is None
