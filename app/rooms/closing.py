"""How a room ends: closed when its last person leaves or when nobody has
been connected for long (its idle clock), stopped at a server's shutdown
(open still in the records), and stepping down when storage names a newer
owner (another process took the room over).

`Closing` is one room's.  The room's `closed` switch, its lock and its two
listeners (`on_close`, set by its manager; `on_moved`, set by the cluster
once the room runs there) stay the room's, since every part reads them and
its owners set them (`Closable`); `Closing` holds the idle clock and whether
the room is stepping down.  A closed room leaves its manager only once its
close is stored (`gone`, called by app/rooms/saving.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from app.rooms.clock import Clock
from app.rooms.delivery import Delivery
from app.rooms.errors import RoomError
from app.rooms.events import CLOSE_LEFT
from app.rooms.membership import Membership
from app.rooms.table import Table
from app.rooms.waits import Waits

log = logging.getLogger(__name__)


class Closable(Protocol):
    """The room as its closing sees it (app/rooms/room.py's `Room` is one):
    its switch, its lock, its listeners (each called with the room), and its
    own `close` (a subclass may watch it)."""

    code: str
    closed: bool
    lock: asyncio.Lock
    on_close: Callable[[Any], None] | None
    on_moved: Callable[[Any], None] | None

    async def close(self) -> None: ...


class Closing:
    def __init__(
        self,
        room: Closable,
        members: Membership,
        table: Table,
        delivery: Delivery,
        waits: Waits,
        clock: Clock,
        *,
        save: Callable[[], Awaitable[None]],
    ) -> None:
        self.room = room
        self.code = room.code
        self.members = members
        self.table = table
        self.delivery = delivery
        self.waits = waits
        self.clock = clock
        #: the room's own step: saving its people (and, closed, its close)
        self.save = save
        #: time since which nobody has been connected (None: someone is)
        self.idle_since: float | None = clock()
        #: a write was refused for a newer owner: stepping down (`moved_away`)
        self._moving = False

    def check_moved(self, err: Exception) -> bool:
        """A refused append said another process owns the room now: this one
        steps down (after the current change, outside the lock)."""
        if not (isinstance(err, RoomError) and err.code == "moved"):
            return False
        self.moved_away()
        return True

    def moved_away(self) -> None:
        """A write was refused for a newer owner: step down (soon, outside
        whatever holds the lock now), once however many writes said so."""
        room = self.room
        if room.on_moved is not None and not room.closed and not self._moving:
            self._moving = True
            asyncio.get_running_loop().call_soon(room.on_moved, room)

    async def close(self) -> None:
        """Close for good: every wait and socket ends, and the close is saved."""
        self.room.closed = True
        self.members.record.closed = True
        self.waits.stop()
        self.table.stop()
        self.delivery.close_all(CLOSE_LEFT, "the room has closed")
        await self.save()  # and once it is stored, the room is gone (`gone`)

    def gone(self) -> None:
        """A closed room's close is stored: its manager lets it go (once)."""
        room = self.room
        on_close, room.on_close = room.on_close, None
        if on_close is not None:
            on_close(room)

    def mark_idle(self) -> None:
        """Start the idle clock once the last socket has gone."""
        if not self.delivery.conns and self.idle_since is None:
            self.idle_since = self.clock()

    async def close_if_idle(self, after: float) -> bool:
        """Close the room if nobody has been connected for `after` seconds: an
        abandoned room would otherwise live, and be recovered at every restart,
        for ever.  Its finished games stay in the history."""
        room = self.room
        async with room.lock:
            idle = self.idle_since
            if room.closed or idle is None or self.clock() - idle < after:
                return False
            log.info("room %s: closed after %.0f s with nobody connected", self.code, after)
            await room.close()
            return True

    async def shutdown(self) -> None:
        """Stop timers and bots (server shutdown); the room stays open in the records."""
        async with self.room.lock:
            self.waits.stop()
            self.delivery.close_all(1012, "server restarting")
