"""Open sockets counted under a key (a client address, a seat) against a cap,
so that a door can refuse the one socket too many.

`MemorySockets` counts in this process, which is enough when there is one.
With several processes each would let in its own cap's worth, so
`RedisSockets` keeps one count for all of them in Redis:

- Each open socket is a member "<process>:<serial>" of the sorted set
  `cr:sockets:{key}`, scored by the Redis time (ms) at which it stops counting.
- Opening is one Lua script: drop the members whose time has passed, count
  the rest, and add the new one only if that is under the cap, so two
  processes racing for the last place cannot both get it.  Closing removes
  the member.
- The process holding a socket pushes its time forward every third of
  `ttl_ms`, in one round trip for each hundred of its sockets (the room
  leases in cluster.py are kept the same way).  A process that dies (kill -9, a lost
  machine) stops doing so, and its sockets stop counting within `ttl_ms`: a
  count without expiry would keep a dead process's sockets forever, and a
  room's players locked out of their own seat.
- Times are Redis's own clock (`TIME`), so processes whose clocks disagree
  still agree on what has expired; each key also expires with its last member.

Like everything else in Redis here, the counts may be lost (a restart): each
process adds its sockets back at its next renewal.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from dataclasses import dataclass
from typing import Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.store.cluster import RENEW_CHUNK, connect, new_process_id
from app.store.outage import Outage

log = logging.getLogger(__name__)

# KEYS[1] the set; ARGV: cap, member, ttl_ms.  1 if the member was added.
_OPEN = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""
# KEYS[1] the set; ARGV: ttl_ms, then this process's members under it.
_RENEW = """
local t = redis.call('TIME')
local until_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], until_ms, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""

#: what Redis being away (down, restarting, too slow) looks like to a caller
AWAY = (RedisError, OSError, TimeoutError)


@dataclass(frozen=True)
class Place:
    """One open socket's place under `key`; given back when it closes."""

    key: str
    ticket: str


class OpenSockets(Protocol):
    async def open(self, key: str, cap: int) -> Place | None:
        """A place for one more socket under `key`, or None if `cap` are open."""
        ...

    async def close(self, place: Place) -> None:
        """The socket is gone: its place is free (never raises)."""
        ...

    async def aclose(self) -> None:
        """Stop: the process is shutting down."""
        ...


def _hold(held: dict[str, set[str]], place: Place) -> None:
    held.setdefault(place.key, set()).add(place.ticket)


def _drop(held: dict[str, set[str]], place: Place) -> None:
    tickets = held.get(place.key)
    if tickets is not None:
        tickets.discard(place.ticket)
        if not tickets:
            del held[place.key]


class MemorySockets:
    """The count in this process (no REDIS_URL: there is only one)."""

    def __init__(self) -> None:
        self.held: dict[str, set[str]] = {}
        self._serial = itertools.count(1)

    async def open(self, key: str, cap: int) -> Place | None:
        if len(self.held.get(key, ())) >= cap:
            return None
        place = Place(key, str(next(self._serial)))
        _hold(self.held, place)
        return place

    async def close(self, place: Place) -> None:
        _drop(self.held, place)

    async def aclose(self) -> None:
        self.held.clear()


class RedisSockets:
    """One count per key for every process on the same Redis (see above)."""

    def __init__(
        self,
        url: str,
        *,
        ttl_ms: int = 3000,
        prefix: str = "cr:sockets:",
        process_id: str | None = None,
    ) -> None:
        # a command slower than a renewal interval fails rather than waits:
        # the socket it was for is let in (see `open`)
        self.redis: Redis = connect(url, timeout=ttl_ms / 3000)
        self.ttl_ms = ttl_ms
        self.prefix = prefix
        self.me = process_id or new_process_id()
        #: the tickets of this process's open sockets, by key: what it renews
        self.held: dict[str, set[str]] = {}
        self._serial = itertools.count(1)
        self._open = self.redis.register_script(_OPEN)
        self._renew = self.redis.register_script(_RENEW)
        self._keeper: asyncio.Task[None] | None = None
        self.outage = Outage(
            log,
            "Redis is away (%r): sockets are let in uncounted until it is back",
            "Redis is back: sockets are counted again",
        )

    async def open(self, key: str, cap: int) -> Place | None:
        """Fails open: with Redis away the socket is let in uncounted, and a
        warning logged once per outage.  A card room among friends would
        rather keep its players playing than lock everyone out because a
        counter is unreachable; the caps guard against a runaway client, and
        the per-socket message limits still hold.  The place is renewed like
        any other, so it counts again as soon as Redis is back."""
        place = Place(key, f"{self.me}:{next(self._serial)}")
        try:
            added = await self._open(
                keys=[self.prefix + key], args=[cap, place.ticket, self.ttl_ms]
            )
        except AWAY as err:
            self.outage.failed(err)
        else:
            self.outage.answered()
            if not added:
                return None
        _hold(self.held, place)
        self._keep_renewing()
        return place

    async def close(self, place: Place) -> None:
        # forgotten here first: a close cut short still stops the renewals,
        # so the place expires within the TTL
        _drop(self.held, place)
        try:
            await self.redis.zrem(self.prefix + place.key, place.ticket)
        except AWAY as err:
            self.outage.failed(err)

    async def renew(self) -> bool:
        """Push every held socket's expiry a TTL ahead, a round trip for each
        `RENEW_CHUNK` of them (and add back any that Redis lost); False if none
        is held.  A socket closed while this is under way may be added back,
        and then counts until the TTL runs out."""
        held = [(key, sorted(tickets)) for key, tickets in self.held.items()]
        if not held:
            return False
        for at in range(0, len(held), RENEW_CHUNK):  # the loop serves others between
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, tickets in held[at : at + RENEW_CHUNK]:
                    await self._renew(
                        keys=[self.prefix + key], args=[self.ttl_ms, *tickets], client=pipe
                    )
                await pipe.execute()
        return True

    async def aclose(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keeper
            self._keeper = None
        await self.redis.aclose(close_connection_pool=True)

    def _keep_renewing(self) -> None:
        """Started by the first socket, on the loop that serves them."""
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.get_running_loop().create_task(self._renew_forever())

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self.ttl_ms / 3000)
            try:
                if await self.renew():
                    self.outage.answered()
            except AWAY as err:
                self.outage.failed(err)
            except Exception:  # never let the renewals stop: the counts would lapse
                log.exception("renewing socket counts failed; again in a moment")
