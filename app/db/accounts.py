"""Optional accounts: a name, an argon2 password hash, and login sessions.

Hashing is deliberately slow and memory-hungry, so it runs in a worker thread:
the event loop that carries every room's actions must never wait on it.  A
sign-in for a name that does not exist still verifies against a dummy hash, so
the answer takes as long as a wrong password and does not tell which names
exist.

Session cookies are random secrets; only their SHA-256 is stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import unicodedata
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import Account, GuestAlias, LoginSession, Player, Room, utcnow
from app.db.summaries import adopt

log = logging.getLogger(__name__)

SESSION_DAYS = 30
NAME_MAX = 32
PASSWORD_MIN = 8
PASSWORD_MAX = 1024


class AccountError(Exception):
    """A refused sign-up or sign-in; `code` for programs, `message` for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class SignedIn:
    account_id: int
    name: str
    session_token: str  # goes into the cookie; never stored
    moved_players: int  # guest seats that now belong to the account


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def clean_name(name: object) -> str:
    """The name as shown: NFC, inner runs of space collapsed, 1..32 characters,
    printable.  Raises AccountError with what is wrong."""
    if not isinstance(name, str):
        raise AccountError("bad_name", "name must be text")
    shown = " ".join(unicodedata.normalize("NFC", name).split())
    if not shown:
        raise AccountError("bad_name", "name must not be empty")
    if len(shown) > NAME_MAX:
        raise AccountError("bad_name", f"name must be at most {NAME_MAX} characters")
    if any(unicodedata.category(ch).startswith("C") for ch in shown):
        raise AccountError("bad_name", "name must not contain control characters")
    return shown


def name_key(shown: str) -> str:
    return shown.casefold()[:NAME_MAX]


def check_password(password: object) -> str:
    if not isinstance(password, str):
        raise AccountError("bad_password", "password must be text")
    if len(password) < PASSWORD_MIN:
        raise AccountError("bad_password", f"password must be at least {PASSWORD_MIN} characters")
    if len(password) > PASSWORD_MAX:
        raise AccountError("bad_password", f"password must be at most {PASSWORD_MAX} characters")
    return password


