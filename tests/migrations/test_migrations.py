"""The migrations build exactly the models' schema from an empty database, and
take it away again, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from app.db.models import Base
from app.db.session import make_engine
from app.db.setup import head_revision
from tests.db.backends import (
    BACKENDS,
    ROOT,
    create_pg_database,
    drop_pg_database,
    migrate,
    pg_database_url,
)


@pytest.fixture(params=BACKENDS)
async def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A database with nothing in it, of its own."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path}/empty.db"
        return
    name = await create_pg_database()
    try:
        yield pg_database_url(name)
    finally:
        await drop_pg_database(name)


def _tables(conn: Connection) -> set[str]:
    return set(inspect(conn).get_table_names())


#: the migrations' own bookkeeping, beside the models' tables: the version and
#: the floor of releases that can run on the schema (app/db/setup.py)
BOOKKEEPING = {"alembic_version", "schema_floor"}


def _models_only(name: str | None, kind: str, parents: object) -> bool:
    return not (kind == "table" and name in BOOKKEEPING)


def _diff(conn: Connection) -> list[object]:
    context = MigrationContext.configure(
        conn, opts={"compare_type": True, "include_name": _models_only}
    )
    return list(compare_metadata(context, Base.metadata))


async def test_upgrade_builds_the_models_schema_and_downgrade_removes_it(empty_url: str) -> None:
    engine = make_engine(empty_url, poolclass=pool.NullPool)
    try:
        await migrate(empty_url)
        async with engine.connect() as conn:
            models = {t.name for t in Base.metadata.sorted_tables}
            assert await conn.run_sync(_tables) == models | BOOKKEEPING
            assert await conn.run_sync(_diff) == []
            version = await conn.scalar(text("SELECT version_num FROM alembic_version"))
        assert version == head_revision()
        await migrate(empty_url, "base", down=True)
        async with engine.connect() as conn:
            assert await conn.run_sync(_tables) == {"alembic_version"}
        await migrate(empty_url)  # and up again from where it was left
        async with engine.connect() as conn:
            assert await conn.run_sync(_diff) == []
    finally:
        await engine.dispose()


async def test_a_room_code_is_unique_among_open_rooms_only(empty_url: str) -> None:
    await migrate(empty_url)
    engine = make_engine(empty_url, poolclass=pool.NullPool)
    insert = text(
        "INSERT INTO rooms (code, game, options, settings, tally, closed, created_at, updated_at) "
        "VALUES (:code, 'posso', '{}', '{}', '{}', :closed, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
    )
    try:
        async with engine.begin() as conn:
            await conn.execute(insert, {"code": "ABC", "closed": True})
            await conn.execute(insert, {"code": "ABC", "closed": True})
            await conn.execute(insert, {"code": "ABC", "closed": False})
        with pytest.raises(IntegrityError):
            async with engine.begin() as conn:
                await conn.execute(insert, {"code": "ABC", "closed": False})
    finally:
        await engine.dispose()


def test_alembic_upgrade_head_works_from_a_fresh_clone(tmp_path: Path) -> None:
    """What `make run` does first: no DATABASE_URL, no data directory yet."""
    env = {**os.environ, "DATA_DIR": str(tmp_path / "data")}
    env.pop("DATABASE_URL", None)
    alembic = Path(sys.executable).parent / "alembic"
    done = subprocess.run(
        [str(alembic), "upgrade", "head"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "cardroom.db").is_file()


@pytest.mark.postgres
async def test_migrations_started_together_on_postgres_all_succeed() -> None:
    """Replicas (or hosts) that each run `alembic upgrade head` at the same
    moment: the advisory lock in migrations/env.py makes them take turns, and
    the later ones find the schema at head instead of failing on tables the
    first one is creating."""
    name = await create_pg_database()
    try:
        url = pg_database_url(name)
        alembic = Path(sys.executable).parent / "alembic"
        upgrade = [str(alembic), "-x", f"url={url}", "upgrade", "head"]
        pipe = asyncio.subprocess.PIPE
        runs = [
            await asyncio.create_subprocess_exec(*upgrade, cwd=ROOT, stdout=pipe, stderr=pipe)
            for _ in range(3)
        ]
        for run in runs:
            _, err = await run.communicate()
            assert run.returncode == 0, err.decode()
        engine = make_engine(url, poolclass=pool.NullPool)
        try:
            async with engine.connect() as conn:
                rows = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
                assert [r[0] for r in rows] == [head_revision()]
                assert await conn.run_sync(_diff) == []
        finally:
            await engine.dispose()
    finally:
        await drop_pg_database(name)
