"""Rows for SQLite's driver (app/db/driver_rows.py): the fast time encoder is
used only where it writes exactly SQLAlchemy's text, and a row written through
the driver is the row SQLAlchemy writes."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, DateTime, Engine, create_engine, insert, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import create_async_engine

from app.db import summaries
from app.db.driver_rows import DriverInsert, faster
from app.db.models import Base, PushKey, SeatResult


def _encoder(kind: DateTime) -> object:
    dialect = sqlite.dialect()
    return kind.dialect_impl(dialect).bind_processor(dialect)


def test_the_iso_stamp_writes_what_sqlalchemy_writes_for_any_time() -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    encode = _encoder(DateTime(timezone=True))
    assert callable(encode)
    fast = faster(encode)
    assert fast is not encode
    start = datetime(1000, 1, 1, tzinfo=UTC)
    for _ in range(2000):
        t = start + timedelta(microseconds=rng.randrange(9000 * 365 * 86400 * 10**6))
        if rng.random() < 0.3:
            t = t.replace(microsecond=0)  # isoformat drops a zero fraction unless told
        zone = timezone(timedelta(minutes=rng.randrange(-720, 720)))
        for value in (t, t.astimezone(zone), t.replace(tzinfo=None)):
            assert fast(value) == encode(value), f"seed {seed}: {value!r}"
    for value in (None, datetime(2031, 2, 3).date()):  # not a datetime: SQLAlchemy's own
        assert fast(value) == encode(value)


def test_a_dialect_that_stores_times_otherwise_keeps_its_own_encoder() -> None:
    other = sqlite.DATETIME(
        storage_format="%(year)04d/%(month)02d/%(day)02d %(hour)02d:%(minute)02d:%(second)02d"
    )
    encode = _encoder(other)
    assert callable(encode)
    assert faster(encode) is encode


# ------------------------------------------------------------- DriverInsert


def _random_seats(rng: random.Random, game_id: int) -> list[dict[str, Any]]:
    people = [None, *(f"g:{rng.randrange(6)}" for _ in range(4))]
    start = datetime(2020, 1, 1, tzinfo=UTC)
    finished = start + timedelta(microseconds=rng.randrange(10**15))
    if rng.random() < 0.3:
        finished = finished.astimezone(timezone(timedelta(hours=rng.randrange(-9, 10))))
    rows = []
    for seat in range(4):
        rows.append(
            {
                "game_id": game_id,
                "seat": seat,
                "person": rng.choice(people),
                "player_id": f"p{rng.randrange(9)}",
                "name": rng.choice(["Ann", "Bo", "Čeněk", "'); drop", "?"]),
                "game": rng.choice(["posso", "bigtwo"]),
                "room_id": rng.randrange(1, 5),
                "finished_at": finished,
                "place": rng.randrange(1, 5),
                "score": rng.choice([None, rng.randrange(-50, 200)]),
                "hands_won": rng.choice([None, rng.randrange(5)]),
                "possos": rng.choice([None, rng.randrange(5)]),
            }
        )
    return rows


def _stored(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every summary table's rows as the file holds them (the driver's own
    reading: no SQLAlchemy type between the text and the comparison)."""
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        return {
            name: sorted(raw.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
            for name in ("seat_results", "person_totals", "person_pairs", "series_points")
        }


def test_rows_through_the_driver_are_the_rows_sqlalchemy_writes() -> None:
    """The same games summed twice, once with the summaries' statements on the
    driver (the SQLite writer's way) and once through SQLAlchemy: the tables
    hold the same text, first finishes and upserts onto earlier sums alike."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    games = [_random_seats(rng, game_id) for game_id in range(1, 40)]
    driven, plain = create_engine("sqlite://"), create_engine("sqlite://")
    for engine in (driven, plain):
        Base.metadata.create_all(engine)
    for game in games:
        with driven.begin() as conn:
            assert conn.dialect.driver == "pysqlite"
            summaries._INSERT_RESULTS.executemany(conn, game)
            summaries._add(conn, game)
        with plain.begin() as conn:
            conn.execute(insert(SeatResult.__table__), game)
            through_sqlalchemy(conn, game)
    assert _stored(driven) == _stored(plain), f"seed {seed}"
    assert all(_stored(driven).values()), f"seed {seed}: a table left empty"


def through_sqlalchemy(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """`summaries._add` with each DriverInsert's statement run by SQLAlchemy."""

    class Plain:
        def __init__(self, upsert: DriverInsert) -> None:
            self.upsert = upsert

        def executemany(self, conn: Connection, rows: list[dict[str, Any]]) -> None:
            if rows:
                conn.execute(self.upsert._stmt, rows)

    real = summaries._upsert
    summaries._upsert = lambda conn, which: Plain(real(conn, which))  # type: ignore[assignment,return-value]
    try:
        summaries._add(conn, rows)
    finally:
        summaries._upsert = real


def test_a_statement_that_needs_a_default_is_refused_not_written_without_it() -> None:
    """A push key's `created_at` is filled by SQLAlchemy when not given; the
    driver would not fill it, so the statement is refused before any row goes."""
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    keys = DriverInsert(insert(PushKey.__table__), PushKey.__table__)
    with engine.begin() as conn, pytest.raises(ValueError, match="created_at"):
        keys.executemany(conn, [{"id": 1, "private_pem": "k", "public_key": "p"}])
    with engine.connect() as conn:
        assert conn.execute(select(PushKey.id)).all() == []


async def test_another_driver_runs_the_statement_through_sqlalchemy(tmp_path: Path) -> None:
    """aiosqlite (in-memory SQLite's and the API's reads) is not the writer's
    driver: the rows go through SQLAlchemy, and land all the same."""
    engine = create_async_engine(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    game = _random_seats(random.Random(7), 1)
    async with engine.begin() as conn:
        await conn.run_sync(summaries._INSERT_RESULTS.executemany, game)
    async with engine.connect() as conn:
        assert len((await conn.execute(select(SeatResult.seat))).all()) == 4
    await engine.dispose()
