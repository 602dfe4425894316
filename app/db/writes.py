"""The records' writes as plain functions of one synchronous `Connection`.

Each function is the whole of one write - a room saved, a game started or
finished, a score-sheet hand - in SQLAlchemy Core, so one body serves both
backends: `DbRecords` runs it inside SQLite's group commit, on the loop
(`_write_inline`) or, when that path cannot take the batch, in the writer
thread (app/db/records.py), or through `AsyncConnection.run_sync` on
PostgreSQL.  Core rather than the ORM because these run once or twice per
game on the hot path of a busy server: through the ORM and aiosqlite a room
save cost about 5 ms of CPU, as Core statements in the writer thread it costs
a tenth of that (bench/db.py), and a server finishing dozens of games a second
spends its time on play instead.

Every statement is built once, here, with named parameters: building one per
call (select(...).where(...)) cost about five times as much CPU as running it,
as SQLAlchemy derives a cache key for each new statement object.

None of them commits: the caller owns the transaction, so a function that
raises leaves nothing behind.

With several processes each write of a room is fenced in its own transaction
by `fenced`: the room's row is locked (FOR UPDATE) and its owner epoch
compared with the writer's before the write runs, so a takeover's
`claim_room` (an UPDATE of that row) either waits for the write to commit or
has already raised the epoch, and the write is refused (`Fenced`).

A game's start and end were still about nine statements, a twentieth of a
busy server's CPU (bench/load.py, a hundred rooms at saturation), most of
them asking what this process already knew: the open room's row, its
players' rows, whether its occupants had changed.  `KnownRows` remembers
those answers, so that a rematch costs the two inserts it needs and a
finished game the two updates.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.sql import Select

from app.db.driver_rows import DriverStatement
from app.db.models import (
    GameRow,
    GameSeat,
    LoginSession,
    Player,
    Room,
    ScoreHand,
    ScoreLine,
    Snapshot,
    utcnow,
)
from app.db.sheet import read_row
from app.db.summaries import record_game
from app.store.records import Fenced, PlayerRecord, RoomRecord
from app.store.records import Snapshot as StoredSnapshot

_rooms = cast(Table, Room.__table__)
_players = cast(Table, Player.__table__)
_games = cast(Table, GameRow.__table__)
_game_seats = cast(Table, GameSeat.__table__)
_logins = cast(Table, LoginSession.__table__)
_hands = cast(Table, ScoreHand.__table__)
_lines = cast(Table, ScoreLine.__table__)
_snapshots = cast(Table, Snapshot.__table__)

#: what a player row holds besides its keys, in the order compared on save
_PLAYER_FIELDS = (
    "position",
    "name",
    "seat",
    "token_hash",
    "is_bot",
    "guest_id",
    "account_id",
    "bot_level",
    "lent",
)

_OPEN_ROOM = (
    select(_rooms.c.id)
    .where(_rooms.c.code == bindparam("code"), _rooms.c.closed.is_(False))
    .limit(1)
)
_LATEST_ROOM = (
    select(_rooms.c.id)
    .where(_rooms.c.code == bindparam("code"))
    .order_by(_rooms.c.id.desc())
    .limit(1)
)
_ROOM_FIELDS = (
    "game",
    "options",
    "settings",
    "host_player_id",
    "tally",
    "closed",
    "updated_at",
    "replaced",
    "removed",
)
_INSERT_ROOM = insert(_rooms).returning(_rooms.c.id)
_UPDATE_ROOM = DriverStatement(
    update(_rooms)
    .where(_rooms.c.id == bindparam("row_id"))
    .values({f: bindparam(f"new_{f}") for f in _ROOM_FIELDS})
)
_ROOM_PLAYERS = select(
    _players.c.id,
    _players.c.player_id,
    _players.c.present,
    *(_players.c[f] for f in _PLAYER_FIELDS),
).where(_players.c.room_id == bindparam("room_id"))
_SEATED = select(_players.c.player_id, _players.c.id, _players.c.name).where(
    _players.c.room_id == bindparam("room_id"),
    _players.c.player_id.in_(bindparam("player_ids", expanding=True)),
)
_INSERT_PLAYER = insert(_players)
_INSERT_PLACEHOLDER = insert(_players).returning(_players.c.id)
_UPDATE_PLAYER = (
    update(_players)
    .where(_players.c.id == bindparam("row_id"))
    .values({f: bindparam(f"new_{f}") for f in (*_PLAYER_FIELDS, "present")})
)
_SIGNED_IN = select(_logins.c.guest_id, _logins.c.account_id).where(
    _logins.c.guest_id.in_(bindparam("guest_ids", expanding=True)),
    _logins.c.expires_at > bindparam("now"),
)
#: on SQLite's writer, these go to the driver itself (app/db/driver_rows.py)
_INSERT_GAME = DriverStatement(insert(_games).returning(_games.c.id))
_INSERT_SEATS = DriverStatement(insert(_game_seats))
_FINISH_GAME = DriverStatement(
    update(_games)
    .where(_games.c.id == bindparam("game_id"))
    .values(result=bindparam("result"), finished_at=bindparam("finished_at"))
    .returning(_games.c.id)
)
_GAME_EXISTS = select(_games.c.id).where(_games.c.id == bindparam("game_id"))
_DELETE_LINES = delete(_lines).where(
    _lines.c.game_id == bindparam("game_id"), _lines.c.hand == bindparam("hand")
)
_DELETE_HAND = delete(_hands).where(
    _hands.c.game_id == bindparam("game_id"), _hands.c.hand == bindparam("hand")
)
_INSERT_HAND = insert(_hands)
_INSERT_LINES = insert(_lines)
#: the owner epoch of an open room, its row locked until the transaction ends
_ROOM_EPOCH_BY_CODE = (
    select(_rooms.c.epoch)
    .where(_rooms.c.code == bindparam("code"), _rooms.c.closed.is_(False))
    .with_for_update()
)
#: the same, found from one of the room's games
_ROOM_EPOCH_BY_GAME = (
    select(_rooms.c.epoch)
    .join_from(_games, _rooms, _games.c.room_id == _rooms.c.id)
    .where(_games.c.id == bindparam("game_id"))
    .with_for_update(of=_rooms)
)


@dataclass(frozen=True, slots=True)
class Fence:
    """Who is writing: the owner epoch its process holds the room with, and
    the room (by code, or by one of its games)."""

    epoch: int
    code: str | None = None
    game_id: int | None = None


def fenced(fence: Fence, write: Any, conn: Connection, *args: Any) -> Any:
    """Run `write(conn, *args)` only if `fence.epoch` is still the room's
    owner epoch, with the room's row locked until the caller's transaction
    ends: the one way every write of a room is fenced (app/db/records.py,
    `DbRecords._write`).  Raises `Fenced` if a newer owner has the room.  A
    room with no open row (being created, or closed already) has nobody to
    be fenced from."""
    query: Select[Any]
    params: dict[str, Any]
    if fence.code is not None:
        query, params = _ROOM_EPOCH_BY_CODE, {"code": fence.code}
    else:
        query, params = _ROOM_EPOCH_BY_GAME, {"game_id": fence.game_id}
    stored = conn.scalar(query, params)
    if stored is not None and stored > fence.epoch:
        room = fence.code or f"of game {fence.game_id}"
        raise Fenced(f"room {room}: owner epoch {stored}, not {fence.epoch}")
    return write(conn, *args)


@dataclass
class KnownRows:
    """Row ids and occupants as this process's own writes left them: a cache
    of answers the writes would otherwise ask the database for.

    Only this process writes a room it serves (accounts only ever fill in a
    player's account id, which a save never erases), so what it wrote is what
    is there, as long as the write committed.  A write records what it learns
    as it goes, before its transaction ends, so whoever runs it must `clear()`
    this when a write or its transaction fails; a cleared cache costs a few
    queries, never a wrong row.  It holds only while one process writes each
    room's rows, as now: a mode with several processes, where any process
    may act for a room, must go without it (or key it to the
    room's version), or a save could be skipped over another process's."""

    #: the open room's row id, by code
    rooms: dict[str, int] = field(default_factory=dict)
    #: by room row: its occupants as last written (compared on the next save)
    occupants: dict[int, tuple[PlayerRecord, ...]] = field(default_factory=dict)
    #: by room row: each seated player's row id and name, as `start_game` needs them
    seated: dict[int, dict[str, tuple[int, str | None]]] = field(default_factory=dict)

    def clear(self) -> None:
        self.rooms.clear()
        self.occupants.clear()
        self.seated.clear()

    def forget_room(self, code: str, room_id: int) -> None:
        self.rooms.pop(code, None)
        self.occupants.pop(room_id, None)
        self.seated.pop(room_id, None)


def save_room(conn: Connection, known: KnownRows, room: RoomRecord) -> None:
    """Insert or update the room and its occupants."""
    room_id = known.rooms.get(room.code)
    if room_id is None:
        room_id = _room_for_save(conn, room.code, room.closed)
    values = {
        "game": room.game,
        "options": dict(room.options),
        "settings": dict(room.settings),
        "host_player_id": room.host_player_id,
        "tally": dict(room.tally),
        "closed": room.closed,
        "updated_at": utcnow(),
        "replaced": {h: dataclasses.asdict(r) for h, r in room.replaced.items()},
        "removed": {pid: dataclasses.asdict(r) for pid, r in room.removed.items()},
    }
    if room_id is None:
        room_id = conn.execute(_INSERT_ROOM, {"code": room.code, **values}).scalar_one()
    else:
        _UPDATE_ROOM.execute(
            conn, {"row_id": room_id, **{f"new_{k}": v for k, v in values.items()}}
        )
    if room.closed:
        _save_players(conn, room_id, room.players)
        known.forget_room(room.code, room_id)
        return
    known.rooms[room.code] = room_id
    if known.occupants.get(room_id) == tuple(room.players):
        return
    known.seated.pop(room_id, None)  # names and seats may have changed
    _save_players(conn, room_id, room.players)
    known.occupants[room_id] = tuple(p.copy() for p in room.players)


def start_game(
    conn: Connection,
    known: KnownRows,
    room_code: str,
    game: str,
    options: dict[str, Any],
    seed: int,
    seats: list[str],
    public_id: str,
) -> int:
    """A new game row and who sits where; returns the game's id."""
    room_id = known.rooms.get(room_code)
    if room_id is None:
        room_id = _open_room(conn, room_code)
        if room_id is None:
            raise ValueError(f"no open room {room_code!r}: save the room before its game")
        known.rooms[room_code] = room_id
    by_pid = known.seated.get(room_id)
    if by_pid is None or any(pid not in by_pid for pid in seats):
        found = conn.execute(_SEATED, {"room_id": room_id, "player_ids": list(seats)})
        by_pid = {pid: (ref, name) for pid, ref, name in found}
        missing = [pid for pid in seats if pid not in by_pid]
        if not missing:
            known.seated[room_id] = by_pid
        else:  # not remembered: the room's next save names them
            known.occupants.pop(room_id, None)  # rows its last save did not write
        for pid in missing:
            by_pid[pid] = (_placeholder(conn, room_id, pid), None)
    [(game_id,)] = _INSERT_GAME.execute(
        conn,
        {
            "room_id": room_id,
            "game": game,
            "options": dict(options),
            "seed": str(int(seed)),
            "seats": list(seats),
            "public_id": public_id,
            "started_at": utcnow(),  # the column's default, given: the driver has none
        },
    )
    _INSERT_SEATS.executemany(
        conn,
        [
            {"game_id": game_id, "seat": seat, "player_ref": by_pid[pid][0], "name": by_pid[pid][1]}
            for seat, pid in enumerate(seats)
        ],
    )
    return int(game_id)


def finish_game(conn: Connection, game_id: int, result: dict[str, Any]) -> None:
    done = _FINISH_GAME.execute(
        conn, {"game_id": game_id, "result": dict(result), "finished_at": utcnow()}
    )
    if not done:
        raise KeyError(f"no game {game_id}")
    record_game(conn, game_id)  # the records' summary, in the same transaction


def save_score_hand(conn: Connection, game_id: int, hand: int, row: dict[str, Any]) -> None:
    """Write (or rewrite) one hand of a Posso score sheet."""
    sheet = read_row(hand, row)
    if conn.scalar(_GAME_EXISTS, {"game_id": game_id}) is None:
        raise KeyError(f"no game {game_id}")
    conn.execute(_DELETE_LINES, {"game_id": game_id, "hand": hand})
    conn.execute(_DELETE_HAND, {"game_id": game_id, "hand": hand})
    conn.execute(
        _INSERT_HAND,
        {
            "game_id": game_id,
            "hand": hand,
            "dealer": sheet.dealer,
            "requirement": sheet.requirement,
            "went_out": sheet.went_out,
            "cut": sheet.cut,
            "row": dict(row),
        },
    )
    if sheet.lines:
        conn.execute(
            _INSERT_LINES,
            [
                {
                    "game_id": game_id,
                    "hand": hand,
                    "seat": ln.seat,
                    "points": ln.points,
                    "total": ln.total,
                    "went_out": ln.went_out,
                    "posso_count": ln.posso_count,
                    "cut": ln.cut,
                }
                for ln in sheet.lines
            ],
        )


def claim_room(conn: Connection, code: str, epoch: int) -> tuple[bool, int] | None:
    """Make `epoch` the open room's owner epoch if the stored one is smaller;
    whether it did, and the room's epoch then (None: no open room)."""
    done = conn.execute(
        update(_rooms)
        .where(_rooms.c.code == code, _rooms.c.closed.is_(False), _rooms.c.epoch < epoch)
        .values(epoch=epoch)
        .returning(_rooms.c.id)
    ).first()
    found: int | None = conn.scalar(
        select(_rooms.c.epoch).where(_rooms.c.code == code, _rooms.c.closed.is_(False))
    )
    return None if found is None else (done is not None, found)


def create_room(conn: Connection, known: KnownRows, room: RoomRecord) -> None:
    """A new open room: the open-code index refuses a code already open (an
    IntegrityError for the caller), whichever process opened it."""
    if _open_room(conn, room.code) is not None:
        raise IntegrityError("create_room", {"code": room.code}, Exception("code taken"))
    save_room(conn, known, room)


def save_snapshot(conn: Connection, game_id: int, snapshot: StoredSnapshot) -> None:
    """Keep only the latest snapshot of a game."""
    conn.execute(delete(_snapshots).where(_snapshots.c.game_id == game_id))
    conn.execute(
        insert(_snapshots).values(
            game_id=game_id, seq=snapshot.seq, engine=snapshot.engine, state=snapshot.state
        )
    )


# -- helpers ------------------------------------------------------------------


def _open_room(conn: Connection, code: str) -> int | None:
    return conn.scalar(_OPEN_ROOM, {"code": code})


def _room_for_save(conn: Connection, code: str, closing: bool) -> int | None:
    """The row a save of room `code` updates: the open room with that code; when
    closing and none is open, the latest room with it (a repeated close)."""
    room_id = _open_room(conn, code)
    if room_id is not None or not closing:
        return room_id
    return conn.scalar(_LATEST_ROOM, {"code": code})


def _placeholder(conn: Connection, room_id: int, player_id: str) -> int:
    """A row for a seat whose player the room has not saved yet (the bots a room
    adds as a game starts are saved right after); the next save fills it in."""
    return int(
        conn.execute(
            _INSERT_PLACEHOLDER,
            {
                "room_id": room_id,
                "player_id": player_id,
                "position": 1_000_000,
                "name": player_id,
                "seat": None,
                "token_hash": "",
                "is_bot": False,
                "present": False,
            },
        ).scalar_one()
    )


def _save_players(conn: Connection, room_id: int, players: list[PlayerRecord]) -> None:
    """Upsert the room's occupants, writing only rows that changed.  Those no
    longer listed are kept but marked absent; a save that lacks a guest or
    account id never erases a known one (linking a guest to an account happens
    outside the room)."""
    rows = conn.execute(_ROOM_PLAYERS, {"room_id": room_id}).all()
    known = {r.player_id: r for r in rows}
    wanted: list[tuple[Any, dict[str, Any]]] = []  # (existing row or None, its new values)
    for position, rec in enumerate(players):
        row = known.pop(rec.player_id, None)
        values = {
            "position": position,
            "name": rec.name,
            "seat": rec.seat,
            "token_hash": rec.token_hash,
            "is_bot": rec.is_bot,
            "bot_level": rec.bot_level,
            "lent": rec.lent,
            "guest_id": rec.guest_id or (row.guest_id if row is not None else None),
            "account_id": rec.account_id
            if rec.account_id is not None
            else (row.account_id if row is not None else None),
        }
        wanted.append((row, values))
    _link_signed_in(conn, [v for _, v in wanted if v["guest_id"] and v["account_id"] is None])
    inserts = [
        {"room_id": room_id, "player_id": rec.player_id, "present": True, **values}
        for rec, (row, values) in zip(players, wanted, strict=True)
        if row is None
    ]
    changed = [
        (row.id, True, values)
        for row, values in wanted
        if row is not None
        and (not row.present or any(getattr(row, f) != values[f] for f in _PLAYER_FIELDS))
    ]
    changed += [  # no longer in the room
        (row.id, False, {**{f: getattr(row, f) for f in _PLAYER_FIELDS}, "seat": None})
        for row in known.values()
        if row.present or row.seat is not None
    ]
    updates = [
        {"row_id": row_id, "new_present": present, **{f"new_{k}": v for k, v in values.items()}}
        for row_id, present, values in changed
    ]
    if inserts:
        conn.execute(_INSERT_PLAYER, inserts)
    if updates:
        conn.execute(_UPDATE_PLAYER, updates)


def _link_signed_in(conn: Connection, values: list[dict[str, Any]]) -> None:
    """Seats taken by a browser that is signed in belong to its account, whether
    or not the room passed the account id along."""
    if not values:
        return
    found = conn.execute(
        _SIGNED_IN, {"guest_ids": sorted({v["guest_id"] for v in values}), "now": utcnow()}
    )
    owner = {guest: account for guest, account in found}
    for v in values:
        if v["guest_id"] in owner:
            v["account_id"] = owner[v["guest_id"]]
