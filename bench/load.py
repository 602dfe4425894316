"""Load test: N rooms of 4 WebSocket players against a real uvicorn, compared
with a bare FastAPI fan-out server (bench/bare_server.py) in the same run.

    .venv/bin/python bench/load.py --rooms 100,1000 --duration 15 --rounds 3

For each server (the card room with Big Two, then the bare server) and each
room count, a fresh uvicorn subprocess is started on a free loopback port and
a client subprocess drives it in two modes:

- paced: each room acts once a second (staggered), as a busy evening would;
- saturation: each room keeps exactly one action outstanding, acting again as
  soon as its previous action's views have reached all four players.

Latency is from an action's send to the moment the last of its room's four
players has received the view of that change.  Server CPU (% of one core) and
memory come from psutil on the server process over the measured window.
The client runs in its own process, on uvloop as the servers do, so the two do
not share an event loop and the client needs less of its core than either
server needs of its own (else the client, not the server, sets the figure).
On a shared 2-core machine a run's figures can swing by half from one minute
to the next, so `--rounds` repeats everything with the servers taking turns
and the summary reports medians (see `parent_main`).
The card room stores every action in a freshly migrated SQLite file before
sending its views, as `make run` does (BENCH_DATABASE_URL names another
database, e.g. PostgreSQL).

`--servers batched,strongbots --bot-rooms 25` adds, beside the measured
rooms, 25 rooms where four strong bots play Big Two on their own: the paced
p99 of the measured rooms against `batched` (the same server without them)
says what strong bots thinking cost everyone else (their searches run in
worker processes, app/bots/thinking.py); `normalbots` is the same with
heuristic bots.

Timings on a shared VM swing by a quarter from minute to minute, which hides
a change worth a few percent.  `--callgrind` runs each server under valgrind's
callgrind instead, zeroes its counters as the measured window opens and dumps
them as it closes, and prints the instructions the server spent per action:
the same code gives the same figure to within about 2%, so two versions can
be compared in one run each (slowly: under valgrind a server makes about 150
actions a second, so use few rooms, e.g. `--rooms 20 --modes saturation
--servers batched --warmup 30 --duration 30`).  For `owner` and `spread`
every process runs under callgrind and the figure is their sum per action,
so `spread` against `batched` is what relaying costs.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
sys.path.insert(0, str(ROOT))
#: every client comes from 127.0.0.1: the per-address limits on opening rooms,
#: joining, looking rooms up and holding sockets would stop the load at once
OPEN_DOORS = {
    "ROOMS_PER_HOUR": "1000000",
    "JOINS_PER_MINUTE": "1000000",
    "LOOKUPS_PER_MINUTE": "1000000",
    "MAX_SOCKETS_PER_ADDRESS": "1000000",
}

from bench import callgrind as callgrind_run  # noqa: E402
from bench.cluster import cluster_servers, failover_main  # noqa: E402

# --------------------------------------------------------------------- client


class LiteSocket(asyncio.Protocol):
    """A minimal WebSocket client (RFC 6455, no extensions) that parses frames
    straight in `data_received` and hands each message to a callback.  A general
    client library costs more per message than the servers under test spend, so
    with it the client, not the server, would set the saturation figure."""

    def __init__(self, on_message: Any) -> None:
        self.on_message = on_message
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.parts: list[bytes] = []
        self.open: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.rng = random.Random()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no asyncio.Transport

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.open.done():
            self.open.set_exception(ConnectionError("closed during the handshake"))

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        if not self.open.done():
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(buf[: buf.find(b"\r\n")])
            del buf[: end + 4]
            if b" 101 " not in status:
                self.open.set_exception(ConnectionError(status.decode(errors="replace")))
                return
            self.open.set_result(None)
        while len(buf) >= 2:
            b0, b1 = buf[0], buf[1]
            size, pos = b1 & 0x7F, 2
            if size == 126:
                if len(buf) < 4:
                    return
                size, pos = int.from_bytes(buf[2:4], "big"), 4
            elif size == 127:
                if len(buf) < 10:
                    return
                size, pos = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) < pos + size:
                return
            payload = bytes(buf[pos : pos + size])
            del buf[: pos + size]
            op = b0 & 0x0F
            if op in (0x1, 0x2, 0x0):
                self.parts.append(payload)
                if b0 & 0x80:
                    msg = self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)
                    self.parts = []
                    self.on_message(msg)
            elif op == 0x9:
                self._frame(0xA, payload)
            elif op == 0x8 and self.transport is not None:
                self.transport.close()

    def _frame(self, op: int, data: bytes) -> None:
        n = len(data)
        head = bytes([0x80 | op])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        key = self.rng.getrandbits(32).to_bytes(4, "big")
        mask = (key * (n // 4 + 1))[:n]
        body = (int.from_bytes(data, "big") ^ int.from_bytes(mask, "big")).to_bytes(n, "big")
        assert self.transport is not None
        self.transport.write(head + key + body)

    def send_text(self, text: str) -> None:
        self._frame(0x1, text.encode())

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self._frame(0x8, (1000).to_bytes(2, "big"))
            self.transport.close()


async def lite_connect(port: int, path: str, on_message: Any) -> LiteSocket:
    loop = asyncio.get_running_loop()
    transport, proto = await loop.create_connection(
        lambda: LiteSocket(on_message), "127.0.0.1", port
    )
    proto.transport = transport  # uvloop calls connection_made only after this returns
    key = base64.b64encode(random.randbytes(16)).decode()
    request = (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    transport.write(request.encode())
    await asyncio.wait_for(proto.open, 30)
    return proto


@dataclass
class Player:
    seat: int
    ws: Any = None
    view: dict[str, Any] | None = None
    v: int = -1


@dataclass
class RoomDriver:
    """One room's four players; at most one change of ours in flight."""

    index: int
    stats: Stats
    players: list[Player] = field(default_factory=list)
    pending: tuple[int, float, bool] | None = None  # expected v, sent at, is a game action
    seen: int = 0
    next_id: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    rng: random.Random = field(default_factory=random.Random)

    def on_view(self, p: Player, v: int, view: dict[str, Any], now: float) -> None:
        if "room" not in view and p.view is not None:  # batched: unchanged, as last sent
            view["room"] = p.view.get("room")
        p.view, p.v = view, v
        pend = self.pending
        if pend is not None and v >= pend[0]:
            self.seen |= 1 << p.seat
            if self.seen == 0b1111:
                self.pending = None
                self.stats.done(pend[1], now, pend[2])
                self.wake.set()

    def on_error(self, error: dict[str, Any]) -> None:
        self.stats.errors += 1
        if self.stats.errors <= 5:
            print("refused:", error, file=sys.stderr)
        self.pending = None
        self.wake.set()

    def act(self) -> bool:
        """Send the next move (or a rematch); False when nothing can be sent yet."""
        if self.pending is not None:
            return False
        vs = {p.v for p in self.players}
        if len(vs) != 1:
            return False
        v = vs.pop()
        host = self.players[0]
        msg: dict[str, Any] | None = None
        is_action = False
        for p in self.players:
            view = p.view or {}
            if view.get("legal"):
                msg = {"action": self.rng.choice(view["legal"])}
                actor, is_action = p, True
                break
        else:
            status = ((host.view or {}).get("room") or {}).get("status")
            if status != "finished":
                return False
            msg, actor = {"cmd": {"type": "rematch"}}, host
        self.next_id += 1
        msg["id"] = self.next_id
        self.seen = 0
        self.pending = (v + 1, time.perf_counter(), is_action)
        actor.ws.send_text(_dumps(msg))
        return True


