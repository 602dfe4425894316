"""`DbRecords`: the rooms' `Records` (app/store/records.py) over SQLite or PostgreSQL.

Every method is one short transaction that has committed before it returns, so
the room's rule "store, then broadcast" means what it says.  `append_action`,
the hot path, is a single INSERT: it adds action `seq` only if action `seq - 1`
is already there, and the primary key refuses a second `seq`; together they keep
each game's log gap-free and in order without a read before the write.

SQLite allows one writer at a time.  Rather than let this process's writers
collide on the file lock and back off in sleeps, they queue on an asyncio lock
(`writing()`, shared with the accounts); readers (history pages) are not held
up, thanks to WAL.  Appends go through a plain sqlite3 connection in one worker
thread, one hop per action instead of aiosqlite's several (bench/db.py: about
4x the appends per second).  On PostgreSQL an append is one autocommitted
statement: one round trip.

Group commit (SQLite): appends that arrive while the writer is busy wait
together and are committed by the writer's next transaction, one fsync for all
of them.  Each caller still returns only after its own action has committed,
so "store, then broadcast" holds; under load a thousand rooms share a handful
of commits a second instead of queueing for one each.  A failed INSERT (a
repeated seq) aborts only its own statement in SQLite, so one bad append
never takes its batch-mates down with it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from sqlalchemy import (
    JSON,
    DateTime,
    Integer,
    Table,
    bindparam,
    delete,
    exists,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.db.models import (
    ActionRow,
    GameRow,
    GameSeat,
    LoginSession,
    Player,
    Room,
    ScoreHand,
    ScoreLine,
    utcnow,
)
from app.db.session import is_sqlite, sessionmaker, sqlite_writer
from app.db.sheet import read_row
from app.store.records import GameRecord, PlayerRecord, RoomRecord

_actions = cast(Table, ActionRow.__table__)

#: action 0 of a game: the primary key alone refuses a second one
_FIRST_MANY = insert(_actions)
_FIRST = _FIRST_MANY.returning(_actions.c.seq)
#: action n > 0: inserted only if action n - 1 is there (one statement, no read first)
_NEXT_MANY = insert(_actions).from_select(
    ["game_id", "seq", "seat", "action", "created_at"],
    select(
        bindparam("game_id", type_=Integer),
        bindparam("seq", type_=Integer),
        bindparam("seat", type_=Integer),
        bindparam("action", type_=JSON),
        bindparam("created_at", type_=DateTime(timezone=True)),
    ).where(
        exists().where(
            _actions.c.game_id == bindparam("game_id", type_=Integer),
            _actions.c.seq == bindparam("previous", type_=Integer),
        )
    ),
)
_NEXT = _NEXT_MANY.returning(_actions.c.seq)


class DbRecords:
    """Durable records; behaves like MemoryRecords, and survives the process.

    Call `close()` when done (it also stops the SQLite writer thread)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.sessions: async_sessionmaker[AsyncSession] = sessionmaker(engine)
        sqlite = is_sqlite(engine)
        self._write_lock: asyncio.Lock | None = asyncio.Lock() if sqlite else None
        #: appends on PostgreSQL: one statement, one round trip, its own transaction
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._writer = sqlite_writer(engine) if sqlite else None
        self._writer_thread = (
            ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer") if self._writer else None
        )
        #: SQLite appends waiting for the writer's next transaction
        self._waiting: list[tuple[Any, dict[str, Any], asyncio.Future[bool]]] = []
        self._committer: asyncio.Task[None] | None = None

    async def close(self) -> None:
        if self._committer is not None:
            await asyncio.gather(self._committer, return_exceptions=True)
        if self._writer_thread is not None:
            self._writer_thread.shutdown(wait=True)
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

    # -- rooms ---------------------------------------------------------------

    async def save_room(self, room: RoomRecord) -> None:
        async with self.writing(), self.sessions.begin() as s:
            row = await _room_for_save(s, room.code, room.closed)
            if row is None:
                row = Room(code=room.code)
                s.add(row)
            row.game = room.game
            row.options = dict(room.options)
            row.settings = dict(room.settings)
            row.host_player_id = room.host_player_id
            row.tally = dict(room.tally)
            row.closed = room.closed
            row.updated_at = utcnow()
            await s.flush()
            await _save_players(s, row.id, room.players)

    async def start_game(
        self, room_code: str, game: str, options: dict[str, Any], seed: int, seats: list[str]
    ) -> int:
        async with self.writing(), self.sessions.begin() as s:
            room = await _open_room(s, room_code)
            if room is None:
                raise ValueError(f"no open room {room_code!r}: save the room before its game")
            found = await s.execute(
                select(Player.player_id, Player.id, Player.name).where(
                    Player.room_id == room.id, Player.player_id.in_(seats)
                )
            )
            by_pid: dict[str, tuple[int, str | None]] = {
                pid: (ref, name) for pid, ref, name in found.all()
            }
            for pid in seats:
                if pid not in by_pid:
                    by_pid[pid] = (await _placeholder(s, room.id, pid), None)
            row = GameRow(
                room_id=room.id,
                game=game,
                options=dict(options),
                seed=str(int(seed)),
                seats=list(seats),
            )
            s.add(row)
            await s.flush()
            for seat, pid in enumerate(seats):
                ref, name = by_pid[pid]
                s.add(GameSeat(game_id=row.id, seat=seat, player_ref=ref, name=name))
            return row.id

    # -- the hot path ----------------------------------------------------------

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any]
    ) -> None:
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
            raise ValueError(f"action number must be an int >= 0, not {seq!r}")
        params = {
            "game_id": game_id,
            "seq": seq,
            "seat": seat,
            "action": dict(action),
            "created_at": utcnow(),
            "previous": seq - 1,
        }
        stmt = _FIRST if seq == 0 else _NEXT
        if seq == 0:
            del params["previous"]
        if self._writer is not None:
            added = await self._append_grouped(stmt, params)
        else:
            try:
                async with self._autocommit.connect() as conn:
                    added = (await conn.execute(stmt, params)).first() is not None
            except IntegrityError:
                added = False
        if not added:
            await self._refuse_append(game_id, seq)

    async def _append_grouped(self, stmt: Any, params: dict[str, Any]) -> bool:
        """Queue one append for the writer's next transaction; True once committed."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bool] = loop.create_future()
        self._waiting.append((stmt, params, done))
        if self._committer is None or self._committer.done():
            self._committer = loop.create_task(self._commit_waiting())
        return await done

    async def _commit_waiting(self) -> None:
        """Commit everything queued, batch after batch, until nothing waits."""
        loop = asyncio.get_running_loop()
        while self._waiting:
            batch, self._waiting = self._waiting, []
            try:
                async with self.writing():
                    added = await loop.run_in_executor(
                        self._writer_thread,
                        self._append_batch_in_thread,
                        [(stmt, params) for stmt, params, _ in batch],
                    )
            except Exception as err:  # the transaction failed: nobody's action is stored
                for *_, done in batch:
                    if not done.done():
                        done.set_exception(err)
                continue
            for (*_, done), ok in zip(batch, added, strict=True):
                if not done.done():  # its room may have given up waiting
                    done.set_result(ok)

    def _append_batch_in_thread(self, items: list[tuple[Any, dict[str, Any]]]) -> list[bool]:
        """One transaction for the batch.  The usual case - every append in order -
        is two executemany calls, whose row loop runs in C without the GIL, so the
        event loop keeps serving sockets meanwhile.  If any append is refused, the
        batch is undone and replayed one statement at a time to say which."""
        assert self._writer is not None
        firsts = [params for stmt, params in items if stmt is _FIRST]
        nexts = [params for stmt, params in items if stmt is not _FIRST]
        with self._writer.connect() as conn:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                stored = conn.execute(_FIRST_MANY, firsts).rowcount if firsts else 0
                stored += conn.execute(_NEXT_MANY, nexts).rowcount if nexts else 0
            except IntegrityError:
                stored = -1
            except BaseException:
                conn.exec_driver_sql("ROLLBACK")
                raise
            if stored == len(items):
                conn.exec_driver_sql("COMMIT")
                return [True] * len(items)
            conn.exec_driver_sql("ROLLBACK")
        return self._append_each_in_thread(items)

    def _append_each_in_thread(self, items: list[tuple[Any, dict[str, Any]]]) -> list[bool]:
        assert self._writer is not None
        added: list[bool] = []
        with self._writer.connect() as conn:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                for stmt, params in items:
                    try:
                        added.append(conn.execute(stmt, params).first() is not None)
                    except IntegrityError:  # a repeated seq: only this statement is undone
                        added.append(False)
                conn.exec_driver_sql("COMMIT")
            except BaseException:
                conn.exec_driver_sql("ROLLBACK")
                raise
        return added

    async def _refuse_append(self, game_id: int, seq: int) -> None:
        async with self.engine.connect() as conn:
            known = await conn.scalar(select(GameRow.id).where(GameRow.id == game_id))
            if known is None:
                raise KeyError(f"no game {game_id}")
            have = await conn.scalar(
                select(func.count()).select_from(_actions).where(_actions.c.game_id == game_id)
            )
        raise ValueError(f"action {seq} of game {game_id} out of order (have {have})")

    # -- results ---------------------------------------------------------------

    async def save_score_hand(self, game_id: int, hand: int, row: dict[str, Any]) -> None:
        sheet = read_row(hand, row)
        async with self.writing(), self.sessions.begin() as s:
            if await s.get(GameRow, game_id) is None:
                raise KeyError(f"no game {game_id}")
            where = (ScoreHand.game_id == game_id, ScoreHand.hand == hand)
            await s.execute(
                delete(ScoreLine).where(ScoreLine.game_id == game_id, ScoreLine.hand == hand)
            )
            await s.execute(delete(ScoreHand).where(*where))
            s.add(
                ScoreHand(
                    game_id=game_id,
                    hand=hand,
                    dealer=sheet.dealer,
                    requirement=sheet.requirement,
                    went_out=sheet.went_out,
                    cut=sheet.cut,
                    row=dict(row),
                )
            )
            await s.flush()
            for ln in sheet.lines:
                s.add(
                    ScoreLine(
                        game_id=game_id,
                        hand=hand,
                        seat=ln.seat,
                        points=ln.points,
                        total=ln.total,
                        went_out=ln.went_out,
                        posso_count=ln.posso_count,
                        cut=ln.cut,
                    )
                )

    async def finish_game(self, game_id: int, result: dict[str, Any]) -> None:
        async with self.writing(), self.engine.begin() as conn:
            done = await conn.execute(
                update(GameRow)
                .where(GameRow.id == game_id)
                .values(result=dict(result), finished_at=utcnow())
                .returning(GameRow.id)
            )
            if done.first() is None:
                raise KeyError(f"no game {game_id}")

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
            occupants.setdefault(p.room_id, []).append(
                PlayerRecord(
                    player_id=p.player_id,
                    name=p.name,
                    token_hash=p.token_hash,
                    seat=p.seat,
                    is_bot=p.is_bot,
                    guest_id=p.guest_id,
                    account_id=p.account_id,
                )
            )
        out: list[tuple[RoomRecord, GameRecord | None]] = []
        for r in rooms:
            record = RoomRecord(
                code=r.code,
                game=r.game,
                options=dict(r.options),
                settings=dict(r.settings),
                host_player_id=r.host_player_id,
                players=occupants.get(r.id, []),
                tally={str(k): int(v) for k, v in (r.tally or {}).items()},
                closed=False,
            )
            last = latest.get(r.id)
            game = None
            if last is not None:
                g = last
                game = GameRecord(
                    game_id=g.id,
                    room_code=r.code,
                    game=g.game,
                    options=dict(g.options),
                    seed=int(g.seed),
                    seats=[str(pid) for pid in g.seats],
                    actions=logs[g.id],
                )
            out.append((record, game))
        return out


async def _placeholder(s: AsyncSession, room_id: int, player_id: str) -> int:
    """A row for a seat whose player the room has not saved yet (the bots a room
    adds as a game starts are saved right after); the next save fills it in."""
    row = Player(
        room_id=room_id,
        player_id=player_id,
        position=1_000_000,
        name=player_id,
        seat=None,
        token_hash="",
        is_bot=False,
        present=False,
    )
    s.add(row)
    await s.flush()
    return row.id


async def _open_room(s: AsyncSession, code: str) -> Room | None:
    found = await s.scalars(select(Room).where(Room.code == code, Room.closed.is_(False)))
    return found.first()


async def _room_for_save(s: AsyncSession, code: str, closing: bool) -> Room | None:
    """The row a save of room `code` updates: the open room with that code; when
    closing and none is open, the latest room with it (a repeated close)."""
    room = await _open_room(s, code)
    if room is not None or not closing:
        return room
    found = await s.scalars(select(Room).where(Room.code == code).order_by(Room.id.desc()))
    return found.first()


async def _save_players(s: AsyncSession, room_id: int, players: list[PlayerRecord]) -> None:
    """Upsert the room's occupants.  Those no longer listed are kept but marked
    absent; a save that lacks a guest or account id never erases a known one
    (linking a guest to an account happens outside the room)."""
    rows = (await s.scalars(select(Player).where(Player.room_id == room_id))).all()
    known = {p.player_id: p for p in rows}
    current: list[Player] = []
    for position, rec in enumerate(players):
        row = known.pop(rec.player_id, None)
        if row is None:
            row = Player(room_id=room_id, player_id=rec.player_id)
            s.add(row)
        row.position = position
        row.name = rec.name
        row.seat = rec.seat
        row.token_hash = rec.token_hash
        row.is_bot = rec.is_bot
        row.guest_id = rec.guest_id or row.guest_id
        row.account_id = rec.account_id if rec.account_id is not None else row.account_id
        row.present = True
        current.append(row)
    for row in known.values():  # no longer in the room
        row.present = False
        row.seat = None
    await _link_signed_in(s, [r for r in current if r.guest_id and r.account_id is None])


async def _link_signed_in(s: AsyncSession, rows: list[Player]) -> None:
    """Seats taken by a browser that is signed in belong to its account, whether
    or not the room passed the account id along."""
    if not rows:
        return
    found = await s.execute(
        select(LoginSession.guest_id, LoginSession.account_id).where(
            LoginSession.guest_id.in_({r.guest_id for r in rows}),
            LoginSession.expires_at > utcnow(),
        )
    )
    owner = {guest: account for guest, account in found.all()}
    for row in rows:
        if row.guest_id in owner:
            row.account_id = owner[row.guest_id]
