"""Several real uvicorn processes on one PostgreSQL and one Redis (a private
redis-server the test starts, so it can restart it).

- A room opened through one process is joined and played to its end by
  clients spread over all of them.
- kill -9 of the owner mid-game: another process takes over within the lease
  plus 2 s; clients reconnect to any process with their tokens and go on; the
  log holds every acknowledged action.
- SIGSTOP of the owner past its lease, then SIGCONT: it writes nothing more and
  steps down.
- Redis restarted mid-game: rooms resync and go on.
- The socket caps count every process's sockets, and forget a killed
  process's within the lease.

Every game's log is checked for rows by an ended owner: each action carries
the epoch that wrote it, and along the log the epochs never go back.

Every frame every client gets, relayed or not, is checked for cards its seat
may not know (Big Two: one deck, so any card outside your hand and the cards
played so far is someone's secret).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from app.db.models import ActionRow, GameRow, Room
from tests.api.client import cards_in, public_played
from tests.db.backends import fresh_pg_database
from tests.integration.test_recovery import Server
from tests.services import free_port, require_redis
from tests.sockets import Player

pytestmark = pytest.mark.timeout(300)

LEASE = 1.5
SETTINGS = {"bot_delay": 0.05, "disconnect_grace": 600}


class Redis:
    """A redis-server of the test's own, on a free port, that it may restart."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port),
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                import socket

                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)


@contextlib.contextmanager
def private_redis() -> Iterator[Redis]:
    """A started redis-server of the test's own, killed at the end (SIGKILL:
    even one a test left stopped)."""
    require_redis()  # the machine's Redis tells us redis-server is installed
    redis = Redis()
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


@pytest.fixture
def stack() -> Iterator[tuple[str, Redis]]:
    """A fresh PostgreSQL database and a private Redis."""
    with fresh_pg_database() as url, private_redis() as redis:
        yield url, redis


def servers(database: str, redis: Redis, n: int, **settings: str) -> list[Server]:
    """`n` processes on `database` and `redis`; `settings` as environment variables."""
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "REDIS_URL": redis.url,
        "LEASE_SECONDS": str(LEASE),
        "MAX_MESSAGES_PER_SECOND": "1000",
        **settings,
    }
    out = [Server(env, free_port()) for _ in range(n)]
    for s in out:
        s.start()
    return out


def hostport(server: Server) -> str:
    return f"127.0.0.1:{server.port}"


def open_bigtwo(via: Server) -> tuple[str, list[dict[str, Any]]]:
    """A Big Two room opened through `via`: Ann (host), Bob and Cy; a bot fills seat 4."""
    base = f"http://{hostport(via)}"
    ann = httpx.post(
        f"{base}/api/rooms", json={"game": "bigtwo", "name": "Ann", "settings": SETTINGS}
    ).json()
    code = ann["code"]
    rest = [
        httpx.post(f"{base}/api/rooms/{code}/join", json={"name": n}).json() for n in ("Bob", "Cy")
    ]
    return code, [ann, *rest]


class Seat:
    """One person's tab, which reconnects (to whichever process it is told) and
    checks every frame for cards it may not know."""

    def __init__(self, ticket: dict[str, Any]) -> None:
        self.ticket = ticket
        self.player: Player | None = None
        self.public: set[str] = set()  # cards played so far, as this seat heard
        self.acked: list[tuple[int, dict[str, Any]]] = []
        self.frames = 0
        self.server: Server | None = None
        self.reconnects = 0

    def connect(self, server: Server) -> None:
        self.drop()
        self.server = server
        self.player = Player(hostport(server), self.ticket["code"], self.ticket)

    def reconnect(self) -> None:
        """What the browser does when its socket closes: come back, same token."""
        assert self.server is not None
        self.reconnects += 1
        with contextlib.suppress(Exception):
            self.connect(self.server)

    def drop(self) -> None:
        if self.player is not None:
            self.acked += self.player.acked
            with contextlib.suppress(Exception):
                self.player.close()
            self.player = None

    def pump(self, rng: random.Random) -> bool:
        """Read and act; False if the socket is gone."""
        p = self.player
        assert p is not None
        try:
            p.step(rng)
            seen = len(p.events)
            while p.read(0.005):
                self.frames += 1
            for ev in p.events[seen:]:
                if ev.get("type") == "played":
                    self.public.update(ev.get("cards", []))
            self.check()
        except Exception as err:
            if "ConnectionClosed" in type(err).__name__ or "closed" in str(err).lower():
                return False
            raise
        return True

    def check(self) -> None:
        p = self.player
        assert p is not None
        view = p.view
        if view is None or view["room"]["status"] != "playing" or view["game"] is None:
            return  # at the end every hand is shown
        assert view["you"]["seat"] == self.ticket["seat"], "a frame for another seat"
        game = view["game"]
        hand = set(game.get("hand") or [])
        # public: what was played, and the rule that the first play holds the 3 of clubs
        played, wrong = public_played(game)
        assert not wrong, f"seat {self.ticket['seat']}: {wrong}"
        public = self.public | played | set(cards_in([game.get("trick"), game.get("last_play")]))
        named = {game["must_include"]} if game.get("must_include") else set()
        leaked = set(cards_in(game)) - hand - public - named
        assert not leaked, f"seat {self.ticket['seat']} was shown {leaked}"


