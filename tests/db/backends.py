"""The two databases every persistence test runs against.

`db_url` is parametrized over SQLite and PostgreSQL.  SQLite gets a fresh copy
of a file migrated once per run; PostgreSQL gets one database of its own per
run (cardroom_test_<random>, migrated once, emptied after each test, dropped at
the end).  PostgreSQL is `require_postgres()`: skipped on a laptop without it,
a failure under CI=true.

Test modules outside tests/db pull the fixtures in by assignment
(`db_url = backends.db_url`), which pytest collects like a local definition.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection, make_url

from app.db.models import Base
from app.db.records import DbRecords
from app.db.session import make_engine
from tests.services import require_postgres

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def alembic_config() -> Config:
    return Config(str(ROOT / "alembic.ini"))


async def migrate(url: str, revision: str = "head", *, down: bool = False) -> None:
    """Run Alembic on `url` from inside an event loop (env.py takes the connection)."""
    engine = make_engine(url, poolclass=pool.NullPool)

    def run(conn: Connection) -> None:
        cfg = alembic_config()
        cfg.attributes["connection"] = conn
        if down:
            command.downgrade(cfg, revision)
        else:
            command.upgrade(cfg, revision)

    try:
        async with engine.begin() as conn:
            await conn.run_sync(run)
    finally:
        await engine.dispose()


def pg_database_url(name: str) -> str:
    base = make_url(require_postgres())
    return base.set(database=name).render_as_string(hide_password=False)


async def _admin(sql: str) -> None:
    base = make_url(require_postgres())
    conn = await asyncpg.connect(
        host=base.host, port=base.port or 5432, user=base.username, database=base.database
    )
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def create_pg_database() -> str:
    name = f"cardroom_test_{secrets.token_hex(6)}"
    await _admin(f'CREATE DATABASE "{name}"')
    return name


async def drop_pg_database(name: str) -> None:
    await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def fresh_pg_database() -> Iterator[str]:
    """A new, migrated PostgreSQL database of its own, dropped afterwards:
    for a test whose servers must not disturb (or be disturbed by) others."""
    require_postgres()
    name = asyncio.run(create_pg_database())
    try:
        url = pg_database_url(name)
        asyncio.run(migrate(url))
        yield url
    finally:
        asyncio.run(drop_pg_database(name))


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "cardroom.db"
    asyncio.run(migrate(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    with fresh_pg_database() as url:
        yield url


async def _empty(url: str) -> None:
    engine = make_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.begin() as conn:
            names = ", ".join(t.name for t in Base.metadata.sorted_tables)
            await conn.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    finally:
        await engine.dispose()


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path) -> str:
    """Sync on purpose: setting up the PostgreSQL database runs its own event loop."""
    if request.param == "sqlite":
        path = tmp_path / "cardroom.db"
        shutil.copyfile(sqlite_template, path)
        return f"sqlite+aiosqlite:///{path}"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
async def db_url(backend_url: str) -> AsyncIterator[str]:
    try:
        yield backend_url
    finally:
        if backend_url.startswith("postgresql"):
            await _empty(backend_url)


@pytest.fixture
async def records(db_url: str) -> AsyncIterator[DbRecords]:
    rec = DbRecords(make_engine(db_url))
    try:
        yield rec
    finally:
        await rec.close()
