"""`DbRecords`: the rooms' `Records` (app/store/records.py) over SQLite or PostgreSQL.

Every write has committed before its method returns, so the room's rule
"store, then broadcast" means what it says.  `append_action`, the hot path,
adds action `seq` only if action `seq - 1` is already there, and the primary
key refuses a second `seq`; together they keep each game's log gap-free and in
order.  On PostgreSQL (and in SQLite's row-by-row replay) the first rule is
part of the INSERT itself (`_NEXT`, `_PG_APPENDS`); SQLite's batches check it
with one query per batch under their write lock (app/db/sqlite_appends.py),
because that form of INSERT costs SQLite a temporary table per row.  The other
writes (a room saved, a game started or finished, a score-sheet hand) are the
functions of app/db/writes.py, one body for both backends.

SQLite allows one writer at a time.  Rather than let this process's writers
collide on the file lock and back off in sleeps, every write of the rooms goes
through one queue: batches commit on the event loop itself when that cannot
wait for the disk (`_write_inline`), otherwise - and whenever another process
holds the lock - through one plain sqlite3 connection in one worker thread,
one hop per batch instead of aiosqlite's several per statement (bench/db.py);
the accounts, which still write through sessions, queue with it on an asyncio
lock (`writing()`).
Readers (history pages) are not held up, thanks to WAL.  On PostgreSQL the
appends queue the same way and each batch is one statement over arrays
(`_PG_APPENDS`), autocommitted in one round trip; another write is one
transaction through `run_sync`.

Group commit (SQLite; on PostgreSQL, the appends): writes that arrive while
the writer is busy wait together and are committed by the writer's next
transaction, one sync for all of them.  Each caller still returns only after
its own write has committed, so "store, then broadcast" holds; under load a
thousand rooms share a handful of commits a second instead of queueing for
one each.  A failed INSERT (a repeated seq) aborts only its own statement in
SQLite, and every other write runs in a savepoint; on PostgreSQL the batch's
statement leaves refused rows out and is retried row by row if it fails as a
whole; so one bad write never takes its batch-mates down with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC
from time import perf_counter
from typing import Any, cast

from sqlalchemy import (
    JSON,
    Connection,
    DateTime,
    Integer,
    Table,
    bindparam,
    exists,
    func,
    insert,
    select,
    text,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.core import metrics
from app.db import writes
from app.db.models import ActionRow, GameRow, Player, Room, ScoreHand, Snapshot, utcnow
from app.db.session import (
    is_sqlite,
    json_dumps,
    sessionmaker,
    sqlite_sync_level,
    sqlite_writer,
)
from app.db.sqlite_appends import Busy, FastAppends
from app.store.records import (
    Fenced,
    FinishedGame,
    GameRecord,
    PlayerRecord,
    RemovedPerson,
    ReplacedToken,
    RoomRecord,
    new_game_ref,
)
from app.store.records import Snapshot as StoredSnapshot

log = logging.getLogger(__name__)

_actions = cast(Table, ActionRow.__table__)

#: the column that says when an action was stored: one value per batch
_STAMP = "created_at"
#: seconds between checkpoints of SQLite's write-ahead log (`_checkpoint_soon`)
CHECKPOINT_EVERY = 1.0
#: seconds after an append from which the next one is committed as it comes
#: (`DbRecords._append_now`); closer ones queue for the loop's next turn,
#: where appends from several rooms share a commit
QUIET_GAP = 0.002
#: pages in that log (4 KiB each by default: 16 MiB) past which it is started
#: over (`_checkpoint_soon`)
RESTART_PAGES = 4096
#: writes the loop may commit while a checkpoint it asked for has not come
#: back (`_write_inline`); past them, batches queue behind it in the writer
#: thread.  A thread that waits for the CPU, the GIL or a slow flush would
#: otherwise let a busy loop add to the log without bound meanwhile
CHECKPOINT_LAG = 1000
#: action 0 of a game: the primary key alone refuses a second one
_FIRST_MANY = insert(_actions)
_FIRST = _FIRST_MANY.returning(_actions.c.seq)
#: action n > 0: inserted only if action n - 1 is there (one statement, no read first)
_NEXT_MANY = insert(_actions).from_select(
    ["game_id", "seq", "seat", "action", "created_at", "epoch"],
    select(
        bindparam("game_id", type_=Integer),
        bindparam("seq", type_=Integer),
        bindparam("seat", type_=Integer),
        bindparam("action", type_=JSON),
        bindparam("created_at", type_=DateTime(timezone=True)),
        bindparam("epoch", type_=Integer),
    ).where(
        exists().where(
            _actions.c.game_id == bindparam("game_id", type_=Integer),
            _actions.c.seq == bindparam("previous", type_=Integer),
        )
    ),
)
_NEXT = _NEXT_MANY.returning(_actions.c.seq)
#: PostgreSQL: a whole batch of appends in one statement over arrays, with the
#: same two guards and the fence; a row they refuse is left out of what comes
#: back.  The fence locks each room's row (FOR SHARE, in `fence`) before its
#: epoch is compared: a takeover's claim_room (an UPDATE of that row) either
#: committed first - then the lock waits for it and sees the new epoch - or
#: waits for this statement to commit, so an append running during a
#: takeover cannot land after it.  Each row is tagged with its epoch.
_PG_APPENDS = text(
    f"""
    WITH v AS (
        SELECT * FROM unnest(
            CAST(:game_ids AS integer[]), CAST(:seqs AS integer[]), CAST(:seats AS integer[]),
            CAST(:actions AS text[]), CAST(:created AS timestamptz[]), CAST(:epochs AS integer[])
        ) AS v(game_id, seq, seat, action, created_at, epoch)
    ), fence AS (
        SELECT g.id AS game_id, r.epoch FROM games AS g JOIN rooms AS r ON r.id = g.room_id
        WHERE g.id IN (SELECT game_id FROM v)
        FOR SHARE OF r
    )
    INSERT INTO {_actions.name} (game_id, seq, seat, action, created_at, epoch)
    SELECT v.game_id, v.seq, v.seat, CAST(v.action AS json), v.created_at, v.epoch
    FROM v JOIN fence AS f ON f.game_id = v.game_id
    WHERE f.epoch <= v.epoch AND (v.seq = 0 OR EXISTS (
        SELECT 1 FROM {_actions.name} AS a WHERE a.game_id = v.game_id AND a.seq = v.seq - 1
    ))
    ON CONFLICT DO NOTHING
    RETURNING game_id, seq
    """
)


class DbRecords:
    """Durable records; behaves like MemoryRecords, and survives the process.

    Call `close()` when done (it also stops the SQLite writer thread)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.sessions: async_sessionmaker[AsyncSession] = sessionmaker(engine)
        sqlite = is_sqlite(engine)
        self._write_lock: asyncio.Lock | None = asyncio.Lock() if sqlite else None
        #: PostgreSQL: appends wait together and go in one statement (`_append_postgres`)
        self._postgres = engine.dialect.name == "postgresql"
        #: a single statement needs no transaction around it: one round trip
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._writer = sqlite_writer(engine) if sqlite else None
        self._writer_thread = (
            ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer") if self._writer else None
        )
        #: each game's last seq committed here, shared by both instances below
        last_seq: dict[int, int] = {}
        self._fast = (
            FastAppends(self._writer, _FIRST_MANY, _actions, stamp=_STAMP, last_seq=last_seq)
            if self._writer
            else None
        )
        #: appends committed on the event loop itself, where a commit does not
        #: wait for the disk (synchronous NORMAL or OFF): see `_commit_waiting`
        self._inline = (
            FastAppends(
                self._writer, _FIRST_MANY, _actions, inline=True, stamp=_STAMP, last_seq=last_seq
            )
            if self._writer and sqlite_sync_level(engine) in ("OFF", "NORMAL")
            else None
        )
        self._opening: asyncio.Future[None] | None = None
        self._checkpointed = time.monotonic()
        self._checkpointing: asyncio.Future[Any] | None = None
        #: the log is being started over: batches go to the writer thread meanwhile
        self._restarting = False
        #: writes the loop committed since the last checkpoint was asked for
        self._since_checkpoint = 0
        #: what the writes of app/db/writes.py need not ask the database again
        self._known = writes.KnownRows()
        #: test only (Settings.test_only_unfenced_room_saves): room saves go
        #: unfenced, to show the history checker finds what that lets through
        self.unfenced_room_saves = False
        #: writes waiting for the next batch (SQLite: any write; PostgreSQL: appends)
        self._waiting: list[tuple[_Append | _Call, asyncio.Future[Any]]] = []
        self._committer: asyncio.Task[None] | None = None
        #: a `_flush` is due at the loop's next turn
        self._flush_due = False
        #: when the last append was asked for (perf_counter): one asked for
        #: QUIET_GAP after it or later is committed at once (`_append_now`)
        self._last_append = -QUIET_GAP

    async def close(self) -> None:
        if self._flush_due:  # let the due batch commit first (one turn of the loop)
            await asyncio.sleep(0)
        if self._committer is not None:
            await asyncio.gather(self._committer, return_exceptions=True)
        for pending in (self._opening, self._checkpointing):
            if pending is not None:
                await asyncio.gather(pending, return_exceptions=True)
        if self._writer_thread is not None:
            self._writer_thread.shutdown(wait=True)
        for fast in (self._fast, self._inline):
            if fast is not None:
                fast.close()
        if self._writer is not None:
            self._writer.dispose()
        await self.engine.dispose()

    @contextlib.asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """Hold this while writing through `sessions` (SQLite: one writer at a time)."""
        if self._write_lock is None:
            yield
            return
        async with self._write_lock:
            yield

    # -- rooms, games and results ---------------------------------------------

    async def save_room(self, room: RoomRecord, epoch: int = 0) -> None:
        fence = None if self.unfenced_room_saves else writes.Fence(epoch, code=room.code)
        await self._write(writes.save_room, self._known, room, fence=fence)

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
        return int(
            await self._write(
                writes.start_game,
                self._known,
                room_code,
                game,
                dict(options),
                seed,
                list(seats),
                public_id or new_game_ref(),
                fence=writes.Fence(epoch, code=room_code),
            )
        )

    async def save_score_hand(
        self, game_id: int, hand: int, row: dict[str, Any], epoch: int = 0
    ) -> None:
        await self._write(
            writes.save_score_hand, game_id, hand, row, fence=writes.Fence(epoch, game_id=game_id)
        )

    async def finish_game(self, game_id: int, result: dict[str, Any], epoch: int = 0) -> None:
        await self._write(
            writes.finish_game, game_id, result, fence=writes.Fence(epoch, game_id=game_id)
        )

    async def _write(
        self, fn: Callable[..., Any], *args: Any, fence: writes.Fence | None = None
    ) -> Any:
        """Run one of app/db/writes.py in a transaction of its own (PostgreSQL,
        in-memory SQLite) or in the SQLite writer's next group commit.

        `fence`: the write is a room's, by the owner holding it with that
        epoch.  On PostgreSQL - the one backend several processes share (the
        app refuses to start them on SQLite) - it runs through
        `writes.fenced`, in the same transaction: refused (`Fenced`) once a
        newer owner has the room.  Every write of a room passes one.  Epoch 0
        is one process with no Redis: nobody else writes its rooms, and its
        writes skip the fence's extra statement (a round trip each)."""
        if fence is not None and fence.epoch and self._postgres:
            fn = functools.partial(writes.fenced, fence, fn)
        if self._writer is None:
            try:
                async with self.writing(), self.engine.begin() as conn:
                    return await conn.run_sync(fn, *args)
            except BaseException:
                self._known.clear()  # it may have learnt what the rollback undid
                raise
        return await self._enqueue(_Call(fn, args))

    # -- the hot path ----------------------------------------------------------

    def append_now(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> bool:
        """On SQLite, an append asked for in a quiet moment commits here, with
        no coroutine, deadline or turn of the loop (`_append_now`); anything
        else is left to `append_action`."""
        if self._inline is None:
            return False
        return self._append_now(_append_job(game_id, seq, seat, action, epoch)) is True

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        job = _append_job(game_id, seq, seat, action, epoch)
        if self._writer is not None or self._postgres:
            now = self._append_now(job)
            added = now if now is not None else bool(await self._enqueue(job))
        else:
            added = await self._append_one(job)
        if not added:
            await self._refuse_append(game_id, seq, epoch)

    def _append_now(self, job: _Append) -> bool | None:
        """Commit an append right here, on SQLite in a quiet moment: True once
        stored; None if it must queue as usual.

        A batch gathers the writes asked for during one turn of the loop, and
        at a busy time that shares a commit among many rooms' moves.  At a
        quiet one the batch is one move, and waiting a turn for it costs a
        future, a callback and a wake-up of the room's task: committing at
        once saves about 27,000 instructions an append at bench/guard.py's
        pace, 3% of an action there.
        So an append asked for QUIET_GAP or more after the one before commits
        at once, when nothing else waits; one that follows closer may have
        company, and queues.  Anything the loop cannot commit at once (the
        write lock held, the log being started over, a refused append, whose
        reason the queued path finds out) queues as before."""
        started = perf_counter()
        quiet = started - self._last_append >= QUIET_GAP
        self._last_append = started
        if (
            not quiet
            or self._inline is None
            or self._waiting
            or self._flush_due
            or (self._committer is not None and not self._committer.done())
            or (self._write_lock is not None and self._write_lock.locked())
        ):
            return None
        try:
            outcomes = self._write_inline([job])
        except Exception:
            metrics.appended(1, started, failed=True)
            self._known.clear()
            raise
        if outcomes is None:
            return None
        metrics.appended(1, started, failed=False)
        return True

    def _enqueue(self, job: _Append | _Call) -> asyncio.Future[Any]:
        """Queue one write for the writer's next transaction: a future of its
        outcome once committed (a plain function, so that the caller awaits the
        future itself, with no coroutine between it and the committer)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()
        self._waiting.append((job, done))
        if self._committer is None or self._committer.done():
            if self._inline is not None:
                if not self._flush_due:  # SQLite on the loop: `_flush` at its next turn
                    self._flush_due = True
                    loop.call_soon(self._flush)
            else:
                self._committer = loop.create_task(self._commit_waiting())
        return done

    def _flush(self) -> None:
        """Commit what waits right here, at the loop's turn after the first
        write was queued (everything queued by then joins the batch, as with
        the committer task): a batch committed on the loop (`_write_inline`)
        needs no task, no coroutine and no lock of its own, and a quiet
        evening's batch is one move.  Whatever cannot be done so - the write
        lock held, a batch for the writer thread - goes to the committer task,
        which waits as it must."""
        self._flush_due = False
        if not self._waiting or (self._committer is not None and not self._committer.done()):
            return  # nothing left, or the committer is at work and takes it
        lock = self._write_lock
        batch = self._waiting
        if lock is None or not lock.locked():
            self._waiting = []
            started = perf_counter()
            try:
                outcomes = self._write_inline([job for job, _ in batch])
            except Exception as err:  # the transaction failed: nothing of it is stored
                metrics.appended(len(batch), started, failed=True)
                self._failed(batch, err)
                return
            if outcomes is not None:
                metrics.appended(len(batch), started, failed=False)
                self._settle(batch, outcomes)
                return
            self._waiting = batch + self._waiting  # for the writer thread, in order
        self._committer = asyncio.get_running_loop().create_task(self._commit_waiting())

    async def _commit_waiting(self) -> None:
        """Commit everything queued, batch after batch, until nothing waits."""
        loop = asyncio.get_running_loop()
        while self._waiting:
            batch, self._waiting = self._waiting, []
            jobs = [job for job, _ in batch]
            started = perf_counter()
            try:
                if self._postgres:  # appends only: other writes do not queue there
                    outcomes = await self._append_postgres(cast(list[_Append], jobs))
                else:
                    async with self.writing():
                        inline = self._write_inline(jobs)
                        outcomes = (
                            inline
                            if inline is not None
                            else await loop.run_in_executor(
                                self._writer_thread, self._write_batch, jobs
                            )
                        )
            except Exception as err:  # the transaction failed: nothing of it is stored
                metrics.appended(len(batch), started, failed=True)
                self._failed(batch, err)
                continue
            metrics.appended(len(batch), started, failed=False)
            self._settle(batch, outcomes)

    def _failed(
        self, batch: list[tuple[_Append | _Call, asyncio.Future[Any]]], err: Exception
    ) -> None:
        self._known.clear()
        for _, done in batch:
            if not done.done():
                done.set_exception(err)

    def _settle(
        self,
        batch: list[tuple[_Append | _Call, asyncio.Future[Any]]],
        outcomes: list[tuple[bool, Any]],
    ) -> None:
        for (_, done), (ok, value) in zip(batch, outcomes, strict=True):
            if not ok:  # a write undone by its savepoint: so is what it learnt
                self._known.clear()
            if done.done():  # its room may have given up waiting
                continue
            if ok:
                done.set_result(value)
            else:
                done.set_exception(value)

    async def _append_postgres(self, appends: list[_Append]) -> list[tuple[bool, Any]]:
        """A batch of appends on PostgreSQL: one statement and one round trip for
        all of them (`_PG_APPENDS`), where each used to be a statement and a
        pooled connection of its own - several hundred microseconds of this
        process's CPU per action.  A game with two appends in the batch (never
        a room's, which waits for each) has them in successive statements, in
        order, as SQLite's executemany would.  If a statement fails outright (a
        game that does not exist), its rows are retried one by one to say which."""
        outcomes: list[tuple[bool, Any]] = [(True, False)] * len(appends)
        for part in _rounds(appends):
            rows = [appends[i].params for i in part]
            try:
                async with self._autocommit.connect() as conn:
                    stored = {
                        (game_id, seq)
                        for game_id, seq in await conn.execute(
                            _PG_APPENDS,
                            {
                                "game_ids": [r["game_id"] for r in rows],
                                "seqs": [r["seq"] for r in rows],
                                "seats": [r["seat"] for r in rows],
                                "actions": [json_dumps(r["action"]) for r in rows],
                                "created": [utcnow()] * len(rows),
                                "epochs": [appends[i].epoch for i in part],
                            },
                        )
                    }
            except IntegrityError:
                for i in part:
                    outcomes[i] = (True, await self._append_postgres_one(appends[i]))
                continue
            for i, r in zip(part, rows, strict=True):
                outcomes[i] = (True, (r["game_id"], r["seq"]) in stored)
        return outcomes

    async def _append_postgres_one(self, job: _Append) -> bool:
        """One append alone, by the same statement (fenced as in a batch)."""
        r = job.params
        try:
            async with self._autocommit.connect() as conn:
                stored = await conn.execute(
                    _PG_APPENDS,
                    {
                        "game_ids": [r["game_id"]],
                        "seqs": [r["seq"]],
                        "seats": [r["seat"]],
                        "actions": [json_dumps(r["action"])],
                        "created": [utcnow()],
                        "epochs": [job.epoch],
                    },
                )
                return stored.first() is not None
        except IntegrityError:
            return False

    async def _append_one(self, job: _Append) -> bool:
        """One append as its own statement: True if stored, False if refused."""
        try:
            async with self._autocommit.connect() as conn:
                return (await conn.execute(job.stmt, _stamped(job))).first() is not None
        except IntegrityError:
            return False

    def _write_inline(self, jobs: list[_Append | _Call]) -> list[tuple[bool, Any]] | None:
        """Commit a batch right here on the event loop; None if it must go to
        the writer thread instead.

        With `synchronous` NORMAL a commit only hands a page or two to the OS:
        tens of microseconds, less than the hop to the writer thread and back,
        and far less than the waits for the GIL that the thread's driver calls
        made the loop sit through at high action rates.  The other writes (a
        few per game, a fraction of a millisecond each) come along for the same
        reason: in the thread, a batch that held one stalled every room's next
        append behind its GIL hand-offs, and cost a busy server a quarter of its
        actions per second (bench/load.py).  What can take long stays off the
        loop: a lock held by another process (`Busy`: the thread waits for it),
        the replay that says which append was refused, and checkpoints (started
        from here, every second, in the writer thread)."""
        if self._inline is None or self._restarting:
            return None
        if self._checkpointing is not None and self._since_checkpoint >= CHECKPOINT_LAG:
            return None  # behind the checkpoint, in the writer thread
        if not self._inline.connected:  # opened in the thread; this batch goes there too
            if self._opening is None:
                self._opening = asyncio.get_running_loop().run_in_executor(
                    self._writer_thread, self._inline.connect
                )
                self._opening.add_done_callback(_log_failure("opening the loop's connection"))
            return None
        try:
            outcomes = _write_together(self._inline, jobs)
        except Busy:
            return None
        if outcomes is None:
            return None
        self._since_checkpoint += len(jobs)
        due = time.monotonic() - self._checkpointed >= CHECKPOINT_EVERY
        if self._checkpointing is None and due:
            self._checkpoint_soon()
        return outcomes

    def _checkpoint_soon(self, restart: bool = False) -> None:
        """Checkpoint in the writer thread (PASSIVE); `restart`: start the log
        over instead, with this process's writes held back.

        SQLite starts its log over only when a write begins after a checkpoint
        has copied all of it back.  While rooms play, commits on the loop land
        during every passive copy, so it never quite catches up: the log grew
        250 MB a minute at 1,000 rooms (bench/soak.py), on disk and in its
        shared-memory index.  A checkpoint of SQLite's own that holds writers
        back (RESTART, TRUNCATE) must first win the write lock from the loop's
        back-to-back commits, and under load it lost.  So once a passive one
        finds RESTART_PAGES in the log, the loop steps aside instead: until
        the log has been copied back whole, batches skip the inline path and
        queue in the writer thread behind the restart (`_write_inline`), a
        pause of a few milliseconds.  A passive one is no bound if the writer
        thread is slow to run it: the loop goes on committing meanwhile, and
        the log-restart test saw it reach 42 MB in a `make test` run, where
        a quiet machine's stays near 10.  So past CHECKPOINT_LAG writes since
        one was asked for, batches queue behind it in the thread as well."""
        assert self._fast is not None
        loop = asyncio.get_running_loop()
        work = self._fast.restart if restart else self._fast.checkpoint
        self._restarting = restart
        self._since_checkpoint = 0
        self._checkpointing = loop.run_in_executor(self._writer_thread, work)

        def done(f: asyncio.Future[int | None]) -> None:
            self._restarting = False
            self._checkpointing = None
            self._checkpointed = time.monotonic()
            if f.cancelled() or f.exception() is not None:
                return
            pages = f.result()
            if pages is not None and pages >= RESTART_PAGES:
                self._checkpoint_soon(restart=True)

        self._checkpointing.add_done_callback(done)
        self._checkpointing.add_done_callback(
            _log_failure("restarting the log" if restart else "a checkpoint")
        )

    def _write_batch(self, jobs: list[_Append | _Call]) -> list[tuple[bool, Any]]:
        """One transaction for the batch, in the writer thread.

        Jobs in one batch never depend on each other: each comes from a caller
        that awaits its write before making the next.  The usual batch, all
        appends, goes straight to the driver (`_write_together`).  If any
        append is refused, the batch is undone and replayed one statement at a
        time to say which."""
        assert self._fast is not None
        outcomes = _write_together(self._fast, jobs)
        return outcomes if outcomes is not None else self._write_each(jobs)

    def _write_each(self, jobs: list[_Append | _Call]) -> list[tuple[bool, Any]]:
        assert self._fast is not None
        conn = self._fast.connection
        outcomes: list[tuple[bool, Any]] = []
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            for job in jobs:
                if isinstance(job, _Call):
                    outcomes.append(_call(conn, job))
                    continue
                try:
                    added = conn.execute(job.stmt, _stamped(job)).first() is not None
                except IntegrityError:  # a repeated seq: only this statement is undone
                    added = False
                outcomes.append((True, added))
            conn.exec_driver_sql("COMMIT")
        except BaseException:
            conn.exec_driver_sql("ROLLBACK")
            raise
        return outcomes

    async def _refuse_append(self, game_id: int, seq: int, epoch: int) -> None:
        async with self.engine.connect() as conn:
            known = await conn.scalar(select(GameRow.id).where(GameRow.id == game_id))
            if known is None:
                raise KeyError(f"no game {game_id}")
            newer = await conn.scalar(
                select(Room.epoch)
                .join(GameRow, GameRow.room_id == Room.id)
                .where(GameRow.id == game_id)
            )
            if newer is not None and newer > epoch:
                raise Fenced(f"game {game_id}: the room has owner epoch {newer}, not {epoch}")
            have = await conn.scalar(
                select(func.count()).select_from(_actions).where(_actions.c.game_id == game_id)
            )
        raise ValueError(f"action {seq} of game {game_id} out of order (have {have})")

    # -- recovery --------------------------------------------------------------

    async def live_rooms(self) -> list[tuple[RoomRecord, GameRecord | None]]:
        """Four queries whatever the number of rooms: open rooms, their present
        players, their unfinished games, and those games' actions in order."""
        async with self.sessions() as s:
            rooms = (
                await s.scalars(select(Room).where(Room.closed.is_(False)).order_by(Room.id))
            ).all()
            players = (
                await s.scalars(
                    select(Player)
                    .join(Room, Room.id == Player.room_id)
                    .where(Room.closed.is_(False), Player.present.is_(True))
                    .order_by(Player.room_id, Player.position, Player.id)
                )
            ).all()
            games = (
                await s.scalars(
                    select(GameRow)
                    .join(Room, Room.id == GameRow.room_id)
                    .where(Room.closed.is_(False), GameRow.finished_at.is_(None))
                    .order_by(GameRow.id)
                )
            ).all()
            latest: dict[int, GameRow] = {}
            for g in games:
                latest[g.room_id] = g  # ordered by id: the last one wins
            wanted = [g.id for g in latest.values()]
            logs: dict[int, list[tuple[int | None, dict[str, Any]]]] = {gid: [] for gid in wanted}
            if wanted:
                rows = await s.execute(
                    select(_actions.c.game_id, _actions.c.seat, _actions.c.action)
                    .where(_actions.c.game_id.in_(wanted))
                    .order_by(_actions.c.game_id, _actions.c.seq)
                )
                for gid, seat, action in rows.all():
                    logs[gid].append((seat, action))
        occupants: dict[int, list[PlayerRecord]] = {}
        for p in players:
            occupants.setdefault(p.room_id, []).append(_player_record(p))
        out: list[tuple[RoomRecord, GameRecord | None]] = []
        for r in rooms:
            last = latest.get(r.id)
            game = _game_record(last, r.code, logs[last.id]) if last is not None else None
            out.append((_room_record(r, occupants.get(r.id, [])), game))
        return out

    async def open_rooms(self) -> list[str]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(Room.code).where(Room.closed.is_(False)))
            return [str(code) for (code,) in rows.all()]

    async def room_is_open(self, code: str) -> bool:
        async with self.engine.connect() as conn:
            found = await conn.scalar(
                select(Room.id).where(Room.code == code, Room.closed.is_(False)).limit(1)
            )
            return found is not None

    async def load_room(self, code: str) -> tuple[RoomRecord, GameRecord | None] | None:
        """A handful of small queries by key: the room, its people, its latest
        unfinished game, that game's snapshot and the actions after it."""
        async with self.sessions() as s:
            r = await s.scalar(select(Room).where(Room.code == code, Room.closed.is_(False)))
            if r is None:
                return None
            people = (
                await s.scalars(
                    select(Player)
                    .where(Player.room_id == r.id, Player.present.is_(True))
                    .order_by(Player.position, Player.id)
                )
            ).all()
            record = _room_record(r, [_player_record(p) for p in people])
            g = await s.scalar(
                select(GameRow)
                .where(GameRow.room_id == r.id, GameRow.finished_at.is_(None))
                .order_by(GameRow.id.desc())
                .limit(1)
            )
            if g is None:
                return record, None
            snap = await s.scalar(select(Snapshot).where(Snapshot.game_id == g.id))
            start = snap.seq if snap is not None else 0
            rows = (
                await s.execute(
                    select(_actions.c.seat, _actions.c.action)
                    .where(_actions.c.game_id == g.id, _actions.c.seq >= start)
                    .order_by(_actions.c.seq)
                )
            ).all()
            last_at = await s.scalar(
                select(func.max(_actions.c.created_at)).where(_actions.c.game_id == g.id)
            )
        game = _game_record(g, r.code, [(seat, action) for seat, action in rows])
        game.first_seq = start
        if snap is not None:
            game.snapshot = StoredSnapshot(snap.seq, snap.engine, bytes(snap.state))
        at = last_at or g.started_at
        game.last_at = (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()
        return record, game

    async def finished_results(self, code: str, game: str) -> list[FinishedGame]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(GameRow.seats, GameRow.result)
                .join(Room, Room.id == GameRow.room_id)
                .where(
                    Room.code == code,
                    Room.closed.is_(False),
                    GameRow.game == game,
                    GameRow.finished_at.is_not(None),
                )
                .order_by(GameRow.id)
            )
            return [
                FinishedGame([str(p) for p in seats], dict(result))
                for seats, result in rows.all()
                if result
            ]

    async def game_actions(
        self, game_id: int, start: int = 0
    ) -> list[tuple[int | None, dict[str, Any]]]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                select(_actions.c.seat, _actions.c.action)
                .where(_actions.c.game_id == game_id, _actions.c.seq >= start)
                .order_by(_actions.c.seq)
            )
            return [(seat, action) for seat, action in rows.all()]

    async def action_count(self, game_id: int) -> int:
        async with self.engine.connect() as conn:
            n = await conn.scalar(
                select(func.count()).select_from(_actions).where(_actions.c.game_id == game_id)
            )
            return int(n or 0)

    async def action_at(
        self, game_id: int, seq: int
    ) -> tuple[int | None, dict[str, Any], int | None] | None:
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    select(_actions.c.seat, _actions.c.action, _actions.c.epoch).where(
                        _actions.c.game_id == game_id, _actions.c.seq == seq
                    )
                )
            ).first()
        return None if row is None else (row.seat, dict(row.action), row.epoch)

    async def score_hands(self, game_id: int) -> set[int]:
        async with self.engine.connect() as conn:
            rows = await conn.execute(select(ScoreHand.hand).where(ScoreHand.game_id == game_id))
            return {int(h) for (h,) in rows.all()}

    async def save_snapshot(self, game_id: int, snapshot: StoredSnapshot, epoch: int = 0) -> None:
        await self._write(
            writes.save_snapshot, game_id, snapshot, fence=writes.Fence(epoch, game_id=game_id)
        )

    async def claim_room(self, code: str, epoch: int) -> tuple[bool, int] | None:
        self._known.clear()  # another owner may have written the room's rows
        found = await self._write(writes.claim_room, code, epoch)
        return None if found is None else (bool(found[0]), int(found[1]))

    async def create_room(self, room: RoomRecord) -> bool:
        try:
            await self._write(writes.create_room, self._known, room)
        except IntegrityError:  # the open-code index: another process has it
            self._known.clear()
            return False
        return True