def play(seats: list[Seat], until: Any, rng: random.Random, within: float = 90) -> None:
    deadline = time.monotonic() + within
    while not until():
        assert time.monotonic() < deadline, f"the table stalled: {describe(seats)}"
        for s in seats:
            if s.player is None or not s.pump(rng):
                s.reconnect()


def describe(seats: list[Seat]) -> list[Any]:
    out: list[Any] = []
    for s in seats:
        p = s.player
        if p is None or p.view is None:
            out.append((s.ticket["seat"], "no view"))
            continue
        g = p.view["game"] or {}
        out.append(
            (s.ticket["seat"], p.v, p.status, g.get("to_act"), bool(p.view.get("legal")),
             list(p.replies.values())[-1:])
        )  # fmt: skip
    return out


def finished(seat: Seat) -> bool:
    p = seat.player
    return p is not None and p.view is not None and p.status == "finished"


def owner_port(database: str, redis: Redis, code: str) -> str | None:
    import redis as redis_lib

    raw = redis_lib.Redis.from_url(redis.url).get(f"cr:owner:{code}")
    return None if raw is None else raw.decode().split()[0]


def log_rows(database: str, code: str) -> list[Any]:
    """The room's actions, game by game in order: game_id, seat, action, epoch."""

    async def read() -> list[Any]:
        engine = create_async_engine(database)
        try:
            async with engine.connect() as conn:
                rows = await conn.execute(
                    select(ActionRow.game_id, ActionRow.seat, ActionRow.action, ActionRow.epoch)
                    .join(GameRow, GameRow.id == ActionRow.game_id)
                    .join(Room, Room.id == GameRow.room_id)
                    .where(Room.code == code)
                    .order_by(ActionRow.game_id, ActionRow.seq)
                )
                return list(rows.all())
        finally:
            await engine.dispose()

    return asyncio.run(read())


def logged(database: str, code: str) -> list[tuple[int | None, Any]]:
    return [(r.seat, r.action) for r in log_rows(database, code)]


def assert_no_row_by_an_ended_epoch(database: str, code: str) -> list[int]:
    """Each action is tagged with the owner epoch that wrote it: along each
    game's log the epochs never go back (an old owner that wrote after a
    newer one had taken over would show as a smaller epoch after a larger
    one).  The epochs seen, in order of first use."""
    seen: list[int] = []
    last: dict[int, int] = {}
    for r in log_rows(database, code):
        game_id, epoch = r.game_id, r.epoch
        assert epoch is not None and epoch >= 1, f"game {game_id}: an untagged row"
        assert epoch >= last.get(game_id, 0), f"game {game_id}: epoch {epoch} after {last}"
        last[game_id] = epoch
        if epoch not in seen:
            seen.append(epoch)
    return seen


def assert_all_acked_logged(database: str, code: str, seats: list[Seat]) -> int:
    assert_no_row_by_an_ended_epoch(database, code)
    log = logged(database, code)
    n = 0
    for s in seats:
        s.drop()
        mine = iter(a for seat, a in log if seat == s.ticket["seat"])
        missing = [a for _seat, a in s.acked if not any(a == b for b in mine)]
        assert not missing, f"acknowledged but not in the log: {missing[:3]}"
        n += len(s.acked)
    return n


