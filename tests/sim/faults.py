"""Storage that fails when the simulator says so.

`FaultyRecords` is `MemoryRecords` with a gate in front of every call.  The
simulator sets how the gate behaves for a while: now and then a call fails
before it writes, commits but loses its answer (the caller sees an error for
a write that happened), or hangs past the rooms' deadline; or the database is
away altogether until a given time.  Every decision comes from the
simulator's seeded generator, so a seed replays the same faults.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from app.store.records import FinishedGame, GameRecord, MemoryRecords, RoomRecord, Snapshot


class StorageDown(ConnectionError):
    """What a real driver raises when its database is gone."""


class FaultyRecords(MemoryRecords):
    def __init__(self, clock: Callable[[], float], rng: random.Random) -> None:
        super().__init__(clock)
        self.rng = rng
        self._flaky = 0.0
        #: when storage last stopped being flaky, and when a call last hung
        self._flaky_ended: float | None = None
        self._hung_at: float | None = None
        #: wall-clock time until which every call fails at once
        self.away_until = 0.0
        self.seen: Counter[str] = Counter()
        #: told of every move before it is written, with the seat and action
        self.on_append: Callable[[int | None, dict[str, Any]], None] | None = None

    @property
    def flaky(self) -> float:
        """Chance that a call meets a fault (0: storage is healthy)."""
        return self._flaky

    @flaky.setter
    def flaky(self, chance: float) -> None:
        if self._flaky and not chance:
            self._flaky_ended = self.clock()
        self._flaky = chance

    def healthy(self) -> None:
        self.flaky = 0.0
        self.away_until = min(self.away_until, self.clock())

    def trouble_end(self, now: float) -> float | None:
        """When storage was last in trouble (`now` if it is): None if never."""
        if self._flaky or now < self.away_until:
            return now
        ends = [t for t in (self._flaky_ended, self.away_until or None) if t is not None]
        return max(ends) if ends else None

    def hung_since(self, since: float) -> bool:
        """Whether a call may have hung (to the callers' deadline) since `since`."""
        return self._hung_at is not None and self._hung_at >= since - 60.0

    async def _gate(self, write: bool) -> bool:
        """Let a call through, or fail it; True: do it, then lose its answer."""
        if self.clock() < self.away_until:
            self.seen["away"] += 1
            raise StorageDown("the database is away")
        if not self.flaky or self.rng.random() >= self.flaky:
            return False
        fault = self.rng.choice(("fail", "lost", "hang") if write else ("fail", "hang"))
        self.seen[fault] += 1
        if fault == "fail":
            raise StorageDown("the write failed")
        if fault == "hang":  # until the caller's deadline gives up on it
            self._hung_at = self.clock()
            await asyncio.get_running_loop().create_future()
        return True

    @staticmethod
    def _lost() -> StorageDown:
        return StorageDown("the connection dropped before the answer came")

    async def save_room(self, room: RoomRecord, epoch: int = 0) -> None:
        lose = await self._gate(True)
        await super().save_room(room, epoch)
        if lose:
            raise self._lost()

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
        lose = await self._gate(True)
        game_id = await super().start_game(room_code, game, options, seed, seats, epoch, public_id)
        if lose:
            raise self._lost()
        return game_id

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        if self.on_append is not None:
            self.on_append(seat, action)
        lose = await self._gate(True)
        await super().append_action(game_id, seq, seat, action, epoch)
        if lose:
            raise self._lost()

    async def save_score_hand(
        self, game_id: int, hand: int, row: dict[str, Any], epoch: int = 0
    ) -> None:
        lose = await self._gate(True)
        await super().save_score_hand(game_id, hand, row, epoch)
        if lose:
            raise self._lost()

    async def finish_game(self, game_id: int, result: dict[str, Any], epoch: int = 0) -> None:
        lose = await self._gate(True)
        await super().finish_game(game_id, result, epoch)
        if lose:
            raise self._lost()

    async def save_snapshot(self, game_id: int, snapshot: Snapshot, epoch: int = 0) -> None:
        lose = await self._gate(True)
        await super().save_snapshot(game_id, snapshot, epoch)
        if lose:
            raise self._lost()

    async def finished_results(self, code: str, game: str) -> list[FinishedGame]:
        await self._gate(False)
        return await super().finished_results(code, game)

    async def load_room(self, code: str) -> tuple[RoomRecord, GameRecord | None] | None:
        await self._gate(False)
        found = await super().load_room(code)
        if found is None:
            return None
        room, game = found
        # a database hands out copies: the rebuilt room must not share the stored objects
        return _copy_room(room), game

    async def game_actions(
        self, game_id: int, start: int = 0
    ) -> list[tuple[int | None, dict[str, Any]]]:
        await self._gate(False)
        return await super().game_actions(game_id, start)

    async def action_count(self, game_id: int) -> int:
        await self._gate(False)
        return await super().action_count(game_id)

    async def action_at(
        self, game_id: int, seq: int
    ) -> tuple[int | None, dict[str, Any], int | None] | None:
        await self._gate(False)
        return await super().action_at(game_id, seq)

    async def score_hands(self, game_id: int) -> set[int]:
        await self._gate(False)
        return await super().score_hands(game_id)


def _copy_room(room: RoomRecord) -> RoomRecord:
    return dataclasses.replace(
        room,
        options=dict(room.options),
        settings=dict(room.settings),
        players=[dataclasses.replace(p) for p in room.players],
        tally=dict(room.tally),
    )
