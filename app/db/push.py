"""Web Push's storage: the server's VAPID key pair and the browsers'
subscriptions, both in the database.

Why the database and not a file beside SQLite: with several processes
(PostgreSQL and Redis) every process must sign with the one key pair the
browsers subscribed with, and only the database is shared by all of them; a
key file would need a volume of its own in the compose, and a second process
starting on a fresh machine would make a second pair.  The first process to
start makes the pair and inserts it as row 1; one that loses that race finds
the row taken and reads the winner's (`keys`).

What a copy of the database gives away: the private key and the endpoints,
enough to send a stranger's notifications to these browsers (each push
service's address is a capability).  It gives no one a browser's cookie or a
card; docs/security.md lists it with the rest.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from sqlalchemy import delete, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import PushKey, PushSubscription

#: subscriptions kept per browser: a person has a few devices, each one
#: browser; more would only be someone filling the table
MAX_PER_BROWSER = 5


@dataclass(frozen=True)
class VapidKeys:
    #: PKCS#8 PEM of the P-256 private key
    private_pem: str
    #: the raw public point, base64url without padding (`applicationServerKey`)
    public_key: str


@dataclass(frozen=True)
class Subscription:
    id: int
    endpoint: str
    p256dh: str
    auth: str


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def new_keys() -> VapidKeys:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    point = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return VapidKeys(pem, b64url(point))


def _owns(row: PushSubscription, guest_id: str, account_id: int | None) -> bool:
    """Whether a stored subscription is this person's: their browser's, or
    their account's."""
    return row.guest_id == guest_id or (account_id is not None and row.account_id == account_id)


class PushStore:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        writing: Callable[[], AbstractAsyncContextManager[None]] | None = None,
    ) -> None:
        """`writing`: the records' write guard (SQLite: one writer at a time)."""
        self.sessions = sessions
        self._writing = writing or contextlib.nullcontext

    async def keys(self) -> VapidKeys:
        """The key pair, made now if no process has made it yet."""
        found = await self._stored_keys()
        if found is not None:
            return found
        made = new_keys()
        try:
            async with self._writing(), self.sessions.begin() as s:
                s.add(PushKey(id=1, private_pem=made.private_pem, public_key=made.public_key))
        except IntegrityError:  # another process made it first: theirs is the one
            pass
        found = await self._stored_keys()
        assert found is not None, "the key row was just written"
        return found

    async def _stored_keys(self) -> VapidKeys | None:
        async with self.sessions() as s:
            row = await s.get(PushKey, 1)
            return None if row is None else VapidKeys(row.private_pem, row.public_key)

    async def subscribe(
        self, guest_id: str, account_id: int | None, endpoint: str, p256dh: str, auth: str
    ) -> bool:
        """Keep this browser's subscription for this person; False, with
        nothing changed, when the endpoint is someone else's.  An endpoint
        is taken over only by its own person (the same browser, or the same
        account: signed in again, the keys renewed); anyone else who names it
        - it may have leaked - must not turn another's alerts to themselves
        nor be able to delete them after.  A browser used by another person
        now subscribes anew at its push service, which gives a new endpoint
        (static/js/nudge.js), and the old one is dropped when its service
        says it is gone."""
        for _ in range(2):  # two browsers' first subscribe racing: the loser updates
            try:
                async with self._writing(), self.sessions.begin() as s:
                    row = await s.scalar(
                        select(PushSubscription).where(PushSubscription.endpoint == endpoint)
                    )
                    if row is None:
                        s.add(
                            PushSubscription(
                                endpoint=endpoint,
                                p256dh=p256dh,
                                auth=auth,
                                guest_id=guest_id,
                                account_id=account_id,
                            )
                        )
                    elif not _owns(row, guest_id, account_id):
                        return False
                    else:
                        row.p256dh, row.auth = p256dh, auth
                        row.guest_id, row.account_id = guest_id, account_id
                    await s.flush()
                    await self._trim(s, guest_id)
                return True
            except IntegrityError:
                continue
        return False

    async def _trim(self, s: AsyncSession, guest_id: str) -> None:
        ids = (
            await s.scalars(
                select(PushSubscription.id)
                .where(PushSubscription.guest_id == guest_id)
                .order_by(PushSubscription.id.desc())
                .offset(MAX_PER_BROWSER)
            )
        ).all()
        if ids:
            await s.execute(delete(PushSubscription).where(PushSubscription.id.in_(ids)))

    async def unsubscribe(self, guest_id: str, account_id: int | None, endpoint: str) -> bool:
        """Forget a subscription, only if it is the asker's."""
        mine = PushSubscription.guest_id == guest_id
        if account_id is not None:
            mine = or_(mine, PushSubscription.account_id == account_id)
        async with self._writing(), self.sessions.begin() as s:
            gone = await s.execute(
                delete(PushSubscription)
                .where(PushSubscription.endpoint == endpoint, mine)
                .returning(PushSubscription.id)
            )
            return gone.first() is not None

    async def of(self, guest_id: str | None, account_id: int | None) -> list[Subscription]:
        """Every subscription of a person: their account's on any device, and
        their browser's."""
        who = []
        if guest_id:
            who.append(PushSubscription.guest_id == guest_id)
        if account_id is not None:
            who.append(PushSubscription.account_id == account_id)
        if not who:
            return []
        async with self.sessions() as s:
            rows = await s.scalars(select(PushSubscription).where(or_(*who)))
            return [Subscription(r.id, r.endpoint, r.p256dh, r.auth) for r in rows]

    async def drop(self, subscription_id: int) -> None:
        """A subscription its push service says is gone (404, 410)."""
        async with self._writing(), self.sessions.begin() as s:
            await s.execute(delete(PushSubscription).where(PushSubscription.id == subscription_id))
