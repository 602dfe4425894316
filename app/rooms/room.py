"""One room: the small object that wires its parts and owns its lock.

- `Membership` (membership.py): people, seats, host, tokens, who is away;
- `Table` (table.py): the game, its log, who drives each seat - the only
  writer of game state;
- `Delivery` (delivery.py): sockets, versions, history - the only reader of
  views, and the one place anything is sent;
- `Timers` (timers.py): the waits (game timers, turn timer, bots' thinking,
  the grace of someone who is away);
- commands.py: what each room command does.

Everything that changes a room runs under `self.lock`, one message, timer or
bot move at a time, so the order of changes is the order of the action log,
and every change ends in `Delivery.change`.  docs/architecture.md draws the
whole path of an action.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
from collections.abc import Awaitable, Callable, Mapping
from time import perf_counter
from typing import Any

import orjson

from app.bots.thinking import InlineThinker, Thinker
from app.core import logs, metrics
from app.games.base import Event, Game, IllegalAction
from app.rooms.bot_driver import BotDriver
from app.rooms.clock import Clock, system_clock
from app.rooms.commands import AUTOPLAY_ON, run_command
from app.rooms.connection import Connection
from app.rooms.delivery import HISTORY_MAX, Delivery, Resume
from app.rooms.errors import RoomError, bad_claim
from app.rooms.events import CLOSE_LEFT, CLOSE_MOVED, room_event
from app.rooms.membership import Membership
from app.rooms.nudges import Nudge, TurnNudges
from app.rooms.quiet import QuietPosso
from app.rooms.saving import RoomSaver
from app.rooms.settings import RoomSettings, parse_settings
from app.rooms.table import BOT_FILL_GAMES, FINISHED, LOBBY, PLAYING, Table
from app.rooms.text import clean_name
from app.rooms.timers import Backoff, Timer, Timers
from app.store.records import (
    Fenced,
    GameRecord,
    PlayerRecord,
    Records,
    RoomRecord,
    new_game_ref,
)

__all__ = ["FINISHED", "HISTORY_MAX", "LOBBY", "PLAYING", "Room", "Seeds", "new_seed"]

log = logging.getLogger(__name__)

#: the game whose rooms keep a series tally, and its points per place
TALLY_GAME = "bigtwo"
TALLY_POINTS = (3, 2, 1, 0)

Seeds = Callable[[], int]


def owns(p: PlayerRecord, guest_id: str | None, account_id: int | None) -> bool:
    """Whether a browser with this guest identity, or signed in to this
    account, is `p`'s own."""
    if guest_id and p.guest_id == guest_id:
        return True
    return account_id is not None and p.account_id == account_id


def moves_as_guest(p: PlayerRecord) -> bool:
    """Whether `p`'s own move link moves a guest identity (a guest with a
    guest id; someone signed in simply signs in on the new device)."""
    return p.account_id is None and bool(p.guest_id)


def new_seed() -> int:
    return secrets.randbits(62)


def add_to_tally(tally: dict[str, int], seats: list[str], result: dict[str, Any]) -> None:
    """A finished game's series points, by place (tied seats each get the
    points of the place they share)."""
    rank = 0
    for group in result.get("places", []):
        points = TALLY_POINTS[rank] if rank < len(TALLY_POINTS) else 0
        for seat in group:
            pid = seats[seat]
            tally[pid] = tally.get(pid, 0) + points
        rank += len(group)


