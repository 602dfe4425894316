"""ClusterManager in one event loop, on MemoryRecords and a private Redis:
what it leaves in Redis when rooms close, and how it shares out rooms nobody
owns.  (tests/integration/test_cluster.py runs real processes.)"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from app.games import GAMES
from app.rooms.cluster import ClusterManager
from app.rooms.connection import Connection
from app.rooms.delivery import Resume
from app.rooms.errors import RoomError
from app.store.cluster import Cluster, rendezvous
from app.store.records import MemoryRecords
from tests.integration.test_cluster import private_redis
from tests.rooms.harness import FakeSocket

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def redis_url() -> Iterator[str]:
    with private_redis() as redis:
        yield redis.url


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
    lease = 1000  # ms: slack for a loaded machine (the living renew every third)
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


async def _frames_until_view(sock: FakeSocket) -> list[dict[str, object]]:
    for _ in range(200):
        if any("view" in m for m in sock.sent):
            return sock.sent
        await asyncio.sleep(0.01)
    raise AssertionError(f"no view came: {sock.sent}")


async def test_a_resume_across_a_takeover_gets_a_full_view_never_foreign_events(
    make: object,
) -> None:
    """Versions start again at 0 in the new owner: a `since` from the old one
    must not be answered with the new owner's events under the same numbers,
    relayed or not; a `since` from the new owner's incarnation still resumes."""
    new = make  # type: ignore[assignment]
    a: ClusterManager = new()  # type: ignore[operator]
    b: ClusterManager = new()  # type: ignore[operator]
    await a.start()
    await b.start()
    room, _ann, token = await a.create("bigtwo", {}, "Ann")
    for name in ("Bob", "Cy"):
        await room.join(name)
    old = Resume(room.delivery.incarnation, room.v)
    await a._step_down(room.code)  # A paused past its lease, say: B takes over
    taken = await b.find(room.code)
    assert taken is not None and taken is not room
    assert taken.delivery.incarnation != old.incarnation
    for i in range(old.v + 3):  # the new owner's versions pass the old one's
        await taken.join(f"Watcher{i}", spectator=True)
    assert taken.v > old.v + 2
    for via in (b, a):  # on the owner, and relayed from the other process
        sock = FakeSocket()
        conn = Connection(sock.send_text, sock.close)
        await via.open_socket(room.code, token, conn, old)
        frames = await _frames_until_view(sock)
        assert "view" in frames[0] and not any("event" in m for m in frames), frames
        assert frames[0]["inc"] == taken.delivery.incarnation and frames[0]["v"] == taken.v
        await conn.stop()
    # within the new incarnation a resume gets what it missed
    mark = Resume(taken.delivery.incarnation, taken.v)
    for name in ("Late1", "Late2"):
        await taken.join(name, spectator=True)
    sock = FakeSocket()
    conn = Connection(sock.send_text, sock.close)
    await b.open_socket(room.code, token, conn, mark)
    frames = await _frames_until_view(sock)
    missed = [m["event"] for m in frames if "event" in m]
    assert [e["name"] for e in missed] == ["Late1", "Late2"], missed  # type: ignore[index]
    await conn.stop()


async def _until(sock: FakeSocket, pred: Any, what: str) -> dict[str, Any]:
    """The first frame `sock` got that `pred` accepts (waiting up to 5 s)."""
    for _ in range(500):
        for m in sock.sent:
            if pred(m):
                return m
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {what} came: {sock.sent}")


async def _two_started(make: Any) -> tuple[ClusterManager, ClusterManager]:
    a: ClusterManager = make()
    b: ClusterManager = make()
    await a.start()
    await b.start()
    return a, b


