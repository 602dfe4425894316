"""Cluster.send on a private Redis: what one turn of the loop sends to a
process goes in one round trip (app/store/cluster.py), and batching must not
cost what a message each guaranteed - order, an answer for every sender, an
error (never a hang) when Redis is away or the link closes."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from redis.exceptions import RedisError

from app.store.cluster import BATCHES, RENEW_CHUNK, Cluster
from tests.integration.test_cluster import Redis, private_redis

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def redis() -> Iterator[Redis]:
    with private_redis() as server:
        yield server


async def _read(reader: Cluster, n: int) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    async for batch in reader.inbox(block_ms=200):
        got.extend(batch)
        if len(got) >= n:
            return got
    raise AssertionError("the inbox ended")


async def test_what_one_turn_sends_arrives_whole_and_in_order(redis: Redis) -> None:
    sender, reader = Cluster(redis.url), Cluster(redis.url)
    try:
        await reader.start_reading()
        # 300 senders in one turn, then 50 more while the first round trip is out
        first = [asyncio.create_task(sender.send(reader.me, {"n": n})) for n in range(300)]
        await asyncio.sleep(0)
        later = [asyncio.create_task(sender.send(reader.me, {"n": n})) for n in range(300, 350)]
        await asyncio.gather(*first, *later)  # every sender is answered
        got = await _read(reader, 350)
        assert [m["n"] for m in got] == list(range(350))
        assert sender._outboxes == {}  # nothing queued, no task left behind
    finally:
        await sender.close()
        await reader.close()


async def test_redis_away_fails_each_waiting_sender_and_the_next_send_goes_through(
    redis: Redis,
) -> None:
    sender = Cluster(redis.url)
    try:
        await sender.send("someone", {"n": 0})
        redis.stop()
        outcomes = await asyncio.gather(
            *(sender.send("someone", {"n": n}) for n in range(1, 6)), return_exceptions=True
        )
        assert all(isinstance(o, Exception) for o in outcomes), outcomes
        assert sender._outboxes == {}
        redis.start()  # a fresh Redis on the same port: its streams are gone
        reader = Cluster(redis.url)
        try:
            await reader.start_reading()
            await sender.send(reader.me, {"n": 6})
            assert [m["n"] for m in await _read(reader, 1)] == [6]
        finally:
            await reader.close()
    finally:
        await sender.close()


async def test_closing_fails_sends_waiting_on_a_round_trip_instead_of_hanging(
    redis: Redis,
) -> None:
    sender = Cluster(redis.url)
    await sender.send("nobody", {"n": 0})  # connected
    assert redis.proc is not None
    os.kill(redis.proc.pid, signal.SIGSTOP)  # Redis takes the bytes, never answers
    waiting = [asyncio.create_task(sender.send("nobody", {"n": n})) for n in range(1, 4)]
    await asyncio.sleep(0.2)
    assert not any(t.done() for t in waiting)
    await asyncio.wait_for(sender.close(), 5)
    for task in waiting:
        with pytest.raises(RedisError):
            await task


async def test_a_turns_messages_are_one_entry_for_this_release_one_each_for_an_older(
    redis: Redis,
) -> None:
    """A process of an earlier release (its id lacks BATCHES) reads one
    message an entry: it must be sent exactly that, or it would lose what a
    batched entry held during a rolling upgrade.  This release reads both."""
    sender, reader = Cluster(redis.url), Cluster(redis.url)
    older = "0123456789ab"  # an id as the earlier release made them
    assert reader.me.endswith(BATCHES) and not older.endswith(BATCHES)
    try:
        await reader.start_reading()
        await asyncio.gather(*(sender.send(older, {"n": n}) for n in range(3)))
        entries = await sender.redis.xrange(f"cr:in:{older}")
        assert [list(fields) for _id, fields in entries] == [[b"m"]] * 3
        # an older sender's entry, then a turn of this release's: one entry
        await sender.redis.xadd(f"cr:in:{reader.me}", {b"m": b'{"n": 0}'})
        await asyncio.gather(*(sender.send(reader.me, {"n": n}) for n in range(1, 4)))
        entries = await sender.redis.xrange(f"cr:in:{reader.me}")
        assert [list(fields) for _id, fields in entries] == [[b"m"], [b"b"]]
        assert [m["n"] for m in await _read(reader, 4)] == [0, 1, 2, 3]
    finally:
        await sender.close()
        await reader.close()


async def test_leases_reads_every_rooms_owner_and_epoch_in_one_call(redis: Redis) -> None:
    """What `_watch` compares with each relayed socket's owner, twice a second."""
    one, two = Cluster(redis.url), Cluster(redis.url)
    try:
        first = await one.take("AAAA")
        second = await two.take("BBBB")
        assert first is not None and second is not None
        leases = await one.leases(["AAAA", "CCCC", "BBBB"])
        assert leases == [(one.me, first), None, (two.me, second)]
        assert leases[0] == await one.owner("AAAA") and await one.leases([]) == []
    finally:
        await one.close()
        await two.close()


async def test_renewing_more_leases_than_a_round_trip_holds_answers_each_in_order(
    redis: Redis,
) -> None:
    """`renew_all` goes RENEW_CHUNK leases to a round trip; each answer must
    still be its own lease's (a lost one in a later chunk is told as lost)."""
    me, other = Cluster(redis.url), Cluster(redis.url)
    try:
        codes = [f"R{n:04d}" for n in range(2 * RENEW_CHUNK + 7)]
        leases = [(code, await me.take(code)) for code in codes]
        assert all(epoch is not None for _c, epoch in leases)
        lost = codes[RENEW_CHUNK + 3]
        epoch = dict(leases)[lost]
        assert epoch is not None
        await me.release(lost, epoch)
        assert await other.take(lost) is not None  # another process owns it now
        kept = await me.renew_all([(c, e) for c, e in leases if e is not None])
        assert kept == [code != lost for code in codes]
        assert await me.renew_all([]) == []
    finally:
        await me.close()
        await other.close()
