"""Web Push's storage on both databases: one key pair however many processes
start at once, subscriptions that follow whoever sent them last, and each
person's own only."""

from __future__ import annotations

import asyncio

from app.db.push import MAX_PER_BROWSER, PushStore
from app.db.records import DbRecords
from app.db.session import make_engine

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
    # the same browser, now used by someone else
    await store.subscribe("guest-b", None, "https://push.example/1", P256DH, AUTH)
    assert await store.of("guest-a", None) == []
    assert len(await store.of("guest-b", None)) == 1
    # nobody drops another's subscription
    assert not await store.unsubscribe("guest-a", None, "https://push.example/1")
    assert await store.unsubscribe("guest-b", None, "https://push.example/1")
    assert await store.of("guest-b", None) == []
    # a browser keeps its newest few
    for i in range(MAX_PER_BROWSER + 2):
        await store.subscribe("guest-c", None, f"https://push.example/c{i}", P256DH, AUTH)
    kept = sorted(s.endpoint for s in await store.of("guest-c", None))
    assert kept == sorted(f"https://push.example/c{i}" for i in range(2, MAX_PER_BROWSER + 2))
    await store.drop((await store.of("guest-c", None))[0].id)
    assert len(await store.of("guest-c", None)) == MAX_PER_BROWSER - 1