async def test_relayed_messages_and_disconnect_reach_the_owner_in_order_with_acks(
    make: Any,
) -> None:
    """A tab held by another process sends a chat and closes at once: the
    owner handles the chat (and acks it) before the disconnect, as they
    happened - not the disconnect first, the message then lost."""
    owner, holder = await _two_started(make)
    room, _ann, ann_token = await owner.create("bigtwo", {}, "Ann")
    bob, bob_token = await room.join("Bob")
    bob_sock = FakeSocket()
    bob_conn = Connection(bob_sock.send_text, bob_sock.close)
    await owner.open_socket(room.code, bob_token, bob_conn, None)
    ann_sock = FakeSocket()
    ann_conn = Connection(ann_sock.send_text, ann_sock.close)
    relay = await holder.open_socket(room.code, ann_token, ann_conn, None)
    assert relay is not None and relay is not room  # relayed
    await _until(ann_sock, lambda m: "view" in m, "view")
    await relay.handle(ann_conn, 1, "cmd", {"type": "chat", "text": "hi"})
    assert (await _until(ann_sock, lambda m: m.get("re") == 1, "ack")).get("ok") is True
    for i in range(5):  # then a burst, and the tab closes straight after it
        await relay.handle(ann_conn, 2 + i, "cmd", {"type": "chat", "text": f"bye{i}"})
    await relay.disconnect(ann_conn)

    def ann_gone(m: dict[str, Any]) -> bool:
        return "view" in m and not m["view"]["room"]["seats"][0]["connected"]

    def ann_here(m: dict[str, Any]) -> bool:
        return "view" in m and bool(m["view"]["room"]["seats"][0]["connected"])

    await _until(bob_sock, ann_here, "Ann's coming")
    came_at = next(i for i, m in enumerate(bob_sock.sent) if ann_here(m))
    await _until(
        bob_sock, lambda m: ann_gone(m) and bob_sock.sent.index(m) > came_at, "Ann's going"
    )
    said = [m["event"]["text"] for m in bob_sock.sent if m.get("event", {}).get("type") == "chat"]
    gone_at = next(i for i, m in enumerate(bob_sock.sent) if i > came_at and ann_gone(m))
    last_chat = max(
        i for i, m in enumerate(bob_sock.sent) if m.get("event", {}).get("type") == "chat"
    )
    assert said == ["hi", "bye0", "bye1", "bye2", "bye3", "bye4"]
    assert last_chat < gone_at, bob_sock.sent
    assert owner.remote == {} and owner._relaying == {}  # nothing left behind
    await ann_conn.stop()
    await bob_conn.stop()
    del bob


async def test_one_slow_room_does_not_hold_up_another_rooms_relayed_traffic(make: Any) -> None:
    owner, holder = await _two_started(make)
    slow, _, slow_token = await owner.create("bigtwo", {}, "Ann")
    quick, _, quick_token = await owner.create("bigtwo", {}, "Cy")
    quick_sock = FakeSocket()
    quick_conn = Connection(quick_sock.send_text, quick_sock.close)
    relay = await holder.open_socket(quick.code, quick_token, quick_conn, None)
    assert relay is not None
    await _until(quick_sock, lambda m: "view" in m, "view")
    slow_sock = FakeSocket()
    slow_conn = Connection(slow_sock.send_text, slow_sock.close)
    async with slow.lock:  # the slow room is busy (a long write, say)
        await holder.open_socket(slow.code, slow_token, slow_conn, None)
        await relay.handle(quick_conn, 1, "cmd", {"type": "chat", "text": "still here"})
        said = await _until(quick_sock, lambda m: "event" in m, "the quick room's chat")
        assert said["event"]["text"] == "still here"
        assert not slow_sock.sent  # the slow room's socket waits for its room only
    await _until(slow_sock, lambda m: "view" in m, "the slow room's view, once free")
    await quick_conn.stop()
    await slow_conn.stop()