class Room:
    def __init__(
        self,
        record: RoomRecord,
        games: Mapping[str, Game[Any]],
        records: Records,
        *,
        on_close: Callable[[Room], None] | None = None,
        seeds: Seeds = new_seed,
        on_moved: Callable[[Room], None] | None = None,
        clock: Clock = system_clock,
        thinker: Thinker | None = None,
    ) -> None:
        self.code = record.code
        #: wall-clock seconds: every deadline and every "since" of this room
        self.clock = clock
        #: called when another process turns out to own the room (several processes)
        self.on_moved = on_moved
        self.games = games
        self.records = records
        self.on_close = on_close
        self.seeds = seeds
        self.settings: RoomSettings = parse_settings(record.settings)
        #: when the host last changed the settings: a turn timer they set
        #: mid-turn counts from then, not from the turn's start (a host cannot
        #: time a friend's long think out at once)
        self.settings_at = 0.0
        self.lock = asyncio.Lock()
        self.closed = False
        game = games[record.game]
        self.members = Membership(record, game.max_seats, clock, self.settings.disconnect_grace)
        self.table = Table(game, records, self.code, clock)
        self.table.on_fenced = self._moved_away
        #: a write was refused for a newer owner: stepping down (`_moved_away`)
        self._moving = False
        self.timers = Timers(self._locked, clock)
        #: each person's own "don't ask me about Possos" switches
        self.quiet = QuietPosso()
        self.delivery = Delivery(
            self.code,
            self.members,
            self.table,
            lambda: self.settings,
            self._timer_json,
            self.quiet,
        )
        #: time since which nobody has been connected (None: someone is)
        self.idle_since: float | None = clock()
        #: the game timer's key: bumped as it fires, so the next wait is a new
        #: one, and put back when its timeout fails, so the retry is the same wait
        self._timer_epoch = 0
        self._jitter = random.Random(seeds())  # bots' delays and retries: seeded in tests
        #: failed timeouts and bot moves (storage away) retry later and later
        self._retry = Backoff()
        #: who plays the seats no person plays (app/rooms/bot_driver.py)
        self.bots = BotDriver(
            self.code,
            self.table,
            self.members,
            self.timers,
            self.quiet,
            clock,
            play=self.play,
            moved_on=self._moved_on,
            check_moved=self._check_moved,
            thinker=thinker or InlineThinker(),
            jitter=self._jitter,
            retry=self._retry,
        )
        #: saving the room's people, with its retries (app/rooms/saving.py)
        self.saver = RoomSaver(
            self.code,
            self.members,
            self.table,
            records,
            self.timers,
            clock,
            self._jitter,
            moved_away=self._moved_away,
            gone=self._gone,
            closed=lambda: self.closed,
        )
        #: where turn nudges go (app/rooms/nudges.py; set by the manager when
        #: the server can push), and per seat to act: its turn's number and
        #: whether that turn has had its one nudge
        self.nudge: Callable[[Nudge], None] | None = None
        self.nudges = TurnNudges(
            self.code, self.table, self.members, self.delivery, self.bots, lambda: self.closed
        )

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
        seeds: Seeds = new_seed,
        clock: Clock = system_clock,
        thinker: Thinker | None = None,
    ) -> Room:
        record = RoomRecord(code, game.name, options, settings.model_dump(), None)
        return cls(
            record, games, records, on_close=on_close, seeds=seeds, clock=clock, thinker=thinker
        )

    # --------------------------------------------- what the parts hold, read-only

    @property
    def record(self) -> RoomRecord:
        return self.members.record

    @property
    def game(self) -> Game[Any]:
        return self.table.game

    @property
    def state(self) -> Any:
        return self.table.state

    @property
    def status(self) -> str:
        return self.table.status

    @property
    def to_act(self) -> set[int]:
        return self.table.to_act

    @property
    def game_seats(self) -> list[str]:
        return self.table.game_seats

    @property
    def game_seat(self) -> dict[str, int]:
        return self.table.game_seat

    @property
    def seq(self) -> int:
        return self.table.seq

    @property
    def v(self) -> int:
        return self.delivery.v

    @property
    def players(self) -> dict[str, PlayerRecord]:
        return self.members.players

    @property
    def conns(self) -> dict[str, list[Connection]]:
        return self.delivery.conns

    def room_public(self) -> dict[str, Any]:
        return self.delivery.room_public()

    def authenticate(self, token: str) -> PlayerRecord | None:
        return self.members.authenticate(token)

    # ------------------------------------------------------------- recovery

    async def repair_tally(self) -> None:
        """The series tally is derived from the room's finished games, so a
        rebuild makes it again from them: a crash between a game's result and
        the room's next save would otherwise lose that game's points for good,
        and a save made after a result that failed to store would count them
        twice once the game is finished again.  If the games cannot be read,
        the rebuild fails (and is tried again at the next use): a room rebuilt
        on the stored tally would add its next games to a stale one."""
        finished = await self.records.finished_results(self.code, TALLY_GAME)
        tally: dict[str, int] = {}
        for game in finished:
            add_to_tally(tally, game.seats, game.result)
        self.record.tally = tally

    async def restore_game(self, rec: GameRecord) -> None:
        """Rebuild the live game (recovery after a restart), and repair what a
        crash may have left out: a game that is over is finished now (its
        result stored, the room between games); missing score rows are written."""
        game = self.games[rec.game]
        for i, pid in enumerate(rec.seats):
            if pid not in self.members.players:
                self.members.add_ghost(pid, i)
        self.members.seat_to(list(rec.seats))
        await self.table.restore(rec, game)
        await self.table.repair()
        result = self.table.over()
        if result is not None:
            await self._finish(result, [])
        self.reschedule()

    # ----------------------------------------------------------- membership

    async def join(
        self,
        name: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
        spectator: bool = False,
        host: bool = False,
        token_hash: str | None = None,
    ) -> tuple[PlayerRecord, str]:
        """A new person in the room; returns their record and their secret token
        (or "" if the caller made it and passed `token_hash`).  Someone signed
        in who is already here gets their own place back instead, on this device."""
        name = clean_name(name)
        async with self.lock:
            if self.closed:
                raise RoomError("no_room", "this room has closed")
            members = self.members
            if account_id is not None:
                known = members.by_account(account_id)
                if known is not None:
                    known.lent = False  # the person themselves, on a device of theirs
                    return known, await self._move_device(known, guest_id, hashed=token_hash)
            waiting = members.waiting_for(guest_id)
            if waiting is not None:  # moved here from another room: their place
                waiting.lent = False
                return waiting, await self._move_device(waiting, None, hashed=token_hash)
            members.check_may_join(guest_id, account_id, self.settings.locked)
            seat = None if spectator or self.table.playing else members.free_seat()
            player, token = members.add_person(
                name,
                seat,
                guest_id=guest_id,
                account_id=account_id,
                hashed=token_hash,
                grace=self.settings.disconnect_grace,
            )
            host_before = members.host
            if host or members.host is None:
                members.host = player.player_id
            await self.save()
            if not self.stored:  # a join is acknowledged only once it is stored
                members.forget(player)
                members.host = host_before
                raise RoomError("storage_error", "the room cannot take anyone just now; try again")
            self._schedule_presence()
            self.change([room_event("joined", seat=seat, name=name)])
            return player, token

    async def claim(
        self,
        claim_hash: str,
        *,
        guest_id: str | None = None,
        account_id: int | None = None,
        token_hash: str | None = None,
    ) -> tuple[PlayerRecord, str, bool]:
        """Take a place with a one-time link (`seat_link`, `move_link`), named by
        the hash of its secret (the secret itself never leaves the route); the
        person, their new token, and whether it was their own move link.

        A seat link someone else made writes nothing of the claimer's onto the
        person's record, so each person's history holds what they played; and
        unless the claimer's browser is the person's own, the place is `lent`:
        it may not move the person, and the person's identity elsewhere may
        not follow its cards while the game runs (a seat link moves a seat,
        never a person).  A browser or account the host removed may not claim.  A
        guest's own move link leaves the record as it is too: the person
        moves, not only the place - the route makes the new browser act as
        the person's guest id everywhere (app/api/rooms.py).  A place held by an
        account (or with no guest id) takes the new browser's guest id, so
        that browser sees the game even while signed out."""
        async with self.lock:
            if not self.closed:
                self.members.check_not_removed(guest_id, account_id)
            found = None if self.closed else self.members.take_claim(claim_hash)
            if found is None:
                raise bad_claim()
            person, claim = found
            person.lent = not (claim.own or owns(person, guest_id, account_id))
            maker = self.members.names.get(claim.by, "someone")
            self.members.remember_replaced(person, maker, claim.own)
            token = await self._move_device(
                person,
                guest_id if claim.own and not moves_as_guest(person) else None,
                by=None if claim.own else maker,
                hashed=token_hash,
            )
            if not self.stored:  # the new token would not outlive a crash: not handed out
                raise RoomError("storage_error", "the link could not be used just now; ask again")
            return person, token, claim.own

    async def release_person(self, guest_id: str) -> int:
        """The guest `guest_id` moved to another browser with a move link made
        in another room: their place here leaves the old browser too (its
        token void, its sockets closed and told why), and waits for them to
        open the room on the new one (`join` finds it by their guest id).
        How many places were released."""
        async with self.lock:
            if self.closed:
                return 0
            held = [p for p in self.members.humans() if p.guest_id == guest_id and p.token_hash]
            for person in held:
                self.members.remember_replaced(person, person.name, True)
                self.members.void_token(person)
                self.delivery.close_person(
                    person.player_id, CLOSE_MOVED, "you moved to another device"
                )
                self.members.left(person.player_id, self.settings.disconnect_grace)
            if held:
                self._mark_idle()
                await self.save()
                self._schedule_presence()
                self.change([room_event("moved", seat=p.seat, name=p.name) for p in held])
            return len(held)

    async def _move_device(
        self,
        person: PlayerRecord,
        guest_id: str | None,
        *,
        by: str | None = None,
        hashed: str | None = None,
    ) -> str:
        """`person` continues on another device: a new token, the old one void
        and its sockets closed, told why (`by`: who made the seat link)."""
        token = self.members.reissue_token(person, hashed)
        if guest_id is not None:
            person.guest_id = guest_id
        moved = (
            f"your seat moved to a new device with a seat link {by} made"
            if by is not None
            else "your seat moved to another device"
        )
        self.delivery.close_person(person.player_id, CLOSE_MOVED, moved)
        self.members.left(person.player_id, self.settings.disconnect_grace)
        self._mark_idle()
        await self.save()
        self._schedule_presence()
        extra = {"by": by} if by is not None else {}
        self.change([room_event("moved", seat=person.seat, name=person.name, **extra)])
        return token

    async def connect(self, conn: Connection, since: Resume | None = None) -> bool:
        """Register an authenticated socket; send what it missed, and its view."""
        async with self.lock:
            conn.hold()  # what it missed and its view, as one frame on a batching socket
            try:
                return await self._connect(conn, since)
            finally:
                conn.release()

    async def _connect(self, conn: Connection, since: Resume | None) -> bool:
        player = self.members.players.get(conn.player_id)
        if player is None or self.closed:
            conn.close(4401, "not a member of this room")
            return False
        self.idle_since = None
        if not self.delivery.add(conn, since):  # another tab of someone here
            self.delivery.send_view(conn)
            return True
        pid = player.player_id
        was_away = pid in self.members.away_since
        self.members.arrived(pid)
        events: list[Event] = []
        seat = self.table.seat_of(pid)
        if seat is not None and was_away:
            events.append(room_event("back", seat=seat, name=player.name))
        if seat is not None and self.table.stand_in(seat):
            self.table.auto.discard(seat)
            self.table.forced.discard(seat)
            self.timers.drop(f"bot:{seat}")
            events.append(room_event("auto_off", seat=seat, name=player.name))
        events += await self._pass_host_if_overdue()
        self.reschedule()
        self.change(events)
        return True

    async def disconnect(self, conn: Connection) -> None:
        async with self.lock:
            if not self.delivery.remove(conn):
                return
            self._mark_idle()
            player = self.members.players.get(conn.player_id)
            if player is None or self.closed:
                return
            self.members.left(player.player_id, self.settings.disconnect_grace)
            events: list[Event] = []
            seat = self.table.seat_of(player.player_id)
            if seat is not None and not player.is_bot:
                events.append(room_event("away", seat=seat, name=player.name))
            self._schedule_presence()
            self.change(events)

    # --------------------------------------------------------------- messages

    async def handle(
        self, conn: Connection, msg_id: Any, kind: str, payload: dict[str, Any]
    ) -> None:
        """Apply one client message; the reply (ack or error) goes to `conn`
        only, in the same frame as what the message changed (`Connection.hold`)."""
        started, refused = perf_counter(), None  # for app/core/metrics.py
        logs.in_room(self.code, self.table.public_id)  # this task's log lines name them
        async with self.lock:
            conn.hold()
            try:
                player = self.members.players.get(conn.player_id)
                if player is None or self.closed:
                    raise RoomError("not_member", "you are no longer in this room")
                data = None
                if kind == "action":
                    await self.play(self._action_seat(player, payload), payload)
                else:
                    people = self.members.snapshot()
                    data = await run_command(self, conn, player, payload)
                    if not self.stored and self.members.snapshot() != people:
                        # done here, and stored as soon as storage takes it: but
                        # a crash before then would lose it, so it is not acknowledged
                        raise RoomError("storage_error", "not saved yet; it is retried")
            except (RoomError, IllegalAction) as err:
                refused = err.code
                conn.push(self.error_frame(msg_id, err))
                self._check_moved(err)
            except Exception:
                log.exception("room %s: unexpected error on %s %r", self.code, kind, payload)
                refused = "bad_action"
                oops = RoomError("bad_action", "the server could not process that message")
                conn.push(self.error_frame(msg_id, oops))
            else:
                ack = {"re": msg_id, "ok": True, "v": self.v}
                conn.push(orjson.dumps({**ack, "data": data} if data else ack).decode())
            finally:
                conn.release()
        metrics.handled(kind, refused, started)

    def error_frame(self, msg_id: Any, err: RoomError | IllegalAction) -> str:
        return orjson.dumps({"re": msg_id, "error": err.as_dict(), "v": self.v}).decode()

    def _action_seat(self, player: PlayerRecord, action: dict[str, Any]) -> int:
        if not self.table.playing:
            raise RoomError("not_playing", "no game is being played")
        seat = self.table.game_seat.get(player.player_id)
        if seat is None:
            raise RoomError("not_seated", "spectators cannot play; sit down between games")
        if "seat" in action and action["seat"] != seat:
            raise RoomError("not_your_seat", "you can only act for your own seat")
        if action.get("type") == "timeout":
            raise RoomError("bad_action", "timeouts come from the room's timers, not from players")
        if seat in self.table.autoplay:
            raise RoomError("autoplay_on", AUTOPLAY_ON)
        return seat

    # ------------------------------------------------------------------ game

    async def play(self, seat: int | None, action: dict[str, Any]) -> None:
        """One move through the table, then what it ends, then everyone's views.
        A move whose append had no answer is settled first: if it was logged
        after all, everyone is told of it before this one is tried (and this
        one is judged against the state it made)."""
        if self.table.unsettled:
            earlier = await self.table.settle()
            if earlier:
                await self._moved_on(earlier)
        events = await self.table.play(seat, action)
        self._retry.reset()
        await self._moved_on(events)

    async def _moved_on(self, events: list[Event]) -> None:
        """What a committed move ends, the waits it changes, and the change."""
        result = self.table.over()
        extra = self.bots.hand_over(events)  # "play my turns this hand" ends with it
        if result is not None:
            await self._finish(result, extra)
        # presence waits change only when the game ends, not with every move
        self.reschedule(presence=result is not None)
        self.change([*events, *extra], room_changed=result is not None)

    async def _finish(self, result: dict[str, Any], events: list[Event]) -> None:
        table = self.table
        await table.finish(result)
        names = self.members.names
        table.result_names = [names.get(pid, "?") for pid in table.game_seats]
        if table.game.name == TALLY_GAME:
            add_to_tally(self.record.tally, table.game_seats, result)
        self.members.grow(table.game.max_seats)
        await self.save()
        events.append(room_event("finished", result=result))
        log.info("room %s: game %s of %s over", self.code, table.public_id, table.game.name)

    async def start(self) -> None:
        """Deal a new game to the seated people (and bots)."""
        game, members = self.table.game, self.members
        await self.table.repair()  # the last game's result, if its write failed
        if self.table.result_unsaved is not None:
            # the series tally and the history are made of stored results: a
            # game whose result cannot be stored yet holds the next one back
            raise RoomError("storage_error", "the last game could not be saved yet; try again")
        seated = [pid for pid in members.seats if pid is not None]
        added: list[PlayerRecord] = []
        if game.name in BOT_FILL_GAMES:
            while len(seated) + len(added) < game.max_seats:
                added.append(members.new_bot(len(seated) + len(added)))
        order = seated + [b.player_id for b in added]
        if len(order) < game.min_seats:
            raise RoomError(
                "too_few_players", f"{game.title} needs at least {game.min_seats} seated players"
            )
        if len(order) > game.max_seats:
            raise RoomError("bad_seat", f"{game.title} seats at most {game.max_seats}")
        seed = self.seeds()
        try:
            # every option stored with the game, defaults and rules version too:
            # it replays under what it was played by, whatever later code says
            options = game.parse_options(self.record.options).model_dump(mode="json")
            state = game.new_game(len(order), options, seed)
        except ValueError as err:
            raise RoomError("bad_options", str(err)) from None
        public_id = new_game_ref()
        try:
            game_id = await self.records.start_game(
                self.code, game.name, options, seed, order, self.table.epoch, public_id
            )
        except Fenced as err:
            raise RoomError("moved", "this room moved to another server: reconnecting") from err
        except Exception as err:
            log.exception("room %s: could not record a new game", self.code)
            raise RoomError("storage_error", "the game could not be saved; try again") from err
        for bot in added:
            members.add_bot(bot, None)
        members.seat_to(order)
        self.table.begin(order, seed, state, game_id, public_id)
        logs.in_room(self.code, public_id)
        log.info("room %s: game %s of %s started", self.code, public_id, game.name)
        self.delivery.restart_history()
        self._stop_waits()
        await self.save()
        self.reschedule()
        self.change([room_event("started", game_no=self.table.games_played, game=game.name)])

    # --------------------------------------------------------------- people

    async def remove_person(self, person: PlayerRecord, code: int, reason: str, what: str) -> None:
        """Take a person out: between games their seat frees; during a game a bot
        takes it over under their name.  Their token stops working at once."""
        members, table = self.members, self.table
        seat = person.seat
        if what == "kicked":
            members.remember_removed(person)
        members.void_token(person)
        self.quiet.forget(person.player_id)
        self.delivery.close_person(person.player_id, code, reason)
        self._mark_idle()
        game_seat = table.seat_of(person.player_id)
        if game_seat is not None:
            person.is_bot = True
            members.arrived(person.player_id)  # a bot is never away
            table.auto.discard(game_seat)
            table.forced.discard(game_seat)
        else:
            members.forget(person)
        events = [room_event(what, seat=seat, name=person.name)]
        if members.host == person.player_id:
            heir = members.heir() or next(iter(members.humans()), None)
            members.host = heir.player_id if heir else None
            if heir is not None:
                events.append(room_event("host", seat=heir.seat, name=heir.name))
        if not members.humans():
            await self.close()
            return
        await self.save()
        self.reschedule()
        self.change(events)

    def away_too_long(self, pid: str, grace: float | None = None) -> float:
        """Seconds until `pid` has been away past their grace, the one fixed
        when they went, or `grace` (<= 0: they have; inf: they are here)."""
        ends = self.members.grace_ends(pid, grace)
        return float("inf") if ends is None else ends - self.clock()

    async def _pass_host_if_overdue(self) -> list[Event]:
        """A host away past the grace hands the role to whoever is here."""
        host = self.members.host
        ends = self.members.host_grace_ends(self.table.playing)
        if host is None or ends is None or ends > self.clock():
            return []
        heir = self.members.heir()
        if heir is None:
            return []  # nobody here: the next person who comes takes it
        self.members.host = heir.player_id
        await self.save()
        return [room_event("host", seat=heir.seat, name=heir.name, reason="away")]

    # ------------------------------------------------------- timers and bots

    def reschedule(self, *, presence: bool = True) -> None:
        """Bring timers and bot moves in line with the state just committed
        (and the presence wait, unless the caller knows it is unchanged)."""
        timers, table = self.timers, self.table
        if not table.playing or self.closed:
            for slot in ("game", "turn", "quiet", *timers.slots("bot:")):
                timers.drop(slot)
            self._schedule_presence()
            return
        now = self.clock()
        # a wait counts from the change that started it (after a restart, the
        # last action stored): it resumes with the time it had left
        since = table.changed_at
        kind = table.game.timer(table.state)
        if kind is None:
            timers.drop("game")
        else:
            secs = self.settings.timer_seconds(kind)
            timers.start("game", kind, since + secs, self._on_game_timer, key=self._timer_epoch)
        to_act = table.to_act
        limit = self.settings.turn_timer
        people = (
            [s for s in to_act if not self.bots.bot_drives(s)]
            if limit is not None and kind is None
            else []
        )
        if limit is None or not people:
            timers.drop("turn")
        else:
            seat = people[0] if len(to_act) == 1 else None
            timers.start(
                "turn",
                "turn",
                max(since, self.settings_at) + limit,
                self._on_turn_timer,
                key=frozenset(to_act),
                seat=seat,
            )
        for seat in to_act:
            slot = f"bot:{seat}"
            if timers.get(slot) is None and self.bots.bot_drives(seat):
                delay = self.bots.pace(self.settings.bot_delay) * self._jitter.uniform(0.5, 1.5)
                timers.start(slot, "bot", now + delay, self.bots.on_bot, key=table.seq, seat=seat)
        if self.bots.quiet_passes():
            timers.start("quiet", "quiet", now, self.bots.on_quiet, key=table.seq)
        else:
            timers.drop("quiet")
        if presence:
            self._schedule_presence()

    def _schedule_presence(self) -> None:
        """Wake when the next person passes the grace: a seat a bot should take
        over, or a host role to pass on."""
        members, table = self.members, self.table
        due: list[float] = []
        if table.playing and self.settings.auto_bot and not self.closed:
            for seat, pid in enumerate(table.game_seats):
                ends = members.grace_ends(pid)
                if ends is not None and seat not in table.auto:
                    due.append(ends)
        host_ends = members.host_grace_ends(table.playing)
        if host_ends is not None and not self.closed and members.heir() is not None:
            # with nobody here to take the role there is nothing to wait for:
            # the next person who connects takes it (`_connect`)
            due.append(host_ends)
        if due:
            when = min(due)
            # keyed by the game too: a new game seats people again, and one
            # away since before it is due at once, though that moment has fired
            key = (when, table.games_played)
            self.timers.start("presence", "presence", when, self._on_presence, key=key)
        else:
            self.timers.drop("presence")

    def _timer_json(self) -> dict[str, Any] | None:
        t = self.timers.get("game") or self.timers.get("turn")
        return t.as_json(self.clock()) if t is not None else None

    async def _locked(self, step: Callable[[], Awaitable[None]]) -> None:
        """How a timer's callback runs: under the lock, one change at a time."""
        logs.in_room(self.code, self.table.public_id)
        async with self.lock:
            if not self.closed or not self.stored:  # a closed room's last save retries
                await step()

    async def _on_game_timer(self, t: Timer) -> None:
        if not self.table.playing:
            return
        self._timer_epoch += 1
        try:
            await self.play(None, {"type": "timeout"})
        except (RoomError, IllegalAction) as err:
            self._timer_epoch -= 1
            if self._check_moved(err):
                return
            # its deadline has passed: re-armed as it was, it would fire at once,
            # for ever; the same wait is kept (same kind and key) and tried later
            delay = self._retry.next(self._jitter)
            log.error("room %s: timeout refused (%s); again in %.1f s", self.code, err, delay)
            self.timers.start(
                "game", t.kind, self.clock() + delay, self._on_game_timer, key=self._timer_epoch
            )

    async def _on_turn_timer(self, t: Timer) -> None:
        table = self.table
        if not table.playing:
            return
        newly = [s for s in table.to_act if not self.bots.bot_drives(s)]
        table.forced.update(newly)
        table.forced_key = frozenset(table.to_act)
        self.reschedule()
        players = self.members.players
        self.change(
            [
                room_event("auto_on", seat=s, name=players[table.game_seats[s]].name, turn=True)
                for s in newly
            ]
        )

    def _stop_waits(self) -> None:
        """Every wait dropped, and every bot's thinking with them."""
        self.timers.drop_all()
        self.bots.drop_thoughts()

    async def _on_presence(self, t: Timer) -> None:
        """People away past the grace: a bot takes their seat (when the room
        says so), and a host passes the role on."""
        table, players = self.table, self.members.players
        events: list[Event] = []
        if table.playing and self.settings.auto_bot:
            for seat, pid in enumerate(table.game_seats):
                if seat not in table.auto and self.away_too_long(pid) <= 0:
                    table.auto.add(seat)
                    events.append(
                        room_event("auto_on", seat=seat, name=players[pid].name, reason="away")
                    )
        events += await self._pass_host_if_overdue()
        self.reschedule()
        if events:
            self.change(events)

    def _check_moved(self, err: Exception) -> bool:
        """A refused append said another process owns the room now: this one
        steps down (after the current change, outside the lock)."""
        if not (isinstance(err, RoomError) and err.code == "moved"):
            return False
        self._moved_away()
        return True

    def _moved_away(self) -> None:
        """A write was refused for a newer owner: step down (soon, outside
        whatever holds the lock now), once however many writes said so."""
        if self.on_moved is not None and not self.closed and not self._moving:
            self._moving = True
            asyncio.get_running_loop().call_soon(self.on_moved, self)

    # ------------------------------------------------------------- delivery

    def change(
        self, events: list[Event], *, with_view: bool = True, room_changed: bool = True
    ) -> None:
        """Everything a change tells anyone goes out here (Delivery.change)."""
        self.delivery.change(events, with_view=with_view, room_changed=room_changed)
        if self.nudge is not None:
            self.nudges.nudge_turns(self.nudge)

    # ------------------------------------------------------------ lifecycle

    async def save(self) -> None:
        """Save the room's people now (app/rooms/saving.py: refused for a newer
        owner, retried later and later on any other failure)."""
        await self.saver.save()

    @property
    def stored(self) -> bool:
        """Storage holds the room's people as they are now (no save pending)."""
        return self.saver.stored

    async def close(self) -> None:
        self.closed = True
        self.record.closed = True
        self._stop_waits()
        self.table.stop()
        self.delivery.close_all(CLOSE_LEFT, "the room has closed")
        await self.save()  # and once it is stored, the room is gone (`_gone`)

    def _gone(self) -> None:
        """A closed room's close is stored: its manager lets it go (once)."""
        on_close, self.on_close = self.on_close, None
        if on_close is not None:
            on_close(self)

    def _mark_idle(self) -> None:
        """Start the idle clock once the last socket has gone."""
        if not self.delivery.conns and self.idle_since is None:
            self.idle_since = self.clock()

    async def close_if_idle(self, after: float) -> bool:
        """Close the room if nobody has been connected for `after` seconds: an
        abandoned room would otherwise live, and be recovered at every restart,
        for ever.  Its finished games stay in the history."""
        async with self.lock:
            idle = self.idle_since
            if self.closed or idle is None or self.clock() - idle < after:
                return False
            log.info("room %s: closed after %.0f s with nobody connected", self.code, after)
            await self.close()
            return True

    async def shutdown(self) -> None:
        """Stop timers and bots (server shutdown); the room stays open in the records."""
        async with self.lock:
            self._stop_waits()
            self.delivery.close_all(1012, "server restarting")