def _player_record(p: Player) -> PlayerRecord:
    return PlayerRecord(
        player_id=p.player_id,
        name=p.name,
        token_hash=p.token_hash,
        seat=p.seat,
        is_bot=p.is_bot,
        guest_id=p.guest_id,
        account_id=p.account_id,
        bot_level=p.bot_level,
        lent=bool(p.lent),
    )


def _room_record(r: Room, players: list[PlayerRecord]) -> RoomRecord:
    return RoomRecord(
        code=r.code,
        game=r.game,
        options=dict(r.options),
        settings=dict(r.settings),
        host_player_id=r.host_player_id,
        players=players,
        tally={str(k): int(v) for k, v in (r.tally or {}).items()},
        closed=False,
        replaced={str(h): ReplacedToken(**v) for h, v in (r.replaced or {}).items()},
        removed={str(pid): RemovedPerson(**v) for pid, v in (r.removed or {}).items()},
    )


def _game_record(
    g: GameRow, code: str, actions: list[tuple[int | None, dict[str, Any]]]
) -> GameRecord:
    return GameRecord(
        game_id=g.id,
        room_code=code,
        game=g.game,
        options=dict(g.options),
        seed=int(g.seed),
        seats=[str(pid) for pid in g.seats],
        actions=actions,
        public_id=g.public_id,
    )


