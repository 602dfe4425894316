"""Accounts: argon2 hashes, sessions that only the cookie holder can use, and
guest games that follow their player into the account."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, update

from app.db.accounts import AccountError, Accounts, token_hash
from app.db.models import Account, LoginSession, Player, utcnow
from app.db.records import DbRecords
from app.store.records import PlayerRecord, RoomRecord

#: cheap parameters keep the suite fast; production uses argon2-cffi's defaults
FAST = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)


@pytest.fixture
async def accounts(records: DbRecords) -> AsyncIterator[Accounts]:
    yield Accounts(records.sessions, FAST, records.writing)


async def test_sign_up_stores_an_argon2_hash_and_signs_in(
    records: DbRecords, accounts: Accounts
) -> None:
    done = await accounts.sign_up("  Ana  Maria ", "correct horse", None)
    assert done.name == "Ana Maria"
    async with records.sessions() as s:
        stored = (await s.scalars(select(Account))).one()
        sessions = (await s.scalars(select(LoginSession))).all()
    assert stored.password_hash.startswith("$argon2id$")
    assert "correct horse" not in stored.password_hash
    assert [x.token_hash for x in sessions] == [token_hash(done.session_token)]
    assert await accounts.session_account(done.session_token) == (done.account_id, "Ana Maria")


async def test_the_default_hasher_is_argon2id(records: DbRecords) -> None:
    accounts = Accounts(records.sessions)
    done = await accounts.sign_up("Default", "a long password", None)
    again = await accounts.sign_in("default", "a long password", None)
    assert again.account_id == done.account_id
    assert accounts.hasher.hash("x").startswith("$argon2id$")


async def test_names_are_one_account_whatever_their_case(accounts: Accounts) -> None:
    await accounts.sign_up("Ana", "password one", None)
    with pytest.raises(AccountError, match="'ANA' is taken") as err:
        await accounts.sign_up("ANA", "password two", None)
    assert err.value.code == "name_taken"
    done = await accounts.sign_in("aNa", "password one", None)
    assert done.name == "Ana"


@pytest.mark.parametrize(
    ("name", "password", "message"),
    [
        ("", "long enough", "name must not be empty"),
        ("   ", "long enough", "name must not be empty"),
        ("x" * 33, "long enough", "at most 32 characters"),
        ("bell\x07", "long enough", "control characters"),
        (7, "long enough", "name must be text"),
        ("Bo", "short", "at least 8 characters"),
        ("Bo", None, "password must be text"),
        ("Bo", "y" * 1025, "at most 1024 characters"),
    ],
)
async def test_bad_names_and_passwords_are_refused_with_the_reason(
    records: DbRecords, accounts: Accounts, name: object, password: object, message: str
) -> None:
    with pytest.raises(AccountError, match=message):
        await accounts.sign_up(name, password, None)
    async with records.sessions() as s:
        assert (await s.scalars(select(Account))).all() == []


async def test_a_wrong_password_and_an_unknown_name_get_the_same_answer(
    accounts: Accounts,
) -> None:
    await accounts.sign_up("Ana", "password one", None)
    answers = []
    for name, password in [("Ana", "password two"), ("Nobody", "password one"), ("Ana", "")]:
        with pytest.raises(AccountError) as err:
            await accounts.sign_in(name, password, None)
        answers.append((err.value.code, err.value.message))
    assert answers == [("bad_credentials", "wrong name or password")] * 3


async def test_sessions_end_when_signed_out_or_expired(
    records: DbRecords, accounts: Accounts
) -> None:
    first = await accounts.sign_up("Ana", "password one", None)
    second = await accounts.sign_in("Ana", "password one", None)
    await accounts.sign_out(first.session_token)
    assert await accounts.session_account(first.session_token) is None
    assert await accounts.session_account(second.session_token) is not None
    async with records.sessions.begin() as s:
        await s.execute(update(LoginSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    assert await accounts.session_account(second.session_token) is None
    assert await accounts.purge_expired() == 1
    assert await accounts.session_account("not a token") is None


async def test_expired_sessions_are_purged_while_the_server_runs(
    records: DbRecords, accounts: Accounts
) -> None:
    """The app runs `purge_every` from its start (app/main.py); live sessions stay."""
    old = await accounts.sign_up("Ana", "correct horse", None)
    live = await accounts.sign_in("Ana", "correct horse", None)
    async with records.sessions.begin() as s:
        await s.execute(
            update(LoginSession)
            .where(LoginSession.token_hash == token_hash(old.session_token))
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    purging = asyncio.create_task(accounts.purge_every(0.05))
    try:
        for _ in range(100):
            async with records.sessions() as s:
                left = (await s.scalars(select(LoginSession.token_hash))).all()
            if len(left) == 1:
                break
            await asyncio.sleep(0.05)
    finally:
        purging.cancel()
    assert left == [token_hash(live.session_token)]
    assert await accounts.session_account(live.session_token) is not None


async def test_a_guests_seats_move_to_the_account_on_sign_up_and_sign_in(
    records: DbRecords, accounts: Accounts
) -> None:
    def seated(*guests: str) -> list[PlayerRecord]:
        return [PlayerRecord(f"p{i}", g, "h", i, guest_id=g) for i, g in enumerate(guests)]

    await records.save_room(RoomRecord("ROOM01", "bigtwo", {}, {}, "p0", seated("a", "b")))
    ana = await accounts.sign_up("Ana", "password one", "a")
    assert ana.moved_players == 1
    # a seat taken while signed in is the account's at once, though the room said nothing
    await records.save_room(RoomRecord("ROOM02", "bigtwo", {}, {}, "p0", seated("a", "c")))
    # another browser of Ana's, that played as a guest, signs in later
    again = await accounts.sign_in("Ana", "password one", "c")
    assert again.moved_players == 1
    async with records.sessions() as s:
        owners = (
            await s.execute(select(Player.guest_id, Player.account_id).order_by(Player.id))
        ).all()
    assert [tuple(o) for o in owners] == [
        ("a", ana.account_id),
        ("b", None),
        ("a", ana.account_id),
        ("c", ana.account_id),
    ]
