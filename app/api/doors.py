"""Limits on every door: how often one client address may open rooms, join,
sign in and look rooms up, and how many sockets it and each seat may hold.

The rates are moving windows kept by the `limits` library: in this process,
or in Redis when `REDIS_URL` is set, so that several server processes share
one count per address.  Open sockets are counted the same way, in this
process or in Redis (app/store/sockets.py); there each process renews its
sockets' places every few seconds, so those of a process that died stop
counting within `LEASE_SECONDS`.

Each refusal says which limit it hit and when to come back (the seconds go in
the HTTP Retry-After header, or in a socket's error message).  The numbers
are settings (app/core/config.py); docs/security.md says why they are what
they are.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, HTTPException, Request
from limits import RateLimitItem, RateLimitItemPerHour, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.errors import StorageError
from limits.storage import storage_from_string
from starlette.requests import HTTPConnection

from app.api.deps import get_app_settings
from app.core import metrics
from app.core.config import Settings
from app.store.outage import Outage
from app.store.sockets import MemorySockets, OpenSockets, Place, RedisSockets

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Door:
    name: str
    what: str  # for the refusal: "you opened {n} rooms in the last hour"-style text


ROOMS = Door("rooms", "rooms opened")
JOINS = Door("joins", "joins")
SIGNINS = Door("signins", "sign-in attempts")
LOOKUPS = Door("lookups", "room lookups")
REPLAYS = Door("replays", "replay pages")


class Refused(Exception):
    """A door's limit was reached; `retry_after` whole seconds until it opens."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def _storage(settings: Settings) -> Storage:
    if not settings.redis_url:
        return MemoryStorage()
    uri = settings.redis_url
    return storage_from_string(  # type: ignore[return-value]
        uri if uri.startswith("async+") else "async+" + uri,
        implementation="redispy",
        key_prefix="cardroom-limits",
        wrap_exceptions=True,  # Redis away: one StorageError (`Doors.pass_through`)
    )


class Doors:
    """One per app (`app.state.doors`)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.limiter = MovingWindowRateLimiter(_storage(settings))
        self.items: dict[str, RateLimitItem] = {
            ROOMS.name: RateLimitItemPerHour(settings.rooms_per_hour),
            JOINS.name: RateLimitItemPerMinute(settings.joins_per_minute),
            SIGNINS.name: RateLimitItemPerMinute(settings.signins_per_minute),
            LOOKUPS.name: RateLimitItemPerMinute(settings.lookups_per_minute),
            REPLAYS.name: RateLimitItemPerMinute(settings.replays_per_minute),
        }
        self.sockets = SocketCount(settings, _sockets(settings))
        for name in self.items:  # each door served at 0 before its first refusal
            metrics.RATE_LIMITED.labels(name)
        self.outage = Outage(
            log, "rate limits not counted: their storage is away (%s)", "rate limits counted again"
        )

    async def pass_through(self, door: Door, address: str, *, count: bool = True) -> None:
        """Count one use of `door` by `address` (`address` may be any key: a
        seat's sockets count on their own), or raise Refused if it is shut;
        with `count=False` only see whether it is shut."""
        item = self.items[door.name]
        try:
            limiter = self.limiter
            if await (limiter.hit if count else limiter.test)(item, door.name, address):
                self.outage.answered()
                return
            stats = await self.limiter.get_window_stats(item, door.name, address)
        except StorageError as err:
            # the counters' Redis is away: let the request in uncounted, as
            # the socket caps do (app/store/sockets.py), and say so once per
            # outage - friends keep playing while a counter is unreachable
            self.outage.failed(err)
            return
        metrics.RATE_LIMITED.labels(door.name).inc()
        wait = max(1, math.ceil(stats.reset_time - time.time()))
        per = "hour" if item.GRANULARITY.name == "hour" else "minute"
        raise Refused(
            f"too many {door.what} from your address: at most {item.amount} per {per}; "
            f"try again in {wait} s",
            wait,
        )

    async def aclose(self) -> None:
        await self.sockets.aclose()


def _sockets(settings: Settings) -> OpenSockets:
    if not settings.redis_url:
        return MemorySockets()
    return RedisSockets(settings.redis_url, ttl_ms=int(settings.lease_seconds * 1000))


class SocketCount:
    """Open sockets per address and per seat, and why one more is refused."""

    def __init__(self, settings: Settings, sockets: OpenSockets) -> None:
        self.per_address = settings.max_sockets_per_address
        self.per_seat = settings.max_sockets_per_seat
        self.sockets = sockets

    async def open_address(self, address: str) -> Place | str:
        """A place for a new socket from `address`, or why not if it is one too many."""
        place = await self.sockets.open(f"address:{address}", self.per_address)
        return place or f"too many open sockets from your address (at most {self.per_address})"

    async def open_seat(self, room: str, seat: str) -> Place | str:
        """A place for a new socket of the seat whose token hashes to `seat`, or why not."""
        place = await self.sockets.open(f"seat:{room}:{seat}", self.per_seat)
        return place or (
            f"this seat has too many open sockets (at most {self.per_seat}): close a tab"
        )

    async def close(self, place: Place) -> None:
        await self.sockets.close(place)

    async def aclose(self) -> None:
        await self.sockets.aclose()


def address_of(conn: HTTPConnection) -> str:
    """The client's address as the server saw it (behind a proxy, run uvicorn
    with --proxy-headers so this is the browser's, not the proxy's)."""
    return conn.client.host if conn.client else "unknown"


def doors_of(conn: HTTPConnection) -> Doors:
    """The app's doors (create_app makes them; an app assembled from some of
    the routers, as tests do, gets them on first use)."""
    doors: Doors | None = getattr(conn.app.state, "doors", None)
    if doors is None:
        doors = conn.app.state.doors = Doors(get_app_settings(conn))
    return doors


def too_many(err: Refused) -> HTTPException:
    return HTTPException(
        429,
        detail={"code": "rate_limited", "message": err.message},
        headers={"Retry-After": str(err.retry_after)},
    )


def limited(door: Door) -> Any:
    """A route dependency: refuse with 429 once `door`'s limit is reached."""

    async def check(request: Request) -> None:
        try:
            await doors_of(request).pass_through(door, address_of(request))
        except Refused as err:
            raise too_many(err) from None

    return Depends(check)
