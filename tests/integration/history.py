"""A Jepsen-style history of Big Two rooms played on three processes while a
seeded nemesis breaks things, and the checker that judges it.

The run (`Run.go`): three uvicorn processes on a PostgreSQL database of the
run's own and a private redis-server (tests/integration/test_cluster.py's
`stack`).  Clients (`Tab`, one socket each) play every seat as a bot would,
through the legal actions each view offers, and move to another process when
theirs is paused, killed or sends them away.  They record every acknowledged
action and judge every frame they get for hidden cards.  The nemesis, in a
thread of its own, does one fault after another at moments its seed picks:

- **pause**: SIGSTOP a process past its lease, then SIGCONT.  Before the
  pause a host's extra tab is opened on it for one or two of the rooms it
  owns; while it is stopped that tab asks it to pass the host role (a room
  save, waiting in the stopped process's socket), another process takes the
  room over and someone joins it there.  On SIGCONT the stale owner runs the
  save it was asked for: the fence must refuse it, and the change must not
  be acknowledged.
- **kill**: kill -9 a process and start it again on its port.
- **redis**: restart the private Redis (empty: no leases, streams, epochs).
- **db**: `pg_terminate_backend` every connection to the run's database.

Each fault also has someone join a room through a live process; every join a
process acknowledged is remembered and looked for after each fault.

The checker (`Run.violations`), per room and game, from what the database
holds at the end and what the clients saw:

- one linear log: each game's sequence numbers run without a gap, and the log
  replays through the engine from the stored seed, every action legal;
- every acknowledged action is in the log, in the order its seat was told;
- no row by an ended epoch: along a room's log the epochs never go back;
- membership never rolled back: every acknowledged join is present in the
  room, read after every fault and at the end;
- no room stuck: after the last fault every room's log grows;
- no hidden card in any frame, relayed or not, and no version gap on a socket;
- no change acknowledged by a paused owner after its room was taken over.

It also prints, per kind of fault, the seconds from the fault's moment
(SIGSTOP; kill -9; Redis back up; connections cut) until every room had
logged a move again (median/max): figures for docs/architecture.md,
not assertions.  The seed fixes the nemesis's choices, but which process owns
which room at a given moment depends on timing, so a seed repeats the kind of
run, not every step of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import httpx
from sqlalchemy.engine import make_url
from websockets.exceptions import ConnectionClosed

from app.games import GAMES, IllegalAction
from tests.api.client import cards_in, public_played
from tests.integration.test_cluster import LEASE, SETTINGS, Redis, servers
from tests.integration.test_recovery import Server
from tests.sockets import Msg, Player

#: refusals a move may get while processes fail (its room moved, storage cut)
FAULT_REFUSALS = ("storage_error", "moved", "no_room", "not_your_turn", "bad_action")


class Tab(Player):
    """A tab that also judges every frame it gets for cards its seat may not
    know, and takes a refused move (a lost race, a fault) as simply not acked."""

    def __init__(self, base: str, code: str, ticket: Msg, run: Run) -> None:
        super().__init__(base, code, ticket)
        self.ws.close_timeout = 0.1  # dropping a socket to a stopped process must not hang
        self.run = run
        self.stale: int | None = None  # a save asked for while its process was stopped
        self.again_at = 0.0  # after a refusal: when to try again

    def _take(self, msg: Msg) -> None:
        if "re" in msg and "error" in msg and msg["re"] == self._pending:
            self.run.refusals[msg["error"]["code"]] += 1
            self.replies[msg["re"]] = msg
            self._pending = None
            # as a person would, try again a moment later on the same view:
            # a refusal for a fault (storage, a move of the room) changes
            # nothing, so no new view would ever come to act on
            self._acted_on = -1
            self.again_at = time.monotonic() + 0.3
            return
        super()._take(msg)
        self.run.frames += 1
        if "view" in msg:
            self._judge_view()
        elif "event" in msg:
            self._judge_event(msg["event"])

    def step(self, rng: random.Random) -> Msg | None:
        if time.monotonic() < self.again_at:
            return None
        return super().step(rng)

    def _judge_view(self) -> None:
        view = self.view
        assert view is not None
        game = view.get("game")
        if not game or game.get("over"):
            return  # at the end every hand is shown
        seat = view["you"]["seat"]
        if seat != self.ticket["seat"]:
            self.run.violation(f"{self.ticket['code']}: a frame for seat {seat} on another's tab")
        hand = set(game.get("hand") or [])
        allowed = hand | set(cards_in([game["trick"], game["last_play"]]))
        if game.get("must_include"):
            allowed.add(game["must_include"])
        played, wrong = public_played(game)
        for problem in wrong:
            self.run.violation(f"{self.ticket['code']}: seat {seat}: {problem}")
        allowed |= played
        leaked = set(cards_in(game)) - allowed
        if leaked:
            self.run.violation(f"{self.ticket['code']}: seat {seat} was shown {sorted(leaked)}")

    def _judge_event(self, event: Msg) -> None:
        if event.get("type") in ("played", "game_over"):
            return  # a play is public when made; every hand is shown at the end
        hand = set(((self.view or {}).get("game") or {}).get("hand") or [])
        leaked = set(cards_in(event)) - hand
        if leaked:
            self.run.violation(f"{self.ticket['code']}: event {event} showed {sorted(leaked)}")

    def drop(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


@dataclass
class Place:
    """One seat of one room, played by one tab at a time."""

    ticket: Msg
    tab: Tab | None = None
    on: int = -1  # the process its tab is on
    acked: list[tuple[int, Msg]] = field(default_factory=list)
    retry_at: float = 0.0

    def drop(self) -> None:
        if self.tab is not None:
            self.acked += self.tab.acked
            self.tab.drop()
            self.tab = None


@dataclass
class Table:
    code: str
    places: list[Place]
    started_at: float = 0.0  # when a tab last asked for a new game


class Run:
    """One run: its processes, rooms, clients, nemesis and findings."""

    def __init__(
        self,
        database: str,
        redis: Redis,
        *,
        seed: int,
        rooms: int,
        faults: int,
        kinds: tuple[str, ...] = ("pause", "kill", "redis", "db"),
        **settings: str,
    ) -> None:
        self.database, self.redis, self.seed = database, redis, seed
        self.n_rooms, self.n_faults, self.kinds = rooms, faults, kinds
        self.rng = random.Random(seed)  # the clients'
        self.nemesis_rng = random.Random(seed * 7919 + 1)
        self.settings = settings
        self.procs: list[Server] = []
        self.ids: dict[int, str] = {}  # process index -> its cluster id
        self.down: set[int] = set()  # paused or killed: clients keep off
        self.lock = threading.Lock()
        self.tables: list[Table] = []
        self.joins: dict[str, list[str]] = {}  # room -> player ids of acknowledged joins
        self.found: list[str] = []
        self.refusals: Counter[str] = Counter()
        #: what the stale owner answered the save asked of it while paused
        self.stale_saves: Counter[str] = Counter()
        #: by fault kind: seconds until every room moved again (`_recovered`)
        self.recovery: dict[str, list[float]] = {}
        self.marked: tuple[float, dict[str, int]] = (0.0, {})
        #: rooms that had not moved `_recovered`'s 20 s after a fault, as seen
        self.slow: list[str] = []
        self.faults: Counter[str] = Counter()
        self.frames = 0
        self.stop = threading.Event()
        self.nemesis_error: BaseException | None = None

    # -- findings --------------------------------------------------------------

    def violation(self, what: str) -> None:
        with self.lock:
            self.found.append(what)

    def summary(self) -> str:
        return (
            f"seed {self.seed}: {sum(self.faults.values())} faults {dict(self.faults)}, "
            f"{len(self.tables)} rooms, {sum(len(j) for j in self.joins.values())} joins, "
            f"{self.frames} frames, refusals {dict(self.refusals)}, "
            f"saves asked of a paused owner {dict(self.stale_saves)}, "
            f"{len(self.found)} violations; seconds until every room moved again: "
            + ", ".join(f"{k} {_spread(v)}" for k, v in sorted(self.recovery.items()))
        )

    # -- the whole run ----------------------------------------------------------

    def go(self, quiet: float = 60.0) -> list[str]:
        """Open the rooms, play them under the nemesis, then without faults
        until every room has moved on; the violations found."""
        try:
            for _ in range(3):  # one at a time: each is stopped in `finally`
                self.procs += servers(self.database, self.redis, 1, **self.settings)
            for i in range(3):
                self._learn_id(i)
            for i in range(self.n_rooms):
                self._open(self.procs[i % 3])
            nemesis = threading.Thread(target=self._nemesis, daemon=True)
            self._play_until(lambda: self._moves() >= 2 * self.n_rooms, within=60)
            nemesis.start()
            self._play_until(lambda: not nemesis.is_alive(), within=30 + 12 * self.n_faults)
            if self.nemesis_error is not None:
                raise self.nemesis_error
            self._no_room_stuck(quiet)
            self._check_joins("at the end")
            for t in self.tables:
                for p in t.places:
                    p.drop()
            self._check_logs()
        finally:
            self.stop.set()
            for p in self.procs:
                if p.proc is not None and p.proc.poll() is None:
                    p.proc.send_signal(signal.SIGCONT)
                p.stop()
        return self.found

    def _open(self, via: Server) -> None:
        base = via.base
        ann = httpx.post(
            f"{base}/api/rooms",
            json={"game": "bigtwo", "name": "Ann", "settings": SETTINGS},
            timeout=10,
        ).json()
        code = ann["code"]
        rest = [
            httpx.post(f"{base}/api/rooms/{code}/join", json={"name": n}, timeout=10).json()
            for n in ("Bob", "Cy")
        ]
        self.tables.append(Table(code, [Place(t) for t in (ann, *rest)]))
        self.joins[code] = []

    def _learn_id(self, i: int) -> None:
        """The cluster id of process `i`: it owns a room it has just opened."""
        import redis as redis_lib

        probe = httpx.post(
            f"{self.procs[i].base}/api/rooms",
            json={"game": "bigtwo", "name": "Probe"},
            timeout=10,
        ).json()
        raw = redis_lib.Redis.from_url(self.redis.url).get(f"cr:owner:{probe['code']}")
        assert raw is not None, "a room just opened has no owner"
        self.ids[i] = raw.decode().split()[0]

    # -- the clients (this thread) ----------------------------------------------

    def _play_until(self, done: Any, within: float) -> None:
        deadline = time.monotonic() + within
        while not done():
            if time.monotonic() > deadline:
                self.violation(f"gave up waiting after {within:.0f} s: {self._moves()} moves")
                return
            self._sweep()

    def _sweep(self) -> None:
        now = time.monotonic()
        for t in self.tables:
            for p in t.places:
                self._pump(p, now)
            self._next_game(t, now)

    def _live(self) -> list[int]:
        with self.lock:
            return [i for i in range(3) if i not in self.down]

    def _pump(self, p: Place, now: float) -> None:
        with self.lock:
            away = p.on in self.down
        if p.tab is not None and away:
            p.drop()
        if p.tab is None:
            if now < p.retry_at:
                return
            live = self._live()
            if not live:
                return
            p.on = self.rng.choice(live)
            try:
                p.tab = Tab(f"127.0.0.1:{self.procs[p.on].port}", p.ticket["code"], p.ticket, self)
            except Exception:
                p.tab, p.retry_at = None, now + 0.2
                return
        tab = p.tab
        try:
            tab.step(self.rng)
            while tab.read(0.002):
                pass
        except (ConnectionClosed, OSError):
            p.drop()
        except AssertionError as err:  # a version gap on one socket
            self.violation(f"{p.ticket['code']} seat {p.ticket['seat']}: {err}")
            p.drop()

    def _next_game(self, t: Table, now: float) -> None:
        """A finished game is followed by another (any tab may ask; the host's
        request is the one taken)."""
        if now - t.started_at < 1.0:
            return
        for p in t.places:
            tab = p.tab
            if tab is not None and tab.view is not None and tab.status != "playing":
                t.started_at = now
                with contextlib.suppress(Exception):
                    tab.send(cmd={"type": "start"})
                return

    def _moves(self) -> int:
        return sum(
            len(p.acked) + (len(p.tab.acked) if p.tab else 0) for t in self.tables for p in t.places
        )

    def _no_room_stuck(self, within: float) -> None:
        """Every room's log grows once the faults have stopped."""
        before = self._log_lengths()
        self._play_until(
            lambda: all(n > before[c] + 2 for c, n in self._log_lengths().items()), within
        )
        stuck = [c for c, n in self._log_lengths().items() if n <= before[c] + 2]
        for code in stuck:
            self.violation(f"{code}: stuck after the faults ({before[code]} actions)")

    # -- the nemesis (its own thread) ---------------------------------------------

    def _nemesis(self) -> None:
        rng = self.nemesis_rng
        try:
            for n in range(self.n_faults):
                if self.stop.is_set():
                    return
                time.sleep(rng.uniform(0.2, 1.5))
                kind = self.kinds[n % len(self.kinds)] if n < len(self.kinds) else None
                kind = kind or rng.choice(self.kinds)
                getattr(self, f"_fault_{kind}")(rng)
                self.faults[kind] += 1
                self._recovered(kind)
                self._join_somewhere(rng)
                self._check_joins(f"after fault {n + 1} ({kind})")
        except BaseException as err:  # raised again on the clients' thread
            self.nemesis_error = err

    def _fault_pause(self, rng: random.Random) -> None:
        i = rng.randrange(3)
        mine = [t for t in self.tables if self._owner(t.code) == self.ids[i]]
        ghosts: list[tuple[Table, Tab]] = []
        for t in rng.sample(mine, min(2, len(mine))):
            g = self._ghost(i, t, 0)
            host = _host_seat(g)
            if g is not None and host is not None and host != 0:
                g.drop()
                g = self._ghost(i, t, host) if host < 3 else None
            if g is not None and _host_seat(g) == g.ticket["seat"]:
                ghosts.append((t, g))
            elif g is not None:
                g.drop()
        with self.lock:
            self.down.add(i)
        proc = self.procs[i].proc
        assert proc is not None
        proc.send_signal(signal.SIGSTOP)
        self._mark()
        try:
            for _t, g in ghosts:  # waits in the stopped process's socket
                with contextlib.suppress(Exception):
                    g.stale = g.send(cmd={"type": "make_host", "seat": self._host_heir(g)})
            time.sleep(LEASE + 0.4)
            taken: set[str] = set()  # rooms a join shows another process owns now
            for t, _g in ghosts:  # the room taken over, and joined, elsewhere
                if self._join(t.code, rng):
                    taken.add(t.code)
            time.sleep(rng.uniform(0.0, 0.6))
        finally:
            proc.send_signal(signal.SIGCONT)
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and ghosts:
            for _t, g in ghosts:
                with contextlib.suppress(Exception):
                    g.read(0.02)
        for t, g in ghosts:
            answer = g.replies.get(g.stale or -1, {})
            said = "ok" if "ok" in answer else answer.get("error", {}).get("code", "none")
            self.stale_saves[said] += 1
            if said == "ok" and t.code in taken:
                self.violation(f"{t.code}: a paused owner acknowledged a change after a takeover")
            g.drop()
        with self.lock:
            self.down.discard(i)

    @staticmethod
    def _host_heir(g: Tab) -> int:
        seat = int(g.ticket["seat"])
        return (seat + 1) % 3  # another person's seat (seat 3 is a bot)

    def _ghost(self, i: int, t: Table, seat: int) -> Tab | None:
        """An extra tab of `seat`'s person on process `i`, once it has a view."""
        with contextlib.suppress(Exception):
            g = Tab(f"127.0.0.1:{self.procs[i].port}", t.code, t.places[seat].ticket, self)
            deadline = time.monotonic() + 3
            while g.view is None and time.monotonic() < deadline:
                g.read(0.05)
            if g.view is not None:
                return g
            g.drop()
        return None

    def _fault_kill(self, rng: random.Random) -> None:
        i = rng.randrange(3)
        with self.lock:
            self.down.add(i)
        self.procs[i].kill()
        self._mark()
        time.sleep(rng.uniform(0.0, 1.0))
        self.procs[i].start()
        self._learn_id(i)
        with self.lock:
            self.down.discard(i)

    def _fault_redis(self, rng: random.Random) -> None:
        self.redis.stop()
        time.sleep(rng.uniform(0.1, 1.0))
        self.redis.start()
        self._mark()
        # every process learns its way back; the ids stay (one per process)
        time.sleep(rng.uniform(0.5, 1.5))

    def _fault_db(self, rng: random.Random) -> None:
        async def cut() -> int:
            conn = await self._connect()
            try:
                rows = await conn.fetch(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                return len(rows)
            finally:
                await conn.close()

        asyncio.run(cut())
        self._mark()

    def _mark(self) -> None:
        """The fault's moment: rooms stall from here (a pause, a kill) or may
        go on from here (Redis back, connections cut)."""
        self.marked = (time.monotonic(), self._log_lengths())

    def _recovered(self, kind: str, within: float = 20.0) -> None:
        """Seconds from the fault's moment until every room has logged an
        action after it: what the fault cost the slowest room (a figure,
        printed; the checker's own "no room stuck" is the assertion)."""
        t0, before = self.marked
        now = before
        while time.monotonic() - t0 < within:
            now = self._log_lengths()
            if all(now[c] > n for c, n in before.items()):
                break
            time.sleep(0.1)
        self.recovery.setdefault(kind, []).append(time.monotonic() - t0)
        slow = [t for t in self.tables if now[t.code] <= before[t.code]]
        if slow:
            self.slow.append(f"after {kind}: " + "; ".join(_describe(t) for t in slow))

    def _join_somewhere(self, rng: random.Random) -> None:
        self._join(rng.choice(self.tables).code, rng)

    def _join(self, code: str, rng: random.Random) -> bool:
        """Someone joins `code` through a live process; whether it was acknowledged."""
        live = self._live()
        if not live:
            return False
        base = self.procs[rng.choice(live)].base
        with contextlib.suppress(httpx.HTTPError):
            r = httpx.post(
                f"{base}/api/rooms/{code}/join",
                json={"name": f"J{rng.randrange(10**6)}", "spectator": True},
                timeout=8,
            )
            if r.status_code == 200:
                with self.lock:
                    self.joins[code].append(r.json()["player"])
                return True
        return False

    def _owner(self, code: str) -> str | None:
        import redis as redis_lib

        with contextlib.suppress(Exception):
            raw = redis_lib.Redis.from_url(self.redis.url).get(f"cr:owner:{code}")
            return None if raw is None else raw.decode().split()[0]
        return None

    # -- reading the database --------------------------------------------------

    async def _connect(self) -> asyncpg.Connection:
        url = make_url(self.database)
        return await asyncpg.connect(
            host=url.host, port=url.port or 5432, user=url.username, database=url.database
        )

    def _query(self, sql: str) -> list[Any]:
        async def read() -> list[Any]:
            conn = await self._connect()
            try:
                return list(await conn.fetch(sql))
            finally:
                await conn.close()

        return asyncio.run(read())

    def _log_lengths(self) -> dict[str, int]:
        rows = self._query(
            "SELECT r.code, count(a.seq) AS n FROM rooms r JOIN games g ON g.room_id = r.id"
            " LEFT JOIN actions a ON a.game_id = g.id GROUP BY r.code"
        )
        got = {r["code"]: int(r["n"]) for r in rows}
        return {t.code: got.get(t.code, 0) for t in self.tables}

    def _check_joins(self, when: str) -> None:
        """Membership never rolled back: every acknowledged join is present."""
        with self.lock:
            wanted = {code: list(pids) for code, pids in self.joins.items() if pids}
        if not wanted:
            return
        rows = self._query(
            "SELECT r.code, p.player_id FROM players p JOIN rooms r ON r.id = p.room_id"
            " WHERE p.present"
        )
        present = {(r["code"], r["player_id"]) for r in rows}
        for code, pids in wanted.items():
            gone = [pid for pid in pids if (code, pid) not in present]
            if gone:
                self.violation(f"{code}: acknowledged joins {gone} no longer present {when}")

    def _check_logs(self) -> None:
        games = self._query(
            "SELECT r.code, g.id, g.game, g.options, g.seed, g.seats, g.result FROM games g"
            " JOIN rooms r ON r.id = g.room_id ORDER BY g.id"
        )
        actions = self._query(
            "SELECT game_id, seq, seat, action, epoch FROM actions ORDER BY game_id, seq"
        )
        by_game: dict[int, list[Any]] = {}
        for a in actions:
            by_game.setdefault(a["game_id"], []).append(a)
        logs: dict[str, list[Any]] = {}
        for g in games:
            rows = by_game.get(g["id"], [])
            logs.setdefault(g["code"], []).extend(rows)
            self._one_linear_log(g, rows)
        for t in self.tables:
            log = logs.get(t.code, [])
            epochs = [r["epoch"] for r in log]
            if None in epochs or any(b < a for a, b in itertools.pairwise(epochs)):
                self.violation(f"{t.code}: a row by an ended epoch: {epochs}")
            for p in t.places:
                self._acked_in_log(t.code, p, log)

    def _one_linear_log(self, g: Any, rows: list[Any]) -> None:
        code, seqs = g["code"], [r["seq"] for r in rows]
        if seqs and seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            self.violation(f"{code} game {g['id']}: sequence numbers {seqs}")
        engine = GAMES[g["game"]]
        options = _json(g["options"])
        state = engine.new_game(
            len(_json(g["seats"])), engine.stored_options(options), int(g["seed"])
        )
        for r in rows:
            try:
                state, _events = engine.apply(state, r["seat"], _json(r["action"]))
            except IllegalAction as err:
                self.violation(f"{code} game {g['id']} seq {r['seq']}: illegal in the log: {err}")
                return
        result = _json(g["result"]) if g["result"] is not None else None
        if result is not None and result.get("scores") != (engine.result(state) or {}).get(
            "scores"
        ):
            self.violation(f"{code} game {g['id']}: stored result {result} is not the log's")

    def _acked_in_log(self, code: str, p: Place, log: list[Any]) -> None:
        seat = p.ticket["seat"]
        mine = iter(_json(r["action"]) for r in log if r["seat"] == seat)
        for n, (_seat, action) in enumerate(p.acked):
            if not any(action == b for b in mine):
                self.violation(
                    f"{code} seat {seat}: acknowledged action {n} {action} is not in the log"
                    " in the order it was told"
                )
                return


def _describe(t: Table) -> str:
    """A room as its tabs last saw it: per seat, connected?, version, status,
    whose turn, whether it offered this seat moves, an action awaiting its ack."""
    seen = []
    for p in t.places:
        tab = p.tab
        if tab is None or tab.view is None:
            seen.append(f"{p.ticket['seat']}:-")
            continue
        g = tab.view.get("game") or {}
        seen.append(
            f"{p.ticket['seat']}:p{p.on} v{tab.v} {tab.status} turn {g.get('turn')}"
            f" legal {bool(tab.view.get('legal'))} pending {tab._pending}"
        )
    return f"{t.code} [{', '.join(seen)}]"


def _spread(xs: list[float]) -> str:
    """Median and largest, as "median/max"."""
    xs = sorted(xs)
    return f"{xs[len(xs) // 2]:.1f}/{xs[-1]:.1f}"


def _host_seat(g: Tab | None) -> int | None:
    if g is None or g.view is None:
        return None
    for i, s in enumerate(g.view["room"]["seats"]):
        if s is not None and s.get("host"):
            return i
    return None


def _json(value: Any) -> Any:
    import json

    return json.loads(value) if isinstance(value, str) else value
