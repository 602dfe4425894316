"""Saving a room's people: each change of membership is stored as it happens,
and a save storage did not take is tried again, later and later.

`RoomSaver` is one room's.  It remembers what storage last took (so a save
that would change nothing is skipped, and the room can tell whether its
people are stored), and runs its retries as the room's `save` wait, under
the room's lock like every other change.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

from app.rooms.clock import Clock
from app.rooms.errors import RoomError
from app.rooms.membership import Membership
from app.rooms.table import Table
from app.rooms.timers import Backoff, Timer, Timers
from app.store.records import Fenced, Records, RoomRecord

log = logging.getLogger(__name__)


class RoomSaver:
    def __init__(
        self,
        code: str,
        members: Membership,
        table: Table,
        records: Records,
        timers: Timers,
        clock: Clock,
        jitter: random.Random,
        *,
        moved_away: Callable[[], None],
        gone: Callable[[], None],
        closed: Callable[[], bool],
    ) -> None:
        self.code = code
        self.members = members
        self.table = table
        self.records = records
        self.timers = timers
        self.clock = clock
        #: the room's: its retries are seeded in tests
        self._jitter = jitter
        #: the room's own steps: stepping down for a newer owner, and leaving
        #: its manager once its close is stored
        self._moved_away = moved_away
        self._gone = gone
        self._closed = closed
        #: what the records last took: a save that would change nothing is skipped
        self._saved: RoomRecord | None = None
        self._save_retry = Backoff()
        #: saves asked for: a command that asked for one promises its change
        #: stored, even one that changed nothing the room did not already hold
        self.asked = 0

    async def save(self) -> None:
        """Membership is saved as it changes.  Refused for a newer owner
        (`Fenced`): `RoomError` "moved", so the change is never acknowledged.
        Any other failure is logged, not fatal:
        the room saves again, later and later (`Backoff`), until storage takes
        it - or until the next change carries the whole room anyway.  A closed
        room keeps trying too, and leaves its manager only once its close is
        stored: dropped before that, it would be rebuilt from storage, open,
        with the tokens of those who had left working again."""
        self.asked += 1
        snapshot = self.members.snapshot()
        if snapshot == self._saved:
            self.timers.drop("save")
            return
        try:
            await self.records.save_room(snapshot, self.table.epoch)
            self._saved = snapshot
            self._save_retry.reset()
            self.timers.drop("save")
        except Fenced as err:
            # never stored, and never will be by this process: whoever asked
            # for the change is refused, not told it was made
            log.warning("room %s: save refused, a newer owner exists (%s)", self.code, err)
            self._moved_away()
            raise RoomError("moved", "this room moved to another server: reconnecting") from err
        except Exception as err:
            # the write may have landed with only its answer lost: what storage
            # holds is unknown now, so even a return to the last saved people
            # (one joins and leaves before a retry) must be written again
            self._saved = None
            delay = self._save_retry.next(self._jitter)
            log.error("room %s: could not save the room (%r); again in %.1f s", self.code, err,
                      delay)  # fmt: skip
            self.timers.start("save", "save", self.clock() + delay, self._on_save_retry)
            return
        if self.closed:
            self._gone()

    @property
    def closed(self) -> bool:
        return self._closed()

    @property
    def stored(self) -> bool:
        """Storage holds the room's people as they are now (no save pending)."""
        return self.members.snapshot() == self._saved

    async def _on_save_retry(self, t: Timer) -> None:
        await self.save()
