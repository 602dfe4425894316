"""Rows for SQLite's driver (app/db/driver_rows.py): the fast time encoder is
used only where it writes exactly SQLAlchemy's text, and a row written through
the driver is the row SQLAlchemy writes."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import DateTime, Engine, bindparam, create_engine, insert, select, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.ext.asyncio import create_async_engine

from app.db import driver_rows, summaries, writes
from app.db.driver_rows import DriverStatement, faster
from app.db.models import Base, GameRow, PushKey, SeatResult
from app.store.records import PlayerRecord, RoomRecord
from tests.seeds import TEST_SEED


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
    # runs of stamps close together, as a server writes them: one minute's
    # stamps share their text up to the minute, until a minute, an hour, a
    # day or a year turns (and back again, as the clock of another zone would)
    for _ in range(200):
        t = start + timedelta(microseconds=rng.randrange(9000 * 365 * 86400 * 10**6))
        t = t.replace(second=rng.randrange(50, 60))
        for _ in range(rng.randrange(1, 40)):
            t += timedelta(microseconds=rng.randrange(-2 * 10**6, 10 * 10**6))
            assert fast(t) == encode(t), f"seed {seed}: {t!r}"
    for value in (None, datetime(2031, 2, 3).date()):  # not a datetime: SQLAlchemy's own
        assert fast(value) == encode(value)


def test_a_dialect_that_stores_times_otherwise_keeps_its_own_encoder() -> None:
    other = sqlite.DATETIME(
        storage_format="%(year)04d/%(month)02d/%(day)02d %(hour)02d:%(minute)02d:%(second)02d"
    )
    encode = _encoder(other)
    assert callable(encode)
    assert faster(encode) is encode


# ---------------------------------------------------------- DriverStatement


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


def _evening(engine: Engine, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A room's evening through app/db/writes.py: saved, twelve games started
    and finished (summed), its tally saved after each, a result written again
    (its people counted again), and a finish of a game that does not exist."""
    rng = random.Random(seed)
    start = datetime(2020, 1, 1, tzinfo=UTC)
    times = iter(
        start + timedelta(microseconds=rng.randrange(10**15)) if rng.random() < 0.7 else
        (start + timedelta(seconds=rng.randrange(10**8))).astimezone(timezone(timedelta(hours=-3)))
        for _ in range(1000)
    )  # fmt: skip
    monkeypatch.setattr(writes, "utcnow", lambda: next(times))
    names = ["Ann", "Čeněk", "'); drop", "?", "李"]
    players = [
        PlayerRecord(
            f"p{i}", rng.choice(names), f"h{i}", i, guest_id=None if i == 2 else f"guest{i}"
        )
        for i in range(4)
    ]
    room = RoomRecord("DRV234", "bigtwo", {"o": [1, None]}, {"s": "é"}, "p0", players)
    known = writes.KnownRows()
    with engine.begin() as conn:
        writes.save_room(conn, known, room)
    games = []
    for g in range(12):
        seats = [p.player_id for p in rng.sample(players, 4)]
        with engine.begin() as conn:
            game = writes.start_game(
                conn, known, "DRV234", "bigtwo", {"n": rng.random()}, rng.randrange(2**62),
                seats, f"pub{g}",
            )  # fmt: skip
            games.append(game)
        order = rng.sample(range(4), 4)
        result = {"places": [[s] for s in order], "scores": [rng.randrange(-9, 99) for _ in order]}
        with engine.begin() as conn:
            writes.finish_game(conn, game, result)
        room.tally = {pid: rng.randrange(40) for pid in seats[: rng.randrange(5)]}
        room.settings = {"s": rng.choice([None, 1.5, "x", {"deep": [True]}])}
        with engine.begin() as conn:
            writes.save_room(conn, known, room)
    with engine.begin() as conn:
        writes.finish_game(conn, games[0], {"places": [[3], [2], [1], [0]], "scores": [0] * 4})
    with engine.begin() as conn, pytest.raises(KeyError):
        writes.finish_game(conn, 10**6, {"places": []})


