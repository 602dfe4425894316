"""Who moved, and when: every logged action's cause, and the deadlines a room
promised, judged from what the simulator saw rather than from the room's own
bookkeeping.

Every move reaches storage through `append_action`; `FaultyRecords` calls
`Watch.on_append` first, with the cause of the move in `ORIGIN`: the
simulator sets it around each message a device sends (a person), and
`SimTimers` sets it in the task each of a room's waits runs in (a timer of a
kind: a bot, a turn timer, a game timer, the quiet pass).  A context
variable carries it because a timer's task copies the context it was made
in; setting it inside that task touches nothing else.

Deadlines are checked as states that must not last: a person to act past
the turn timer, a seat away past the grace with `auto_bot` on, a host away
past the host grace with someone here to take the role, a game timer's wait
past its seconds, a room nobody has been in past the idle close.  Each is
timed from when the simulator first saw it (a change the room sent, or the
end of a step), never from the room's own "since", and allowed a small slack,
or more when storage was in trouble meanwhile (a timeout needs a write; a
write may hang until the storage deadline while the room's lock is held).
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.games.base import Event
from app.rooms.room import Room
from app.rooms.settings import FASTEST_BOT_DELAY, LOBBY_HOST_GRACE
from app.rooms.timers import Timer, Timers
from tests.sim.checks import Broken

if TYPE_CHECKING:
    from tests.sim.world import Device, Sim


@dataclass(frozen=True)
class Origin:
    """What caused what happens next: a person through one of their devices,
    or a room's wait of some kind."""

    kind: str  # "person" | "timer"
    what: str  # the person's name, or the wait's kind
    pid: str | None = None
    seat: int | None = None
    device: Device | None = None

    def __str__(self) -> str:
        return f"{self.kind}:{self.what}" + (f"@{self.seat}" if self.seat is not None else "")


ORIGIN: contextvars.ContextVar[Origin | None] = contextvars.ContextVar("sim_origin", default=None)

#: the waits whose firing plays for a seat as a bot
BOT_WAITS = frozenset({"bot", "thought", "think"})
#: the game's own timers (their timeout is logged with no seat)
GAME_WAITS = frozenset({"posso_window", "posso_answer", "cut", "cut_moot"})
#: seconds any promise may be late with storage healthy throughout
SLACK = 2.0
#: a seat link's new device is given at least this much grace (issue 34)
GRACE_FLOOR = 10.0


class SimTimers(Timers):
    """A room's waits, each firing under its own cause, and filed; a bot's
    wait is checked as it fires: it waited at least half the bot delay in
    force when it was set (the delay is drawn from 0.5x to 1.5x), unless its
    own seat's bot set it (a retry backs off from its failure instead).  The
    delay in force is the simulator's own judgement (`Watch.fast`): the
    fastest once a person's turns were announced handed to the bot and no
    seat is left that its person plays - judged both as the wait is set and
    at the change the room sends with it (the room sets its waits, then
    tells), and the lesser owed."""

    def __init__(self, sim: Sim, room: Room, runner: Any, clock: Callable[[], float]) -> None:
        super().__init__(runner, clock)
        self.sim = sim
        self.room = room
        #: per wait: when it was set and the least delay it owed
        self._set: dict[int, tuple[float, float]] = {}
        #: bots' waits set since the room last told anyone anything
        self.fresh: list[int] = []

    def start(
        self,
        slot: str,
        kind: str,
        deadline: float,
        fire: Callable[[Timer], Awaitable[None]],
        *,
        key: object = None,
        seat: int | None = None,
    ) -> Timer:
        old = self.get(slot)
        t = super().start(slot, kind, deadline, fire, key=key, seat=seat)
        if t is not old and kind == "bot":
            # set by this seat's own bot (a retry after storage failed it, or
            # its next move): owed nothing checked here
            cause = ORIGIN.get()
            own = cause is not None and cause.what in BOT_WAITS and cause.seat == seat
            self._set[id(t)] = (self.clock(), 0.0 if own else self.owed())
            self.fresh.append(id(t))
        return t

    def owed(self) -> float:
        """The least a bot's wait set now owes: half the delay in force."""
        fast = self.sim.watch.fast(self.room)
        if fast:
            self.sim.coverage["autoplay:fast"] += 1
        return 0.5 * (FASTEST_BOT_DELAY if fast else self.room.settings.bot_delay)

    def settled(self) -> None:
        """The room told what its waits were set for: each set since owes
        the lesser of then and now."""
        for key in self.fresh:
            if key in self._set:
                at, floor = self._set[key]
                self._set[key] = (at, min(floor, self.owed()))
        self.fresh.clear()

    async def _fire(self, t: Timer, fire: Callable[[Timer], Awaitable[None]]) -> None:
        ORIGIN.set(Origin("timer", t.kind, seat=t.seat))
        self.sim.coverage["wait:" + t.kind] += 1
        if t.kind == "bot" and self.get(t.slot) is t:
            at, floor = self._set.pop(id(t), (self.clock(), 0.0))
            waited = self.clock() - at
            if waited < floor - 1e-6:
                self.sim.watch.fail(
                    "origin",
                    f"a bot's wait for seat {t.seat} fired {waited:.3f} s after it was set "
                    f"(the bot delay is at least {floor:.3f} s)",
                )
        await super()._fire(t, fire)


