"""One call wires the database into an app; an unmigrated one is a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import pool, text

from app.db.accounts import Accounts
from app.db.records import DbRecords
from app.db.session import make_engine
from app.db.setup import attach, check_schema, detach, head_revision
from app.store.records import MemoryRecords


async def test_attach_puts_records_sessions_and_accounts_on_the_app(db_url: str) -> None:
    app = FastAPI()
    records = attach(app, db_url)
    try:
        assert isinstance(records, DbRecords) and app.state.records is records
        assert app.state.db_sessionmaker is records.sessions
        assert isinstance(app.state.accounts, Accounts)
        await check_schema(app)  # the fixture's database is migrated
        assert await app.state.accounts.session_account("nobody") is None
    finally:
        await detach(app)


async def test_memory_records_leave_history_and_accounts_off() -> None:
    app = FastAPI()
    attach(app, MemoryRecords())
    assert not hasattr(app.state, "db_sessionmaker") and not hasattr(app.state, "accounts")
    await check_schema(app)
    await detach(app)


async def test_an_unmigrated_database_is_named_with_what_to_run(tmp_path: Path) -> None:
    app = FastAPI()
    attach(app, f"sqlite+aiosqlite:///{tmp_path}/new/fresh.db")
    try:
        with pytest.raises(RuntimeError, match=r"at schema none.*alembic upgrade head"):
            await check_schema(app)
    finally:
        await detach(app)


async def _stamp(url: str, version: str, floor: str | None) -> tuple[str, str]:
    """Set the database's schema version and floor; returns what they were."""
    engine = make_engine(url, poolclass=pool.NullPool)
    try:
        async with engine.begin() as conn:
            was = (
                await conn.scalar(text("SELECT version_num FROM alembic_version")),
                await conn.scalar(text("SELECT revision FROM schema_floor")),
            )
            await conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": version})
            await conn.execute(text("UPDATE schema_floor SET revision = :f"), {"f": floor})
        return was
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    ("version", "floor", "refused"),
    [
        # migrated past this release by expand-only migrations: it runs on
        ("9999_next", "head", None),
        # past it by a contract migration this release predates
        ("9999_next", "9998_contract", r"newer than this server .*needs a release that knows"),
        # behind this release: migrate first
        ("0010_bot_levels", "0011_schema_floor", r"at schema 0010_bot_levels.*alembic upgrade"),
    ],
)
async def test_a_database_past_this_release_runs_it_while_its_floor_is_known(
    db_url: str, version: str, floor: str, refused: str | None
) -> None:
    """Expand now, contract later: the previous release keeps running on a
    database a newer one migrated, until a migration says it cannot."""
    want = head_revision()
    assert want is not None
    was = await _stamp(db_url, version, want if floor == "head" else floor)
    app = FastAPI()
    attach(app, db_url)
    try:
        if refused is None:
            await check_schema(app)
        else:
            with pytest.raises(RuntimeError, match=refused):
                await check_schema(app)
    finally:
        await detach(app)
        await _stamp(db_url, *was)
