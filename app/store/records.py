"""What the room layer asks of durable storage, and nothing more.

The rooms never touch SQLAlchemy: they talk to a `Records` object.  In tests and
for a quick start `MemoryRecords` keeps everything in this process; `app.db`
provides `DbRecords` over SQLite or PostgreSQL with the same behaviour.

Ordering rule the rooms rely on: `append_action` returns only once the action
is durable, and the room broadcasts views only after it returns.  A server
killed at any moment therefore loses no action anyone has seen acknowledged.

Tokens are never stored: only `token_hash` (SHA-256 hex of the seat token),
enough to recognise a returning browser after a restart.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class PlayerRecord:
    """One occupant of a room: a seated player, a bot, or a spectator (seat None)."""

    player_id: str  # stable random id within the room (not secret)
    name: str
    token_hash: str  # "" for bots
    seat: int | None
    is_bot: bool = False
    guest_id: str | None = None  # the browser identity (cookie) that joined
    account_id: int | None = None
    #: a bot's level (app/bots/levels.py) as the host chose it; None for a
    #: person, and for a bot stored before levels existed (it plays at normal)
    bot_level: str | None = None
    #: held on a device through someone else's seat link: the device is not
    #: the person's own, so it may not move the person, and the person's own
    #: browser may not follow the seat's cards while it is so (docs/security.md)
    lent: bool = False

    def copy(self) -> PlayerRecord:
        """A copy, as `dataclasses.replace(self)` makes one but without running
        `__init__` and its field checks: every field is immutable, so the
        fields themselves are shared (rooms copy their people on each command,
        to tell whether it changed them)."""
        new = object.__new__(PlayerRecord)
        new.__dict__.update(self.__dict__)
        return new


@dataclass(frozen=True)
class ReplacedToken:
    """What became of a seat token a link replaced, kept with the room (by
    the token's hash) so that its device, coming back even after a restart,
    is told in plain words what happened: whose place (`name`), who made the
    link (`by`), whether it was the person's own move, and when (`at`,
    wall-clock seconds).  The room keeps a bounded number, for a bounded
    time (app/rooms/membership.py)."""

    name: str
    by: str
    own: bool
    at: float


@dataclass(frozen=True)
class RemovedPerson:
    """Someone the host removed, kept with the room so that the same browser
    (guest identity) or account is turned away until the host lets them back
    in: a removal binds a browser and an account, not a human."""

    name: str
    guest_id: str | None
    account_id: int | None
    at: float


@dataclass
class RoomRecord:
    code: str
    game: str
    options: dict[str, Any]
    settings: dict[str, Any]
    host_player_id: str | None
    players: list[PlayerRecord] = field(default_factory=list)
    tally: dict[str, int] = field(default_factory=dict)  # Big Two series points by player_id
    closed: bool = False
    #: seat tokens links replaced, by their hash, oldest first
    replaced: dict[str, ReplacedToken] = field(default_factory=dict)
    #: people the host removed, by their player id, oldest first
    removed: dict[str, RemovedPerson] = field(default_factory=dict)


class Fenced(Exception):
    """A write refused because the room has a newer owner (a larger epoch):
    this process must stop acting for the room."""


@dataclass(frozen=True)
class Snapshot:
    """A game's engine state after `seq` actions, made by engine code `engine`."""

    seq: int
    engine: str
    state: bytes


