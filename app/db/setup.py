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
one clear error instead of a failure on the first query.  A database migrated
past this release is fine while its floor (migration 0011) is a revision this
release knows: the migrations since were expand-only, which is what lets the
previous release run on through a rolling upgrade.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from alembic.config import Config
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from argon2 import PasswordHasher
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.db.accounts import Accounts
from app.db.records import DbRecords
from app.db.session import make_engine

log = logging.getLogger(__name__)

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


def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(Config(str(_ROOT / "alembic.ini")))


def head_revision() -> str | None:
    return _scripts().get_current_head()


def _known(scripts: ScriptDirectory, revision: str | None) -> bool:
    """Whether this release's migrations hold `revision`."""
    if revision is None:
        return False
    try:
        return scripts.get_revision(revision) is not None
    except CommandError:  # alembic's answer for a revision it has no script for
        return False


async def check_schema(app: Any) -> None:
    """Raise RuntimeError unless this release can run on the database: at the
    newest migration, or past it by migrations that left this release's
    schema usable (the database's floor is a revision this release knows)."""
    engine = getattr(app.state, "db_engine", None)
    if engine is None:
        return
    scripts = _scripts()
    want = scripts.get_current_head()
    url = engine.url.render_as_string(hide_password=True)
    async with engine.connect() as conn:
        try:
            have = await conn.scalar(text("SELECT version_num FROM alembic_version"))
        except DBAPIError:
            have = None
        if have == want:
            return
        if have is None or _known(scripts, have):
            raise RuntimeError(
                f"the database {url} is at schema {have or 'none'}, this server needs "
                f"{want}: run `alembic upgrade head` (make run and the Docker image do this "
                "before starting)"
            )
        try:
            floor = await conn.scalar(text("SELECT revision FROM schema_floor"))
        except DBAPIError:
            floor = None
    if not _known(scripts, floor):
        raise RuntimeError(
            f"the database {url} is at schema {have}, newer than this server ({want}), and "
            f"needs a release that knows schema {floor or 'none'}: run the newer release"
        )
    log.warning(
        "the database is at schema %s, newer than this server's %s; its migrations since "
        "were expand-only (floor %s), so this server runs on it",
        have, want, floor,
    )  # fmt: skip
