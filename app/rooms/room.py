"""One room: the small object that wires its parts and owns its lock.

- `Membership` (membership.py): people, seats, host, tokens, who is away;
- `Table` (table.py): the game, its log, who drives each seat - the only
  writer of game state;
- `Delivery` (delivery.py): sockets, versions, history - the only reader of
  the views that are sent, and the one place anything is sent;
- `Timers` (timers.py): the waits, each run under the lock (`new_timers`
  makes them, once, before any part that holds them);
- the parts with one job each: `Places` (places.py: joining, links, moving
  device, taking a person out), `Presence` (presence.py: who is away, grace,
  auto-bot, host hand-over), `Waits` (waits.py: game, turn, bot and quiet
  waits after each change), `BotDriver` (bot_driver.py: bots' moves and
  thinking), `Dealer` (dealing.py: starting, finishing and rebuilding games,
  the tally), `RoomSaver` (saving.py), `Closing` (closing.py: close, idle
  close, shutdown, stepping down), `TurnNudges` (nudges.py);
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
from app.rooms.closing import Closing
from app.rooms.commands import AUTOPLAY_ON, run_command
from app.rooms.connection import Connection
from app.rooms.dealing import Dealer
from app.rooms.delivery import HISTORY_MAX, Delivery, Resume
from app.rooms.errors import RoomError
from app.rooms.membership import Membership
from app.rooms.nudges import Nudge, TurnNudges
from app.rooms.places import Places
from app.rooms.presence import Presence
from app.rooms.quiet import QuietPosso
from app.rooms.saving import RoomSaver
from app.rooms.settings import RoomSettings, parse_settings
from app.rooms.table import FINISHED, LOBBY, PLAYING, Table
from app.rooms.timers import Backoff, Timers
from app.rooms.waits import Waits
from app.store.records import (
    GameRecord,
    PlayerRecord,
    Records,
    RoomRecord,
)

__all__ = ["FINISHED", "HISTORY_MAX", "LOBBY", "PLAYING", "Room", "Seeds", "new_seed"]

log = logging.getLogger(__name__)

Seeds = Callable[[], int]


def new_seed() -> int:
    return secrets.randbits(62)


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
        self.table.on_fenced = lambda: self.closing.moved_away()
        #: every part that waits holds these, given at construction: one
        #: place (`new_timers`) decides what they are
        self.timers = self.new_timers()
        #: each person's own "don't ask me about Possos" switches
        self.quiet = QuietPosso()
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
            check_moved=lambda err: self.closing.check_moved(err),
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
            moved_away=lambda: self.closing.moved_away(),
            gone=lambda: self.closing.gone(),
            closed=lambda: self.closed,
        )
        #: who is away, and what their grace ends in (app/rooms/presence.py)
        self.presence = Presence(
            self.members,
            self.table,
            self.timers,
            clock,
            settings=lambda: self.settings,
            closed=lambda: self.closed,
            save=self.save,
            reschedule=self.reschedule,
            change=self.change,
        )
        #: the game's, the turn's and the bots' waits (app/rooms/waits.py)
        self.waits = Waits(
            self.code,
            self,
            self.table,
            self.members,
            self.timers,
            self.bots,
            self.presence,
            clock,
            play=self.play,
            check_moved=lambda err: self.closing.check_moved(err),
            change=self.change,
            jitter=self._jitter,
            retry=self._retry,
        )
        self.delivery = Delivery(
            self.code,
            self.members,
            self.table,
            lambda: self.settings,
            self.waits.timer_json,
            self.quiet,
        )
        #: dealing, finishing and rebuilding games (app/rooms/dealing.py)
        self.dealer = Dealer(
            self.code,
            games,
            records,
            self.members,
            self.table,
            self.delivery,
            self.waits,
            seeds=seeds,
            save=self.save,
            change=self.change,
        )
        #: how the room ends: closing, idle, shutdown, stepping down (app/rooms/closing.py)
        self.closing = Closing(
            self, self.members, self.table, self.delivery, self.waits, clock, save=self.save
        )
        #: who holds a place, on which device (app/rooms/places.py)
        self.places = Places(
            self, self.members, self.table, self.delivery, self.quiet, self.presence, self.closing
        )
        #: where turn nudges go (app/rooms/nudges.py; set by the manager when
        #: the server can push), and per seat to act: its turn's number and
        #: whether that turn has had its one nudge
        self.nudge: Callable[[Nudge], None] | None = None
        self.nudges = TurnNudges(
            self.code, self.table, self.members, self.delivery, self.bots, lambda: self.closed
        )
        # the parts' steps the room's callers take (the api, the manager,
        # commands.py), each the part's own: no second signature to keep
        self.join = self.places.join
        self.claim = self.places.claim
        self.release_person = self.places.release_person
        self.remove_person = self.places.remove_person
        self.start = self.dealer.start
        self.repair_tally = self.dealer.repair_tally
        self.away_too_long = self.presence.away_too_long
        self.close_if_idle = self.closing.close_if_idle
        self.shutdown = self.closing.shutdown
        self.room_public = self.delivery.room_public
        self.authenticate = self.members.authenticate

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

    def new_timers(self) -> Timers:
        """The room's waits, made once before any part that holds them (a
        subclass may wait another way, e.g. the simulator's virtual clock)."""
        return Timers(self._locked, self.clock)

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

    # ------------------------------------------------------------- recovery

    async def restore_game(self, rec: GameRecord) -> None:
        """Rebuild the live game after a restart (Dealer)."""
        await self.dealer.restore_game(rec)

    # ----------------------------------------------------------- membership

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
        self.closing.idle_since = None
        if not self.delivery.add(conn, since):  # another tab of someone here
            self.delivery.send_view(conn)
            return True
        events = await self.presence.came_back(player)
        self.reschedule()
        self.change(events)
        return True

    async def disconnect(self, conn: Connection) -> None:
        async with self.lock:
            if not self.delivery.remove(conn):
                return
            self.closing.mark_idle()
            player = self.members.players.get(conn.player_id)
            if player is None or self.closed:
                return
            events = self.presence.went(player)
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
                    people, asked = self.members.snapshot(), self.saver.asked
                    data = await run_command(self, conn, player, payload)
                    changed = self.members.snapshot() != people or self.saver.asked != asked
                    if not self.stored and changed:
                        # done here, and stored as soon as storage takes it: but
                        # a crash before then would lose it, so it is not acknowledged
                        # (nor is asking again for what the room holds unsaved)
                        raise RoomError("storage_error", "not saved yet; it is retried")
            except (RoomError, IllegalAction) as err:
                refused = err.code
                conn.push(self.error_frame(msg_id, err))
                self.closing.check_moved(err)
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
            await self.dealer.finish(result, extra)
        # presence waits change only when the game ends, not with every move
        self.waits.reschedule(presence=result is not None)
        self.change([*events, *extra], room_changed=result is not None)

    # ------------------------------------------------------- timers and bots

    def reschedule(self, *, presence: bool = True) -> None:
        """Bring the waits in line with the state just committed (Waits)."""
        self.waits.reschedule(presence=presence)

    async def _locked(self, step: Callable[[], Awaitable[None]]) -> None:
        """How a timer's callback runs: under the lock, one change at a time."""
        logs.in_room(self.code, self.table.public_id)
        async with self.lock:
            if not self.closed or not self.stored:  # a closed room's last save retries
                await step()

    # ------------------------------------------------------------- delivery

    def change(
        self, events: list[Event], *, with_view: bool = True, room_changed: bool = True
    ) -> None:
        """Everything a change tells anyone goes out here (Delivery.change)."""
        self.delivery.change(events, with_view=with_view, room_changed=room_changed)
        if self.nudge is not None:
            self.nudges.nudge_turns(self.nudge)

    # ------------------------------------------------------------ lifecycle

    async def close(self) -> None:
        """Close for good (Closing)."""
        await self.closing.close()

    async def save(self) -> None:
        """Save the room's people now (app/rooms/saving.py: refused for a newer
        owner, retried later and later on any other failure)."""
        await self.saver.save()

    @property
    def stored(self) -> bool:
        """Storage holds the room's people as they are now (no save pending)."""
        return self.saver.stored