@dataclass(slots=True)
class _Append:
    """An action for the log: one row of the batch's executemany."""

    stmt: Any
    params: dict[str, Any]
    #: the owner's epoch (PostgreSQL fences the append with it)
    epoch: int = 0


@dataclass(slots=True)
class _Call:
    """Any other write: a function of app/db/writes.py and its arguments."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]


def _append_job(
    game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int
) -> _Append:
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        raise ValueError(f"action number must be an int >= 0, not {seq!r}")
    params = {"game_id": game_id, "seq": seq, "seat": seat, "action": dict(action), "epoch": epoch}
    if seq == 0:
        return _Append(_FIRST, params, epoch)
    params["previous"] = seq - 1
    return _Append(_NEXT, params, epoch)


def _stamped(job: _Append) -> dict[str, Any]:
    """An append's parameters with the time it is stored (a batch's rows share
    theirs: see `FastAppends`)."""
    return {**job.params, _STAMP: utcnow()}


def _by_statement(appends: list[_Append]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The batch's rows for action 0 of a game and for every later action."""
    firsts = [a.params for a in appends if a.stmt is _FIRST]
    nexts = [a.params for a in appends if a.stmt is not _FIRST]
    return firsts, nexts


def _rounds(appends: list[_Append]) -> list[list[int]]:
    """Positions of `appends` in statements that each hold at most one append
    per game, a game's appends in order of seq across them."""
    rounds: list[list[int]] = []
    depth: dict[int, int] = {}
    for i in sorted(range(len(appends)), key=lambda i: appends[i].params["seq"]):
        game_id = appends[i].params["game_id"]
        k = depth.get(game_id, 0)
        depth[game_id] = k + 1
        if k == len(rounds):
            rounds.append([])
        rounds[k].append(i)
    return rounds


