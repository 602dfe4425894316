"""How Alembic reaches the database: the app's own URL and async drivers.

The URL is, first match wins: `-x url=...` on the command line, the config's
`sqlalchemy.url` (tests set it), then the app's settings (DATABASE_URL, else the
SQLite file under the data directory, whose folder is created).  Code that
already holds a connection (tests inside an event loop) passes it as
`config.attributes["connection"]` and the migrations run on it.

On PostgreSQL the run holds an advisory lock, so several app containers starting
at once migrate one after another instead of racing.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection

from app.core.config import get_settings
from app.db.models import Base
from app.db.session import async_url, make_engine

config = context.config
target_metadata = Base.metadata

#: any fixed number; only Alembic runs take this advisory lock
MIGRATION_LOCK = 7_105_321

if config.config_file_name is not None and "connection" not in config.attributes:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    given = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url"
    )
    return given or get_settings().resolved_database_url()


def run_offline() -> None:
    """`alembic upgrade head --sql`: print the SQL instead of running it."""
    url = async_url(database_url())
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.get_backend_name() == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def _models_only(name: str | None, kind: str, parents: object) -> bool:
    """Autogenerate compares the models' tables, not the migrations' own
    `schema_floor` (migration 0011), which no model describes."""
    return not (kind == "table" and name == "schema_floor")


def run_on(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=sqlite,  # SQLite alters tables by copying them
        compare_type=True,
        include_name=_models_only,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK})
        context.run_migrations()


async def run_async() -> None:
    engine = make_engine(database_url(), poolclass=pool.NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(run_on)
            await connection.commit()
    finally:
        await engine.dispose()


def run_online() -> None:
    given = config.attributes.get("connection")
    if given is not None:
        run_on(given)
    else:
        asyncio.run(run_async())


if context.is_offline_mode():
    run_offline()
else:
    run_online()