class Watch:
    """The simulator's own record of who is here and since when, and the
    checks it makes of every move and every promised deadline."""

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        #: people told they left or were removed
        self.removed: set[str] = set()
        #: since when each person has had no open socket to the room
        self.away_at: dict[str, float] = {}
        #: since when nobody at all has had an open socket to the room
        self.idle_at: float | None = None
        #: per key (what a promise waits on, as first seen): when it was first seen
        self.since: dict[tuple[Any, ...], float] = {}
        #: (time, disconnect grace, bot delay, auto bot) as settings were seen to change
        self.settings_seen: list[tuple[float, float, float, bool]] = []
        #: the first check failed inside the room's own code
        self.violation: Broken | None = None
        #: moves logged, timeouts the game timers made, and each seat's bot moves
        self.moves = 0
        self._timeouts = 0
        #: seats whose person the room announced handed their turns to the bot
        #: (`autoplay_on`), by (room, game, seat), until the sim saw the hand
        #: end or the person take them back: a room rebuilt is another room
        self.autoplay: set[tuple[int, int | None, int]] = set()

    def fail(self, check: str, what: str) -> Broken:
        """The failure to raise - and kept: a check that fails inside one of
        the room's own tasks (a bot's wait) is caught and logged by the
        room's timer, so the next step's checks raise it again."""
        err = Broken(check, what)
        if self.violation is None:
            self.violation = err
        return err

    # ------------------------------------------------------------ bookkeeping

    def _first(self, key: tuple[Any, ...], now: float) -> float:
        return self.since.setdefault(key, now)

    def observe(self, room: Room) -> None:
        """Note what the room is waiting on now (called at every change the
        room sends and at the end of every step)."""
        sim = self.sim
        now = sim.clock()
        s = room.settings
        seen = (s.disconnect_grace, s.bot_delay, s.auto_bot)
        if not self.settings_seen or self.settings_seen[-1][1:] != seen:
            self.settings_seen.append((now, *seen))
        here = sim.here(room)
        for person in sim.people:
            if person.pid in here:
                self.away_at.pop(person.pid, None)
            else:
                self.away_at.setdefault(person.pid, now)
        if here:
            self.idle_at = None
        elif self.idle_at is None:
            self.idle_at = now
        keep: set[tuple[Any, ...]] = set()
        table = room.table
        if table.playing:
            keep.add(("game_on", table.game_id))
            kind = table.game.timer(table.state)
            to_act = frozenset(table.to_act)
            for seat in to_act:
                if not room.bots.bot_drives(seat):
                    keep.add(("turn", table.game_id, seat, to_act, kind))
                keep.add(("to_act", table.game_id, seat, to_act))
            if kind is not None:
                keep.add(("game", table.game_id, kind, self._timeouts))
        host = room.members.host
        if host is not None and host in self.away_at:
            keep.add(("host", id(room), host, bool(room.members.heir()), table.playing))
        if s.auto_bot:
            keep.add(("auto_bot",))
        for key in keep:
            self._first(key, now)
        for key in [k for k in self.since if k not in keep and k[0] != "born"]:
            del self.since[key]

    def born(self, room: Room) -> float:
        return self._first(("born", id(room)), self.sim.clock())

    def slack(self, since: float) -> float:
        """How late a promise made at `since` may be: a little, or, if storage
        was in trouble meanwhile, the trouble plus the longest retry and a few
        writes hanging to their deadline."""
        from tests.sim.world import DEADLINE

        storage = self.sim.storage
        assert storage is not None
        now = self.sim.clock()
        end = storage.trouble_end(now)
        if end is None or end < since:
            return SLACK + (DEADLINE if storage.hung_since(since) else 0.0)
        return SLACK + (end - since) + 30.0 + 3 * DEADLINE

    def _in_force(self, since: float, field: int) -> list[float]:
        """Each value of a setting (its place in `settings_seen`) in force at
        any time since `since`."""
        seen = [row[field] for row in self.settings_seen if row[0] >= since]
        before = [row[field] for row in self.settings_seen if row[0] < since]
        return seen + before[-1:]

    def _grace_ceiling(self, since: float) -> float:
        return max(self._in_force(since, 1), default=0.0)

    def told(self, room: Room, events: list[Event]) -> None:
        """What a change told everyone: "play my turns this hand" set by the
        seat's own person (and nobody else), ended by them or by the hand."""
        table = room.table
        for ev in events:
            if ev.get("to") is not None:
                continue
            # the hand's end: a Posso hand's, or a game of one deal's
            if ev.get("type") == "hand_ended" or ev.get("what") == "finished":
                ended = {k for k in self.autoplay if k[:2] == (id(room), table.game_id)}
                self.sim.coverage["autoplay:hand_over"] += bool(ended)
                self.autoplay -= ended
            if ev.get("type") != "room" or ev.get("what") not in ("autoplay_on", "autoplay_off"):
                continue
            key = (id(room), table.game_id, int(ev["seat"]))
            if ev["what"] == "autoplay_off":
                self.autoplay.discard(key)
                continue
            origin = ORIGIN.get()
            holder = table.game_seats[key[2]]
            if origin is None or origin.kind != "person" or origin.pid != holder:
                name = room.members.names.get(holder, holder)
                raise self.fail("origin", f"{origin} put {name}'s seat on autoplay")
            self.autoplay.add(key)

    def fast(self, room: Room) -> bool:
        """Bots go at the fastest delay: some seat's person handed their
        turns to the bot (as the room announced), and every seat is a bot's
        or a person's a bot stands in for."""
        table = room.table
        mine = {k[2] for k in self.autoplay if k[:2] == (id(room), table.game_id)}
        if not table.playing or not mine:
            return False
        for seat, pid in enumerate(table.game_seats):
            p = room.members.players.get(pid)
            bot = p is None or p.is_bot or seat in table.auto or seat in table.forced
            if not bot and seat not in mine:
                return False
        return True

    # ------------------------------------------------------------ every move

    def on_append(self, seat: int | None, action: dict[str, Any]) -> None:
        """A move on its way to the log: it must have a cause that may make it."""
        sim = self.sim
        room = sim.live_room()
        origin = ORIGIN.get()
        self.moves += 1
        if origin is None:
            raise self.fail("origin", f"seat {seat} played {action} and nobody caused it")
        sim.coverage[f"move:{origin.kind}:{origin.what if origin.kind == 'timer' else ''}"] += 1
        if room is None:
            return
        if origin.kind == "person":
            self._person_move(room, origin, seat, action)
        elif origin.what in BOT_WAITS:
            self._bot_move(room, origin, seat, action)
        elif origin.what in GAME_WAITS:
            if seat is not None or action.get("type") != "timeout":
                raise self.fail("origin", f"a {origin.what} wait played {action} for seat {seat}")
            self._timeouts += 1
        elif origin.what == "quiet":
            if action.get("type") != "pass_posso":
                raise self.fail("origin", f"the quiet pass played {action} for seat {seat}")
        else:
            raise self.fail("origin", f"a {origin.what} wait played {action} for seat {seat}")
        if origin.kind != "person":
            sim.note(f"move by {origin}: seat {seat} {action}")

    def _person_move(
        self, room: Room, origin: Origin, seat: int | None, action: dict[str, Any]
    ) -> None:
        assert origin.pid is not None
        if origin.pid in self.removed:
            raise self.fail("origin", f"{origin.what}, told they were out, played {action}")
        device = origin.device
        if device is not None and not device.open:
            closed = "from a socket the room closed"
            raise self.fail("origin", f"{origin.what} played {action} {closed}")
        holds = room.table.game_seat.get(origin.pid)
        if seat is None or seat != holds:
            what = f"{origin.what} holds seat {holds}"
            raise self.fail("origin", f"{what} and played for seat {seat}")

    def _bot_move(
        self, room: Room, origin: Origin, seat: int | None, action: dict[str, Any]
    ) -> None:
        sim = self.sim
        now = sim.clock()
        if seat is None or seat != origin.seat:
            raise self.fail("origin", f"a bot's wait for seat {origin.seat} played seat {seat}")
        table = room.table
        pid = table.game_seats[seat]
        if pid in sim.here(room) and pid not in self.removed:
            name = room.members.names.get(pid, pid)
            if (id(room), table.game_id, seat) in self.autoplay:
                sim.coverage["move:autoplay"] += 1
                return
            if seat not in table.forced:
                raise self.fail("origin", f"a bot played {action} for {name}, who is here")
            limit = room.settings.turn_timer
            began = self.since.get(("to_act", table.game_id, seat, frozenset(table.to_act)))
            # a turn first seen as the room was rebuilt resumes from the stored
            # time of the move before it (by design), and a write hanging
            # under the lock shows a turn late: judged only without either
            rebuilt = began is not None and began <= self.born(room) + 1e-6
            clear = began is not None and not rebuilt and self.slack(began - 60) == SLACK
            early = clear and began is not None and now < began + (limit or 0) - 1e-6
            if limit is None or early:
                raise self.fail("origin", f"{name}'s turn was handed to a bot before its timer")

    # -------------------------------------------------------------- deadlines

    def deadlines(self, room: Room) -> None:
        """No promised deadline is overdue (at the end of every step)."""
        if room.closed:
            return
        sim = self.sim
        now = sim.clock()
        born = self.born(room)
        table, settings, members = room.table, room.settings, room.members
        # a room rebuilt after a crash catches up at once, from its birth
        for key, since in list(self.since.items()):
            start = max(since, born)
            if key[0] == "turn" and settings.turn_timer is not None and key[4] is None:
                due = start + settings.turn_timer
                if now > due + self.slack(start):
                    raise self.fail(
                        "deadlines", f"seat {key[2]}'s turn timer is {now - due:.0f} s late"
                    )
            elif key[0] == "game":
                secs = max(settings.timer_seconds(key[2]), 0.0)
                due = start + secs
                if now > due + self.slack(start):
                    raise self.fail("deadlines", f"the {key[2]} wait is {now - due:.0f} s late")
            elif key[0] == "host" and key[1] == id(room) and key[3]:
                # the grace the host had when they went (the most any setting in
                # force since gave), shortened between games
                grace = self._grace_ceiling(start)
                due = start + (grace if key[4] else min(grace, LOBBY_HOST_GRACE))
                if now > due + self.slack(start):
                    late = f"{now - due:.0f} s late"
                    raise self.fail("deadlines", f"an away host kept the role {late}")
        if table.playing and settings.auto_bot:
            for seat, pid in enumerate(table.game_seats):
                p = members.players.get(pid)
                away = self.away_at.get(pid)
                if p is None or p.is_bot or away is None or seat in table.auto:
                    continue
                start = max(
                    away,
                    born,
                    self.since.get(("game_on", table.game_id), born),
                    self.since.get(("auto_bot",), born),
                )
                grace = max(self._grace_ceiling(start), GRACE_FLOOR)
                due = start + grace
                if now > due + self.slack(start):
                    raise self.fail(
                        "deadlines",
                        f"seat {seat} has been away {now - away:.0f} s and no bot took it over",
                    )
        if self.idle_at is not None:
            from tests.sim.world import IDLE_CLOSE, SWEEP_EVERY

            start = max(self.idle_at, born)
            due = start + IDLE_CLOSE + SWEEP_EVERY
            if now > due + self.slack(start):
                raise self.fail("deadlines", f"nobody here for {now - start:.0f} s and not closed")
