"""The SQLite appends' stamp encoder (app/db/sqlite_appends.py): the fast one
is used only where it writes exactly SQLAlchemy's text."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

from sqlalchemy import DateTime
from sqlalchemy.dialects import sqlite

from app.db.sqlite_appends import _faster


def _encoder(kind: DateTime) -> object:
    dialect = sqlite.dialect()
    return kind.dialect_impl(dialect).bind_processor(dialect)


def test_the_iso_stamp_writes_what_sqlalchemy_writes_for_any_time() -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    encode = _encoder(DateTime(timezone=True))
    assert callable(encode)
    fast = _faster(encode)
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
    assert _faster(encode) is encode