def _tables(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """What the writes wrote, as the file holds it (the driver's own reading:
    no SQLAlchemy type between the text and the comparison); rows' creation
    times, which SQLAlchemy's column defaults fill, left out."""
    queries = {
        "rooms": "SELECT id, code, game, options, settings, host_player_id, tally, closed,"
        " updated_at, replaced, removed FROM rooms",
        "games": "SELECT * FROM games",
        "game_seats": "SELECT * FROM game_seats",
        **{
            t: f"SELECT * FROM {t}"
            for t in ("seat_results", "person_totals", "person_pairs", "series_points")
        },
    }
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        return {t: sorted(raw.execute(q).fetchall(), key=repr) for t, q in queries.items()}


@pytest.mark.parametrize("seed", [TEST_SEED, TEST_SEED + 1, TEST_SEED + 2])
def test_what_the_driver_writes_is_what_sqlalchemy_writes(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same evening written twice, once with the writes' statements on the
    driver (the SQLite writer's way) and once all through SQLAlchemy: every
    table holds the same text - JSON, times in any zone, None, first finishes
    and sums added onto, a result written again."""
    driven, plain = create_engine("sqlite://"), create_engine("sqlite://")
    for engine in (driven, plain):
        Base.metadata.create_all(engine)
    with driven.connect() as conn:
        assert conn.dialect.driver in driver_rows.DRIVERS
    _evening(driven, seed, monkeypatch)
    monkeypatch.setattr(driver_rows, "DRIVERS", frozenset())
    _evening(plain, seed, monkeypatch)
    wrote = _tables(driven)
    assert wrote == _tables(plain), f"seed {seed}"
    assert all(wrote.values()), f"seed {seed}: left empty: {[t for t, r in wrote.items() if not r]}"


def test_a_statement_that_needs_a_default_is_refused_not_written_without_it() -> None:
    """A push key's `created_at` is filled by SQLAlchemy when not given; the
    driver would not fill it, so the statement is refused before any row goes."""
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    keys = DriverStatement(insert(PushKey.__table__))
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


def test_each_engine_encodes_with_its_own_serializer() -> None:
    """Compiled once per dialect object, not per dialect name: two SQLite
    engines with JSON serializers of their own each write their own text."""
    compact = create_engine("sqlite://", json_serializer=partial(json.dumps, separators=(",", ":")))
    spaced = create_engine("sqlite://", json_serializer=partial(json.dumps, indent=1))
    stored = []
    for engine in (compact, spaced, compact):
        Base.metadata.create_all(engine)
        game = {"room_id": 1, "game": "bigtwo", "options": {"a": [1, 2]}, "seed": "7"}
        game |= {"seats": ["p0"], "public_id": f"p{len(stored)}", "started_at": datetime.now(UTC)}
        with engine.begin() as conn:
            [(game_id,)] = writes._INSERT_GAME.execute(conn, game)
            raw = conn.connection.dbapi_connection
            assert raw is not None
            found = raw.execute("SELECT options FROM games WHERE id = ?", (game_id,))
            stored.append(found.fetchone()[0])
    assert stored[0] == stored[2] == '{"a":[1,2]}'
    assert stored[1] == json.dumps({"a": [1, 2]}, indent=1)


def test_a_list_to_expand_is_refused_not_sent_as_one_value() -> None:
    """An IN list is rendered by SQLAlchemy at execution; the driver would get
    one placeholder for the whole list, so the statement is refused first."""
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    games = GameRow.__table__
    rename = DriverStatement(
        update(games)
        .where(games.c.id.in_(bindparam("ids", expanding=True)))
        .values(game=bindparam("new_game"))
    )
    with engine.begin() as conn, pytest.raises(ValueError, match="expand"):
        rename.execute(conn, {"ids": [1, 2], "new_game": "posso"})
