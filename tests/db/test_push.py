"""Web Push's storage on both databases: one key pair however many processes
start at once, subscriptions that change owner only to their own person
(never by another's PUT), and each person's own only."""

from __future__ import annotations

import asyncio

from app.db.accounts import Accounts
from app.db.push import MAX_PER_BROWSER, PushStore
from app.db.records import DbRecords
from app.db.session import make_engine
from tests.db.test_accounts import FAST

P256DH = "B" + "A" * 86  # the store keeps what the route checked
AUTH = "A" * 22


async def test_processes_starting_together_share_one_key_pair(db_url: str) -> None:
    engines = [make_engine(db_url) for _ in range(4)]
    try:
        stores = [PushStore(DbRecords(e).sessions) for e in engines]
        made = await asyncio.gather(*(s.keys() for s in stores))
        assert len(set(made)) == 1, "every process signs with the same key"
        assert await stores[0].keys() == made[0]
    finally:
        for e in engines:
            await e.dispose()


async def test_subscriptions_follow_their_browser_and_stay_their_own(
    records: DbRecords,
) -> None:
    store = PushStore(records.sessions, records.writing)
    await store.subscribe("guest-a", None, "https://push.example/1", P256DH, AUTH)
    assert [s.endpoint for s in await store.of("guest-a", None)] == ["https://push.example/1"]
    # another person naming the endpoint does not make it theirs ...
    assert not await store.subscribe("guest-b", None, "https://push.example/1", "B" * 87, AUTH)
    assert await store.of("guest-b", None) == []
    mine = await store.of("guest-a", None)
    assert [(s.endpoint, s.p256dh) for s in mine] == [("https://push.example/1", P256DH)]
    # ... nor lets them drop it
    assert not await store.unsubscribe("guest-b", None, "https://push.example/1")
    # its own person renews it: the browser (new keys), or the account from a
    # new guest cookie (signed out and in again on it)
    ann = await Accounts(records.sessions, FAST, records.writing).sign_up("Ann", "x" * 12, None)
    assert await store.subscribe("guest-a", ann.account_id, "https://push.example/1", P256DH, AUTH)
    assert await store.subscribe("guest-a2", ann.account_id, "https://push.example/1", P256DH, AUTH)
    assert len(await store.of("guest-a2", None)) == 1
    assert not await store.subscribe("guest-a", None, "https://push.example/1", P256DH, AUTH)
    assert await store.unsubscribe("guest-a2", None, "https://push.example/1")
    assert await store.of("guest-a2", ann.account_id) == []
    # a browser keeps its newest few
    for i in range(MAX_PER_BROWSER + 2):
        await store.subscribe("guest-c", None, f"https://push.example/c{i}", P256DH, AUTH)
    kept = sorted(s.endpoint for s in await store.of("guest-c", None))
    assert kept == sorted(f"https://push.example/c{i}" for i in range(2, MAX_PER_BROWSER + 2))
    await store.drop((await store.of("guest-c", None))[0].id)
    assert len(await store.of("guest-c", None)) == MAX_PER_BROWSER - 1
