"""Who is away, and what their grace ends in: the room's presence wait, a
bot taking over the seat of someone away too long (when the room says so),
and a host away too long handing the role on.

`Presence` is one room's.  It reads the people (`Membership`, which records
who went when and with what grace) and the table, and keeps the one
`presence` wait in the room's `Timers` on the next grace to end, so it fires
under the room's lock like every other change.  The room calls `schedule`
whenever who is here, the game or the settings change, and `came_back` and
`went` as someone's first socket opens and last one closes; it gives
`Presence` its own steps: saving, bringing the other waits in line
(`reschedule`), and the one `change` that tells everyone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from app.games.base import Event
from app.rooms.clock import Clock
from app.rooms.events import room_event
from app.rooms.membership import Membership
from app.rooms.settings import RoomSettings
from app.rooms.table import Table
from app.rooms.timers import Timer, Timers
from app.store.records import PlayerRecord


class Presence:
    def __init__(
        self,
        members: Membership,
        table: Table,
        timers: Timers,
        clock: Clock,
        *,
        settings: Callable[[], RoomSettings],
        closed: Callable[[], bool],
        save: Callable[[], Awaitable[None]],
        reschedule: Callable[[], None],
        change: Callable[[list[Event]], None],
    ) -> None:
        self.members = members
        self.table = table
        self.timers = timers
        self.clock = clock
        #: the room's: its settings change (the host's), and it closes
        self._settings = settings
        self._closed = closed
        #: the room's own steps: saving its people, bringing the other waits
        #: in line with a change, and telling everyone of it
        self.save = save
        self.reschedule = reschedule
        self.change = change

    @property
    def settings(self) -> RoomSettings:
        return self._settings()

    @property
    def closed(self) -> bool:
        return self._closed()

    def away_too_long(self, pid: str, grace: float | None = None) -> float:
        """Seconds until `pid` has been away past their grace, the one fixed
        when they went, or `grace` (<= 0: they have; inf: they are here)."""
        ends = self.members.grace_ends(pid, grace)
        return float("inf") if ends is None else ends - self.clock()

    async def pass_host_if_overdue(self) -> list[Event]:
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

    def schedule(self) -> None:
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
            # the next person who connects takes it (`came_back`)
            due.append(host_ends)
        if due:
            when = min(due)
            # keyed by the game too: a new game seats people again, and one
            # away since before it is due at once, though that moment has fired
            key = (when, table.games_played)
            self.timers.start("presence", "presence", when, self._on_presence, key=key)
        else:
            self.timers.drop("presence")

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
        events += await self.pass_host_if_overdue()
        self.reschedule()
        if events:
            self.change(events)

    async def came_back(self, player: PlayerRecord) -> list[Event]:
        """`player`'s first socket opened: they are here again, the bot that
        stood in for them steps aside at once, and an overdue host role
        passes on."""
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
        events += await self.pass_host_if_overdue()
        return events

    def went(self, player: PlayerRecord) -> list[Event]:
        """`player`'s last socket closed: their grace starts, and the presence
        wait is set for it."""
        self.members.left(player.player_id, self.settings.disconnect_grace)
        events: list[Event] = []
        seat = self.table.seat_of(player.player_id)
        if seat is not None and not player.is_bot:
            events.append(room_event("away", seat=seat, name=player.name))
        self.schedule()
        return events