async def test_a_holder_that_only_looked_dead_is_told_to_close_its_relayed_socket(
    make: Any,
) -> None:
    """Just after a Redis restart every process looks dead until its next
    beat: the owner drops the relayed sockets of a holder it thinks dead, and
    the holder is told to close them, so their clients reconnect - rather than
    waiting for ever for frames nobody sends."""
    owner, holder = await _two_started(make)
    room, _ann, token = await owner.create("bigtwo", {}, "Ann")
    sock = FakeSocket()
    conn = Connection(sock.send_text, sock.close)
    assert await holder.open_socket(room.code, token, conn, None) is not None
    await _until(sock, lambda m: "view" in m, "view")
    assert len(owner.remote) == 1
    beating = holder._tasks[1]  # its _keep_leases: no beat puts the key back
    beating.cancel()
    await asyncio.gather(beating, return_exceptions=True)
    await owner.cluster.redis.delete(f"cr:proc:{holder.cluster.me}")  # as Redis lost it
    for _ in range(500):
        if sock.closed is not None:
            break
        await asyncio.sleep(0.01)
    assert sock.closed is not None and sock.closed[0] == 1012, sock.closed
    assert owner.remote == {}
    await conn.stop()


async def test_shutdown_ends_though_the_redis_client_loses_the_readers_cancel(
    make: Any,
) -> None:
    """Redis's asyncio client can swallow a cancel that lands in a blocking
    read (redis-py issue #2028); the inbox reader sits in one nearly all the
    time.  Shutdown must end all the same: here the inbox loses the first
    cancel and comes back with an empty batch, as a read that timed out does."""
    m: ClusterManager = make()
    lost: list[bool] = []

    async def inbox(block_ms: int = 1000) -> AsyncIterator[list[dict[str, Any]]]:
        while True:
            try:
                await asyncio.sleep(block_ms / 1000)
            except asyncio.CancelledError:
                if lost:
                    raise
                lost.append(True)
            yield []

    m.cluster.inbox = inbox  # type: ignore[method-assign]
    await m.start()
    await asyncio.sleep(0.05)
    await asyncio.wait_for(m.shutdown(), 2.5)  # under STOP_WAIT: not by giving up
    assert lost == [True]
    assert all(t.done() for t in m._tasks)