@dataclass
class GameRecord:
    game_id: int
    room_code: str
    game: str
    options: dict[str, Any]
    seed: int
    seats: list[str]  # player_id per seat
    #: the log, from action number `first_seq` on (0 unless loaded after a snapshot)
    actions: list[tuple[int | None, dict[str, Any]]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    first_seq: int = 0
    #: the latest snapshot, whose `seq` is `first_seq` (when loaded with one)
    snapshot: Snapshot | None = None
    #: wall-clock time of the last action stored (or of the start): waits resume from it
    last_at: float | None = None
    #: the id pages show (`new_game_ref`); None for a game stored without one
    public_id: str | None = None


def new_game_ref() -> str:
    """A game's public id: 96 random bits in 16 URL-safe characters, so that
    ids count no games and cannot be walked.  Never all digits: a number is
    read as a game's old sequential id (app/api/history.py)."""
    while True:
        ref = secrets.token_urlsafe(12)
        if not ref.isdigit():
            return ref


@dataclass(frozen=True)
class FinishedGame:
    seats: list[str]  # player_id per seat
    result: dict[str, Any]


class Records(Protocol):
    """Every write of a room takes the `epoch` its writer owns the room with
    (0 in one process) and is refused with `Fenced` once the room's stored
    epoch is larger: a process that lost the room writes nothing more."""

    async def save_room(self, room: RoomRecord, epoch: int = 0) -> None:
        """Insert or update the room and its occupants (names, seats, bots, host)."""

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
        """Record a new game of the room under `public_id` (a `new_game_ref`,
        made here when not given); returns its own id."""

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        """Durably append action number `seq` (0, 1, 2, ...); a repeated seq is an
        error, and so (`Fenced`) is an `epoch` older than the room's."""

    def append_now(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> bool:
        """`append_action` done right here, when the backend can without waiting
        for anything (SQLite in a quiet moment): True once it is durable.
        False: nothing was done, and `append_action` is to be awaited as
        usual.  A write tried here that fails raises as `append_action` would."""

    async def save_score_hand(
        self, game_id: int, hand: int, row: dict[str, Any], epoch: int = 0
    ) -> None:
        """One Posso hand's score-sheet row (per player points, totals, dealer, cut...)."""

    async def finish_game(self, game_id: int, result: dict[str, Any], epoch: int = 0) -> None:
        """Store the result; the game is no longer live."""

    async def finished_results(self, code: str, game: str) -> list[FinishedGame]:
        """The seats and result of every finished game of `game` in the open
        room `code`, oldest first: what the room's series tally is made of."""

    async def live_rooms(self) -> list[tuple[RoomRecord, GameRecord | None]]:
        """Every open room with its unfinished game (seed + full action log)."""

    async def open_rooms(self) -> list[str]:
        """The codes of every open room (cheap: what a restart starts from)."""

    async def room_is_open(self, code: str) -> bool:
        """Whether an open room has this code: one read, and nothing written
        (several processes ask it before taking a room's lease)."""

    async def load_room(self, code: str) -> tuple[RoomRecord, GameRecord | None] | None:
        """One open room and its unfinished game: the latest snapshot and the
        actions after it (or the whole log without one); None if not open."""

    async def game_actions(
        self, game_id: int, start: int = 0
    ) -> list[tuple[int | None, dict[str, Any]]]:
        """A game's actions from number `start` on."""

    async def action_count(self, game_id: int) -> int:
        """How many actions the log holds."""

    async def action_at(
        self, game_id: int, seq: int
    ) -> tuple[int | None, dict[str, Any], int | None] | None:
        """Action `seq` as stored - its seat, the action and the epoch that
        wrote it (None: not recorded) - or None if the log has no such action:
        settles an append whose answer was lost."""

    async def score_hands(self, game_id: int) -> set[int]:
        """The hands of a Posso score sheet that are stored."""

    async def save_snapshot(self, game_id: int, snapshot: Snapshot, epoch: int = 0) -> None:
        """Keep `snapshot` as the game's latest (an older one is replaced)."""

    async def claim_room(self, code: str, epoch: int) -> tuple[bool, int] | None:
        """Record `epoch` as the open room's owner epoch if the stored one is
        smaller: whether it did, and the room's epoch now (None: the room is
        not open).  Forgets anything this process remembered of the room's
        rows (another process may have written them)."""

    async def create_room(self, room: RoomRecord) -> bool:
        """Store a new open room; False if an open room already has its code."""


class MemoryRecords:
    """Records kept in this process only (tests, and a server that needs no history)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        #: when an action is stored (a simulated room passes its own clock)
        self.clock = clock
        self.rooms: dict[str, RoomRecord] = {}
        self.games: dict[int, GameRecord] = {}
        self.score_rows: dict[int, dict[int, dict[str, Any]]] = {}
        self.snapshots: dict[int, Snapshot] = {}
        self.epochs: dict[str, int] = {}
        #: by game: the epoch each stored action was written with
        self.action_epochs: dict[int, list[int]] = {}

    def _fence(self, code: str, epoch: int) -> None:
        """Every write of a room: refused once a newer owner has it."""
        if epoch < self.epochs.get(code, 0):
            raise Fenced(f"room {code}: the room has a newer owner than epoch {epoch}")

    async def save_room(self, room: RoomRecord, epoch: int = 0) -> None:
        old = self.rooms.get(room.code)
        if old is not None and not old.closed:
            self._fence(room.code, epoch)
        self.rooms[room.code] = room

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
        self._fence(room_code, epoch)
        game_id = len(self.games) + 1
        self.games[game_id] = GameRecord(
            game_id,
            room_code,
            game,
            dict(options),
            seed,
            list(seats),
            last_at=self.clock(),
            public_id=public_id or new_game_ref(),
        )
        return game_id

    def append_now(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> bool:
        # always through append_action, which a test's records may override
        return False

    async def append_action(
        self, game_id: int, seq: int, seat: int | None, action: dict[str, Any], epoch: int = 0
    ) -> None:
        self._fence(self.games[game_id].room_code, epoch)
        log = self.games[game_id].actions
        if seq != len(log):
            raise ValueError(f"action {seq} of game {game_id} out of order (have {len(log)})")
        log.append((seat, dict(action)))
        self.action_epochs.setdefault(game_id, []).append(epoch)
        self.games[game_id].last_at = self.clock()

    async def save_score_hand(
        self, game_id: int, hand: int, row: dict[str, Any], epoch: int = 0
    ) -> None:
        self._fence(self.games[game_id].room_code, epoch)
        self.score_rows.setdefault(game_id, {})[hand] = dict(row)

    async def finish_game(self, game_id: int, result: dict[str, Any], epoch: int = 0) -> None:
        self._fence(self.games[game_id].room_code, epoch)
        self.games[game_id].result = dict(result)

    async def finished_results(self, code: str, game: str) -> list[FinishedGame]:
        return [
            FinishedGame(list(g.seats), dict(g.result))
            for g in self.games.values()
            if g.room_code == code and g.game == game and g.result is not None
        ]

    async def live_rooms(self) -> list[tuple[RoomRecord, GameRecord | None]]:
        out: list[tuple[RoomRecord, GameRecord | None]] = []
        for room in self.rooms.values():
            if room.closed:
                continue
            live = [g for g in self.games.values() if g.room_code == room.code and g.result is None]
            out.append((room, live[-1] if live else None))
        return out

    async def open_rooms(self) -> list[str]:
        return [code for code, room in self.rooms.items() if not room.closed]

    async def room_is_open(self, code: str) -> bool:
        room = self.rooms.get(code)
        return room is not None and not room.closed

    async def load_room(self, code: str) -> tuple[RoomRecord, GameRecord | None] | None:
        room = self.rooms.get(code)
        if room is None or room.closed:
            return None
        live = [g for g in self.games.values() if g.room_code == code and g.result is None]
        if not live:
            return room, None
        g = live[-1]
        snap = self.snapshots.get(g.game_id)
        start = snap.seq if snap is not None else 0
        tail = dataclasses.replace(
            g, actions=list(g.actions[start:]), first_seq=start, snapshot=snap
        )
        return room, tail

    async def game_actions(
        self, game_id: int, start: int = 0
    ) -> list[tuple[int | None, dict[str, Any]]]:
        return list(self.games[game_id].actions[start:])

    async def action_count(self, game_id: int) -> int:
        return len(self.games[game_id].actions)

    async def action_at(
        self, game_id: int, seq: int
    ) -> tuple[int | None, dict[str, Any], int | None] | None:
        log = self.games[game_id].actions
        if not 0 <= seq < len(log):
            return None
        seat, action = log[seq]
        epochs = self.action_epochs.get(game_id, [])
        return seat, dict(action), epochs[seq] if seq < len(epochs) else None

    async def score_hands(self, game_id: int) -> set[int]:
        return set(self.score_rows.get(game_id, {}))

    async def save_snapshot(self, game_id: int, snapshot: Snapshot, epoch: int = 0) -> None:
        self._fence(self.games[game_id].room_code, epoch)
        self.snapshots[game_id] = snapshot

    async def claim_room(self, code: str, epoch: int) -> tuple[bool, int] | None:
        room = self.rooms.get(code)
        if room is None or room.closed:
            return None
        if self.epochs.get(code, 0) >= epoch:
            return False, self.epochs[code]
        self.epochs[code] = epoch
        return True, epoch

    async def create_room(self, room: RoomRecord) -> bool:
        old = self.rooms.get(room.code)
        if old is not None and not old.closed:
            return False
        self.rooms[room.code] = room
        return True
