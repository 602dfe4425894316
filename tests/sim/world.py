"""A seeded simulation of one room's life: people, devices, moves, commands,
storage faults, crashes and time, all decided by one seed.

The room runs as in the server - `RoomManager`, `Room`, its timers and bots,
`TimedRecords` in front of storage - on an event loop whose clock `looptime`
fast-forwards: when nothing is ready to run, the loop jumps to its next
timer, so an hour of a room's life takes milliseconds.  The rooms' wall clock
is that loop time plus a fixed start (`app/rooms/clock.py`), so the
deadlines a room stores and shows and the loop timers that wait for them
agree, as they do in the server.  We use looptime for the loop rather than
a second fake (time-machine) for wall time because the rooms read wall time
only through their injected clock: one clock, one source of truth.

Each step does one thing a person, the network, storage or time could do,
writes one line to the trace, then runs every check in checks.py.  A crash
ends every task in the loop but the simulator's own (as a killed process
would), then a new manager rebuilds the room from what was stored, and the
devices reconnect with their tokens.
"""

from __future__ import annotations

import asyncio
import logging
import random
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import looptime
import orjson

from app.bots import bot_for
from app.bots.thinking import InlineThinker, Job
from app.games import GAMES
from app.games.base import Game
from app.rooms.connection import Connection
from app.rooms.delivery import HISTORY_MAX, Resume
from app.rooms.errors import RoomError
from app.rooms.manager import IDLE_SWEEP_EVERY, RoomManager, SocketTarget
from app.rooms.room import Room
from app.rooms.timers import Timers
from app.rooms.tokens import token_hash
from app.store.timed import TimedRecords
from tests.rooms.harness import SpyRoom
from tests.sim.checks import Broken
from tests.sim.faults import DbThread, FaultyRecords, StorageDown, postgres_url, sqlite_url
from tests.sim.promises import ORIGIN, Origin, SimTimers, Watch

#: wall-clock time at which every simulated room starts (any fixed moment)
START = 1_900_000_000.0
#: how long a simulated write may take before the room gives up on it
DEADLINE = 10.0
#: the server's idle close, as configured by default (three days)
IDLE_CLOSE = 3 * 24 * 3600.0
#: kinds of run: an evening's play; hundreds of people passing through one
#: room; days of absence, so the room closes as idle
FLAVORS = ("evening", "churn", "days")
#: how many people may pass through a room in a churn run (others: 8)
CHURN_PEOPLE = 200
#: the commands only the host may give (sent from the host's device half the time)
HOST_COMMANDS = frozenset(
    {"start", "add_bot", "remove_bot", "kick", "set_game", "set_settings", "make_host"}
)
#: strong bots' search budgets (playouts), one drawn per run: small, so a
#: run stays quick, and a number rather than a time, so a seed replays
PLAYOUTS = (4, 8, 16)
#: the errors the server may log with their traceback: storage failing
EXPECTED = (StorageDown, TimeoutError, OSError, RoomError)
#: loop iterations with the virtual clock standing still that mean a spin
SPIN = 300_000
#: how often the server sweeps for idle rooms at that setting
SWEEP_EVERY = min(IDLE_SWEEP_EVERY, IDLE_CLOSE / 4)

OPTIONS: dict[str, list[dict[str, Any]]] = {
    "bigtwo": [{}],
    "possum": [{}, {"multi": True}],
    # the last hands only: a whole Posso game is thousands of moves
    "posso": [{"start_hand": 10}, {"start_hand": 10, "cutting": "to_win"}, {"start_hand": 9}],
    "possession": [{}, {"open_pile": True}],
}


class SimRoom(SpyRoom):
    """A room that remembers the game state before and after the change being
    sent, so each frame can be judged against what its recipient may know;
    whose waits fire under their own cause (`SimTimers`); and that shows the
    simulator's watch every change it sends."""

    sim: Sim

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: each event frame in the history: the game states it was made
        #: between, and their game (the room may have chosen another since)
        self.made: dict[str, tuple[Any, Any, str]] = {}
        self.sim.watch.born(self)

    def new_timers(self) -> Timers:
        """Every part of the room waits through these (the room makes them
        before its parts)."""
        return SimTimers(self.sim, self, self._locked, self.clock)

    async def restore_game(self, rec: Any) -> None:
        """A rebuilt game: its first change's "before" is the state restored."""
        await super().restore_game(rec)
        self.spy_last = self.state

    async def close(self) -> None:
        self.sim.closed = True
        self.sim.coverage["state:closed"] += 1
        await super().close()

    def change(self, events: Any, *, with_view: bool = True, room_changed: bool = True) -> None:
        states = (self.spy_last, self.state, self.game.name)
        v = self.delivery.v
        self.sim.watch.told(self, events)
        super().change(events, with_view=with_view, room_changed=room_changed)
        self.timers.settled()
        history = self.delivery.history
        if history and history[-1][0] == self.delivery.v != v:
            # each event kept for resuming, with the states it was made from:
            # a resume is judged against them, for the seat its socket holds then
            if len(self.made) > 2 * HISTORY_MAX:
                kept = {frame for _, frames in history for _, frame in frames}
                self.made = {k: x for k, x in self.made.items() if k in kept}
            for _, frame in history[-1][1]:
                self.made[frame] = states
        self.sim.watch.observe(self)


