"""The waits a committed state calls for: the game's own timer, the turn
timer, a wait per seat a bot drives, and the quiet passes - each started,
kept or dropped after every change (`reschedule`), and what the game and
turn timers do when they fire.

`Waits` is one room's.  It holds the room's fixed parts and keeps its slots
in the room's `Timers` ("game", "turn", "quiet", "bot:<seat>"), so every wait
fires under the room's lock; the bots' own slots run `BotDriver`'s callbacks,
and the presence wait is `Presence`'s (asked along, unless the caller knows it
is unchanged).  `reschedule` runs on every action, so what the host and the
room's life cycle switch (its settings, when they changed, whether the room
is closed) it reads as attributes of the room (`RoomSwitches`), not through
calls.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from app.games.base import Event, IllegalAction
from app.rooms.bot_driver import BotDriver
from app.rooms.clock import Clock
from app.rooms.errors import RoomError
from app.rooms.events import room_event
from app.rooms.membership import Membership
from app.rooms.presence import Presence
from app.rooms.settings import RoomSettings
from app.rooms.table import Table
from app.rooms.timers import Backoff, Timer, Timers

#: the slots of the bots' waits, by seat, named once rather than on every action
_BOT_SLOTS = tuple(f"bot:{seat}" for seat in range(8))

log = logging.getLogger(__name__)


class RoomSwitches(Protocol):
    """What the waits read of the room itself (app/rooms/room.py's `Room` is
    one): its settings, when the host last changed them, and whether it is
    closed."""

    @property
    def settings(self) -> RoomSettings: ...

    @property
    def settings_at(self) -> float: ...

    @property
    def closed(self) -> bool: ...


class Waits:
    def __init__(
        self,
        code: str,
        room: RoomSwitches,
        table: Table,
        members: Membership,
        timers: Timers,
        bots: BotDriver,
        presence: Presence,
        clock: Clock,
        *,
        play: Callable[[int | None, dict[str, Any]], Awaitable[None]],
        check_moved: Callable[[Exception], bool],
        change: Callable[[list[Event]], None],
        jitter: random.Random,
        retry: Backoff,
    ) -> None:
        self.code = code
        self.room = room
        self.table = table
        self.members = members
        self.timers = timers
        self.bots = bots
        self.presence = presence
        self.clock = clock
        #: the room's own steps: a move under its lock (a timeout), stepping
        #: down for a newer owner, and telling everyone of a change
        self.play = play
        self._check_moved = check_moved
        self.change = change
        #: the room's: bots' delays and retries are seeded in tests, and a
        #: failed move of any kind backs the next retry off
        self._jitter = jitter
        self._retry = retry
        #: the game timer's key: bumped as it fires, so the next wait is a new
        #: one, and put back when its timeout fails, so the retry is the same wait
        self._timer_epoch = 0

    def reschedule(self, *, presence: bool = True) -> None:
        """Bring timers and bot moves in line with the state just committed
        (and the presence wait, unless the caller knows it is unchanged)."""
        timers, table = self.timers, self.table
        if not table.playing or self.room.closed:
            for slot in ("game", "turn", "quiet", *timers.slots("bot:")):
                timers.drop(slot)
            self.presence.schedule()
            return
        now = self.clock()
        # a wait counts from the change that started it (after a restart, the
        # last action stored): it resumes with the time it had left
        since = table.changed_at
        kind = table.game.timer(table.state)
        if kind is None:
            timers.drop("game")
        else:
            secs = self.room.settings.timer_seconds(kind)
            timers.start("game", kind, since + secs, self._on_game_timer, key=self._timer_epoch)
        to_act = table.to_act
        limit = self.room.settings.turn_timer
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
                max(since, self.room.settings_at) + limit,
                self._on_turn_timer,
                key=frozenset(to_act),
                seat=seat,
            )
        for seat in to_act:
            slot = _BOT_SLOTS[seat] if seat < len(_BOT_SLOTS) else f"bot:{seat}"
            if timers.get(slot) is None and self.bots.bot_drives(seat):
                delay = self.bots.pace(self.room.settings.bot_delay)
                delay *= self._jitter.uniform(0.5, 1.5)
                timers.start(slot, "bot", now + delay, self.bots.on_bot, key=table.seq, seat=seat)
        if self.bots.quiet_passes():
            timers.start("quiet", "quiet", now, self.bots.on_quiet, key=table.seq)
        else:
            timers.drop("quiet")
        if presence:
            self.presence.schedule()

    def timer_json(self) -> dict[str, Any] | None:
        """The game's or the turn's wait, as the room's view shows it."""
        t = self.timers.get("game") or self.timers.get("turn")
        return t.as_json(self.clock()) if t is not None else None

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

    def stop(self) -> None:
        """Every wait dropped, and every bot's thinking with them."""
        self.timers.drop_all()
        self.bots.drop_thoughts()
