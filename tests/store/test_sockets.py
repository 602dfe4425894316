"""Open sockets counted against a cap (app/store/sockets.py): in this process,
and in Redis for several processes, where the sockets of a process that stops
renewing them (it died) stop counting within the TTL."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable

import pytest
from redis.asyncio import Redis

from app.store.sockets import MemorySockets, OpenSockets, RedisSockets
from tests.services import free_port, require_redis

Processes = Callable[..., RedisSockets]


@pytest.fixture
async def processes() -> AsyncIterator[Processes]:
    """Makes a RedisSockets per simulated process, all on one key prefix of
    this test's own; at the end stops them and deletes the test's keys."""
    url = require_redis()
    prefix = f"test-sockets:{uuid.uuid4().hex}:"
    made: list[RedisSockets] = []

    def make(ttl_ms: int = 3000) -> RedisSockets:
        made.append(RedisSockets(url, ttl_ms=ttl_ms, prefix=prefix))
        return made[-1]

    yield make
    for p in made:
        await p.aclose()
    client = Redis.from_url(url)
    keys = [k async for k in client.scan_iter(match=prefix + "*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.fixture(params=["memory", "redis"])
def counter(request: pytest.FixtureRequest, processes: Processes) -> OpenSockets:
    return MemorySockets() if request.param == "memory" else processes()


async def test_a_key_holds_at_most_its_cap(counter: OpenSockets) -> None:
    assert await counter.open("seat:A", 2) is not None
    assert await counter.open("seat:A", 2) is not None
    assert await counter.open("seat:A", 2) is None
    assert await counter.open("seat:B", 2) is not None  # each key has its own count


async def test_a_closed_socket_frees_its_place(counter: OpenSockets) -> None:
    first = await counter.open("seat:A", 1)
    assert first is not None
    assert await counter.open("seat:A", 1) is None
    await counter.close(first)
    again = await counter.open("seat:A", 1)
    assert again is not None
    await counter.close(first)  # closing twice frees nothing more
    assert await counter.open("seat:A", 1) is None


async def test_with_redis_processes_share_one_count(processes: Processes) -> None:
    one, two = processes(), processes()
    assert await one.open("address:x", 3) is not None
    assert await one.open("address:x", 3) is not None
    assert await two.open("address:x", 3) is not None
    assert await two.open("address:x", 3) is None
    assert await one.open("address:x", 3) is None


async def test_with_redis_processes_racing_for_the_last_places_get_only_those(
    processes: Processes,
) -> None:
    one, two = processes(), processes()
    got = await asyncio.gather(*(p.open("seat:race", 5) for _ in range(20) for p in (one, two)))
    assert sum(place is not None for place in got) == 5


async def test_a_dead_process_stops_counting_within_the_ttl_a_live_one_does_not(
    processes: Processes,
) -> None:
    ttl = 0.6
    live, dying, late = (processes(ttl_ms=int(ttl * 1000)) for _ in range(3))
    assert await live.open("seat:A", 2) is not None
    assert await dying.open("seat:A", 2) is not None
    await dying.aclose()  # as kill -9 would: no renewal, nothing removed
    assert await late.open("seat:A", 2) is None  # still counted for now
    await asyncio.sleep(ttl * 2.5)  # past the first expiry of both: only renewals count
    assert await late.open("seat:A", 2) is not None  # the dead one's place is free
    assert await late.open("seat:A", 2) is None  # the live one's is still held


async def test_with_redis_sockets_are_counted_again_after_redis_lost_them(
    processes: Processes,
) -> None:
    """A Redis restart loses every count: each process adds its sockets back
    when it next renews them."""
    one, two = processes(), processes()
    place = await one.open("seat:A", 1)
    assert place is not None
    await one.redis.delete(one.prefix + place.key)
    assert await one.renew()
    assert await two.open("seat:A", 1) is None


async def test_with_redis_away_sockets_are_let_in_and_one_warning_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    away = RedisSockets(f"redis://127.0.0.1:{free_port()}/0", ttl_ms=600)
    try:
        with caplog.at_level(logging.WARNING, logger="app.store.sockets"):
            places = [await away.open("seat:A", 1) for _ in range(3)]
        assert all(p is not None for p in places)  # over the cap, uncounted
        warnings = [r for r in caplog.records if "Redis is away" in r.getMessage()]
        assert len(warnings) == 1
        for p in places:
            assert p is not None
            await away.close(p)  # never raises
        assert away.held == {}
    finally:
        await away.aclose()
