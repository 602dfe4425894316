"""ClusterManager in one event loop, on MemoryRecords and a private Redis:
what it leaves in Redis when rooms close, and how it shares out rooms nobody
owns.  (tests/integration/test_cluster.py runs real processes.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from app.games import GAMES
from app.rooms.cluster import ClusterManager
from app.store.cluster import Cluster, rendezvous
from app.store.records import MemoryRecords
from tests.integration.test_cluster import Redis
from tests.services import require_redis

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def redis_url() -> Iterator[str]:
    require_redis()  # the machine's Redis tells us redis-server is installed
    redis = Redis()
    redis.start()
    try:
        yield redis.url
    finally:
        redis.stop()


@pytest.fixture
async def make(redis_url: str) -> AsyncIterator[object]:
    made: list[ClusterManager] = []
    records = MemoryRecords()

    def manager(lease_ms: int = 3000) -> ClusterManager:
        m = ClusterManager(records, GAMES, Cluster(redis_url, lease_ms=lease_ms))
        made.append(m)
        return m

    yield manager
    for m in made:
        await m.shutdown()
        await m.cluster.close()


async def _keys(cluster: Cluster) -> dict[str, int]:
    """How many keys of each kind (`cr:owner`, `cr:epoch`, ...) Redis holds."""
    counts: dict[str, int] = {}
    async for key in cluster.redis.scan_iter(match="cr:*"):
        kind = ":".join(key.decode().split(":")[:2])
        counts[kind] = counts.get(kind, 0) + 1
    return counts


async def test_closed_rooms_leave_no_lease_stream_or_key(make: object) -> None:
    new = make  # type: ignore[assignment]
    a: ClusterManager = new()  # type: ignore[operator]
    b: ClusterManager = new()  # type: ignore[operator]
    await a.start()
    await b.start()

    async def open_and_close(n: int) -> dict[str, int]:
        rooms = [(await a.create("bigtwo", {}, "Ann"))[0] for _ in range(n)]
        during = await _keys(a.cluster)
        assert during.get("cr:owner", 0) == n and during.get("cr:epoch", 0) == n
        for room in rooms:
            await room.close()
        while a._chores:  # the closed rooms' leases going
            await asyncio.gather(*a._chores, return_exceptions=True)
        assert a.epochs == {} and a.rooms == {}
        return await _keys(a.cluster)

    after_10 = await open_and_close(10)
    after_40 = await open_and_close(30)
    assert after_10.get("cr:owner", 0) == after_10.get("cr:epoch", 0) == 0
    assert after_40 == after_10, (after_10, after_40)
    # what remains is per process, not per room: two beats, the live set
    assert after_40 == {"cr:proc": 2, "cr:procs": 1}, after_40


async def test_a_dead_process_inbox_expires(redis_url: str) -> None:
    dead = Cluster(redis_url, lease_ms=100)  # its inbox outlives it by 2 s
    alive = Cluster(redis_url, lease_ms=3000)
    try:
        await alive.send(dead.me, {"t": "frame"})
        key = f"cr:in:{dead.me}"
        assert 0 < await alive.redis.pttl(key) <= alive.stream_ttl_ms  # a new stream expires
        await dead.beat()  # its process's beat sets the expiry to its own
        assert dead.stream_ttl_ms - 500 < await alive.redis.pttl(key) <= dead.stream_ttl_ms
        await asyncio.sleep(dead.stream_ttl_ms / 1000 + 0.3)  # dead: no beat
        assert not await alive.redis.exists(key)
        await alive.send(dead.me, {"t": "frame"})  # sent to the dead: expires too
        assert 0 < await alive.redis.pttl(key) <= alive.stream_ttl_ms
        assert dead.me not in await alive.beat()
    finally:
        await dead.close()
        await alive.close()


async def test_unowned_rooms_spread_over_the_live_processes(make: object) -> None:
    new = make  # type: ignore[assignment]
    lease = 300
    gone: ClusterManager = new(lease)  # type: ignore[operator]
    codes = [(await gone.create("bigtwo", {}, "Ann"))[0].code for _ in range(30)]
    await asyncio.sleep(lease * 1.5 / 1000)  # its leases lapse: the rooms are nobody's
    procs: list[ClusterManager] = [new(lease) for _ in range(3)]  # type: ignore[operator]
    for _ in range(2):  # the second round: each has seen every other's beat
        for p in procs:
            await p.cluster.beat()
    live = procs[0].cluster.live
    assert sorted(live) == sorted(p.cluster.me for p in procs)
    share = {p.cluster.me: {c for c in codes if rendezvous(c, live) == p.cluster.me} for p in procs}
    for p in procs:  # the first to look takes its share only
        assert await p.adopt_once() == len(share[p.cluster.me])
        assert set(p.rooms) == share[p.cluster.me]
    assert all(len(s) >= 3 for s in share.values()), {k: len(s) for k, s in share.items()}
    assert sum(len(p.rooms) for p in procs) == 30
    # the third dies (its leases lapse): its rooms go to the other two, evenly enough
    dead = procs.pop()
    for _ in range(6):  # the living renew their leases as they would (every lease / 3)
        await asyncio.sleep(lease / 3000)
        for p in procs:
            await p.cluster.beat()
            assert await p.cluster.renew_all(list(p.epochs.items())) == [True] * len(p.epochs)
    assert dead.cluster.me not in procs[0].cluster.live
    orphans = set(dead.rooms)
    took = [await p.adopt_once() for p in procs]
    assert sum(took) == len(orphans)
    assert set(procs[0].rooms) | set(procs[1].rooms) == set(codes)
    for p in procs:  # each kept its own and took only the orphans rendezvous gave it
        assert share[p.cluster.me] <= set(p.rooms)
