"""The invariants the simulator checks after every step.

Each check is a method named for what it guards; a failure raises
`Broken(check, what)` and the runner adds the seed, the room and the step.
To add one: a method here, called from `after_step` (or `crash_check` for
what must hold across a rebuild), that raises `Broken` with what it saw.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.games.base import Game
from app.rooms.delivery import HISTORY_MAX
from app.rooms.room import Room
from app.store.records import RoomRecord
from tests.api.client import cards_in
from tests.rooms.knowledge import KNOWN, parts, revealed

if TYPE_CHECKING:
    from tests.sim.world import Sim

#: timer firings a room may make in one step besides those its moves explain,
#: and per simulated minute (retries under a storage outage back off to 2 a
#: minute per wait; a spin fires hundreds of times a minute)
FIRINGS_FREE = 20
#: per move: 3, or one for each other seat at a bigger table (a Posso window
#: wakes every other seat's bot to answer it: at a 10-seat table at the
#: fastest pace, where no minutes pass, that is 9 firings a discard)
FIRINGS_PER_MOVE = 3
FIRINGS_PER_MINUTE = 12
#: log lines and event-loop iterations in one step: free, per move or frame,
#: per simulated minute (a retry under an outage logs once and backs off)
LOGS_FREE = 40
LOGS_PER_MOVE = 2
LOGS_PER_MINUTE = 12
LOOP_FREE = 3000
LOOP_PER_MOVE = 40
LOOP_PER_MINUTE = 600
#: no wait of a room lies further ahead than this (longest timer + backoff cap)
FURTHEST_WAIT = 3600.0


class Broken(AssertionError):
    def __init__(self, check: str, what: str) -> None:
        super().__init__(f"[{check}] {what}")
        self.check = check


@dataclass
class Before:
    room: Room | None
    fired: int
    seq: int
    game_id: int | None
    at: float
    frames: int
    idle: bool
    saves: int = 0
    logged: int = 0
    iterations: int = 0
    moves: int = 0


class Checks:
    def __init__(self, sim: Sim, game: Game[Any]) -> None:
        self.sim = sim
        self.game = game
        self._known: dict[tuple[int, int | None, str], Counter[str]] = {}
        self._either: dict[tuple[int, int, int | None], Counter[str]] = {}
        self.frames_checked = 0

    def before_step(self) -> Before:
        room = self.sim.live_room()
        sim = self.sim
        if room is None:
            return Before(
                None, 0, 0, None, sim.clock(), len(sim.frames), False, 0, sim.logged,
                sim.iterations, sim.watch.moves,
            )  # fmt: skip
        return Before(
            room,
            _work(room),
            room.table.seq,
            room.table.game_id,
            self.sim.clock(),
            len(self.sim.frames),
            idle=not room.delivery.conns and not room.table.playing,
            saves=room.timers.fired["save"],
            logged=sim.logged,
            iterations=sim.iterations,
            moves=sim.watch.moves,
        )

    def after_step(self, before: Before) -> None:
        if self.sim.watch.violation is not None:
            raise self.sim.watch.violation
        room = self.sim.live_room()
        self.hidden_cards(before.frames)
        self.nothing_lost()
        if room is None or room.closed:
            return
        self.no_busy_work(before, room)
        self.never_stuck(room)
        self.people(room)
        self.bounded(room)
        self.sim.watch.observe(room)
        self.sim.watch.deadlines(room)

    def at_end(self) -> None:
        """After the calm: every check once more, and what is pending settled -
        storage has been healthy for two minutes, so the room's people are
        stored as they are, and storage holds everything acknowledged."""
        self.after_step(self.before_step())
        sim = self.sim
        assert sim.storage is not None
        for fault, n in sim.storage.seen.items():
            sim.coverage["fault:" + fault] += n
        room = sim.live_room()
        stored = sim.storage.peek_room(sim.code)
        if (
            room is not None
            and not room.closed
            and people(stored) != people(room.members.snapshot())
        ):
            raise Broken("promises", "storage healthy for two minutes and the room not stored")
        sim.promises_kept()

    # --------------------------------------------------------------- checks

    def no_busy_work(self, before: Before, room: Room) -> None:
        """Timer firings (retried saves included), log lines and the event
        loop's iterations are bounded by a small constant plus the moves made
        and frames sent plus a rate per simulated minute; a room nobody is in,
        with no game in play, does nothing at all and has no wait pending."""
        sim = self.sim
        minutes = (sim.clock() - before.at) / 60
        work = len(sim.frames) - before.frames + sim.watch.moves - before.moves
        logged = sim.logged - before.logged
        if logged > LOGS_FREE + LOGS_PER_MOVE * work + LOGS_PER_MINUTE * minutes:
            raise Broken("no busy work", f"{logged} log lines in {minutes:.1f} min")
        turns = sim.iterations - before.iterations
        if turns > LOOP_FREE + LOOP_PER_MOVE * work + LOOP_PER_MINUTE * minutes:
            raise Broken("no busy work", f"{turns} loop iterations in {minutes:.1f} min")
        if before.room is room:
            fired = _work(room) - before.fired
            moves = room.table.seq - before.seq if room.table.game_id == before.game_id else 50
            per_move = max(FIRINGS_PER_MOVE, len(room.table.game_seats) - 1)
            allowed = FIRINGS_FREE + per_move * max(moves, 0) + FIRINGS_PER_MINUTE * minutes
            if fired > allowed:
                raise Broken(
                    "no busy work",
                    f"{fired} timer firings in {minutes:.1f} min with {moves} moves",
                )
            idle_now = not room.delivery.conns and not room.table.playing
            # storage being away explains retried saves
            waits = fired - (room.timers.fired["save"] - before.saves)
            if before.idle and idle_now and waits:
                raise Broken("no busy work", f"an empty room between games fired {waits} waits")
        if not room.delivery.conns and not room.table.playing:
            pending = [s for s in room.timers.slots("") if s != "save"]  # storage away
            if pending:
                raise Broken("no busy work", f"nobody here, no game, yet waits pending: {pending}")

    def never_stuck(self, room: Room) -> None:
        """A game in play has someone who may act or a wait pending, and every
        wait is due within the longest timer."""
        now = self.sim.clock()
        for slot in room.timers.slots(""):
            t = room.timers.get(slot)
            if t is not None and t.deadline > now + FURTHEST_WAIT:
                raise Broken("never stuck", f"wait {slot} is due in {t.deadline - now:.0f} s")
        table = room.table
        if not table.playing or room.lock.locked():
            return  # the lock's holder is working, within the storage deadline
        pending = set(room.timers.slots(""))
        if not table.to_act and table.over() is None and "game" not in pending:
            raise Broken("never stuck", "nobody may act and no timer is pending")
        for seat in table.to_act:
            if room.bots.bot_drives(seat) and f"bot:{seat}" not in pending:
                raise Broken("never stuck", f"seat {seat} is a bot's to play and no bot waits")

    def nothing_lost(self) -> None:
        """Every acknowledged action is in the stored log at its position."""
        storage = self.sim.storage
        assert storage is not None
        logs: dict[int, list[tuple[int | None, dict[str, Any]]]] = {}
        for a in self.sim.acked:
            log = logs.get(a.game_id)
            if log is None:
                log = logs[a.game_id] = storage.peek_actions(a.game_id)
            if a.seq >= len(log) or log[a.seq] != (a.seat, a.action):
                got = log[a.seq] if a.seq < len(log) else None
                raise Broken(
                    "nothing lost",
                    f"acked action {a.seq} of game {a.game_id} {a.action} is stored as {got}",
                )

    def hidden_cards(self, start: int) -> None:
        """No frame to a seat holds a card that seat may not know (the engines'
        leak check: own hand, public cards, the state just before the change)."""
        for frame in self.sim.frames[start:]:
            if frame.after is None or frame.game not in KNOWN:
                continue
            before = self._knows(frame.before, frame.seat, frame.game)
            after = self._knows(frame.after, frame.seat, frame.game)
            # the cards a seat just showed from its hand are copies over and
            # above what was known before (two 5H in one set, several decks)
            shown = revealed(frame.game, frame.before, frame.msg)
            if shown:
                allowed = (before + shown) | after
            else:
                key = (id(frame.before), id(frame.after), frame.seat)
                allowed = self._either.get(key) or self._either.setdefault(key, before | after)
            found = _leaks(allowed, frame.msg)
            if found:
                raise Broken(
                    "hidden cards",
                    f"a frame to seat {frame.seat} ({frame.device.person.name}) shows {found}",
                )
            self.frames_checked += 1
        if len(self._known) > 4096:
            self._known.clear()
            self._either.clear()

    def _knows(self, state: Any, seat: int | None, game: str) -> Counter[str]:
        # the state just before a change may be the last game's, of another
        # game or with other seats: it holds nothing this frame could show
        if state is None or type(state).__module__.split(".")[2:3] != [game]:
            return Counter()
        if seat is not None and seat >= len(state.hands):
            return Counter()
        key = (id(state), seat, game)  # frames keep their states alive: ids stay unique
        if key not in self._known:
            self._known[key] = KNOWN[game](state, seat)
        return self._known[key]

    def people(self, room: Room) -> None:
        """One host while anyone is here; dead tokens open nothing; a seat is
        played by its person, or a bot, never both."""
        members = room.members
        humans = members.humans()
        host = members.host
        if humans and (host not in members.players or members.players[host].is_bot):
            raise Broken("people", f"{len(humans)} people here and the host is {host!r}")
        for person in self.sim.people:
            for token in person.dead_tokens:
                if room.authenticate(token) is not None:
                    raise Broken("people", f"a dead token of {person.name} still authenticates")
        seated = [pid for pid in members.seats if pid is not None]
        if len(seated) != len(set(seated)):
            raise Broken("people", f"one person in two seats: {members.seats}")
        for pid in room.delivery.conns:
            seat = room.table.seat_of(pid)
            if seat is not None and seat in room.table.auto:
                raise Broken("people", f"seat {seat} is connected and a bot stands in for it")

    def bounded(self, room: Room) -> None:
        """What a room keeps stays within its caps however long it lives."""
        members = room.members
        checks = {
            "event history": (len(room.delivery.history), HISTORY_MAX),
            "names": (len(members.names), len(members.players) + len(members.record.tally)),
            "claims": (len(members.claims), len(members.players)),
            "away": (len(set(members.away_since) - set(members.players)), 0),
            "seat order": (len(set(members.seated_at) - set(members.seats)), 0),
            "chat allowances": (len(set(members.chatter) - set(members.players)), 0),
            # (a test reading the switches' own map: QuietPosso shows no count)
            "posso switches": (len(set(room.quiet._prefs) - set(members.players)), 0),
            "waits": (len(room.timers.slots("")), len(members.seats) + 4),
        }
        for what, (size, cap) in checks.items():
            if size > cap:
                raise Broken("bounded memory", f"{what}: {size} > {cap}")


def _leaks(allowed: Counter[str], msg: dict[str, Any]) -> list[str]:
    """tests/rooms/knowledge.py's `leaks`, with a fast path for the common
    part that names each card once (a simulated evening sends many frames)."""
    found: list[str] = []
    for name, part in parts(msg):
        cards = cards_in(part)
        if len(set(cards)) == len(cards):
            unknown = [c for c in cards if not allowed[c]]
            if unknown:
                found.append(f"{name}: {unknown}")
            continue
        extra = Counter(cards) - allowed
        if extra:
            found.append(f"{name}: {dict(extra)}")
    return found


def people(record: RoomRecord | None) -> Any:
    """What a stored room says of its people, settings and game, as a
    database gives it back (None: not stored, or closed).  Not their seats:
    during a game a rebuilt room seats people as its game record says, and
    stores that with its next change; nor bots, which a rebuild adds back
    from the game record the same way."""
    if record is None or record.closed:
        return None
    who = sorted((p.player_id, p.token_hash) for p in record.players if not p.is_bot)
    return who, record.host_player_id, record.game, record.settings


def _work(room: Room) -> int:
    """Timer firings, retried saves included (they back off: 2 a minute at most)."""
    return sum(room.timers.fired.values())


def crash_check(sim: Sim, old: Room, new: Room) -> None:
    """After a rebuild the game is the one the survivors saw, or one move
    further: a move whose append was in flight at the crash (stored, never
    told) - a room applies one move at a time, so never more than one.  The
    rebuilt game is the stored log, whole; the series tally is what it was."""
    if old.table.playing and old.table.game_id == new.table.game_id:
        assert sim.storage is not None and old.table.game_id is not None
        stored = len(sim.storage.peek_actions(old.table.game_id))
        if new.table.seq != stored:
            raise Broken("nothing lost", f"rebuilt at action {new.table.seq}, {stored} stored")
        if stored == old.table.seq:
            if old.game.view(new.state, None) != old.game.view(old.state, None):
                raise Broken("nothing lost", "the rebuilt game differs from the one played")
        elif stored != old.table.seq + 1:
            raise Broken("nothing lost", f"{stored} actions stored, played to {old.table.seq}")
    in_flight = new.table.seq != old.table.seq
    if new.record.tally != old.record.tally and not in_flight:
        raise Broken("nothing lost", f"tally {old.record.tally} became {new.record.tally}")
