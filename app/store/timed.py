"""Records with a deadline on every call.

A room awaits its writes under its lock, so a write that never answers (a
database behind a dead connection that no RST will ever end) would freeze
the room until the operating system gave up on the socket - a quarter of an
hour or more - with every message, timer and bot queued behind it.  Each
call here gives up after `seconds` with `TimeoutError`, which the rooms
treat like any failed write: an append with no answer is settled by reading
the log back (app/rooms/table.py), a derived record is written again later,
a failed timeout or bot move is retried with backoff.

The backends are safe to give up on: SQLite's and PostgreSQL's group commit
skips a waiter that has gone (app/db/records.py), and a cancelled
transaction rolls back.

One deadline timer per second of calls, not one per call: an append is made
for every move, and `asyncio.timeout` arms and cancels a loop timer each
time (about 7 us, a few percent of a move's whole cost at a thousand rooms,
bench/load.py).  Calls are put in the slot of the second their deadline
falls in; the slot's one timer, at that second's end, cancels whichever of
them is still waiting, and that call raises `TimeoutError` as
`asyncio.timeout` would (the same documented `Task.cancel`/`uncancel`
accounting, so a cancel from elsewhere still propagates as a cancel).  A
call thus gives up between `seconds` and `seconds + SLOT` after it began.
Nobody calling: no slot, no timer.  A deadline already past: the slot's
timer runs once, at the loop's next turn.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

from app.core import metrics
from app.store.records import FinishedGame, GameRecord, Records, RoomRecord, Snapshot

T = TypeVar("T")

#: seconds any one call may take; a commit is milliseconds, a busy server's
#: batch at most a few hundred
DEADLINE = 10.0
#: the width of a deadline slot, in seconds: calls whose deadlines fall in one
#: slot share its timer
SLOT = 1.0


class TimedRecords:
    def __init__(self, inner: Records, seconds: float = DEADLINE, slot: float = SLOT) -> None:
        self.inner = inner
        self.seconds = seconds
        self.slot = slot
        #: calls waiting, by the slot their deadline falls in
        self._due: dict[int, set[asyncio.Task[Any]]] = {}
        #: calls their slot's timer cancelled, until they have raised
        self._expired: set[asyncio.Task[Any]] = set()

    async def _within(self, call: Awaitable[T]) -> T:
        task = asyncio.current_task()
        if task is None:  # not in a task: nothing to cancel, so no deadline
            return await call
        loop = asyncio.get_running_loop()
        slot = math.ceil((loop.time() + self.seconds) / self.slot)
        waiting = self._due.get(slot)
        if waiting is None:
            waiting = self._due[slot] = set()
            loop.call_at(slot * self.slot, self._expire, slot)
        waiting.add(task)
        cancelling = task.cancelling()
        try:
            return await call
        except asyncio.CancelledError:
            # ours only if no other cancel came meanwhile (asyncio.timeout's rule)
            if task in self._expired and task.uncancel() <= cancelling:
                metrics.DATABASE_ERRORS.inc()
                raise TimeoutError(f"storage gave no answer within {self.seconds:g} s") from None
            raise
        finally:
            waiting.discard(task)
            self._expired.discard(task)

    def _expire(self, slot: int) -> None:
        for task in self._due.pop(slot, ()):
            self._expired.add(task)
            task.cancel()

    async def save_room(self, room: RoomRecord, epoch: int = 0) -> None:
        await self._within(self.inner.save_room(room, epoch))

    async def start_game(
        self,
        room_code: str,
        game: str,
        options: dict[str, Any],
        seed: int,
        seats: list[str],
        epoch: int = 0,
        public_id: str | None = None,
    ) -> int:
        return await self._within(
            self.inner.start_game(room_code, game, options, seed, seats, epoch, public_id)
        )

    def append_now(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> bool:
        # never waits (that is its promise): there is nothing to give up on
        return self.inner.append_now(game_id, seq, seat, action, epoch)

    def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> Coroutine[Any, Any, None]:
        # the one call made for every move: handed on, not awaited in a
        # coroutine of its own (one frame less per move)
        return self._within(self.inner.append_action(game_id, seq, seat, action, epoch))

    async def save_score_hand(
        self, game_id: int, hand: int, row: dict[str, Any], epoch: int = 0
    ) -> None:
        await self._within(self.inner.save_score_hand(game_id, hand, row, epoch))

    async def finish_game(self, game_id: int, result: dict[str, Any], epoch: int = 0) -> None:
        await self._within(self.inner.finish_game(game_id, result, epoch))

    async def finished_results(self, code: str, game: str) -> list[FinishedGame]:
        return await self._within(self.inner.finished_results(code, game))

    async def live_rooms(self) -> list[tuple[RoomRecord, GameRecord | None]]:
        return await self._within(self.inner.live_rooms())

    async def open_rooms(self) -> list[str]:
        return await self._within(self.inner.open_rooms())

    async def room_is_open(self, code: str) -> bool:
        return await self._within(self.inner.room_is_open(code))

    async def load_room(self, code: str) -> tuple[RoomRecord, GameRecord | None] | None:
        return await self._within(self.inner.load_room(code))

    async def game_actions(
        self, game_id: int, start: int = 0
    ) -> list[tuple[int | None, dict[str, Any]]]:
        return await self._within(self.inner.game_actions(game_id, start))

    async def action_count(self, game_id: int) -> int:
        return await self._within(self.inner.action_count(game_id))

    async def action_at(
        self, game_id: int, seq: int
    ) -> tuple[int | None, dict[str, Any], int | None] | None:
        return await self._within(self.inner.action_at(game_id, seq))

    async def score_hands(self, game_id: int) -> set[int]:
        return await self._within(self.inner.score_hands(game_id))

    async def save_snapshot(self, game_id: int, snapshot: Snapshot, epoch: int = 0) -> None:
        await self._within(self.inner.save_snapshot(game_id, snapshot, epoch))

    async def claim_room(self, code: str, epoch: int) -> tuple[bool, int] | None:
        return await self._within(self.inner.claim_room(code, epoch))

    async def create_room(self, room: RoomRecord) -> bool:
        return await self._within(self.inner.create_room(room))