def _log_failure(what: str) -> Callable[[asyncio.Future[Any]], None]:
    """A done-callback for background SQLite work that nobody awaits at once
    (the writes stay safe: without it they keep going through the thread)."""

    def check(f: asyncio.Future[Any]) -> None:
        if not f.cancelled() and f.exception() is not None:
            log.warning("SQLite: %s failed: %s", what, f.exception())

    return check


def _write_together(
    fast: FastAppends, jobs: list[_Append | _Call]
) -> list[tuple[bool, Any]] | None:
    """One transaction for the whole batch: its outcomes once committed, or
    None, with nothing stored, if any append was refused.  The appends go
    straight to the driver as one executemany (app/db/sqlite_appends.py);
    each other write then runs inside a savepoint, so one that fails (a game
    that does not exist) undoes only itself."""
    if len(jobs) == 1 and isinstance(jobs[0], _Append):  # a quiet evening's batch
        only = jobs[0]
        first = only.stmt is _FIRST
        one = (only.params,)
        stored = fast.run(one if first else (), () if first else one, None, utcnow())
        return [(True, True)] if stored else None
    appends = [job for job in jobs if isinstance(job, _Append)]
    outcomes: list[tuple[bool, Any]] = [(True, True)] * len(jobs)

    def others(conn: Connection) -> None:
        for i, job in enumerate(jobs):
            if isinstance(job, _Call):
                outcomes[i] = _call(conn, job)

    then = others if len(appends) < len(jobs) else None  # the usual batch: appends only
    return outcomes if fast.run(*_by_statement(appends), then, utcnow()) else None


def _call(conn: Connection, job: _Call) -> tuple[bool, Any]:
    """Run one write inside a savepoint: (True, its result) or (False, its error).
    The savepoint statements go to the driver directly: through SQLAlchemy's
    execution machinery they cost as much as the write they frame."""
    driver = conn.connection.dbapi_connection
    assert driver is not None
    driver.execute("SAVEPOINT job").close()
    try:
        value = job.fn(conn, *job.args)
    except Exception as err:
        driver.execute("ROLLBACK TO job").close()
        driver.execute("RELEASE job").close()
        return False, err
    driver.execute("RELEASE job").close()
    return True, value
