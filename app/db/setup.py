"""Giving an app its database.

In the app factory:

    records = records if records is not None else open_records(settings.resolved_database_url())
    ...  # app = FastAPI(...), RoomManager(records, ...)
    attach(app, records)

`attach` puts on `app.state`: `records`, and for a DbRecords also `db_engine`,
`db_sessionmaker` (read by the history routes) and `accounts` (read by
app/api/identity.py and the accounts routes).  With MemoryRecords it sets only
`records`: history and accounts then answer 503 "no database".  On shutdown,
`await detach(app)` closes the connections.

The schema is Alembic's job (`alembic upgrade head`, run by `make run` and the
Docker image); `check_schema(app)` at startup turns an unmigrated database into
one clear error instead of a failure on the first query.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic.config import Config
from alembic.script import ScriptDirectory
from argon2 import PasswordHasher
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.db.accounts import Accounts
from app.db.records import DbRecords
from app.db.session import make_engine

#: the checkout (or image) root, where alembic.ini lives
_ROOT = Path(__file__).resolve().parents[2]


def open_records(url: str) -> DbRecords:
    return DbRecords(make_engine(url))


def attach(app: Any, records: Any, *, hasher: PasswordHasher | None = None) -> Any:
    """Wire `records` (a DbRecords, a database URL, or any Records) into the app;
    returns the records."""
    if isinstance(records, str):
        records = open_records(records)
    app.state.records = records
    if isinstance(records, DbRecords):
        app.state.db_engine = records.engine
        app.state.db_sessionmaker = records.sessions
        app.state.accounts = Accounts(records.sessions, hasher, records.writing)
    return records


async def detach(app: Any) -> None:
    """Close the database connections (call on shutdown)."""
    records = getattr(app.state, "records", None)
    if isinstance(records, DbRecords):
        await records.close()


def head_revision() -> str | None:
    config = Config(str(_ROOT / "alembic.ini"))
    return ScriptDirectory.from_config(config).get_current_head()


async def check_schema(app: Any) -> None:
    """Raise RuntimeError unless the database is at the newest migration."""
    engine = getattr(app.state, "db_engine", None)
    if engine is None:
        return
    want = head_revision()
    try:
        async with engine.connect() as conn:
            have = await conn.scalar(text("SELECT version_num FROM alembic_version"))
    except DBAPIError:
        have = None
    if have != want:
        raise RuntimeError(
            f"the database {engine.url.render_as_string(hide_password=True)} is at schema "
            f"{have or 'none'}, this server needs {want}: run `alembic upgrade head` "
            "(make run and the Docker image do this before starting)"
        )
