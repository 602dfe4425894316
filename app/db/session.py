"""Engines and sessions for SQLite (the default) and PostgreSQL.

SQLite runs in WAL mode, so readers (the history pages) never block the
writer, with foreign keys on (SQLite leaves them off unless asked).  Its
`synchronous` level is NORMAL unless the URL says `?synchronous=full`: in WAL
mode NORMAL keeps every committed transaction through a crash or kill of the
server process -- the case "lose nothing when the server stops" is about --
and only a power cut or OS crash can take back the last commits.  FULL also
survives those, at the price of a disk flush per action (about 700 appends/s
at best on this machine instead of thousands).  PostgreSQL flushes every
commit; concurrent commits share flushes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

import orjson
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",
    "PRAGMA temp_store=MEMORY",
)
SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")

#: what each SQLite engine made here was told, so its writer twin is told the same
_sqlite_setups: WeakKeyDictionary[Engine, tuple[URL, str]] = WeakKeyDictionary()


def async_url(url: str | URL) -> URL:
    """The URL with an async driver: hosting panels hand out `postgres://...` or
    `postgresql://...`, and people type `sqlite:///file.db`; all three mean the
    obvious thing here."""
    parsed = make_url(url) if isinstance(url, str) else url
    backend = parsed.get_backend_name()
    if backend == "postgres":
        backend = "postgresql"
    if backend == "postgresql" and parsed.drivername != "postgresql+asyncpg":
        return parsed.set(drivername="postgresql+asyncpg")
    if backend == "sqlite" and parsed.drivername != "sqlite+aiosqlite":
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend not in ("postgresql", "sqlite"):
        raise ValueError(
            f"unsupported database {parsed.drivername!r}: use sqlite+aiosqlite:///path "
            "or postgresql+asyncpg://user:password@host/db"
        )
    return parsed


def is_sqlite(engine_or_url: AsyncEngine | str | URL) -> bool:
    if isinstance(engine_or_url, AsyncEngine):
        return engine_or_url.dialect.name == "sqlite"
    return async_url(engine_or_url).get_backend_name() == "sqlite"


def _sqlite_file(url: URL) -> Path | None:
    db = url.database
    if not db or db == ":memory:" or db.startswith("file:"):
        return None
    return Path(db)


def _sqlite_setup(url: URL) -> tuple[URL, str]:
    """Take our own `synchronous` option out of the URL (the driver would refuse it)."""
    query = dict(url.query)
    level = str(query.pop("synchronous", "NORMAL")).upper()
    if level not in SYNCHRONOUS:
        raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}, not {level!r}")
    return url.set(query=query), level


def json_dumps(value: Any) -> str:
    """JSON columns through orjson: an action is encoded on every append, and
    the standard library's encoder took a tenth of a busy server's storage CPU.
    Non-string keys become strings, as `json.dumps` makes them."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


#: every engine made here: JSON columns through orjson
_JSON = {"json_serializer": json_dumps, "json_deserializer": orjson.loads}


def make_engine(url: str | URL, **kwargs: Any) -> AsyncEngine:
    """An async engine for `url`; for a SQLite file, its directory is created."""
    parsed = async_url(url)
    kwargs = {**_JSON, **kwargs}
    if parsed.get_backend_name() != "sqlite":
        kwargs.setdefault("pool_pre_ping", True)
        # a fixed pool: overflow connections are opened and closed per use, which
        # under load costs more than waiting for a pooled one (bench/db.py)
        if kwargs.get("poolclass") is None:
            kwargs.setdefault("pool_size", 20)
            kwargs.setdefault("max_overflow", 0)
        return create_async_engine(parsed, **kwargs)
    parsed, level = _sqlite_setup(parsed)
    path = _sqlite_file(parsed)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(parsed, **kwargs)
    event.listen(engine.sync_engine, "connect", _pragmas(level))
    _sqlite_setups[engine.sync_engine] = (parsed, level)
    return engine


def sqlite_sync_level(engine: AsyncEngine) -> str | None:
    """The `synchronous` level of a SQLite engine made here; None otherwise."""
    found = _sqlite_setups.get(engine.sync_engine)
    return None if found is None else found[1]


def sqlite_writer(engine: AsyncEngine) -> Engine | None:
    """A plain (thread-bound) twin of a SQLite file engine, in autocommit mode.

    An append through aiosqlite crosses to its thread and back half a dozen
    times; through this engine, run in one worker thread, it crosses once.
    None for PostgreSQL and for in-memory SQLite (which a second engine could
    not see)."""
    found = _sqlite_setups.get(engine.sync_engine)
    if found is None:
        return None
    url, level = found
    if _sqlite_file(url) is None:
        return None
    twin = create_engine(
        url.set(drivername="sqlite"),
        isolation_level="AUTOCOMMIT",
        connect_args={"check_same_thread": False},
        **_JSON,
    )
    event.listen(twin, "connect", _pragmas(level))
    return twin


def _pragmas(level: str) -> Any:
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        try:
            for pragma in (*SQLITE_PRAGMAS, f"PRAGMA synchronous={level}"):
                cursor.execute(pragma)
        finally:
            cursor.close()

    return on_connect


def sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions whose objects stay readable after commit (the API serialises
    them after the transaction ends)."""
    return async_sessionmaker(engine, expire_on_commit=False)