class SimThinker(InlineThinker):
    """Strong bots think at once, with a search budget in playouts (so a seed
    replays), and now and then their thought fails or never comes: the room
    plays the heuristic's move then, at once or at its deadline."""

    def __init__(self, rng: random.Random, playouts: int) -> None:
        super().__init__()
        self.rng = rng
        self.playouts = playouts

    def submit(self, job: Job) -> asyncio.Future[dict[str, Any] | None] | None:
        done: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        fate = self.rng.random()
        if fate < 0.15:
            return done  # the worker never answers
        if fate < 0.18:
            done.set_exception(RuntimeError("the worker died"))
            return done
        bot = bot_for(job.game, job.level, playouts=self.playouts)
        done.set_result(bot.choose(job.view, job.legal, job.seat, random.Random(job.seed)))
        return done


class SimManager(RoomManager):
    room_class = SimRoom


@dataclass
class Frame:
    device: Device
    seat: int | None
    msg: dict[str, Any]
    before: Any
    after: Any
    game: str


class SimSocket:
    def __init__(self) -> None:
        self.closed: tuple[int, str] | None = None

    async def send_text(self, text: str) -> None:
        return None

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


class SimConnection(Connection):
    """A socket's outbound side whose every frame the simulator files."""

    def __init__(self, sim: Sim, device: Device) -> None:
        self.sock = SimSocket()
        super().__init__(self.sock.send_text, self.sock.close, on_dead=self._dropped)
        self.sim = sim
        self.device = device

    def _dropped(self) -> None:
        """The socket died (closed, or too far behind): as the socket route
        does, its handler leaves the room (`Sim.reap`, before the next step)."""
        self.sim.dropped.append(self.device)

    def push_all(self, frames: Any) -> None:
        room = self.sim.live_room()
        ctx = room.spy_ctx if isinstance(room, SpyRoom) else None
        state = room.state if room is not None else None
        before, after = ctx if ctx is not None else (state, state)
        # judged for the seat this socket holds now, whatever it held before
        seat = room.game_seat.get(self.player_id) if room is not None else None
        game = room.game.name if room is not None else ""
        made = room.made if isinstance(room, SimRoom) and ctx is None else {}
        for text in frames:
            msg = self._judge_story(orjson.loads(text), seat, made, (before, after, game))
            # outside a change (a socket opening, a resume) an event comes from
            # the history: judged against the states it was made between
            was = made.get(text) if "event" in msg else None
            if was is not None:
                self.sim.coverage["frame:replayed"] += 1
            b, a, of = was if was is not None else (before, after, game)
            self.sim.frames.append(Frame(self.device, seat, msg, b, a, of))
            if "view" in msg:
                self.device.view = msg["view"]
            if "v" in msg:
                self.device.v = msg["v"]
            if "inc" in msg:
                self.device.inc = msg["inc"]
        super().push_all(frames)

    def _judge_story(
        self,
        msg: dict[str, Any],
        seat: int | None,
        made: dict[str, tuple[Any, Any, str]],
        now: tuple[Any, Any, str],
    ) -> dict[str, Any]:
        """An older page of the story (the `story` command's answer): each
        event in it is judged as its own frame, against the states it was
        made between and their game (the last game's story, after the host
        chose another), for the seat this socket holds now; what is left of
        the answer is judged as any frame is."""
        data = msg.get("data") if "re" in msg else None
        events = data.get("events") if isinstance(data, dict) else None
        if not events:
            return msg
        for event in events:
            was = made.get(orjson.dumps(event).decode())
            self.sim.coverage["frame:story" if was is not None else "frame:story_unmade"] += 1
            b, a, of = was if was is not None else now
            self.sim.frames.append(Frame(self.device, seat, event, b, a, of))
        return {**msg, "data": {**data, "events": []}}


@dataclass(eq=False)
class Device:
    person: Person
    token: str
    conn: SimConnection | None = None
    target: SocketTarget | None = None
    view: dict[str, Any] | None = None
    v: int | None = None
    #: the room's incarnation its versions belong to
    inc: str | None = None
    msg_id: int = 0

    def resume(self) -> Resume | None:
        """Where this device left off, for its next socket."""
        return Resume(self.inc, self.v) if self.inc is not None and self.v is not None else None

    @property
    def open(self) -> bool:
        return self.conn is not None and not self.conn.closing and not self.conn.dead


@dataclass(eq=False)
class Person:
    name: str
    pid: str
    token: str
    devices: list[Device] = field(default_factory=list)
    #: tokens this person had that must not work any more
    dead_tokens: list[str] = field(default_factory=list)
    gone: bool = False
    #: told "storage_error" for their removal: in or out, nothing was promised
    unsure: bool = False