class Accounts:
    """What app/api/accounts.py and app/api/identity.py need; lives on
    `app.state.accounts`."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        hasher: PasswordHasher | None = None,
        writing: Callable[[], AbstractAsyncContextManager[None]] | None = None,
    ) -> None:
        """`writing`: the records' write guard, so that on SQLite account writes
        queue with the rooms' writes instead of colliding with them."""
        self.sessions = sessions
        self.hasher = hasher or PasswordHasher()
        self._dummy_hash: str | None = None
        self._writing = writing or contextlib.nullcontext

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncSession]:
        async with self._writing(), self.sessions.begin() as s:
            yield s

    async def _hash(self, password: str) -> str:
        return await asyncio.to_thread(self.hasher.hash, password)

    async def _verify(self, stored: str, password: str) -> bool:
        def verify() -> bool:
            try:
                return self.hasher.verify(stored, password)
            except (VerificationError, InvalidHashError):
                return False

        return await asyncio.to_thread(verify)

    async def sign_up(self, name: object, password: object, guest_id: str | None) -> SignedIn:
        shown = clean_name(name)
        pw = check_password(password)
        hashed = await self._hash(pw)
        try:
            async with self._write() as s:
                account = Account(name=shown, name_key=name_key(shown), password_hash=hashed)
                s.add(account)
                await s.flush()
                moved = await _adopt(s, account.id, guest_id)
                token = await _new_session(s, account.id, guest_id)
                return SignedIn(account.id, shown, token, moved)
        except IntegrityError:
            raise AccountError(
                "name_taken", f"the name {shown!r} is taken: choose another, or sign in"
            ) from None

    async def sign_in(self, name: object, password: object, guest_id: str | None) -> SignedIn:
        refused = AccountError("bad_credentials", "wrong name or password")
        if not isinstance(name, str) or not isinstance(password, str) or not password:
            raise refused
        try:
            key = name_key(clean_name(name))
        except AccountError:
            raise refused from None
        async with self.sessions() as s:
            account = (await s.scalars(select(Account).where(Account.name_key == key))).first()
        if account is None:
            await self._verify(await self._dummy(), password)  # same time as a wrong password
            raise refused
        if len(password) > PASSWORD_MAX or not await self._verify(account.password_hash, password):
            raise refused
        rehash = self.hasher.check_needs_rehash(account.password_hash)
        new_hash = await self._hash(password) if rehash else None
        async with self._write() as s:
            if new_hash is not None:
                await s.execute(
                    update(Account).where(Account.id == account.id).values(password_hash=new_hash)
                )
            moved = await _adopt(s, account.id, guest_id)
            token = await _new_session(s, account.id, guest_id)
        return SignedIn(account.id, account.name, token, moved)

    async def sign_out(self, token: str | None) -> None:
        if not token:
            return
        async with self._write() as s:
            await s.execute(
                delete(LoginSession).where(LoginSession.token_hash == token_hash(token))
            )

    async def session_account(self, token: str) -> tuple[int, str] | None:
        """The signed-in account for a session cookie, or None if unknown or expired."""
        if not token or len(token) > 128:
            return None
        async with self.sessions() as s:
            found = (
                await s.execute(
                    select(Account.id, Account.name, LoginSession.expires_at)
                    .join(LoginSession, LoginSession.account_id == Account.id)
                    .where(LoginSession.token_hash == token_hash(token))
                )
            ).first()
        if found is None:
            return None
        account_id, name, expires = found
        if _aware(expires) <= datetime.now(UTC):
            return None
        return int(account_id), str(name)

    async def adopt_guest(self, account_id: int, guest_id: str | None) -> int:
        """Give the account every game this browser played as a guest."""
        async with self._write() as s:
            return await _adopt(s, account_id, guest_id)

    async def guest_of(self, key: str) -> str | None:
        """The guest id a cookie whose hash is `key` acts as: itself, unless a
        move link made it an alias of a person's guest id (that id) or
        revoked it (None: the browser is nobody any more).  One read by key,
        on every request that asks who it is, so that a revoked cookie stops
        acting at once in every process."""
        async with self.sessions() as s:
            found = (
                await s.execute(select(GuestAlias.guest_id).where(GuestAlias.key == key))
            ).first()
        return key if found is None else found[0]

    async def move_guest(self, key: str, guest_id: str) -> None:
        """The person `guest_id` continues on the browser whose new cookie
        hashes to `key`: that cookie acts as them from now on, and every
        other cookie that did - the person's own first cookie, and any
        earlier alias - is revoked, in one transaction."""
        async with self._write() as s:
            await s.execute(
                update(GuestAlias).where(GuestAlias.guest_id == guest_id).values(guest_id=None)
            )
            await s.execute(delete(GuestAlias).where(GuestAlias.key.in_((guest_id, key))))
            s.add(GuestAlias(key=guest_id, guest_id=None))
            s.add(GuestAlias(key=key, guest_id=guest_id))

    async def rooms_of_guest(self, guest_id: str) -> list[str]:
        """The open rooms where the guest `guest_id` holds a place on a
        device: where a move link made in one of them moves them too."""
        async with self.sessions() as s:
            found = await s.execute(
                select(Room.code)
                .join(Player, Player.room_id == Room.id)
                .where(
                    Player.guest_id == guest_id,
                    Player.present.is_(True),
                    Player.is_bot.is_(False),
                    Player.token_hash != "",
                    Room.closed.is_(False),
                )
                .distinct()
            )
            return sorted(str(code) for (code,) in found)

    async def purge_expired(self) -> int:
        async with self._write() as s:
            gone = await s.execute(delete(LoginSession).where(LoginSession.expires_at <= utcnow()))
            return int(gone.rowcount or 0)  # type: ignore[attr-defined]

    async def purge_every(self, seconds: float) -> None:
        """Purge expired sessions now and every `seconds` for as long as the
        server runs: an expired one signs nobody in, but its row would stay."""
        while True:
            try:
                gone = await self.purge_expired()
            except Exception:  # the database is away: try again next time
                log.exception("could not purge expired sessions")
            else:
                if gone:
                    log.info("purged %d expired session(s)", gone)
            await asyncio.sleep(seconds)

    async def _dummy(self) -> str:
        if self._dummy_hash is None:
            self._dummy_hash = await self._hash(secrets.token_urlsafe(16))
        return self._dummy_hash


def _aware(dt: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything here is written in UTC."""
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


async def _adopt(s: AsyncSession, account_id: int, guest_id: str | None) -> int:
    if not guest_id:
        return 0
    moved = await s.execute(
        update(Player)
        .where(Player.guest_id == guest_id, Player.account_id.is_(None))
        .values(account_id=account_id)
    )
    # the guest's records (app/db/summaries.py) move too
    await s.run_sync(lambda sync: adopt(sync.connection(), guest_id, account_id))
    return int(moved.rowcount or 0)  # type: ignore[attr-defined]


async def _new_session(s: AsyncSession, account_id: int, guest_id: str | None) -> str:
    token = secrets.token_urlsafe(32)
    s.add(
        LoginSession(
            token_hash=token_hash(token),
            account_id=account_id,
            guest_id=guest_id,
            expires_at=utcnow() + timedelta(days=SESSION_DAYS),
        )
    )
    return token