async def test_a_failing_job_is_tried_again_later_and_later_until_shutdown(
    make: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis away: each of the manager's jobs fails at once, every time.  It
    must not be asked again at a fixed pace by every process (jittered,
    doubling delays, capped short so rooms come back soon after Redis does),
    the outage is logged once, not per try, and shutdown still ends it."""
    m: ClusterManager = make()
    loop = asyncio.get_running_loop()
    tries: list[float] = []

    async def job() -> None:
        tries.append(loop.time())
        raise ConnectionError("Redis is away")

    with caplog.at_level(logging.ERROR, logger="app.rooms.cluster"):
        task = loop.create_task(m._forever(job))
        while len(tries) < 6:
            await asyncio.sleep(0.05)
    gaps = [b - a for a, b in itertools.pairwise(tries)]
    # Backoff(0.25, cap 1): each delay from the upper half of 0.25, 0.5, 1, 1, ...
    assert gaps[0] >= 0.125 and gaps[1] >= 0.25 and min(gaps[2:]) >= 0.5, gaps
    logged = [r for r in caplog.records if "job failed" in r.getMessage()]
    assert len(logged) == 1, [r.getMessage() for r in caplog.records]
    m._stopping = True
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def _orphan(make: object, redis_url: str) -> tuple[str, ClusterManager]:
    """A room whose owner's lease has lapsed, and a lone live process beside
    it that plays no Big Two: a room it can never rebuild."""
    gone: ClusterManager = make(1000)  # type: ignore[operator]
    code = (await gone.create("bigtwo", {}, "Ann"))[0].code
    await asyncio.sleep(1.5)  # its lease lapses: the room is nobody's
    other = {name: g for name, g in GAMES.items() if name != "bigtwo"}
    p = ClusterManager(gone.records, other, Cluster(redis_url, lease_ms=1000))
    await p.cluster.beat()
    return code, p


async def test_a_room_that_cannot_be_rebuilt_is_adopted_again_only_after_a_backoff(
    make: object, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    code, p = await _orphan(make, redis_url)
    epoch = f"cr:epoch:{code}"
    try:
        caplog.set_level(logging.ERROR, logger="app.rooms.manager")
        assert await p.adopt_once() == 0
        assert int(await p.cluster.redis.get(epoch)) == 2  # taken once, by p
        assert p.epochs == {} and await p.cluster.owner(code) is None  # and let go
        assert sum("not available" in r.getMessage() for r in caplog.records) == 1
        for _ in range(3):  # the next looks, as ADOPT_EVERY would make them, leave it
            assert await p.adopt_once() == 0
        assert int(await p.cluster.redis.get(epoch)) == 2
        assert sum("not available" in r.getMessage() for r in caplog.records) == 1
        # once its wait is over (the clock past it) it is tried again, and
        # the wait after that is longer
        first_wait = p._unbuilt[code][0] - p.clock()
        real = p.clock
        p.clock = lambda: real() + 4.0  # type: ignore[method-assign]
        assert await p.adopt_once() == 0
        assert int(await p.cluster.redis.get(epoch)) == 3
        assert p._unbuilt[code][0] - p.clock() > first_wait
        # a person asking for it is answered at once, backoff or not
        assert await p.find(code) is None
        assert int(await p.cluster.redis.get(epoch)) == 4
    finally:
        await p.shutdown()
        await p.cluster.close()


async def test_a_rebuild_that_fails_lets_the_lease_go(make: object, redis_url: str) -> None:
    code, p = await _orphan(make, redis_url)
    p.games = GAMES  # it plays Big Two now, but its storage fails once

    async def away(code: str) -> Any:
        raise OSError("the database went away")

    real_load = p.records.load_room
    p.records.load_room = away  # type: ignore[method-assign]
    try:
        with pytest.raises(RoomError, match="cannot be opened"):
            await p.adopt_once()
        # no lease kept for a room nobody serves: another process may take it
        assert p.epochs == {} and await p.cluster.owner(code) is None
        p.records.load_room = real_load  # type: ignore[method-assign]
        real = p.clock
        p.clock = lambda: real() + 4.0  # type: ignore[method-assign]
        assert await p.adopt_once() == 1
        assert code in p.rooms and code in p.epochs
    finally:
        await p.shutdown()
        await p.cluster.close()


async def test_a_relayed_message_redis_cannot_carry_is_refused_and_its_socket_closes() -> None:
    """Redis killed under a relayed socket: the message the tab sends next is
    answered `unavailable` and the socket closes with 1013 (the tab
    reconnects and resumes), never a reader that ends with nothing said."""
    with private_redis() as redis:
        records = MemoryRecords()
        owner = ClusterManager(records, GAMES, Cluster(redis.url))
        holder = ClusterManager(records, GAMES, Cluster(redis.url))
        try:
            await owner.start()
            await holder.start()
            room, _ann, token = await owner.create("bigtwo", {}, "Ann")
            sock = FakeSocket()
            conn = Connection(sock.send_text, sock.close)
            relay = await holder.open_socket(room.code, token, conn, None)
            assert relay is not None and relay is not room  # relayed
            await _until(sock, lambda m: "view" in m, "view")
            v = room.v
            redis.stop()  # SIGKILL, the socket still open
            await relay.handle(conn, 7, "cmd", {"type": "chat", "text": "hi"})
            refused = await _until(sock, lambda m: m.get("re") == 7, "answer")
            assert refused["error"]["code"] == "unavailable", refused
            for _ in range(500):
                if sock.closed is not None:
                    break
                await asyncio.sleep(0.01)
            assert sock.closed is not None and sock.closed[0] == 1013, sock.closed
            assert room.v == v  # the owner never had it
        finally:
            for m in (owner, holder):
                with contextlib.suppress(Exception):
                    await m.shutdown()
                with contextlib.suppress(Exception):
                    await m.cluster.close()