def start_game(seats: list[Seat], rng: random.Random) -> None:
    host = seats[0].player
    assert host is not None
    for s in seats:
        assert s.player is not None
        while s.player.view is None:
            s.player.read(0.1)
    assert host.cmd("start").get("ok"), host.replies
    play(seats, lambda: all(s.player and s.player.status == "playing" for s in seats), rng)


def playing(
    owner: Server, where: list[Server], rng: random.Random, moves: int = 0
) -> tuple[str, list[Seat]]:
    """A Big Two room opened through `owner`, Ann, Bob and Cy connected to the
    processes in `where`, its game started and `moves` actions acknowledged."""
    code, tickets = open_bigtwo(owner)
    seats = [Seat(t) for t in tickets]
    for seat, proc in zip(seats, where, strict=True):
        seat.connect(proc)
    start_game(seats, rng)
    play(seats, lambda: sum(len(s.player.acked) for s in seats if s.player) >= moves, rng)
    return code, seats


def test_a_room_opened_on_one_process_is_played_to_its_end_from_three(
    stack: tuple[str, Redis],
) -> None:
    database, redis = stack
    procs = servers(database, redis, 3)
    rng = random.Random(5)
    try:
        # Ann and Bob are relayed, Cy is on the owner
        code, seats = playing(procs[0], [procs[1], procs[2], procs[0]], rng)
        play(seats, lambda: finished(seats[0]), rng)
        assert all(finished(s) for s in seats)
        # the lobby of the room answers on every process
        for proc in procs:
            r = httpx.get(f"http://{hostport(proc)}/api/rooms/{code}")
            assert r.status_code == 200 and r.json()["room"]["status"] == "finished"
        assert assert_all_acked_logged(database, code, seats) > 0
    finally:
        for p in procs:
            p.stop()


@pytest.mark.slow  # a fault: `make test-slow` (README, "Tests")
def test_kill_9_of_the_owner_mid_game_another_process_takes_over(
    stack: tuple[str, Redis],
) -> None:
    database, redis = stack
    procs = servers(database, redis, 2)
    owner, other = procs
    rng = random.Random(8)
    try:
        code, seats = playing(owner, [other, owner, other], rng, moves=4)
        first = owner_port(database, redis, code)
        killed = time.monotonic()
        owner.kill()
        # the process that holds relayed sockets takes the room over
        while owner_port(database, redis, code) in (None, first):
            assert time.monotonic() - killed < LEASE + 2, "no takeover within the lease + 2 s"
            time.sleep(0.02)
        took = time.monotonic() - killed
        assert took < LEASE + 2
        for s in seats:  # everyone reconnects to the survivor with the same token
            s.connect(other)
        play(seats, lambda: finished(seats[0]), rng)
        assert assert_all_acked_logged(database, code, seats) > 4
        assert len(assert_no_row_by_an_ended_epoch(database, code)) >= 2, "one owner wrote all"
        print(f"\ntakeover {took:.2f} s after kill -9 (lease {LEASE} s)")
    finally:
        for p in procs:
            p.stop()


@pytest.mark.slow  # a fault: `make test-slow` (README, "Tests")
def test_an_owner_paused_past_its_lease_writes_nothing_more_and_steps_down(
    stack: tuple[str, Redis],
) -> None:
    database, redis = stack
    procs = servers(database, redis, 2)
    owner, other = procs
    rng = random.Random(9)
    try:
        code, seats = playing(owner, [other, owner, other], rng, moves=2)
        assert owner.proc is not None
        before = len(logged(database, code))
        owner.proc.send_signal(signal.SIGSTOP)
        # Bob's socket is on the paused owner: what he sends waits in its buffers
        bob = seats[1].player
        assert bob is not None
        bob.send(cmd={"type": "chat", "text": "am I still here?"})
        time.sleep(LEASE + 1.5)
        new_owner = owner_port(database, redis, code)
        assert new_owner is not None, "the other process took the room"
        for s in (seats[0], seats[2]):
            s.connect(other)
        # Bob opens a second tab on the other process: the turn may be his, and
        # his first socket waits on the paused owner (without it the table waited
        # out the 600 s grace whenever the pause fell on Bob's turn)
        bob_tab = Seat(seats[1].ticket)
        bob_tab.public = set(seats[1].public)
        bob_tab.connect(other)
        on_other = [seats[0], bob_tab, seats[2]]
        play(on_other, lambda: len(logged(database, code)) > before + 1, rng)
        bob_tab.drop()
        owner.proc.send_signal(signal.SIGCONT)
        # the old owner finds its lease gone and steps down: Bob is sent away
        deadline = time.monotonic() + 10
        closed = False
        while time.monotonic() < deadline and not closed:
            try:
                bob.read(0.1)
            except Exception:
                closed = True
        assert closed, "the old owner kept serving the room"
        assert owner_port(database, redis, code) == new_owner
        seats[1].drop()
        seats[1].acked += bob_tab.acked  # after the first tab's, as they were logged
        seats[1].connect(other)
        play(seats, lambda: finished(seats[0]), rng)
        assert assert_all_acked_logged(database, code, seats) > 2
    finally:
        if owner.proc is not None and owner.proc.poll() is None:
            owner.proc.send_signal(signal.SIGCONT)
        for p in procs:
            p.stop()