@dataclass
class Stats:
    measuring: bool = False
    latencies: list[float] = field(default_factory=list)
    actions: int = 0
    changes: int = 0
    errors: int = 0
    late: int = 0

    def done(self, sent: float, now: float, is_action: bool) -> None:
        if not self.measuring:
            return
        self.changes += 1
        if is_action:
            self.actions += 1
            self.latencies.append(now - sent)


def _dumps(obj: Any) -> str:
    import orjson

    return orjson.dumps(obj).decode()


def _receiver(room: RoomDriver, p: Player) -> Any:
    import orjson

    def on_message(raw: bytes) -> None:
        parsed = orjson.loads(raw)
        for m in parsed if isinstance(parsed, list) else (parsed,):
            if "view" in m:
                room.on_view(p, m["v"], m["view"], time.perf_counter())
            elif "error" in m:
                room.on_error(m["error"])

    return on_message


async def _post(http: Any, url: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST with a few retries: thousands of set-up requests at once can meet a
    connection the server has just closed (keep-alive expiry).

    Only a request the server cannot have acted on is sent again: one that
    found no connection, or whose connection was closed with no response
    (`RemoteProtocolError`, what that expiry gives).  A timeout or an error
    status may come after the room was made or the seat taken, and a second
    room would make every later room's deals one further along the guard's
    DEAL_CYCLE (bench/guard.py): those fail the run instead."""
    import httpx

    for attempt in range(5):
        try:
            r = await http.post(url, json=body)
        except (httpx.ConnectError, httpx.RemoteProtocolError):
            if attempt == 4:
                raise
            await asyncio.sleep(0.2 * (attempt + 1))
            continue
        r.raise_for_status()
        return dict(r.json())
    raise AssertionError("unreachable")


async def _setup_real(
    base: str,
    ports: list[int],
    n: int,
    game: str,
    batch: bool,
    spread: bool = False,
    legacy: bool = False,
) -> list[RoomDriver]:
    """Rooms opened through the first server (which owns them); each room's
    four sockets on that server, or - `spread` - taking the servers in turn."""
    import httpx

    stats = Stats()
    rooms: list[RoomDriver] = []
    sem = asyncio.Semaphore(50)
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:

        async def one(i: int) -> RoomDriver:
            async with sem:
                settings = {"bot_delay": 0}
                body = {"game": game, "name": f"H{i}", "settings": settings}
                t = await _post(http, "/api/rooms", body)
                tickets = [t]
                for k in range(3):
                    tickets.append(
                        await _post(http, f"/api/rooms/{t['code']}/join", {"name": f"P{i}.{k}"})
                    )
                room = RoomDriver(i, stats, rng=random.Random(i))
                for seat, tk in enumerate(tickets):
                    p = Player(seat)
                    # the `before` server may predate the first-message token
                    path = f"/ws/rooms/{t['code']}" + (
                        f"?token={tk['token']}" + ("&batch=1" if batch else "") if legacy else ""
                    )
                    port = ports[seat % len(ports)] if spread else ports[0]
                    p.ws = await lite_connect(port, path, _receiver(room, p))
                    if not legacy:
                        p.ws.send_text(json.dumps({"auth": tk["token"], "batch": batch}))
                    room.players.append(p)
                return room

        rooms = list(await asyncio.gather(*(one(i) for i in range(n))))
    await asyncio.sleep(0.5)
    # a socket the server closed while setting up (under valgrind its first
    # message can miss the server's deadline) never gets a view: say so
    # rather than wait for ever
    deadline = time.monotonic() + SETUP_WAIT
    for room in rooms:  # the host starts the game; wait for everyone's view
        host = room.players[0]
        room.next_id += 1
        while len({p.v for p in room.players}) != 1 or host.v < 0:
            _setup_late(deadline, room, "its sockets' first views")
            await asyncio.sleep(0.05)
        room.seen = 0
        room.pending = (host.v + 1, time.perf_counter(), False)
        host.ws.send_text(_dumps({"id": room.next_id, "cmd": {"type": "start"}}))
    for room in rooms:
        while room.pending is not None:
            _setup_late(deadline, room, "the view of its game's start")
            await asyncio.sleep(0.05)
    return rooms


#: seconds the client waits for its rooms to be set up (under callgrind a
#: thousand sockets take minutes)
SETUP_WAIT = 900.0


def _setup_late(deadline: float, room: RoomDriver, what: str) -> None:
    if time.monotonic() > deadline:
        versions = [p.v for p in room.players]
        raise SystemExit(
            f"room {room.index} never had {what} in {SETUP_WAIT:.0f} s (versions by seat "
            f"{versions}): a socket closed while setting up?"
        )


async def _setup_bare(port: int, n: int) -> list[RoomDriver]:
    stats = Stats()
    sem = asyncio.Semaphore(100)

    async def one(i: int) -> RoomDriver:
        room = RoomDriver(i, stats, rng=random.Random(i))
        async with sem:
            for seat in range(4):
                p = Player(seat)
                p.ws = await lite_connect(port, f"/ws/R{i}/{seat}", _receiver(room, p))
                room.players.append(p)
        return room

    rooms = list(await asyncio.gather(*(one(i) for i in range(n))))
    while any(len({p.v for p in r.players}) != 1 or r.players[0].v < 0 for r in rooms):
        await asyncio.sleep(0.05)
    return rooms


#: server kinds whose server also runs `--bot-rooms` rooms of bots alone, at
#: that level (batched sockets, as `batched`): the measured rooms' figures
#: against `batched` say what those bots cost everyone else
BOT_KINDS = {"strongbots": "strong", "normalbots": "normal"}
#: the yardstick; the yardstick storing each message first; and that one
#: playing real Big Two through the engine as well
BARE_KINDS = ("bare", "barestore", "barerules")


async def _bot_rooms(
    base: str, port: int, n: int, game: str, level: str, seen: list[int]
) -> list[LiteSocket]:
    """`n` rooms where four bots at `level` play on their own, watched by their
    host (who stood up), at the default bot delay; the host asks for a
    rematch whenever a game ends, so they play all through the run.  Their
    host sockets are returned, to be closed at the end; `seen[0]` counts the
    views they get (so a run shows the bots did play)."""
    import httpx
    import orjson

    async def one(http: Any, i: int) -> LiteSocket:
        t = await _post(http, "/api/rooms", {"game": game, "name": f"B{i}"})
        asked: set[int] = set()

        def on_message(raw: bytes) -> None:
            parsed = orjson.loads(raw)
            for m in parsed if isinstance(parsed, list) else (parsed,):
                seen[0] += "view" in m
                room = (m.get("view") or {}).get("room") or {}
                played = room.get("games_played", 0)
                if room.get("status") == "finished" and played not in asked:
                    asked.add(played)
                    ws.send_text(_dumps({"id": 1000 + played, "cmd": {"type": "rematch"}}))

        ws = await lite_connect(port, f"/ws/rooms/{t['code']}", on_message)
        ws.send_text(json.dumps({"auth": t["token"], "batch": True}))
        commands: list[dict[str, Any]] = [{"type": "sit", "seat": None}]
        commands += [{"type": "add_bot", "level": level, "seat": s} for s in range(4)]
        for k, cmd in enumerate([*commands, {"type": "start"}]):
            ws.send_text(_dumps({"id": k + 1, "cmd": cmd}))
        return ws

    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        return [await one(http, i) for i in range(n)]


async def _paced(room: RoomDriver, stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    await asyncio.sleep(random.random())
    next_t = loop.time()
    while not stop.is_set():
        if room.pending is not None:
            room.stats.late += 1 if room.stats.measuring else 0
        else:
            room.act()
        next_t += 1.0
        await asyncio.sleep(max(0.0, next_t - loop.time()))


async def _saturate(room: RoomDriver, stop: asyncio.Event) -> None:
    while not stop.is_set():
        room.wake.clear()
        if not room.act():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(room.wake.wait(), 0.5)
            continue
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(room.wake.wait(), 5.0)


async def client_main(args: argparse.Namespace) -> dict[str, Any]:
    import psutil

    base = f"http://127.0.0.1:{args.port}"
    t_setup = time.perf_counter()
    if args.server in BARE_KINDS:
        rooms = await _setup_bare(args.port, args.rooms)
    else:
        batch = args.server in ("batched", "before", "owner", "spread", *BOT_KINDS)
        ports = [int(x) for x in args.ports.split(",")] if args.ports else [args.port]
        spread = args.server == "spread"
        legacy = args.server == "before" and args.before_url_token
        rooms = await _setup_real(base, ports, args.rooms, args.game, batch, spread, legacy)
    bots: list[LiteSocket] = []
    bot_views = [0]
    if args.server in BOT_KINDS and args.bot_rooms:
        level = BOT_KINDS[args.server]
        bots = await _bot_rooms(base, args.port, args.bot_rooms, "bigtwo", level, bot_views)
    setup_s = time.perf_counter() - t_setup
    stats = rooms[0].stats
    stop = asyncio.Event()
    # The client's own collector stays off from here: with 4,000 sockets' views
    # alive its passes took 10 to 50 ms, and a frame that waits for one counts
    # as the server's latency.  Little of what it makes from now on is cyclic,
    # and a run lasts seconds.
    gc.collect()
    gc.freeze()
    gc.disable()
    pids = [int(x) for x in args.server_pids.split(",")] if args.server_pids else [args.server_pid]
    if args.callgrind:  # counting starts with the warm-up (bench/callgrind.py)
        for pid in pids:
            callgrind_run.instrument(pid)
    runner = _paced if args.mode == "paced" else _saturate
    tasks = [asyncio.create_task(runner(r, stop)) for r in rooms]
    await asyncio.sleep(args.warmup)
    servers = [psutil.Process(pid) for pid in pids]
    me = psutil.Process()
    if args.callgrind:  # count the servers' instructions over the window only
        for pid in pids:
            callgrind_run.zero(pid)
    c0, m0, t0 = _cpu(servers), me.cpu_times(), time.perf_counter()
    views0 = bot_views[0]
    # the servers' worker processes (strong bots think there), as they stand now
    kids0 = {k.pid: k for srv in servers for k in srv.children(recursive=True)}
    k0 = _cpu(list(kids0.values()))
    stats.measuring = True
    await asyncio.sleep(args.duration)
    stats.measuring = False
    c1, m1, t1 = _cpu(servers), me.cpu_times(), time.perf_counter()
    views1 = bot_views[0]
    k1 = _cpu([k for k in kids0.values() if k.is_running()])
    if args.callgrind:
        for pid in pids:
            callgrind_run.dump(pid)
    rss = sum(srv.memory_info().rss for srv in servers)
    stop.set()
    for t in tasks:
        t.cancel()
    wall = t1 - t0
    lat = sorted(stats.latencies)

    def pct(q: float) -> float:
        return round(1000 * lat[min(len(lat) - 1, int(q * len(lat)))], 2) if lat else float("nan")

    result = {
        "server": args.server,
        "rooms": args.rooms,
        "mode": args.mode,
        "actions": stats.actions,
        "actions_per_s": round(stats.actions / wall, 1),
        "changes_per_s": round(stats.changes / wall, 1),
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "max_ms": round(1000 * lat[-1], 2) if lat else float("nan"),
        "server_cpu_pct": round(100 * ((c1.user + c1.system) - (c0.user + c0.system)) / wall, 1),
        "client_cpu_pct": round(100 * ((m1.user + m1.system) - (m0.user + m0.system)) / wall, 1),
        "server_rss_mb": round(rss / 2**20, 1),
        "server_cpu_us_per_action": round(
            1e6 * ((c1.user + c1.system) - (c0.user + c0.system)) / max(1, stats.actions), 1
        ),
        "server_sys_us_per_action": round(1e6 * (c1.system - c0.system) / max(1, stats.actions), 1),
        "errors": stats.errors,
        "late_ticks": stats.late,
        "setup_s": round(setup_s, 1),
        "workers_cpu_pct": round(100 * ((k1.user + k1.system) - (k0.user + k0.system)) / wall, 1),
        # views the bot rooms' hosts got a second in the window (their games going on)
        "bot_room_views_per_s": round((views1 - views0) / wall, 1),
    }
    for r in rooms:
        for p in r.players:
            with contextlib.suppress(Exception):
                p.ws.close()
    for ws in bots:
        with contextlib.suppress(Exception):
            ws.close()
    return result


def _cpu(procs: list[Any]) -> Any:
    """User and system CPU seconds of all the server processes together."""
    from types import SimpleNamespace

    times = [p.cpu_times() for p in procs]
    return SimpleNamespace(user=sum(t.user for t in times), system=sum(t.system for t in times))


# --------------------------------------------------------------------- parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _export(rev: str) -> Path:
    """The project as it stood at git revision `rev`, in a temporary folder:
    the `before` server runs from there, so one run compares two versions."""
    out = Path(tempfile.mkdtemp(prefix="cardroom-before-"))
    archive = subprocess.run(
        ["git", "archive", rev], cwd=ROOT, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


_EXPORTS: dict[str, Path] = {}


def _start_server(
    kind: str,
    port: int,
    callgrind: Path | None = None,
    before: str = "",
    log: Path | None = None,
    extra_env: dict[str, str] | None = None,
    cache_sim: bool = False,
    last_level: str = "",
    branch_sim: bool = False,
) -> subprocess.Popen[bytes]:
    """The server on `port`; its output goes to `log` when given (bench/soak.py
    reads it for errors); `extra_env` is added to its environment;
    `cache_sim`, `last_level`, `branch_sim`: under callgrind, its caches or
    branch prediction simulated too (bench/callgrind.py)."""
    target = "bench.bare_server:app" if kind in BARE_KINDS else "app.main:app"  # real, batched
    root = ROOT
    if kind == "before":
        if before not in _EXPORTS:
            _EXPORTS[before] = _export(before)
        root = _EXPORTS[before]
    cmd = [
        PYTHON, "-m", "uvicorn", target, "--host", "127.0.0.1", "--port", str(port),
        "--ws", "websockets-sansio", "--ws-per-message-deflate", "false",
        "--ws-max-size", "65536", "--log-level", "warning", "--no-access-log",
        "--backlog", "4096",
    ]  # fmt: skip
    # saturation drives one socket far past a person's pace: lift the flood limit
    env = {
        **os.environ,
        "PYTHONPATH": str(root),
        "MAX_MESSAGES_PER_SECOND": "100000",
        **OPEN_DOORS,
        **(extra_env or {}),
    }
    data: Path | None = None  # a folder made here for the server's database
    if kind in ("barestore", "barerules"):  # bare, each message stored before its views go out
        if kind == "barerules":  # and checked and applied by the Big Two engine first
            env["BARE_RULES"] = "1"
        if "BARE_STORE" not in env:
            data = Path(tempfile.mkdtemp(prefix="cardroom-bench-"))
            env["BARE_STORE"] = str(data / "bare.db")
    elif kind != "bare":
        # the real server as `make run` serves it: every action committed to a
        # freshly migrated SQLite file before its views go out
        if "BENCH_DATABASE_URL" in env:
            env["DATABASE_URL"] = env["BENCH_DATABASE_URL"]
        else:
            data = Path(tempfile.mkdtemp(prefix="cardroom-bench-"))
            env["DATABASE_URL"] = f"sqlite+aiosqlite:///{data / 'cardroom.db'}"
        subprocess.run(
            [PYTHON, "-m", "alembic", "upgrade", "head"],
            cwd=root, env=env, check=True, capture_output=True,
        )  # fmt: skip
    if callgrind is not None:
        cmd = callgrind_run.wrap(cmd, callgrind, cache_sim, last_level, branch_sim)
        env["AUTH_TIMEOUT"] = "120"  # a first message read late under valgrind is not late
    out = log.open("wb") if log is not None else None
    proc = subprocess.Popen(
        cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT if out else None
    )
    if data is not None:
        _DATA[proc.pid] = data
    # under valgrind on a busy shared machine, starting alone takes minutes
    deadline = time.time() + (1800 if callgrind is not None else 30)
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc
        except OSError:
            time.sleep(0.1)
    stop_server(proc, grace=0)
    raise RuntimeError(f"{kind} server did not start")


def _run_client(
    kind: str,
    port: int,
    pid: int,
    rooms: int,
    mode: str,
    args: argparse.Namespace,
    ports: list[int] | None = None,
    pids: list[int] | None = None,
) -> dict[str, Any]:
    cmd = [
        PYTHON, __file__, "--client", "--server", kind, "--port", str(port),
        "--server-pid", str(pid), "--rooms", str(rooms), "--mode", mode,
        "--ports", ",".join(map(str, ports or [port])),
        "--server-pids", ",".join(map(str, pids or [pid])),
        "--duration", str(args.duration), "--warmup", str(args.warmup), "--game", args.game,
        "--bot-rooms", str(args.bot_rooms),
        *(["--callgrind"] if args.callgrind else []),
        *(["--before-url-token"] if args.before_url_token else []),
    ]  # fmt: skip
    slack = 3600 if args.callgrind else 300  # under valgrind, setting up rooms takes minutes
    out = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=args.duration * 10 + slack
    )
    if out.returncode != 0:
        raise RuntimeError(f"client failed: {out.stderr[-2000:]}")
    if out.stderr.strip():
        print(out.stderr.strip()[-1000:], file=sys.stderr)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _one_run(kind: str, n: int, mode: str, args: argparse.Namespace) -> dict[str, Any]:
    callgrind = (
        Path(tempfile.mkdtemp(prefix="cardroom-callgrind-")) / "server" if args.callgrind else None
    )
    if kind in ("owner", "spread"):
        with cluster_servers(args.processes, callgrind) as (procs, ports):
            pids = [p.pid for p in procs]
            result = _run_client(kind, ports[0], pids[0], n, mode, args, ports, pids)
            if callgrind is not None:  # every process's instructions, per action
                result["instructions_per_action"] = sum(
                    _instructions(callgrind, pid, result) for pid in pids
                )
            return result
    port = _free_port()
    proc = _start_server(kind, port, callgrind, args.before)
    try:
        result = _run_client(kind, port, proc.pid, n, mode, args)
        if callgrind is not None:
            result["instructions_per_action"] = _instructions(callgrind, proc.pid, result)
        return result
    finally:
        stop_server(proc, grace=10)


def stop_server(proc: subprocess.Popen[bytes], grace: float = 20.0) -> None:
    """Stop a server this bench started, by its own handle: SIGTERM (under
    callgrind it writes its last counts then), SIGKILL past `grace` seconds;
    then remove the folder `_start_server` made for its database, if any."""
    proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(grace)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    data = _DATA.pop(proc.pid, None)
    if data is not None:
        shutil.rmtree(data, ignore_errors=True)


#: the folder `_start_server` made for each server's database, by its pid
_DATA: dict[int, Path] = {}


def _instructions(out: Path, pid: int, result: dict[str, Any]) -> float:
    """The server's instructions per action over the measured window, from the
    dump the client asked for at its end (the counters were zeroed at its start)."""
    dump = Path(f"{out}.{pid}.1")
    for line in dump.read_text(errors="replace").splitlines():
        if line.startswith("summary:"):
            counted = int(line.split()[1])
            if not counted:  # counting never turned on: a figure of nothing
                raise RuntimeError(f"callgrind counted nothing in {dump}")
            return round(counted / max(1, result["actions"]))
    raise RuntimeError(f"no summary in {dump}")


def _median(xs: list[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def parent_main(args: argparse.Namespace) -> None:
    """Each round runs every server once per room count and mode, the servers in
    turn, so a slow patch of a shared machine falls on both sides of a ratio;
    the summary gives each figure's median over the rounds, and the median of
    the rounds' own ratios."""
    counts = [int(x) for x in args.rooms_list.split(",")]
    modes = args.modes.split(",")
    kinds = args.servers.split(",")
    results: list[dict[str, Any]] = []
    for rnd in range(1, args.rounds + 1):
        for n in counts:
            for mode in modes:
                for kind in kinds:
                    r = _one_run(kind, n, mode, args)
                    r["round"] = rnd
                    results.append(r)
                    print(_row(r), flush=True)
    print()
    print(_HEADER)
    for r in results:
        print(_row(r))
    print()
    for n in counts:

        def runs(kind: str, mode: str, n: int = n) -> list[dict[str, Any]]:
            return [r for r in results if (r["rooms"], r["server"], r["mode"]) == (n, kind, mode)]

        bare = runs("bare", "saturation")
        for kind in (
            "real", "batched", "before", "owner", "spread", "barestore", "barerules", *BOT_KINDS
        ):  # fmt: skip
            sat, paced = runs(kind, "saturation"), runs(kind, "paced")
            if sat and bare:
                per_round = [
                    s["actions_per_s"] / b["actions_per_s"]
                    for s in sat
                    for b in bare
                    if s["round"] == b["round"] and b["actions_per_s"]
                ]
                a_real = _median([r["actions_per_s"] for r in sat])
                a_bare = _median([r["actions_per_s"] for r in bare])
                spread = ", ".join(f"{100 * x:.0f}%" for x in per_round)
                print(
                    f"{kind} saturation at {n} rooms: {a_real:.0f}/s vs bare {a_bare:.0f}/s "
                    f"(medians of {len(sat)}); ratio by round {spread}; median "
                    f"{100 * _median(per_round):.0f}% (target >= 70%)"
                )
                capped = [b for b in bare if b["client_cpu_pct"] >= 95 > b["server_cpu_pct"]]
                if capped:
                    print(
                        f"  bare at {n} rooms was held back by the load client in "
                        f"{len(capped)} of {len(bare)} rounds (client at >= 95% of a core, "
                        "server below): there the ratio flatters the card room"
                    )
                # the client or other load on the machine can cap either run; server CPU
                # per action says what each server would reach with a core to itself
                us_real = _median([r["server_cpu_us_per_action"] for r in sat])
                us_bare = _median([r["server_cpu_us_per_action"] for r in bare])
                print(
                    f"{kind} CPU per action at {n} rooms: {us_real:.0f} us vs bare "
                    f"{us_bare:.0f} us = {100 * us_bare / us_real:.0f}% "
                    f"(one core: ~{1e6 / us_real:.0f} vs ~{1e6 / us_bare:.0f} actions/s)"
                )
            if paced:
                p99 = [r["p99_ms"] for r in paced]
                print(
                    f"{kind} paced at {n} rooms: p99 {_median(p99)} ms (median of "
                    f"{len(p99)}: {', '.join(str(x) for x in p99)}; target < 50 ms)"
                )
        room = runs("batched", "saturation")
        for floor in ("barestore", "barerules"):
            # the card room against a yardstick that stores (and plays) as it does
            stored = runs(floor, "saturation")
            if not (stored and room):
                continue
            us_room = _median([r["server_cpu_us_per_action"] for r in room])
            us_stored = _median([r["server_cpu_us_per_action"] for r in stored])
            print(
                f"batched CPU per action at {n} rooms: {us_room:.0f} us vs {floor} "
                f"{us_stored:.0f} us = {100 * us_stored / us_room:.0f}%"
            )
        plain = runs("batched", "paced")
        for kind, level in BOT_KINDS.items():
            with_bots = runs(kind, "paced")
            if not (with_bots and plain):
                continue
            per_round = [
                b["p99_ms"] / p["p99_ms"]
                for b in with_bots
                for p in plain
                if b["round"] == p["round"] and p["p99_ms"]
            ]
            ratio = _median([r["p99_ms"] for r in with_bots]) / _median(
                [r["p99_ms"] for r in plain]
            )
            print(
                f"paced p99 at {n} rooms with {args.bot_rooms} rooms of {level} bots beside "
                f"them: {100 * ratio:.0f}% of batched without (medians); by round "
                f"{', '.join(f'{100 * x:.0f}%' for x in per_round)} (target <= 120%)"
            )
        strong, normal = runs("strongbots", "paced"), runs("normalbots", "paced")
        if strong and normal:
            ratio = _median([r["p99_ms"] for r in strong]) / _median([r["p99_ms"] for r in normal])
            print(
                f"paced p99 at {n} rooms beside strong bots: {100 * ratio:.0f}% of beside "
                "normal bots (the same rooms and bots, only thinking off the loop added)"
            )
        if args.callgrind:
            for kind in kinds:
                ir = [r["instructions_per_action"] for r in runs(kind, modes[-1])]
                print(
                    f"{kind} at {n} rooms ({modes[-1]}, under callgrind): "
                    f"{_median(ir):,.0f} instructions per action "
                    f"(median of {len(ir)}: {', '.join(f'{x:,.0f}' for x in ir)})"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


_HEADER = (
    f"{'rnd':>3} {'server':7} {'rooms':>5} {'mode':10} {'act/s':>8} "
    f"{'p50':>7} {'p95':>7} {'p99':>7} "
    f"{'max':>8} {'srvCPU%':>7} {'us/act':>7} {'cliCPU%':>7} {'RSS MB':>7} {'err':>4} {'late':>5}"
)


def _row(r: dict[str, Any]) -> str:
    return (
        f"{r.get('round', 1):>3} {r['server']:7} {r['rooms']:>5} {r['mode']:10} "
        f"{r['actions_per_s']:>8.1f} "
        f"{r['p50_ms']:>7} {r['p95_ms']:>7} {r['p99_ms']:>7} {r['max_ms']:>8} "
        f"{r['server_cpu_pct']:>7} {r['server_cpu_us_per_action']:>7} "
        f"{r['server_sys_us_per_action']:>5.0f} "
        f"{r['client_cpu_pct']:>7} {r['server_rss_mb']:>7} "
        f"{r['errors']:>4} {r['late_ticks']:>5}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--rooms", dest="rooms_list", default="100,1000", help="room counts, comma-separated"
    )
    ap.add_argument("--modes", default="paced,saturation")
    ap.add_argument(
        "--servers",
        default="real,batched,bare",
        help="real: the card room, one message per frame; batched: the card room with "
        "?batch=1 (a change's messages in one frame); before: batched, at --before; "
        "strongbots, normalbots: batched, with --bot-rooms rooms of bots playing beside; "
        "bare: bench/bare_server.py; barestore: bare, each message stored in SQLite "
        "before its views go out (what storing costs alone); barerules: barestore, "
        "each message a Big Two move the engine checks and applies first (a floor "
        "under any server that plays by the rules and stores first)",
    )
    ap.add_argument("--duration", type=float, default=15.0, help="measured seconds per run")
    ap.add_argument("--warmup", type=float, default=3.0)
    ap.add_argument(
        "--rounds", type=int, default=1, help="run everything this many times, servers in turn"
    )
    ap.add_argument("--game", default="bigtwo")
    ap.add_argument(
        "--before",
        default="",
        help="a git revision: the server kind `before` is the card room as it stood "
        "there (batched), for a before/after comparison in one run",
    )
    ap.add_argument(
        "--before-url-token",
        action="store_true",
        help="the `before` revision predates first-message auth: its sockets take "
        "the seat token in the URL (e.g. cec2dd9)",
    )
    ap.add_argument(
        "--bot-rooms",
        type=int,
        default=0,
        help="for the server kinds strongbots and normalbots (batched servers): this "
        "many more rooms of Big Two where four bots at that level play on their own "
        "(their host watching, default bot delay), beside the measured rooms; compare "
        "with batched, e.g. --servers batched,strongbots --modes paced --bot-rooms 25",
    )
    ap.add_argument("--json", default="", help="also write the results here")
    ap.add_argument(
        "--callgrind",
        action="store_true",
        help="run each server under valgrind's callgrind and print the instructions it "
        "spends per action: a figure that, unlike time on a shared machine, repeats from "
        "run to run (for comparing two versions of the code; its times mean nothing)",
    )
    ap.add_argument(
        "--processes",
        type=int,
        default=2,
        help="for the server kinds `owner` and `spread`: this many card room processes "
        "on one PostgreSQL and one Redis (BENCH_DATABASE_URL names a PostgreSQL server "
        "whose `postgres` database can create others); `owner`: every socket of a room on "
        "the process that owns it, `spread`: a room's sockets spread over the processes",
    )
    ap.add_argument(
        "--failover",
        type=int,
        default=0,
        help="instead: kill -9 the owner of a room being played this many times and "
        "print the time from each kill to the next view its players get",
    )
    # client mode (internal)
    ap.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--server", default="real", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--server-pid", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--server-pids", default="", help=argparse.SUPPRESS)
    ap.add_argument("--ports", default="", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="paced", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        args.rooms = int(args.rooms_list)
        # uvloop, as uvicorn itself runs: with asyncio's own loop the client
        # spent more per action than the bare server and set its figure
        import uvloop

        result = uvloop.run(client_main(args))
        print(json.dumps(result))
    elif args.failover:
        failover_main(args)
    else:
        parent_main(args)


if __name__ == "__main__":
    main()
