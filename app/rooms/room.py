"""One room: its people and seats, the game in play, its timers and bots, and the
one place where anything is sent to anyone.

Everything that changes a room runs under `self.lock`, one message at a time,
so the order of changes is the order of the action log.  A change ends in
`_change`, the single choke point for delivery: it stamps the next version,
addresses each event to the seats it names (never further), builds each
connected recipient's view once from `game.view(state, seat)`, and queues the
encoded frames on the connections without waiting for any socket.

Rules live only in the engine: the room asks `apply` and forwards its answer.
A game action reaches the log (`records.append_action`, awaited) before any
frame about it is queued, so nobody ever sees a move a restart could lose.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from app.bots import bot_for
from app.games.base import Event, Game, IllegalAction
from app.games.cards import rng_for
from app.rooms.connection import Connection
from app.rooms.errors import RoomError
from app.rooms.settings import RoomSettings, parse_settings
from app.rooms.text import clean_chat, clean_name
from app.rooms.tokens import new_player_id, new_token, token_hash
from app.store.records import GameRecord, PlayerRecord, Records, RoomRecord

log = logging.getLogger(__name__)

LOBBY, PLAYING, FINISHED = "lobby", "playing", "finished"
#: event-bearing changes kept for clients resuming with `since`
HISTORY_MAX = 256
#: people (players and spectators) in one room
MAX_MEMBERS = 60
#: the game whose rooms keep a series tally, and its points per place
TALLY_GAME = "bigtwo"
TALLY_POINTS = (3, 2, 1, 0)
#: the game whose rooms fill empty seats with bots at the start
BOT_FILL_GAMES = frozenset({"bigtwo"})

CLOSE_LEFT = 1000
CLOSE_KICKED = 4403

Frame = str
Dumps = Callable[[Any], bytes]
_dumps: Dumps = orjson.dumps


def _room_event(what: str, **fields: Any) -> Event:
    return {"type": "room", "to": None, "what": what, **fields}


@dataclasses.dataclass
class _Timer:
    """A running timer; `key` says which wait it belongs to, so a change that
    leaves the game waiting on the same thing does not restart it."""

    kind: str
    key: object
    seat: int | None
    deadline: float  # wall clock, seconds
    task: asyncio.Task[None] | None = None


class Room:
    def __init__(
        self,
        record: RoomRecord,
        games: Mapping[str, Game[Any]],
        records: Records,
        *,
        on_close: Callable[[Room], None] | None = None,
    ) -> None:
        self.code = record.code
        self.record = record
        self.games = games
        self.records = records
        self.on_close = on_close
        self.game: Game[Any] = games[record.game]
        self.settings: RoomSettings = parse_settings(record.settings)
        self.lock = asyncio.Lock()
        self.closed = False

        self.players: dict[str, PlayerRecord] = {p.player_id: p for p in record.players}
        #: every name ever seen here, so a tally outlives a player who left
        self.names: dict[str, str] = {p.player_id: p.name for p in record.players}
        self.by_token: dict[str, str] = {
            p.token_hash: p.player_id for p in record.players if p.token_hash
        }
        self.seats: list[str | None] = [None] * self.game.max_seats
        for p in record.players:
            if p.seat is not None:
                self._grow_seats(p.seat + 1)
                self.seats[p.seat] = p.player_id

        self.status = LOBBY
        self.state: Any = None
        self.game_id: int | None = None
        self.seed = 0
        self.seq = 0
        self.game_seats: list[str] = []  # player id per seat of the current/last game
        self.game_seat: dict[str, int] = {}
        self.result: dict[str, Any] | None = None
        self.games_played = 0

        self.v = 0
        #: (v, ((to, frame), ...)) per change with events; tuples of strings and ints
        #: only, which the garbage collector stops tracking (a big heap of lists
        #: made full collections of many rooms take a second)
        self.history: deque[tuple[int, tuple[tuple[int | None, Frame], ...]]] = deque()
        self.history_floor = 0

        self.conns: dict[str, list[Connection]] = {}
        #: monotonic time since which nobody has been connected (None: someone is)
        self.idle_since: float | None = time.monotonic()
        self.away_since: dict[str, float] = {}
        self.auto: set[int] = set()  # seats handed to a bot by the host
        self.forced: set[int] = set()  # seats whose turn timer ran out this turn
        self.forced_key: frozenset[int] | None = None
        self.to_act: set[int] = set()

        self._game_timer: _Timer | None = None
        self._turn_timer: _Timer | None = None
        self._timer_epoch = 0
        self._bot_tasks: dict[int, asyncio.Task[None]] = {}
        self._bot_rngs: dict[int, random.Random] = {}
        #: what keys the bots' generators besides the seed and seat (a restored
        #: game's bots continue on new ones, keyed by the actions replayed)
        self._bot_salt: tuple[int, ...] = ()
        self._jitter = random.Random()
        #: the encoded room part of views (None: to be encoded again)
        self._room_json: str | None = None
        #: each person's encoded "you" part, valid as long as `_room_json`
        self._you_json: dict[str, str] = {}
        #: what the records last took: a save that would change nothing is skipped
        #: (a rematch at the same table saves nothing new, twice per game)
        self._saved: RoomRecord | None = None

    # ------------------------------------------------------------------ setup

    @classmethod
    def new(
        cls,
        code: str,
        game: Game[Any],
        options: dict[str, Any],
        settings: RoomSettings,
        games: Mapping[str, Game[Any]],
        records: Records,
        on_close: Callable[[Room], None] | None = None,
    ) -> Room:
        record = RoomRecord(code, game.name, options, settings.model_dump(), None)
        return cls(record, games, records, on_close=on_close)

    def restore_game(self, rec: GameRecord) -> None:
        """Rebuild the live game by replaying its log (recovery after a restart)."""
        self.game = self.games[rec.game]
        seed, seats = rec.seed, list(rec.seats)
        state = self.game.new_game(len(seats), dict(rec.options), seed)
        n = 0
        for seat, action in rec.actions:
            state, _ = self.game.apply(state, seat, action)
            n += 1
        game_id = rec.game_id
        self.state, self.seed, self.game_id, self.seq = state, seed, game_id, n
        self._set_game_seats(seats)
        self.seats = list(seats)
        for i, pid in enumerate(seats):
            if pid not in self.players:  # a seat whose player record is gone: a bot plays it
                ghost = PlayerRecord(
                    player_id=pid, name=f"Bot {i + 1}", token_hash="", seat=i, is_bot=True
                )
                self.players[pid] = ghost
                self.names[pid] = ghost.name
                self.record.players.append(ghost)
            self.players[pid].seat = i
        self.status = PLAYING
        self._bot_rngs, self._bot_salt = {}, (n,)
        self.games_played = 1
        for pid in seats:  # nobody is connected yet: everyone is away from now
            p = self.players.get(pid)
            if p is not None and not p.is_bot:
                self.away_since[pid] = time.time()
        self._schedule()

    # ------------------------------------------------------------- membership

    def authenticate(self, token: str) -> PlayerRecord | None:
        pid = self.by_token.get(token_hash(token)) if token else None
        return self.players.get(pid) if pid else None

    async def join(
        self,
        name: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
        spectator: bool = False,
        host: bool = False,
    ) -> tuple[PlayerRecord, str]:
        """A new person in the room; returns their record and their secret token."""
        name = clean_name(name)
        async with self.lock:
            if self.closed:
                raise RoomError("no_room", "this room has closed")
            if len(self.players) >= MAX_MEMBERS:
                raise RoomError("room_full", f"a room holds at most {MAX_MEMBERS} people")
            seat: int | None = None
            if not spectator and self.status != PLAYING:
                seat = next((i for i, pid in enumerate(self.seats) if pid is None), None)
            token = new_token()
            player = PlayerRecord(
                player_id=self._new_player_id(),
                name=name,
                token_hash=token_hash(token),
                seat=seat,
                guest_id=guest_id,
                account_id=account_id,
            )
            self.players[player.player_id] = player
            self.names[player.player_id] = name
            self.record.players.append(player)
            self.by_token[player.token_hash] = player.player_id
            if seat is not None:
                self.seats[seat] = player.player_id
            if host or self.record.host_player_id is None:
                self.record.host_player_id = player.player_id
            await self._save()
            self._change([_room_event("joined", seat=seat, name=name)])
            return player, token

    def _new_player_id(self) -> str:
        while True:
            pid = new_player_id()
            if pid not in self.players:
                return pid

    async def connect(self, conn: Connection, since: int | None = None) -> bool:
        """Register an authenticated socket; send what it missed, or a full view."""
        async with self.lock:
            conn.hold()  # what it missed and its view, as one frame on a batching socket
            try:
                return self._connect(conn, since)
            finally:
                conn.release()

    def _connect(self, conn: Connection, since: int | None) -> bool:
        player = self.players.get(conn.player_id)
        if player is None or self.closed:
            conn.close(4401, "not a member of this room")
            return False
        conns = self.conns.setdefault(player.player_id, [])
        conns.append(conn)
        self.idle_since = None
        if since is not None and self.history_floor <= since <= self.v:
            seat = self.game_seat.get(player.player_id)
            for v, frames in self.history:
                if v > since:
                    for to, frame in frames:
                        if to is None or to == seat:
                            conn.push(frame)
        if len(conns) > 1:
            conn.push(self._view_frame(player, conn, {}, self._timer_part()))
            return True
        events: list[Event] = []
        self.away_since.pop(player.player_id, None)
        seat = self.game_seat.get(player.player_id) if self.status == PLAYING else None
        if seat is not None and (seat in self.auto or seat in self.forced):
            self.auto.discard(seat)
            self.forced.discard(seat)
            events.append(_room_event("auto_off", seat=seat, name=player.name))
            self._schedule()
        self._change(events)
        return True

    async def disconnect(self, conn: Connection) -> None:
        async with self.lock:
            conns = self.conns.get(conn.player_id)
            if conns is None or conn not in conns:
                return
            conns.remove(conn)
            if conns:
                return
            del self.conns[conn.player_id]
            self._mark_idle()
            player = self.players.get(conn.player_id)
            if player is None or self.closed:
                return
            if self.status == PLAYING and player.player_id in self.game_seat:
                self.away_since[player.player_id] = time.time()
            self._change([])

    # --------------------------------------------------------------- messages

    async def handle(
        self, conn: Connection, msg_id: Any, kind: str, payload: dict[str, Any]
    ) -> None:
        """Apply one client message; the reply (ack or error) goes to `conn`
        only, in the same frame as what the message changed (`Connection.hold`)."""
        async with self.lock:
            conn.hold()
            try:
                await self._handle(conn, msg_id, kind, payload)
            finally:
                conn.release()

    async def _handle(
        self, conn: Connection, msg_id: Any, kind: str, payload: dict[str, Any]
    ) -> None:
        player = self.players.get(conn.player_id)
        if player is None or self.closed:
            self._reply_error(
                conn, msg_id, RoomError("not_member", "you are no longer in this room")
            )
            return
        try:
            if kind == "action":
                await self._apply(self._action_seat(player, payload), payload)
            else:
                await self._command(conn, player, payload)
        except (RoomError, IllegalAction) as err:
            self._reply_error(conn, msg_id, err)
            return
        except Exception:
            log.exception("room %s: unexpected error on %s %r", self.code, kind, payload)
            self._reply_error(
                conn,
                msg_id,
                RoomError("bad_action", "the server could not process that message"),
            )
            return
        conn.push(_dumps({"re": msg_id, "ok": True, "v": self.v}).decode())

    def error_frame(self, msg_id: Any, err: RoomError | IllegalAction) -> Frame:
        return _dumps({"re": msg_id, "error": err.as_dict(), "v": self.v}).decode()

    def _reply_error(self, conn: Connection, msg_id: Any, err: RoomError | IllegalAction) -> None:
        conn.push(self.error_frame(msg_id, err))

    def _action_seat(self, player: PlayerRecord, action: dict[str, Any]) -> int:
        """The seat `player` may play `action` for, or why they may not (a plain
        function, so that a move costs one coroutine less on its way to `_apply`)."""
        if self.status != PLAYING:
            raise RoomError("not_playing", "no game is being played")
        seat = self.game_seat.get(player.player_id)
        if seat is None:
            raise RoomError("not_seated", "spectators cannot play; sit down between games")
        if "seat" in action and action["seat"] != seat:
            raise RoomError("not_your_seat", "you can only act for your own seat")
        if action.get("type") == "timeout":
            raise RoomError("bad_action", "timeouts come from the room's timers, not from players")
        return seat

    async def _apply(self, seat: int | None, action: dict[str, Any]) -> None:
        """Check with the engine, log durably, then commit and broadcast."""
        try:
            state, events = self.game.apply(self.state, seat, action)
        except IllegalAction:
            raise
        except Exception as err:  # an engine that chokes on odd input must not kill the room
            log.exception("room %s: engine error on %r", self.code, action)
            raise RoomError("bad_action", "that action could not be understood") from err
        assert self.game_id is not None
        try:
            await self.records.append_action(self.game_id, self.seq, seat, action)
        except Exception as err:
            log.exception("room %s: could not log action %d", self.code, self.seq)
            raise RoomError("storage_error", "the move could not be saved; try again") from err
        self.state = state
        self.seq += 1
        for ev in events:
            if ev.get("type") == "hand_ended" and ev.get("to") is None:
                try:
                    await self.records.save_score_hand(
                        self.game_id, int(ev["hand"]), dict(ev.get("row") or {})
                    )
                except Exception:  # derived data: a replay can rebuild it
                    log.exception("room %s: could not save a score row", self.code)
        result = self.game.result(state)
        extra: list[Event] = []
        if result is not None:
            await self._finish(result, extra)
        self._schedule()
        self._change([*events, *extra], room_changed=result is not None)

    async def _finish(self, result: dict[str, Any], events: list[Event]) -> None:
        assert self.game_id is not None
        try:
            await self.records.finish_game(self.game_id, result)
        except Exception:
            log.exception("room %s: could not record the result", self.code)
        self.status = FINISHED
        self.result = result
        self._room_json = None
        self.auto.clear()
        self.forced.clear()
        self.away_since.clear()
        if self.game.name == TALLY_GAME:
            rank = 0
            for group in result.get("places", []):
                points = TALLY_POINTS[rank] if rank < len(TALLY_POINTS) else 0
                for seat in group:
                    pid = self.game_seats[seat]
                    self.record.tally[pid] = self.record.tally.get(pid, 0) + points
                rank += len(group)
        self._grow_seats(self.game.max_seats)
        await self._save()
        events.append(_room_event("finished", result=result))

    # --------------------------------------------------------------- commands

    async def _command(self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
        kind = cmd.get("type")
        handler = _COMMANDS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise RoomError(
                "unknown_command",
                f"unknown command {kind!r}; known: {', '.join(sorted(_COMMANDS))}",
            )
        await handler(self, conn, player, cmd)

    def _require_host(self, player: PlayerRecord) -> None:
        if self.record.host_player_id != player.player_id:
            raise RoomError("not_host", "only the host can do that")

    def _require_between_games(self) -> None:
        if self.status == PLAYING:
            raise RoomError("not_between_games", "not while a game is being played")

    def _seat_arg(self, cmd: dict[str, Any], *, optional: bool = False) -> int | None:
        seat = cmd.get("seat")
        if seat is None and optional:
            return None
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < len(self.seats):
            raise RoomError(
                "bad_seat", f"seat must be a seat number from 0 to {len(self.seats) - 1}"
            )
        return seat

    async def _cmd_sit(self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
        self._require_between_games()
        target = self._seat_arg(cmd, optional=True)
        if target == player.seat:
            return
        if target is not None and self.seats[target] is not None:
            raise RoomError("seat_taken", f"seat {target} is taken")
        if player.seat is not None:
            self.seats[player.seat] = None
        player.seat = target
        if target is not None:
            self.seats[target] = player.player_id
        await self._save()
        self._change([_room_event("sat", seat=target, name=player.name)])

    async def _cmd_start(self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
        self._require_host(player)
        self._require_between_games()
        await self._start()

    async def _cmd_rematch(
        self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
    ) -> None:
        self._require_host(player)
        if self.status != FINISHED:
            raise RoomError("not_finished", "a rematch follows a finished game")
        await self._start()

    async def _start(self) -> None:
        game = self.game
        seated = [pid for pid in self.seats if pid is not None]
        added: list[PlayerRecord] = []
        if game.name in BOT_FILL_GAMES:
            while len(seated) + len(added) < game.max_seats:
                bot = self._make_bot(len(seated) + len(added))
                added.append(bot)
        order = seated + [b.player_id for b in added]
        n = len(order)
        if n < game.min_seats:
            raise RoomError(
                "too_few_players", f"{game.title} needs at least {game.min_seats} seated players"
            )
        if n > game.max_seats:
            raise RoomError("bad_seat", f"{game.title} seats at most {game.max_seats}")
        seed = secrets.randbits(62)
        try:
            state = game.new_game(n, dict(self.record.options), seed)
        except ValueError as err:
            raise RoomError("bad_options", str(err)) from None
        try:
            game_id = await self.records.start_game(
                self.code, game.name, dict(self.record.options), seed, order
            )
        except Exception as err:
            log.exception("room %s: could not record a new game", self.code)
            raise RoomError("storage_error", "the game could not be saved; try again") from err
        for bot in added:
            self.players[bot.player_id] = bot
            self.names[bot.player_id] = bot.name
            self.record.players.append(bot)
        self.seats = list(order)
        for i, pid in enumerate(order):
            self.players[pid].seat = i
        self._set_game_seats(order)
        self.state, self.seed, self.game_id, self.seq = state, seed, game_id, 0
        self.status = PLAYING
        self.result = None
        self.games_played += 1
        self.auto.clear()
        self.forced.clear()
        self.away_since = {
            pid: time.time()
            for pid in order
            if not self.players[pid].is_bot and pid not in self.conns
        }
        self._bot_rngs, self._bot_salt = {}, ()  # made when a bot first moves
        self.history.clear()
        self.history_floor = self.v
        self._cancel_timers()
        await self._save()
        self._schedule()
        self._change([_room_event("started", game_no=self.games_played, game=game.name)])

    def _make_bot(self, seat_hint: int) -> PlayerRecord:
        names = {p.name for p in self.players.values()}
        k = seat_hint + 1
        while f"Bot {k}" in names:
            k += 1
        return PlayerRecord(
            player_id=self._new_player_id(), name=f"Bot {k}", token_hash="", seat=None, is_bot=True
        )

    async def _cmd_add_bot(
        self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
    ) -> None:
        self._require_host(player)
        self._require_between_games()
        seat = self._seat_arg(cmd, optional=True)
        if seat is None:
            seat = next((i for i, pid in enumerate(self.seats) if pid is None), None)
            if seat is None:
                raise RoomError("seat_taken", "every seat is taken")
        elif self.seats[seat] is not None:
            raise RoomError("seat_taken", f"seat {seat} is taken")
        bot = self._make_bot(seat)
        bot.seat = seat
        self.players[bot.player_id] = bot
        self.names[bot.player_id] = bot.name
        self.record.players.append(bot)
        self.seats[seat] = bot.player_id
        await self._save()
        self._change([_room_event("bot_added", seat=seat, name=bot.name)])

    async def _cmd_remove_bot(
        self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
    ) -> None:
        self._require_host(player)
        self._require_between_games()
        seat = self._seat_arg(cmd)
        assert seat is not None
        pid = self.seats[seat]
        if pid is None or not self.players[pid].is_bot:
            raise RoomError("bad_seat", f"there is no bot in seat {seat}")
        bot = self.players[pid]
        self._forget(bot)
        await self._save()
        self._change([_room_event("bot_removed", seat=seat, name=bot.name)])

    async def _cmd_kick(self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
        self._require_host(player)
        seat = self._seat_arg(cmd)
        assert seat is not None
        pid = self.seats[seat]
        if pid is None or self.players[pid].is_bot:
            raise RoomError("bad_seat", f"there is no person in seat {seat}")
        if pid == player.player_id:
            raise RoomError("bad_seat", "you cannot kick yourself; use leave")
        target = self.players[pid]
        await self._remove_person(target, CLOSE_KICKED, "kicked by the host", "kicked")

    async def _cmd_leave(self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
        await self._remove_person(player, CLOSE_LEFT, "you left the room", "left")

    async def _remove_person(self, person: PlayerRecord, code: int, reason: str, what: str) -> None:
        """Take a person out: between games their seat frees; during a game a bot
        takes it over under their name.  Their token stops working at once."""
        seat = person.seat
        self.by_token.pop(person.token_hash, None)
        for c in self.conns.pop(person.player_id, []):
            c.close(code, reason)
        self._mark_idle()
        self.away_since.pop(person.player_id, None)
        if self.status == PLAYING and person.player_id in self.game_seat:
            person.is_bot = True
            person.token_hash = ""
            gs = self.game_seat[person.player_id]
            self.auto.discard(gs)
            self.forced.discard(gs)
        else:
            self._forget(person)
        events = [_room_event(what, seat=seat, name=person.name)]
        if self.record.host_player_id == person.player_id:
            heir = self._next_host()
            self.record.host_player_id = heir.player_id if heir else None
            if heir is not None:
                events.append(_room_event("host", seat=heir.seat, name=heir.name))
        if not any(not p.is_bot for p in self.players.values()):
            await self._close_room()
            return
        await self._save()
        self._schedule()
        self._change(events)

    def _next_host(self) -> PlayerRecord | None:
        for pid in self.seats:
            if pid is not None and not self.players[pid].is_bot:
                return self.players[pid]
        return next((p for p in self.players.values() if not p.is_bot), None)

    def _forget(self, p: PlayerRecord) -> None:
        if p.seat is not None and p.seat < len(self.seats) and self.seats[p.seat] == p.player_id:
            self.seats[p.seat] = None
        self.players.pop(p.player_id, None)
        self.record.players = [q for q in self.record.players if q.player_id != p.player_id]
        self.by_token.pop(p.token_hash, None)

    async def _cmd_chat(self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]) -> None:
        text = clean_chat(cmd.get("text"))
        ev = {"type": "chat", "to": None, "seat": player.seat, "name": player.name, "text": text}
        self._change([ev], with_view=False)

    async def _cmd_set_game(
        self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
    ) -> None:
        self._require_host(player)
        self._require_between_games()
        name = cmd.get("game", self.game.name)
        game = self.games.get(name) if isinstance(name, str) else None
        if game is None:
            raise RoomError(
                "unknown_game", f"unknown game {name!r}; known: {', '.join(sorted(self.games))}"
            )
        try:
            options = game.parse_options(cmd.get("options")).model_dump(mode="json")
        except ValueError as err:
            raise RoomError("bad_options", str(err)) from None
        self.game = game
        self.record.game = game.name
        self.record.options = options
        self._refit_seats(game.max_seats)
        self.status = LOBBY
        self.state = None
        self.result = None
        self.game_seats, self.game_seat = [], {}
        await self._save()
        self._change([_room_event("game_set", game=game.name, options=options)])

    def _refit_seats(self, size: int) -> None:
        """Seats for a game of `size`: keep people in the seats that still exist,
        move the others to free seats (or to watching) and drop surplus bots."""
        old = self.seats
        self.seats = [pid for pid in old[:size]] + [None] * max(0, size - len(old))
        for pid in old[size:]:
            if pid is None:
                continue
            p = self.players[pid]
            if p.is_bot:
                self._forget(p)
                continue
            free = next((i for i, q in enumerate(self.seats) if q is None), None)
            p.seat = free
            if free is not None:
                self.seats[free] = pid

    async def _cmd_set_settings(
        self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
    ) -> None:
        self._require_host(player)
        self.settings = parse_settings(cmd.get("settings"), self.settings)
        self.record.settings = self.settings.model_dump()
        await self._save()
        self._schedule()
        self._change([_room_event("settings", settings=self.record.settings)])

    async def _cmd_make_host(
        self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
    ) -> None:
        self._require_host(player)
        seat = self._seat_arg(cmd)
        assert seat is not None
        pid = self.seats[seat]
        if pid is None or self.players[pid].is_bot:
            raise RoomError("bad_seat", f"there is no person in seat {seat}")
        self.record.host_player_id = pid
        await self._save()
        self._change([_room_event("host", seat=seat, name=self.players[pid].name)])

    async def _cmd_hand_to_bot(
        self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
    ) -> None:
        self._require_host(player)
        if self.status != PLAYING:
            raise RoomError("not_playing", "no game is being played")
        seat = self._seat_arg(cmd)
        assert seat is not None
        pid = self.seats[seat]
        if pid is None or self.players[pid].is_bot:
            raise RoomError("bad_seat", f"there is no person in seat {seat}")
        if pid in self.conns:
            raise RoomError("bad_seat", f"{self.players[pid].name} is connected")
        if seat in self.auto:
            return
        away = self.away_since.get(pid, time.time())
        wait = away + self.settings.disconnect_grace - time.time()
        if wait > 0:
            raise RoomError(
                "too_early", f"wait {wait:.0f} s more before handing this seat to a bot"
            )
        self.auto.add(seat)
        self._schedule()
        self._change([_room_event("auto_on", seat=seat, name=self.players[pid].name)])

    async def _cmd_resync(
        self, conn: Connection, player: PlayerRecord, cmd: dict[str, Any]
    ) -> None:
        conn.room_seen = None  # a resync is a whole view
        conn.push(self._view_frame(player, conn, {}, self._timer_part()))

    # ----------------------------------------------------------- timers, bots

    def _bot_drives(self, seat: int) -> bool:
        pid = self.game_seats[seat]
        p = self.players.get(pid)
        return p is None or p.is_bot or seat in self.auto or seat in self.forced

    def _schedule(self) -> None:
        """Bring timers and bot moves in line with the state just committed."""
        if self.status != PLAYING or self.closed:
            self._cancel_timers()
            self.to_act = set()
            return
        game, state = self.game, self.state
        self.to_act = to_act = game.to_act(state)
        key = frozenset(to_act)
        if self.forced and key != self.forced_key:
            self.forced.clear()
            self.forced_key = None
            self._room_json = None
        now = time.time()

        kind = game.timer(state)
        gt = self._game_timer
        if kind is None:
            self._drop_timer(gt)
            self._game_timer = None
        elif gt is None or gt.kind != kind or gt.key != self._timer_epoch:
            self._drop_timer(gt)
            secs = self.settings.timer_seconds(kind)
            t = _Timer(kind, self._timer_epoch, None, now + secs)
            t.task = asyncio.get_running_loop().create_task(self._run_game_timer(t, secs))
            self._game_timer = t

        tt = self._turn_timer
        limit = self.settings.turn_timer
        people = (
            [s for s in to_act if not self._bot_drives(s)]
            if limit is not None and kind is None
            else []
        )
        if limit is None or not people:
            self._drop_timer(tt)
            self._turn_timer = None
        elif tt is None or tt.key != key:
            self._drop_timer(tt)
            seat = people[0] if len(to_act) == 1 else None
            t = _Timer("turn", key, seat, now + limit)
            t.task = asyncio.get_running_loop().create_task(self._run_turn_timer(t, limit))
            self._turn_timer = t

        for seat in to_act:
            if seat not in self._bot_tasks and self._bot_drives(seat):
                delay = self.settings.bot_delay * self._jitter.uniform(0.5, 1.5)
                self._bot_tasks[seat] = asyncio.get_running_loop().create_task(
                    self._run_bot(seat, delay)
                )

    def _drop_timer(self, t: _Timer | None) -> None:
        if t is not None and t.task is not None and t.task is not asyncio.current_task():
            t.task.cancel()

    def _cancel_timers(self) -> None:
        self._drop_timer(self._game_timer)
        self._drop_timer(self._turn_timer)
        self._game_timer = self._turn_timer = None
        current = asyncio.current_task()
        for task in self._bot_tasks.values():
            if task is not current:
                task.cancel()
        self._bot_tasks.clear()

    def _timer_json(self) -> dict[str, Any] | None:
        t = self._game_timer or self._turn_timer
        if t is None:
            return None
        deadline_ms = int(t.deadline * 1000)
        return {
            "kind": t.kind,
            "seat": t.seat,
            "deadline_ms": deadline_ms,
            "ms_left": max(0, deadline_ms - int(time.time() * 1000)),
        }

    async def _run_game_timer(self, t: _Timer, secs: float) -> None:
        await asyncio.sleep(secs)
        async with self.lock:
            if self._game_timer is not t or self.status != PLAYING:
                return
            self._game_timer = None
            self._timer_epoch += 1
            try:
                await self._apply(None, {"type": "timeout"})
            except (RoomError, IllegalAction) as err:
                log.error("room %s: timeout refused: %s", self.code, err)
                self._schedule()

    async def _run_turn_timer(self, t: _Timer, secs: float) -> None:
        await asyncio.sleep(secs)
        async with self.lock:
            if self._turn_timer is not t or self.status != PLAYING:
                return
            self._turn_timer = None
            newly = [s for s in self.to_act if not self._bot_drives(s)]
            self.forced.update(newly)
            self.forced_key = frozenset(self.to_act)
            self._schedule()
            names = [self.players[self.game_seats[s]].name for s in newly]
            self._change(
                [
                    _room_event("auto_on", seat=s, name=n, turn=True)
                    for s, n in zip(newly, names, strict=True)
                ]
            )

    async def _run_bot(self, seat: int, delay: float) -> None:
        me = asyncio.current_task()
        try:
            await asyncio.sleep(delay)
            async with self.lock:
                if self._bot_tasks.get(seat) is not me:
                    return
                del self._bot_tasks[seat]
                if self.status != PLAYING or seat not in self.to_act or not self._bot_drives(seat):
                    return
                view = self.game.view(self.state, seat)
                legal = self.game.legal_actions(self.state, seat)
                if not legal:
                    return
                rng = self._bot_rngs.get(seat)
                if rng is None:
                    rng = self._bot_rngs[seat] = rng_for(self.seed, "bot", seat, *self._bot_salt)
                try:
                    action = bot_for(self.game.name).choose(view, legal, seat, rng)
                except Exception:
                    log.exception("room %s: bot failed; playing a legal action", self.code)
                    action = legal[0]
                try:
                    await self._apply(seat, action)
                except IllegalAction as err:
                    log.error(
                        "room %s: bot move %r refused (%s); trying %r",
                        self.code,
                        action,
                        err,
                        legal[0],
                    )
                    if action != legal[0]:
                        await self._apply(seat, legal[0])
        except asyncio.CancelledError:
            raise
        except RoomError as err:  # storage trouble: try again a little later
            log.error("room %s: bot move failed: %s", self.code, err)
            await asyncio.sleep(1.0)
            async with self.lock:
                self._schedule()
        except Exception:
            log.exception("room %s: bot seat %d stopped", self.code, seat)
        finally:
            if self._bot_tasks.get(seat) is me:
                del self._bot_tasks[seat]

    # --------------------------------------------------------------- delivery

    def _set_game_seats(self, seats: list[str]) -> None:
        self.game_seats = list(seats)
        self.game_seat = {pid: i for i, pid in enumerate(seats)}

    def _grow_seats(self, size: int) -> None:
        if len(self.seats) < size:
            self.seats.extend([None] * (size - len(self.seats)))

    def room_public(self) -> dict[str, Any]:
        """The room as everyone may see it (lobby page, every view)."""
        host = self.record.host_player_id
        grace = self.settings.disconnect_grace
        seats: list[dict[str, Any] | None] = []
        playing = self.status == PLAYING
        for i, pid in enumerate(self.seats):
            if pid is None:
                seats.append(None)
                continue
            p = self.players[pid]
            away = self.away_since.get(pid) if playing and not p.is_bot else None
            seats.append(
                {
                    "player": pid,
                    "name": p.name,
                    "bot": p.is_bot,
                    "auto": playing and (i in self.auto or i in self.forced),
                    "connected": p.is_bot or pid in self.conns,
                    "host": pid == host,
                    "grace_ends_ms": int((away + grace) * 1000) if away is not None else None,
                }
            )
        spectators = 0
        for pid in self.conns:
            watcher = self.players.get(pid)
            if watcher is not None and watcher.seat is None:
                spectators += 1
        ranked = sorted(self.record.tally.items(), key=lambda kv: -kv[1])
        tally = [
            {"player": pid, "name": self.names.get(pid, "?"), "points": pts} for pid, pts in ranked
        ]
        return {
            "code": self.code,
            "game": self.game.name,
            "title": self.game.title,
            "options": self.record.options,
            "settings": self.record.settings,
            "status": self.status,
            "min_seats": self.game.min_seats,
            "max_seats": self.game.max_seats,
            "seats": seats,
            "spectators": spectators,
            "games_played": self.games_played,
            "tally": tally,
            "result": self.result,
        }

    def _room_part(self) -> str:
        """The room part of a view, encoded; the same object until the room changes."""
        part = self._room_json
        if part is None:
            part = self._room_json = _dumps(self.room_public()).decode()
            self._you_json.clear()
        return part

    def _timer_part(self) -> str:
        return _dumps(self._timer_json()).decode()

    def _view_frame(
        self,
        player: PlayerRecord,
        conn: Connection,
        cache: dict[int | None, tuple[str, str]],
        timer: str,
    ) -> Frame:
        """`player`'s view, for `conn`, put together from parts encoded once
        (the room, each person's "you", each seat's game view and legal moves,
        the timer): a change is encoded per seat, not per socket.  A batching
        socket that already holds the current room part gets the view without
        it (docs/protocol.md): during a game the room part - seats, names,
        settings, tally - is two thirds of a view and rarely changes."""
        seat = self.game_seat.get(player.player_id)
        parts = cache.get(seat)
        if parts is None:
            if self.state is None:
                parts = ("null", "null")
            else:
                game = _dumps(self.game.view(self.state, seat)).decode()
                legal = "null"
                if seat is not None and self.status == PLAYING and seat in self.to_act:
                    legal = _dumps(self.game.legal_actions(self.state, seat)).decode()
                parts = (game, legal)
            cache[seat] = parts
        room = self._room_part()
        you = self._you_json.get(player.player_id)
        if you is None:  # kept until the room part changes (who sits where, the host)
            you = self._you_json[player.player_id] = _dumps(
                {
                    "seat": player.seat,
                    "host": player.player_id == self.record.host_player_id,
                    "name": player.name,
                    "player": player.player_id,
                }
            ).decode()
        head = "" if conn.batch and conn.room_seen is room else f'"room":{room},'
        conn.room_seen = room
        return (
            f'{{"v":{self.v},"view":{{{head}"you":{you},"game":{parts[0]},'
            f'"legal":{parts[1]},"timer":{timer}}}}}'
        )

    def _change(
        self, events: list[Event], *, with_view: bool = True, room_changed: bool = True
    ) -> None:
        """The one way anything reaches anyone: a new version, each event to the
        seat it names (or to all), then each connected person's own view.
        `room_changed=False` (a plain game move) reuses the encoded room part."""
        self.v += 1
        v = self.v
        if room_changed:
            self._room_json = None
        frames: list[tuple[int | None, Frame]] = []
        for ev in events:
            to = ev.get("to")
            body = {k: x for k, x in ev.items() if k != "to"}
            frames.append((to, _dumps({"v": v, "event": body}).decode()))
        if frames:
            if len(self.history) >= HISTORY_MAX:
                self.history_floor = self.history.popleft()[0]
            self.history.append((v, tuple(frames)))
        cache: dict[int | None, tuple[str, str]] = {}
        timer = self._timer_part() if with_view else "null"
        for pid, conns in self.conns.items():
            seat = self.game_seat.get(pid)
            out = [frame for to, frame in frames if to is None or to == seat]
            for c in conns:
                if with_view:
                    c.push_all([*out, self._view_frame(self.players[pid], c, cache, timer)])
                else:
                    c.push_all(out)

    # ------------------------------------------------------------- lifecycle

    def _snapshot(self) -> RoomRecord:
        r = self.record
        return RoomRecord(
            code=r.code,
            game=r.game,
            options=dict(r.options),
            settings=dict(r.settings),
            host_player_id=r.host_player_id,
            players=[dataclasses.replace(p) for p in r.players],
            tally=dict(r.tally),
            closed=r.closed,
        )

    async def _save(self) -> None:
        """Membership is saved as it changes; a failure is logged, not fatal (the
        next save carries the whole room again)."""
        snapshot = self._snapshot()
        if snapshot == self._saved:
            return
        try:
            await self.records.save_room(snapshot)
            self._saved = snapshot
        except Exception:
            log.exception("room %s: could not save the room", self.code)

    async def _close_room(self) -> None:
        self.closed = True
        self.record.closed = True
        self._cancel_timers()
        self.status = FINISHED if self.status == PLAYING else self.status
        await self._save()
        for conns in self.conns.values():
            for c in conns:
                c.close(CLOSE_LEFT, "the room has closed")
        self.conns.clear()
        if self.on_close is not None:
            self.on_close(self)

    def _mark_idle(self) -> None:
        """Start the idle clock once the last socket has gone (call after
        taking any out of `conns`)."""
        if not self.conns and self.idle_since is None:
            self.idle_since = time.monotonic()

    async def close_if_idle(self, after: float) -> bool:
        """Close the room if nobody has been connected for `after` seconds: an
        abandoned room would otherwise live, and be recovered at every restart,
        for ever.  Its finished games stay in the history."""
        async with self.lock:
            idle = self.idle_since
            if self.closed or idle is None or time.monotonic() - idle < after:
                return False
            log.info("room %s: closed after %.0f s with nobody connected", self.code, after)
            await self._close_room()
            return True

    async def shutdown(self) -> None:
        """Stop timers and bots (server shutdown); the room stays open in the records."""
        async with self.lock:
            self._cancel_timers()
        with contextlib.suppress(Exception):
            for conns in list(self.conns.values()):
                for c in conns:
                    c.close(1012, "server restarting")


_COMMANDS: dict[str, Callable[[Room, Connection, PlayerRecord, dict[str, Any]], Any]] = {
    "sit": Room._cmd_sit,
    "start": Room._cmd_start,
    "rematch": Room._cmd_rematch,
    "add_bot": Room._cmd_add_bot,
    "remove_bot": Room._cmd_remove_bot,
    "kick": Room._cmd_kick,
    "leave": Room._cmd_leave,
    "chat": Room._cmd_chat,
    "set_game": Room._cmd_set_game,
    "set_settings": Room._cmd_set_settings,
    "make_host": Room._cmd_make_host,
    "hand_to_bot": Room._cmd_hand_to_bot,
    "resync": Room._cmd_resync,
}