@dataclass
class Acked:
    game_id: int
    seq: int
    seat: int | None
    action: dict[str, Any]


class Sim:
    def __init__(self, seed: int, steps: int, store: str = "memory") -> None:
        self.seed = seed
        self.steps = steps
        self.rng = random.Random(seed)
        self.trace: list[str] = []
        self.frames: list[Frame] = []
        self.people: list[Person] = []
        self.acked: list[Acked] = []
        self.code = ""
        self.step_no = 0
        self.crashes = 0
        #: log lines the server wrote (a room nobody is in writes none)
        self.logged = 0
        self.clock: Callable[[], float] = lambda: START
        self.manager: SimManager | None = None
        self.storage: FaultyRecords | None = None
        #: every room object this run has had (one more per crash), with the
        #: number of its timer firings already judged
        self.fired_seen: dict[int, int] = {}
        self.watch = Watch(self)
        #: the settings and game the host was told they set
        self.acked_settings: dict[str, Any] = {}
        self.acked_game: str | None = None
        self.room_class = type("SimRoom", (SimRoom,), {"sim": self})
        #: how often each command, refusal, wait and room state was reached
        self.coverage: Counter[str] = Counter()
        self.sweeper: asyncio.Task[None] | None = None
        self.flavor = "evening"
        #: devices whose socket died since the last step
        self.dropped: list[Device] = []
        #: the room closed (its last person left, or it sat idle for days)
        self.closed = False
        #: where the room is stored: "memory", or "sqlite" or "postgres" (DbRecords)
        self.store = store
        self.db: DbThread | None = None
        self.thinker: SimThinker | None = None
        #: the event loop's iterations so far, and whether it spun
        self.iterations = 0
        self.spun = False
        self.failed: BaseException | None = None

    # ------------------------------------------------------------------ run

    def run(self) -> None:
        with tempfile.TemporaryDirectory(prefix="sim-") as work:
            if self.store == "sqlite":
                self.db = DbThread(sqlite_url(Path(work)), self._clock)
            elif self.store == "postgres":
                self.db = DbThread(postgres_url(), self._clock)
            try:
                self._run()
            finally:
                if self.db is not None:
                    self.db.close()

    def _clock(self) -> float:
        return self.clock()

    def _run(self) -> None:
        loop = looptime.new_event_loop(start=0.0, noop_cycles=2)
        self._count_iterations(loop)
        into_trace = _IntoTrace(self)
        logging.getLogger("app").addHandler(into_trace)
        try:
            loop.run_until_complete(self._main())
        except (Broken, KeyboardInterrupt) as err:
            self.failed = err
            raise
        finally:
            if not self.spun:  # a spinning wait would spin through the clean-up too
                loop.run_until_complete(self._stop())
            loop.close()
            logging.getLogger("app").removeHandler(into_trace)

    def _count_iterations(self, loop: asyncio.AbstractEventLoop) -> None:
        """Count the loop's iterations (the busy-work check bounds them), and
        stop a run whose virtual clock stands still for `SPIN` of them: a wait
        that re-arms at the same instant would hang the run for ever.  (Test
        code reaching into the loop: one wrapper around its step.)"""
        step = loop._run_once  # type: ignore[attr-defined]
        at = [loop.time(), 0]
        mark = [loop.time()]

        def counted() -> None:
            step()
            self.iterations += 1
            now = loop.time()
            if self.iterations % SPIN == 0:  # time creeping on by a hair a turn is a spin too
                if now - mark[0] < 1.0:
                    self.spun = True
                    raise Broken("no busy work", f"{SPIN} loop iterations in {now - mark[0]:.3f} s")
                mark[0] = now
            if now != at[0]:
                at[0], at[1] = now, 0
                return
            at[1] += 1
            if at[1] > SPIN:
                self.spun = True
                raise Broken(
                    "no busy work", f"{SPIN} loop iterations at t={now:.3f} and time stood still"
                )

        loop._run_once = counted  # type: ignore[attr-defined]

    async def _stop(self) -> None:
        """The end of a run: the rooms' loop timers first (they would start new
        tasks), then every task."""
        if self.manager is not None:
            for room in self.manager.rooms.values():
                room.timers.drop_all()
        await _end_all_but_current()

    def note(self, line: str) -> None:
        self.trace.append(f"{self.step_no:4d} t={self.clock() - START:10.2f} {line}")

    async def _main(self) -> None:
        from tests.sim.checks import Checks

        loop = asyncio.get_running_loop()
        self.clock = lambda: START + loop.time()
        rng = self.rng
        self.storage = FaultyRecords(self.clock, random.Random(rng.getrandbits(64)), self.db)
        self.storage.on_append = self.watch.on_append
        self.thinker = SimThinker(random.Random(rng.getrandbits(64)), rng.choice(PLAYOUTS))
        # Posso less often: one of its rooms costs as much as ten of the others
        weights = {"bigtwo": 3, "possession": 3, "posso": 1, "possum": 3}
        game_name = rng.choices(list(weights), list(weights.values()))[0]
        # (no churn for Posso: its games are long, and a churn run plays many)
        self.flavor = rng.choices(FLAVORS, [80, 0 if game_name == "posso" else 10, 10])[0]
        if self.flavor == "churn":
            self.steps *= 3
        game = GAMES[game_name]
        options = rng.choice(OPTIONS[game_name])
        settings = {
            "posso_window": rng.choice([0, 2, 8]),
            "posso_answer": rng.choice([0, 5, 15]),
            "cut": rng.choice([0, 5]),
            "turn_timer": rng.choice([None, None, 5, 30]),
            "disconnect_grace": rng.choice([0, 5, 60]),
            "auto_bot": rng.random() < 0.7,
            "bot_delay": rng.choice([0, 0.3, 0.8]),
        }
        self.new_manager()
        assert self.manager is not None
        room, host, token = await self.manager.create(game_name, options, "Ann", settings)
        self.code = room.code
        self.people.append(Person("Ann", host.player_id, token))
        self.note(f"room {game_name} {options} {settings}")
        checks = Checks(self, game)
        await self.connect(self.people[0])
        for _ in range(rng.randint(game.min_seats - 1, min(game.max_seats, 4) - 1)):
            await self.join(spectator=False)
        for step in range(1, self.steps + 1):
            self.step_no = step
            await self.reap()
            room_now = self.live_room()
            if (room_now is not None and room_now.closed) or self.closed:
                self.note("the room closed")
                break
            before = checks.before_step()
            await self.step()
            if self.storage.crash_requested:  # inside a write, its answer not yet come
                self.storage.crash_requested = False
                self.coverage["crash:mid-write"] += 1
                self.note("the process dies in the middle of a write")
                await self.do_crash()
            checks.after_step(before)
            self.cover()
        await self.calm()
        checks.at_end()

    def cover(self) -> None:
        """Count the room states this step reached (`coverage`)."""
        room = self.live_room()
        if room is None:
            self.coverage["state:not loaded"] += 1
            return
        table = room.table
        states = [
            f"status:{table.status}",
            "closed" if room.closed else "",
            "auto" if table.auto else "",
            "autoplay" if table.autoplay else "",
            "forced" if table.forced else "",
            "save pending" if not room.stored else "",
            "nobody here" if not room.delivery.conns else "",
            "thinking" if room.timers.slots("bot:") and any(
                t is not None and t.kind == "think"
                for t in map(room.timers.get, room.timers.slots("bot:"))
            ) else "",
        ]  # fmt: skip
        for state in states:
            if state:
                self.coverage["state:" + state] += 1

    def new_manager(self) -> None:
        assert self.storage is not None
        records = TimedRecords(self.storage, DEADLINE)
        seeds = random.Random(self.rng.getrandbits(64))
        self.manager = SimManager(
            records, GAMES, seeds=lambda: seeds.getrandbits(62), clock=self.clock,
            thinker=self.thinker,
        )  # fmt: skip
        self.manager.room_class = self.room_class
        # the server's idle sweep, owned by the run (a crash ends it with the rest)
        self.sweeper = asyncio.get_running_loop().create_task(self.manager.sweep_idle(IDLE_CLOSE))

    def here(self, room: Room) -> set[str]:
        """The people with a socket open to `room`, as the simulator knows."""
        return {p.pid for p in self.people for d in p.devices if d.open and d.target is room}

    def live_room(self) -> Room | None:
        return self.manager.get(self.code) if self.manager is not None else None

    # ---------------------------------------------------------------- steps

    async def step(self) -> None:
        kinds: list[tuple[str, int]] = [
            ("wait", 22),
            ("wait_long", 4),
            ("wait_hours", 1),
            ("join", 2),
            ("connect", 6),
            ("disconnect", 5),
            ("refresh", 3),
            ("act", 28),
            ("act_badly", 5),
            ("command", 9),
            ("start", 4),
            ("seat_link", 1),
            ("move_link", 1),
            ("autoplay", 2),
            ("dead_token", 1),
            ("fault", 2),
            ("crash", 1),
            ("sweep", 1),
            ("leave", 1),
        ]
        if self.flavor == "churn":  # people keep coming and going
            kinds += [("join", 12), ("leave", 10), ("wait_hours", 1)]
        if self.flavor == "days":  # everyone goes, for days: the room closes
            kinds += [("all_away", 2), ("wait_days", 2)]
        names, weights = zip(*kinds, strict=True)
        kind = self.rng.choices(names, weights)[0]
        await getattr(self, f"do_{kind}")()

    async def calm(self) -> None:
        """Storage healthy again and a while with nothing done: whatever was
        pending must settle."""
        assert self.storage is not None
        self.storage.healthy()
        await asyncio.sleep(60)
        await self.reap()
        await asyncio.sleep(60)

    async def reap(self) -> None:
        """Sockets that died leave the room, as their handler would."""
        dropped, self.dropped = self.dropped, []
        for device in dropped:
            if device in device.person.devices:
                await self.close_device(device)
                closed = device.conn.sock.closed if device.conn is not None else None
                self.note(f"the socket of {device.person.name} dropped: {closed}")
                self.coverage["state:socket dropped"] += 1

    async def do_wait(self) -> None:
        dt = self.rng.uniform(0.05, 3.0)
        self.note(f"wait {dt:.2f}s")
        await asyncio.sleep(dt)

    async def do_wait_long(self) -> None:
        dt = self.rng.uniform(10, 900)
        self.note(f"wait {dt:.0f}s")
        await asyncio.sleep(dt)

    async def do_wait_hours(self) -> None:
        dt = self.rng.uniform(1, 8) * 3600
        self.note(f"wait {dt / 3600:.1f}h")
        await asyncio.sleep(dt)

    async def do_wait_days(self) -> None:
        dt = self.rng.uniform(1, 4) * 24 * 3600
        self.note(f"wait {dt / 86400:.1f} days")
        await asyncio.sleep(dt)

    async def do_all_away(self) -> None:
        for person in self.people:
            for device in list(person.devices):
                await self.close_device(device)
        self.note("everyone disconnects")

    async def do_join(self) -> None:
        if len(self.people) < (CHURN_PEOPLE if self.flavor == "churn" else 8):
            await self.join(spectator=self.rng.random() < 0.3)

    async def do_leave(self) -> None:
        """Someone here leaves the room for good."""
        device = self.open_device()
        room = self.live_room()
        if device is not None and room is not None and device.target is room:
            await self.command(device, room, {"type": "leave"})

    async def join(self, *, spectator: bool) -> None:
        assert self.manager is not None
        name = f"P{len(self.people)}"
        try:
            _, player, token = await self.manager.join(self.code, name, spectator=spectator)
        except RoomError as err:
            self.note(f"join {name} refused: {err.code}")
            return
        person = Person(name, player.player_id, token)
        self.people.append(person)
        self.note(f"join {name} seat={player.seat}")
        if self.rng.random() < 0.9:
            await self.connect(person)

    def someone(self) -> Person | None:
        here = [p for p in self.people if not p.gone]
        return self.rng.choice(here) if here else None

    async def do_connect(self) -> None:
        person = self.someone()
        if person is not None:
            await self.connect(person)

    async def connect(self, person: Person, since: Resume | None = None) -> Device | None:
        assert self.manager is not None
        device = Device(person, person.token)
        conn = SimConnection(self, device)
        device.conn = conn
        try:
            target = await self.manager.open_socket(self.code, person.token, conn, since)
        except RoomError as err:
            self.note(f"connect {person.name} refused: {err.code}")
            await conn.stop()
            if err.code in ("bad_token", "seat_moved"):  # replaced meanwhile: this device is out
                person.gone = person.token not in self.valid_tokens()
            return None
        except Exception as err:  # storage away while the room is rebuilt
            self.note(f"connect {person.name} failed: {type(err).__name__}")
            await conn.stop()
            return None
        if target is None:
            self.note(f"connect {person.name} turned away")
            return None
        device.target = target
        person.devices.append(device)
        self.note(f"connect {person.name} since={since.v if since else None}")
        return device

    def valid_tokens(self) -> set[str]:
        room = self.live_room()
        if room is None:
            return set()
        return {p.token for p in self.people if room.authenticate(p.token) is not None}

    def open_device(self, person: Person | None = None) -> Device | None:
        devices = [d for p in ([person] if person else self.people) for d in p.devices if d.open]
        return self.rng.choice(devices) if devices else None

    async def do_disconnect(self) -> None:
        device = self.open_device()
        if device is not None:
            await self.close_device(device)
            self.note(f"disconnect {device.person.name}")

    async def close_device(self, device: Device) -> None:
        conn, target = device.conn, device.target
        device.person.devices.remove(device)
        if conn is None:
            return
        if target is not None and not target.closed:
            await target.disconnect(conn)
        await conn.stop()

    async def do_refresh(self) -> None:
        device = self.open_device()
        if device is None:
            return
        since = device.resume()
        await self.close_device(device)
        self.note(f"refresh {device.person.name}")
        await self.connect(device.person, since if self.rng.random() < 0.8 else None)

    async def send(self, device: Device, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """One client message through the room, as the socket route hands it
        over; the reply the device got (its ack or error)."""
        assert device.target is not None and device.conn is not None
        device.msg_id += 1
        msg_id = device.msg_id
        start = len(self.frames)
        person = device.person
        cause = ORIGIN.set(Origin("person", person.name, pid=person.pid, device=device))
        try:
            await device.target.handle(device.conn, msg_id, kind, payload)
        finally:
            ORIGIN.reset(cause)
        for frame in self.frames[start:]:
            if frame.device is device and frame.msg.get("re") == msg_id:
                return frame.msg
        raise AssertionError(f"no reply to message {msg_id} ({kind} {payload})")

    async def do_act(self) -> None:
        """Someone whose turn it is plays what their own view offers."""
        room = self.live_room()
        if room is None or not room.table.playing:
            return
        movers = [
            d
            for p in self.people
            for d in p.devices
            if d.open and d.view and d.view.get("legal") and d.target is room
        ]
        if not movers:
            return
        device = self.rng.choice(movers)
        assert device.view is not None
        seat = room.game_seat.get(device.person.pid)
        view, legal = device.view, device.view["legal"]
        action = bot_for(room.game.name).choose(view["game"], legal, seat or 0, self.rng)
        await self.act(device, action, "act")
        if self.rng.random() < 0.1:  # a double tap: the same message again
            await self.act(device, action, "again")

    async def act(self, device: Device, action: dict[str, Any], what: str) -> None:
        room = self.live_room()
        assert room is not None
        game_id = room.table.game_id
        reply = await self.send(device, "action", action)
        ok = bool(reply.get("ok"))
        code = reply.get("error", {}).get("code", "ok")
        self.note(f"{what} {device.person.name} {action} -> {code}")
        if ok and game_id is not None:
            seat = room.table.game_seat.get(device.person.pid)
            self.acked.append(Acked(game_id, room.table.seq - 1, seat, dict(action)))

    async def do_act_badly(self) -> None:
        device = self.open_device()
        room = self.live_room()
        if device is None or room is None or device.target is not room:
            return
        game = room.game.name
        choices: list[dict[str, Any]] = [
            {"type": "timeout"},
            {"type": "nonsense"},
            {"type": "play", "cards": ["ZZ"]},
            {"type": "discard", "card": 7},
            {"type": "draw", "source": "nowhere"},
            {"type": "play", "cards": [], "seat": 3},
        ]
        old = [f.msg["view"] for f in self.frames[-200:] if f.device is device and "view" in f.msg]
        stale = [a for v in old for a in (v.get("legal") or [])]
        if stale:  # a move from a view that is gone (or still current: fine too)
            choices.append(self.rng.choice(stale))
        action = self.rng.choice(choices)
        await self.act(device, action, f"bad({game})")

    async def do_command(self) -> None:
        device = self.open_device()
        room = self.live_room()
        if device is None or room is None or device.target is not room:
            return
        n = len(room.members.seats)
        seat = self.rng.randrange(-1, n + 1)
        members = room.members
        watchers = [p for p, r in members.players.items() if r.seat is None] or ["nobody"]
        bots = [i for i, p in enumerate(members.seats) if p and members.players[p].is_bot]
        game = self.rng.choice(sorted(OPTIONS))
        here = self.here(room)
        table = room.table
        away = [s for s, p in enumerate(table.game_seats) if table.playing and p not in here]
        cmd = self.rng.choice(
            [
                {"type": "sit", "seat": self.rng.choice([None, seat])},
                {"type": "start"},
                {"type": "rematch"},
                {"type": "add_bot", "seat": seat},
                {"type": "add_bot", "level": self.rng.choice(["easy", "strong", "strong"])},
                {"type": "add_bot", "level": "strong"},
                {"type": "add_bot", "level": "genius"},
                {"type": "kick", "player": self.rng.choice(watchers)},
                {"type": "posso_quiet", "hand": self.rng.random() < 0.5},
                {"type": "posso_quiet", "helpful": self.rng.random() < 0.5},
                {"type": "posso_quiet"},
                {"type": "remove_bot", "seat": self.rng.choice(bots) if bots else seat},
                {"type": "kick", "seat": seat},
                {"type": "leave"},
                {"type": "chat", "text": "hello"},
                {"type": "chat", "text": ""},
                # a game's options as a room of it starts with: a whole Posso game
                # (thousands of moves, played by bots through hours of waiting) would
                # cost a seed more than its CPU limit once autoplay hurries a table on
                {"type": "set_game", "game": game, "options": self.rng.choice(OPTIONS[game])},
                {"type": "set_game", "game": "chess"},
                {"type": "set_settings", "settings": {"bot_delay": self.rng.choice([0, 0.3])}},
                {"type": "set_settings", "settings": {"disconnect_grace": -1}},
                {"type": "make_host", "seat": seat},
                {"type": "hand_to_bot", "seat": seat},
                {"type": "hand_to_bot", "seat": self.rng.choice(away) if away else seat},
                {"type": "autoplay", "on": True, "seat": seat},
                {"type": "resync"},
                {"type": "story", "before": self.rng.choice([0, 5, room.delivery.v + 1])},
                {"type": "story", "before": -1},
                {"type": "nope"},
            ]
        )
        if cmd["type"] in HOST_COMMANDS and self.rng.random() < 0.5 and room.members.host:
            host = next((p for p in self.people if p.pid == room.members.host), None)
            device = self.open_device(host) or device
        await self.command(device, room, cmd)

    async def command(self, device: Device, room: Room, cmd: dict[str, Any]) -> None:
        """One room command, and what the simulator learns from its answer."""
        seats = room.members.seats
        seat = cmd.get("seat")
        target_pid = seats[seat] if isinstance(seat, int) and 0 <= seat < len(seats) else None
        if cmd["type"] == "kick" and "player" in cmd:
            target_pid = cmd["player"]
        reply = await self.send(device, "cmd", cmd)
        code = reply.get("error", {}).get("code", "ok")
        self.coverage[f"cmd:{cmd['type']}:{'ok' if code == 'ok' else 'refused'}"] += 1
        self.note(f"cmd {device.person.name} {cmd} -> {code}")
        if code == "storage_error" and cmd["type"] == "set_settings":
            for key in cmd["settings"]:  # this or the last value: either may be stored
                self.acked_settings.pop(key, None)
        if code == "storage_error" and cmd["type"] == "set_game":
            self.acked_game = None
        if code == "storage_error" and cmd["type"] in ("leave", "kick"):
            # done in the room, maybe, and never acknowledged: no promise either way
            out = device.person.pid if cmd["type"] == "leave" else target_pid
            for p in self.people:
                p.unsure = p.unsure or p.pid == out
        if code != "ok":
            return
        if cmd["type"] == "set_settings":
            self.acked_settings.update(cmd["settings"])
        if cmd["type"] == "set_game":
            self.acked_game = cmd["game"]
        if cmd["type"] == "leave":
            device.person.gone = True
            device.person.dead_tokens.append(device.person.token)
            self.watch.removed.add(device.person.pid)
        if cmd["type"] == "kick" and target_pid is not None:
            self.watch.removed.add(target_pid)
            for p in self.people:
                if p.pid == target_pid:
                    p.gone = True
                    p.dead_tokens.append(p.token)

    async def do_autoplay(self) -> None:
        """A person at the table hands their turns to the bot for the rest of
        the hand ("play my turns this hand"), or takes them back."""
        room = self.live_room()
        if room is None or not room.table.playing:
            return
        seated = [
            d
            for p in self.people
            for d in p.devices
            if d.open and d.target is room and p.pid in room.table.game_seat
        ]
        if not seated:
            return
        device = self.rng.choice(seated)
        await self.command(device, room, {"type": "autoplay", "on": self.rng.random() < 0.8})

    async def do_start(self) -> None:
        """The host starts a game (or a rematch) when none is being played."""
        room = self.live_room()
        if room is None or room.table.playing:
            return
        host = next((p for p in self.people if p.pid == room.members.host), None)
        device = self.open_device(host) if host is not None else None
        if device is None or device.target is not room:
            return
        cmd = {"type": "rematch" if room.table.result and self.rng.random() < 0.5 else "start"}
        reply = await self.send(device, "cmd", cmd)
        self.note(f"cmd {device.person.name} {cmd} -> {reply.get('error', {}).get('code', 'ok')}")

    async def do_seat_link(self) -> None:
        """Someone makes a link for an away seat, and someone opens it."""
        assert self.manager is not None
        device = self.open_device()
        room = self.live_room()
        if device is None or room is None or device.target is not room:
            return
        seat = self.rng.randrange(len(room.members.seats))
        reply = await self.send(device, "cmd", {"type": "seat_link", "seat": seat})
        secret = (reply.get("data") or {}).get("claim")
        self.note(f"seat_link {device.person.name} seat {seat} -> {bool(secret)}")
        self.coverage[f"cmd:seat_link:{'ok' if secret else 'refused'}"] += 1
        if not secret:
            return
        person = next((p for p in self.people if p.pid == room.members.seats[seat]), None)
        if person is None:  # the seat changed hands meanwhile (a crash's rebuild)
            self.note(f"seat {seat}'s link is for nobody the simulator knows")
            return
        await self.use_link(secret, person, "seat_link")

    async def do_move_link(self) -> None:
        """Someone moves their own place to another device of theirs."""
        device = self.open_device()
        room = self.live_room()
        if device is None or room is None or device.target is not room:
            return
        reply = await self.send(device, "cmd", {"type": "move_link"})
        code = reply.get("error", {}).get("code", "ok")
        self.coverage[f"cmd:move_link:{code}"] += 1
        secret = (reply.get("data") or {}).get("claim")
        self.note(f"move_link {device.person.name} -> {code}")
        if secret:
            await self.use_link(secret, device.person, "move_link")

    async def use_link(self, secret: str, person: Person, what: str) -> None:
        """Open a one-time link (sometimes twice: the second must fail).  The
        place it names continues on a new device: the same person, a new
        token, the old one dead - or, should the room make the link's user
        someone else (a seat moves, an identity does not), a new person."""
        assert self.manager is not None
        uses = 2 if self.rng.random() < 0.2 else 1
        for _ in range(uses):
            try:
                _, player, token, _ = await self.manager.claim(self.code, secret)
            except RoomError as err:
                self.note(f"claim refused: {err.code}")
                self.coverage[f"claim:{what}:{err.code}"] += 1
                # refused for storage: the place may have moved to a token
                # nobody was given (not a promise broken: nobody was told)
                person.unsure = person.unsure or err.code == "storage_error"
                continue
            self.coverage[f"claim:{what}:ok"] += 1
            if player.player_id == person.pid:
                person.dead_tokens.append(person.token)
                person.token = token
                self.note(f"claim: {person.name} on a new device")
            else:
                person = Person(player.name, player.player_id, token)
                self.people.append(person)
                self.note(f"claim: {person.name} takes the seat")
            await self.connect(person)

    async def do_dead_token(self) -> None:
        """A token that was replaced, or whose person left or was kicked, tries again."""
        assert self.manager is not None
        dead = [(p, t) for p in self.people for t in p.dead_tokens]
        if not dead:
            return
        person, token = self.rng.choice(dead)
        device = Device(person, token)
        conn = SimConnection(self, device)
        device.conn = conn
        try:
            target = await self.manager.open_socket(self.code, token, conn, None)
        except RoomError as err:
            self.note(f"dead token of {person.name} refused: {err.code}")
            await conn.stop()
            return
        except Exception as err:
            self.note(f"dead token of {person.name} failed: {type(err).__name__}")
            await conn.stop()
            return
        raise AssertionError(f"a dead token of {person.name} opened a socket: {target}")

    async def do_fault(self) -> None:
        storage = self.storage
        assert storage is not None
        kind = self.rng.choice(["flaky", "away", "healthy", "healthy"])
        if kind == "flaky":
            storage.flaky = self.rng.choice([0.05, 0.2, 0.5])
            self.note(f"storage flaky {storage.flaky}")
        elif kind == "away":
            storage.away_until = self.clock() + self.rng.uniform(1, 600)
            self.note(f"storage away until t={storage.away_until - START:.0f}")
        else:
            storage.healthy()
            self.note("storage healthy")

    async def do_crash(self) -> None:
        """The process dies: every task but this one ends, nothing is saved;
        a new one rebuilds the room from storage and the devices reconnect."""
        from tests.sim.checks import crash_check

        old = self.live_room()
        unsaved = old is not None and not old.stored
        self.note(f"crash{' (a room save storage refused is pending)' if unsaved else ''}")
        self.coverage["crash:save pending" if unsaved else "crash"] += 1
        assert self.manager is not None
        for room in self.manager.rooms.values():  # its loop timers die with it
            room.timers.drop_all()
            room.closed = True
        await _end_all_but_current()
        self.crashes += 1
        self.new_manager()
        assert self.manager is not None
        self.promises_kept()
        await self.manager.recover()
        await self.manager.warm()  # as the server does, in the background
        for person in self.people:
            devices, person.devices = person.devices, []
            for d in devices:
                if self.rng.random() < 0.8:  # from the last incarnation: a full view
                    await self.connect(person, d.resume())
        new = self.live_room()
        if old is not None and new is not None:
            crash_check(self, old, new)

    def promises_kept(self) -> None:
        """What the room acknowledged is what storage holds: every person told
        they joined (or took a seat with a link) is stored with the token
        they were given; every token whose person was told they left, were
        removed or moved on is stored as dead; the settings and the game the
        host was told they set are stored.  Judged from what the clients were
        told - the room's own belief (a save pending) excuses nothing: a
        change it could not store is not acknowledged (Room.handle)."""
        assert self.storage is not None
        stored = self.storage.peek_room(self.code)
        if stored is None or stored.closed:
            return  # closed (a database shows only open rooms): nothing left to keep
        hashes = {p.token_hash for p in stored.players}
        for person in self.people:
            if token_hash(person.token) not in hashes and not (person.gone or person.unsure):
                raise Broken("promises", f"{person.name} was told they are in; storage lost them")
            for t in person.dead_tokens:
                if token_hash(t) in hashes:
                    raise Broken("promises", f"{person.name} was told a token died; it is stored")
        for key, value in self.acked_settings.items():
            if stored.settings.get(key) != value:
                got = stored.settings.get(key)
                raise Broken("promises", f"setting {key}={value} was acknowledged; {got} stored")
        if self.acked_game is not None and stored.game != self.acked_game:
            got = stored.game
            raise Broken("promises", f"game {self.acked_game} was acknowledged; {got} stored")

    async def do_sweep(self) -> None:
        assert self.manager is not None
        closed = await self.manager.close_idle(IDLE_CLOSE)
        if closed:
            self.note("closed as idle")


class _IntoTrace(logging.Handler):
    """The server's log lines, in the trace where they happened."""

    def __init__(self, sim: Sim) -> None:
        super().__init__(logging.INFO)
        self.sim = sim

    def emit(self, record: logging.LogRecord) -> None:
        self.sim.logged += 1
        failed = record.exc_info[1] if record.exc_info else None
        if failed is not None and not isinstance(failed, EXPECTED):
            # the server caught something it did not expect: a bug, whatever it was
            what = f"{record.getMessage()}: {failed!r}"
            self.sim.watch.fail("no crash", f"the server logged an unexpected error: {what}")
        self.sim.note(f"LOG {record.levelname} {record.name}: {record.getMessage()}")


async def _end_all_but_current() -> None:
    me = asyncio.current_task()
    others = [t for t in asyncio.all_tasks() if t is not me]
    for t in others:
        t.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def game_of(name: str) -> Game[Any]:
    return GAMES[name]