@pytest.mark.slow  # a fault: `make test-slow` (README, "Tests")
def test_redis_restarted_mid_game_rooms_resync_and_go_on(stack: tuple[str, Redis]) -> None:
    database, redis = stack
    procs = servers(database, redis, 2)
    rng = random.Random(10)
    try:
        code, seats = playing(procs[0], [procs[1], procs[0], procs[1]], rng, moves=3)
        redis.stop()
        time.sleep(0.5)
        redis.start()  # empty: no leases, no streams, no epoch counters
        # clients are sent away, reconnect, and the game goes on
        play(seats, lambda: finished(seats[0]), rng, within=120)
        assert sum(s.reconnects for s in seats) > 0
        assert assert_all_acked_logged(database, code, seats) > 3
    finally:
        for p in procs:
            p.stop()


@contextlib.contextmanager
def knock(
    server: Server, code: str, ticket: dict[str, Any]
) -> Iterator[tuple[ClientConnection, Any]]:
    """A tab's socket to `server`, authenticated, and the first thing it is told."""
    with connect(f"ws://{hostport(server)}/ws/rooms/{code}") as ws:
        with contextlib.suppress(ConnectionClosed):  # a refusal may come before the token
            ws.send(json.dumps({"auth": ticket["token"]}))
        yield ws, json.loads(ws.recv(timeout=10))


def refused(server: Server, code: str, ticket: dict[str, Any]) -> str:
    """Why a socket to `server` is refused for too many sockets."""
    with knock(server, code, ticket) as (ws, msg):
        assert msg.get("error", {}).get("code") == "too_many_sockets", msg
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4429
    return str(msg["error"]["message"])


def test_socket_caps_count_every_process_and_forget_a_killed_one_within_the_lease(
    stack: tuple[str, Redis],
) -> None:
    """Every test client is 127.0.0.1: one address, at most 4 sockets, and 2 a seat."""
    database, redis = stack
    a, b = servers(database, redis, 2, MAX_SOCKETS_PER_SEAT="2", MAX_SOCKETS_PER_ADDRESS="4")
    try:
        code, (ann, bob, cy) = open_bigtwo(b)  # b owns the room: a only holds sockets
        with contextlib.ExitStack() as tabs:

            def opened(server: Server, ticket: dict[str, Any]) -> None:
                _ws, msg = tabs.enter_context(knock(server, code, ticket))
                assert "view" in msg, msg

            opened(a, ann)
            opened(a, ann)
            # Ann's two tabs on a fill her seat's places on b too
            assert "this seat has too many open sockets (at most 2)" in refused(b, code, ann)
            opened(b, bob)
            opened(a, cy)
            # and the address's four sockets, three of them on a, fill a's places
            assert "from your address (at most 4)" in refused(a, code, bob)
            killed = time.monotonic()
            a.kill()  # SIGKILL: a removes nothing from Redis
            refusals = 0
            while True:
                with knock(b, code, ann) as (_ws, msg):
                    if "view" in msg:
                        break
                assert msg["error"]["code"] == "too_many_sockets", msg
                refusals += 1
                assert time.monotonic() - killed < LEASE + 1, "a's sockets outlived the lease"
                time.sleep(0.05)
        took = time.monotonic() - killed
        assert refusals > 0, "a's sockets stopped counting before the lease ran out"
        print(f"\na killed process's sockets stopped counting {took:.2f} s after kill -9")
    finally:
        for p in (a, b):
            p.stop()
