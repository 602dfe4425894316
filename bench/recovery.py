"""How fast does a killed server come back?  N open rooms in the middle of
games (all four games; Posso late in the game, thousands of actions), the
server killed with SIGKILL, then started again:

- time from starting the process to its first HTTP 200;
- time to rebuild one room on first use (`GET /api/rooms/{code}`, each room
  once, with background rebuilding off), p50 and p99, against the same request
  to a room already rebuilt (what HTTP itself costs).

    .venv/bin/python bench/recovery.py --rooms 100,1000
    .venv/bin/python bench/recovery.py --rooms 1000 --no-snapshots   # replay whole logs
    BENCH_DATABASE_URL=postgresql+asyncpg://postgres@127.0.0.1/bench \
        .venv/bin/python bench/recovery.py --rooms 1000     # a fresh, empty database

The games are real: each is played by the engines' bots from a seed, and rooms
share a handful of such logs (a rebuild costs the same for any copy).  The
snapshots are what the server would have written while the game was played
(one every app.rooms.snapshots.SNAPSHOT_EVERY actions).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import insert  # noqa: E402

from app.bots import bot_for  # noqa: E402
from app.db.models import ActionRow, Snapshot  # noqa: E402
from app.db.records import DbRecords  # noqa: E402
from app.db.session import make_engine  # noqa: E402
from app.games import GAMES  # noqa: E402
from app.rooms import snapshots  # noqa: E402
from app.store.records import PlayerRecord, RoomRecord  # noqa: E402
from bench.db import migrate  # noqa: E402

#: how far into its game each room is (Posso: late, in hand nine)
PLAN = {
    "posso": {"seats": 4, "options": {}, "until": lambda s: s.hand_no >= 9},
    "possession": {"seats": 4, "options": {}, "until": None},
    "possum": {"seats": 4, "options": {}, "until": None},
    "bigtwo": {"seats": 4, "options": {}, "until": None},
}
LOGS_PER_GAME = 4


def play_log(name: str, seed: int) -> tuple[dict[str, Any], list[tuple[int | None, Any]], Any]:
    """A game played by bots from `seed` until its plan says stop (or, for the
    short games, to about two thirds of its length): options, log, state."""
    game = GAMES[name]
    plan = PLAN[name]
    rng = random.Random(seed)
    options = game.parse_options(plan["options"]).model_dump(mode="json")
    state = game.new_game(plan["seats"], options, seed)
    log: list[tuple[int | None, Any]] = []
    states = [state]
    while game.result(state) is None:
        if plan["until"] is not None and plan["until"](state):
            break
        to_act = sorted(game.to_act(state))
        if not to_act:
            seat, action = None, {"type": "timeout"}
        else:
            seat = to_act[0]
            legal = game.legal_actions(state, seat)
            action = bot_for(name).choose(game.view(state, seat), legal, seat, rng)
        state, _ = game.apply(state, seat, action)
        log.append((seat, action))
        states.append(state)
    if plan["until"] is None:  # stop mid-game
        cut = max(1, len(log) * 2 // 3)
        log, state = log[:cut], states[cut]
    return options, log, state


async def populate(url: str, rooms: int, use_snapshots: bool) -> list[str]:
    logs = {name: [play_log(name, 1000 + i) for i in range(LOGS_PER_GAME)] for name in PLAN}
    for name, made in logs.items():
        sizes = [len(log) for _, log, _ in made]
        print(f"  {name}: logs of {min(sizes)}-{max(sizes)} actions", flush=True)
    rec = DbRecords(make_engine(url))
    codes: list[str] = []
    actions: list[dict[str, Any]] = []
    snaps: list[dict[str, Any]] = []
    names = list(PLAN)
    try:
        for i in range(rooms):
            name = names[i % len(names)]
            options, log, _ = logs[name][(i // len(names)) % LOGS_PER_GAME]
            seed = 1000 + (i // len(names)) % LOGS_PER_GAME
            code = f"R{i:05d}{secrets.token_hex(2).upper()}"
            seats = [f"p{i}x{s}" for s in range(PLAN[name]["seats"])]
            players = [
                PlayerRecord(pid, f"P{s}", secrets.token_hex(8), s) for s, pid in enumerate(seats)
            ]
            await rec.save_room(RoomRecord(code, name, options, {}, seats[0], players))
            game_id = await rec.start_game(code, name, options, seed, seats)
            codes.append(code)
            actions += [
                {"game_id": game_id, "seq": n, "seat": seat, "action": action}
                for n, (seat, action) in enumerate(log)
            ]
            every = snapshots.SNAPSHOT_EVERY
            if use_snapshots and len(log) >= every:
                at = len(log) // every * every
                game = GAMES[name]
                state = game.new_game(len(seats), options, seed)
                for seat, action in log[:at]:
                    state, _ = game.apply(state, seat, action)
                snap = snapshots.take(game, at, state)
                snaps.append(
                    {"game_id": game_id, "seq": at, "engine": snap.engine, "state": snap.state}
                )
        async with rec.engine.begin() as conn:
            for start in range(0, len(actions), 20_000):
                await conn.execute(insert(ActionRow), actions[start : start + 20_000])
            if snaps:
                await conn.execute(insert(Snapshot), snaps)
    finally:
        await rec.close()
    print(f"  {rooms} rooms, {len(actions)} actions, {len(snaps)} snapshots", flush=True)
    return codes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(url: str, port: int) -> tuple[subprocess.Popen[bytes], float]:
    """The server, and seconds from spawning it to its first HTTP 200."""
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "REBUILD_IN_BACKGROUND": "false",
        "LOOKUPS_PER_MINUTE": "1000000",  # one client looks up every room
        "PYTHONPATH": str(ROOT),
    }
    cmd = [
        sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
        "--port", str(port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc, time.perf_counter() - t0
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError("the server exited on start")
        if time.perf_counter() - t0 > 120:
            raise RuntimeError("the server did not answer in 120 s")
        time.sleep(0.005)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def measure(url: str, codes: list[str]) -> dict[str, float]:
    port = free_port()
    proc, _ = start(url, port)
    proc.send_signal(signal.SIGKILL)  # a crash: no shutdown hook runs
    proc.wait()
    proc, first_200 = start(url, port)
    try:
        order = list(codes)
        random.Random(7).shuffle(order)
        first, again = [], []
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            for code in order:
                t = time.perf_counter()
                r = http.get(f"/api/rooms/{code}")
                first.append(time.perf_counter() - t)
                assert r.status_code == 200, r.text
            for code in order[:200]:
                t = time.perf_counter()
                http.get(f"/api/rooms/{code}")
                again.append(time.perf_counter() - t)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return {
        "first_200_s": first_200,
        "rebuild_p50_ms": 1000 * statistics.median(first),
        "rebuild_p99_ms": 1000 * pct(first, 0.99),
        "rebuild_max_ms": 1000 * max(first),
        "loaded_p50_ms": 1000 * statistics.median(again),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rooms", default="100,1000", help="room counts, comma-separated")
    ap.add_argument("--no-snapshots", action="store_true", help="rebuild by replaying whole logs")
    args = ap.parse_args()
    for n in [int(x) for x in args.rooms.split(",")]:
        url = os.environ.get("BENCH_DATABASE_URL") or (
            f"sqlite+aiosqlite:///{Path(tempfile.mkdtemp(prefix='cardroom-recovery-')) / 'c.db'}"
        )
        print(f"{n} rooms on {url.split(':')[0]}:", flush=True)
        asyncio.run(migrate(url))
        codes = asyncio.run(populate(url, n, not args.no_snapshots))
        r = measure(url, codes)
        print(
            f"  first HTTP 200 after kill -9: {r['first_200_s']:.2f} s (target < 2 s); "
            f"rebuild on first use p50 {r['rebuild_p50_ms']:.1f} ms, "
            f"p99 {r['rebuild_p99_ms']:.1f} ms (target < 100 ms), "
            f"max {r['rebuild_max_ms']:.1f} ms; "
            f"a room already rebuilt: p50 {r['loaded_p50_ms']:.1f} ms",
            flush=True,
        )


if __name__ == "__main__":
    main()
