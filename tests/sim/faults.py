"""Storage that fails when the simulator says so.

`FaultyRecords` stands in front of real records - `MemoryRecords`, or
`DbRecords` over SQLite or PostgreSQL (`SIM_STORE`) - with a gate before
every call.  The simulator sets how the gate behaves for a while: now and
then a call fails before it writes, commits but loses its answer (the caller
sees an error for a write that happened), or hangs past the rooms' deadline;
or the database is away altogether until a given time.  Every decision comes
from the simulator's seeded generator and is made here, at the `Records`
boundary, before the backend is touched, so a seed meets the same faults on
every backend.

A database runs on its own event loop in a thread of its own (`DbThread`),
and each call blocks the simulator's loop until it returns: real I/O takes no
virtual time, so a write never looks slow to the rooms' deadlines by chance
and a seed replays the same.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import random
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Coroutine
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, TypeVar

from app.store.records import FinishedGame, GameRecord, MemoryRecords, RoomRecord, Snapshot

T = TypeVar("T")


class DbThread:
    """`DbRecords` on an event loop of its own, in its own thread.  The times
    it stamps rows with (an action's time, from which a rebuilt room resumes
    its waits) are the simulation's: `app.db.models.utcnow` reads the clock
    through its module's `datetime`, which is replaced for the run, as a test
    may, and put back at the end."""

    def __init__(self, url: str, clock: Callable[[], float]) -> None:
        import app.db.models as models

        class SimDatetime(datetime):
            @classmethod
            def now(cls, tz: tzinfo | None = None) -> SimDatetime:
                return cls.fromtimestamp(clock(), tz)

        self._datetime = models.datetime
        models.datetime = SimDatetime  # type: ignore[misc]
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.records: Any = self.call(self._open(url))

    @staticmethod
    async def _open(url: str) -> Any:
        from app.db.records import DbRecords
        from app.db.session import make_engine

        return DbRecords(make_engine(url))

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=60)

    def close(self) -> None:
        try:
            self.call(self.records.close())
            self.call(self.records.engine.dispose())
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()
        import app.db.models as models

        models.datetime = self._datetime  # type: ignore[misc]


_TEMPLATE: dict[str, Path] = {}


def sqlite_url(workdir: Path) -> str:
    """A fresh SQLite database for one run: a copy of one migrated once per process."""
    template = _TEMPLATE.get("sqlite")
    if template is None:
        from tests.db.backends import migrate

        template = Path(tempfile.mkdtemp(prefix="sim-sqlite-")) / "template.db"
        asyncio.run(migrate(f"sqlite+aiosqlite:///{template}"))
        _TEMPLATE["sqlite"] = template
    path = workdir / "sim.db"
    shutil.copyfile(template, path)
    return f"sqlite+aiosqlite:///{path}"


def postgres_url() -> str:
    """The migrated PostgreSQL database named by `SIM_PG_URL`, emptied for one run."""
    import os

    from tests.db.backends import _empty

    url = os.environ["SIM_PG_URL"]
    asyncio.run(_empty(url))
    return url


class StorageDown(ConnectionError):
    """What a real driver raises when its database is gone."""


class FaultyRecords:
    def __init__(
        self, clock: Callable[[], float], rng: random.Random, db: DbThread | None = None
    ) -> None:
        self.clock = clock
        self.rng = rng
        self.db = db
        self.inner: Any = db.records if db is not None else MemoryRecords(clock)
        self._flaky = 0.0
        #: when storage last stopped being flaky, and when a call last hung
        self._flaky_ended: float | None = None
        self._hung_at: float | None = None
        #: wall-clock time until which every call fails at once
        self.away_until = 0.0
        self.seen: Counter[str] = Counter()
        #: a write's process is to die before its answer comes (see `_lost`)
        self.crash_requested = False
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

    async def _gate(self, write: bool) -> str | bool:
        """Let a call through (False), or fail it; "lost": do it, then lose its
        answer; "crash": do it, then crash before the answer comes."""
        if self.clock() < self.away_until:
            self.seen["away"] += 1
            raise StorageDown("the database is away")
        if not self.flaky or self.rng.random() >= self.flaky:
            return False
        fault = (
            self.rng.choices(("fail", "lost", "hang", "crash"), (3, 3, 3, 1))[0]
            if write
            else self.rng.choice(("fail", "hang"))
        )
        self.seen[fault] += 1
        if fault == "fail":
            raise StorageDown("the write failed")
        if fault == "hang":  # until the caller's deadline gives up on it
            self._hung_at = self.clock()
            await asyncio.get_running_loop().create_future()
        if fault == "crash":
            self._hung_at = self.clock()
        return fault

    async def _do(self, coro: Coroutine[Any, Any, T]) -> T:
        """One call of the backend: awaited here, or run to its end on the
        database's own loop while this one waits (no virtual time passes)."""
        if self.db is None:
            return await coro
        return self.db.call(coro)

    def __getattr__(self, name: str) -> Any:
        """The calls that never fail here (creating a room, listing open
        ones, leases) go straight to the backend."""
        found = getattr(self.inner, name)
        if not asyncio.iscoroutinefunction(found):
            return found

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await self._do(found(*args, **kwargs))

        return call

    # ------------------------------------------------ what the checks read

    def peek_room(self, code: str) -> RoomRecord | None:
        """The room as stored, open or closed (a database shows open ones only)."""
        if self.db is None:
            found: RoomRecord | None = self.inner.rooms.get(code)
            return found
        loaded = self.db.call(self.inner.load_room(code))
        return loaded[0] if loaded is not None else None

    def peek_actions(self, game_id: int) -> list[tuple[int | None, dict[str, Any]]]:
        if self.db is None:
            return list(self.inner.games[game_id].actions)
        actions: list[tuple[int | None, dict[str, Any]]] = self.db.call(
            self.inner.game_actions(game_id)
        )
        return actions

    def close(self) -> None:
        if self.db is not None:
            self.db.close()

    async def _lost(self, how: str | bool) -> StorageDown:
        """A write landed and its answer is lost; or, for a crash in the
        middle of a write, it never comes: the simulator crashes the
        process at the end of the step (`crash_requested`), with this call
        still waiting - between the commit and the acknowledgement, and
        before whatever the caller would have written next."""
        if how == "crash":
            self.crash_requested = True
            await asyncio.get_running_loop().create_future()
        return StorageDown("the connection dropped before the answer came")

    async def save_room(self, room: RoomRecord, epoch: int = 0) -> None:
        lose = await self._gate(True)
        await self._do(self.inner.save_room(room, epoch))
        if lose:
            raise await self._lost(lose)

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
        game_id = await self._do(
            self.inner.start_game(room_code, game, options, seed, seats, epoch, public_id)
        )
        if lose:
            raise await self._lost(lose)
        return game_id

    def append_now(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> bool:
        """Never at once: every move goes through the faults of `append_action`."""
        return False

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        if self.on_append is not None:
            self.on_append(seat, action)
        lose = await self._gate(True)
        await self._do(self.inner.append_action(game_id, seq, seat, action, epoch))
        if lose:
            raise await self._lost(lose)

    async def save_score_hand(
        self, game_id: int, hand: int, row: dict[str, Any], epoch: int = 0
    ) -> None:
        lose = await self._gate(True)
        await self._do(self.inner.save_score_hand(game_id, hand, row, epoch))
        if lose:
            raise await self._lost(lose)

    async def finish_game(self, game_id: int, result: dict[str, Any], epoch: int = 0) -> None:
        lose = await self._gate(True)
        await self._do(self.inner.finish_game(game_id, result, epoch))
        if lose:
            raise await self._lost(lose)

    async def save_snapshot(self, game_id: int, snapshot: Snapshot, epoch: int = 0) -> None:
        lose = await self._gate(True)
        await self._do(self.inner.save_snapshot(game_id, snapshot, epoch))
        if lose:
            raise await self._lost(lose)

    async def finished_results(self, code: str, game: str) -> list[FinishedGame]:
        await self._gate(False)
        return await self._do(self.inner.finished_results(code, game))

    async def load_room(self, code: str) -> tuple[RoomRecord, GameRecord | None] | None:
        await self._gate(False)
        found = await self._do(self.inner.load_room(code))
        if found is None:
            return None
        room, game = found
        # a database hands out copies: the rebuilt room must not share the stored objects
        return _copy_room(room), game

    async def game_actions(
        self, game_id: int, start: int = 0
    ) -> list[tuple[int | None, dict[str, Any]]]:
        await self._gate(False)
        return await self._do(self.inner.game_actions(game_id, start))

    async def action_count(self, game_id: int) -> int:
        await self._gate(False)
        return await self._do(self.inner.action_count(game_id))

    async def action_at(
        self, game_id: int, seq: int
    ) -> tuple[int | None, dict[str, Any], int | None] | None:
        await self._gate(False)
        return await self._do(self.inner.action_at(game_id, seq))

    async def score_hands(self, game_id: int) -> set[int]:
        await self._gate(False)
        return await self._do(self.inner.score_hands(game_id))


def _copy_room(room: RoomRecord) -> RoomRecord:
    return dataclasses.replace(
        room,
        options=dict(room.options),
        settings=dict(room.settings),
        players=[dataclasses.replace(p) for p in room.players],
        tally=dict(room.tally),
    )
