"""One call wires the database into an app; an unmigrated one is a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI

from app.db.accounts import Accounts
from app.db.records import DbRecords
from app.db.setup import attach, check_schema, detach
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
