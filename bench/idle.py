"""What does a server cost when everyone has gone home?  N rooms left the
ways friends leave them, then a minute with nobody connected anywhere:

- a lobby whose host closed the tab (no one to take the host role);
- a game in play, its people gone: bots stand in after the grace and finish it;
- a game over (played out by bots as above, then left);
- a room watched by spectators only, who then closed their tabs too.

Once every game the bots finished for the absent has ended, the server's
CPU over a minute (from /proc, via psutil) and how much its log grew are
printed.  DESIGN.md asks for under 1% of a core and no log lines at 1,000 rooms.

    .venv/bin/python bench/idle.py                        # 1,000 rooms
    .venv/bin/python bench/idle.py --rooms 30 --before 5170c11   # and an older revision

The server is the real one as `make run` serves it (bench/load.py starts it:
uvicorn, SQLite migrated by Alembic), with the per-address limits lifted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.load import _free_port, _start_server, lite_connect, stop_server

#: short graces so the bots take over quickly; bots as fast as a person glances
SETTINGS = {"disconnect_grace": 1, "bot_delay": 0.05, "posso_window": 0, "cut": 0}
WAYS = ("lobby", "playing", "over", "spectators")
MEASURE_SECONDS = 60.0


async def _socket(port: int, code: str, token: str, then: list[dict[str, Any]]) -> None:
    """Open a socket, authenticate, send `then`, wait for the acks, close."""
    acks: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def on_message(raw: bytes) -> None:
        for m in _frames(raw):
            if "re" in m:
                acks.put_nowait(m)

    ws = await lite_connect(port, f"/ws/rooms/{code}", on_message)
    ws.send_text(json.dumps({"auth": token}))
    for i, body in enumerate(then):
        ws.send_text(json.dumps({"id": i, **body}))
        reply = await asyncio.wait_for(acks.get(), 30)
        if "error" in reply:
            raise RuntimeError(f"room {code}: {body} refused: {reply['error']}")
    if not then:
        await asyncio.sleep(0.2)  # its view arrives: it was really here
    ws.close()


def _frames(raw: bytes) -> list[dict[str, Any]]:
    m = json.loads(raw)
    return m if isinstance(m, list) else [m]


async def leave_room(http: httpx.AsyncClient, port: int, i: int) -> tuple[str, str]:
    way = WAYS[i % len(WAYS)]
    game = "bigtwo" if way in ("playing", "over") else ("posso", "possum", "possession")[i % 3]
    r = await http.post("/api/rooms", json={"game": game, "name": f"H{i}", "settings": SETTINGS})
    r.raise_for_status()
    t = r.json()
    if way == "lobby":  # the host looked, and closed the tab
        await _socket(port, t["code"], t["token"], [])
    elif way in ("playing", "over"):  # Big Two fills the other seats with bots
        await _socket(port, t["code"], t["token"], [{"cmd": {"type": "start"}}])
    else:
        j = await http.post(f"/api/rooms/{t['code']}/join", json={"name": "W", "spectator": True})
        j.raise_for_status()
        await _socket(port, t["code"], j.json()["token"], [])
    return t["code"], way


async def until_games_end(http: httpx.AsyncClient, codes: list[str], limit: float) -> int:
    """Poll the lobbies until no game is in play; how many still were at `limit`."""
    deadline = time.monotonic() + limit
    playing = list(codes)
    while playing and time.monotonic() < deadline:
        still = []
        for code in playing:
            r = await http.get(f"/api/rooms/{code}")
            if r.status_code == 200 and r.json().get("status") == "playing":
                still.append(code)
        playing = still
        if playing:
            await asyncio.sleep(2)
    return len(playing)


async def run(port: int, pid: int, rooms: int, log: Path) -> dict[str, float]:
    limits = httpx.Limits(keepalive_expiry=1.0)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=60, limits=limits
    ) as http:
        made: list[tuple[str, str]] = []
        for start in range(0, rooms, 50):
            made += await asyncio.gather(
                *(leave_room(http, port, i) for i in range(start, min(rooms, start + 50)))
            )
        print(f"  {rooms} rooms left ({', '.join(WAYS)})", flush=True)
        games = [code for code, way in made if way in ("playing", "over")]
        left = await until_games_end(http, games, 900)
        print(f"  the bots finished every game but {left}", flush=True)
    await asyncio.sleep(5)  # the last closes settle
    proc = psutil.Process(pid)
    size0 = log.stat().st_size
    cpu0 = proc.cpu_times()
    t0 = time.monotonic()
    await asyncio.sleep(MEASURE_SECONDS)
    cpu1 = proc.cpu_times()
    took = time.monotonic() - t0
    busy = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
    return {
        "cpu_pct": 100 * busy / took,
        "log_bytes": float(log.stat().st_size - size0),
        "still_playing": float(left),
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rooms", type=int, default=1000)
    ap.add_argument("--before", default="", help="also measure this git revision")
    args = ap.parse_args()
    for kind in ("real", "before") if args.before else ("real",):
        port = _free_port()
        log = Path(tempfile.mkdtemp(prefix="cardroom-idle-")) / "server.log"
        proc = _start_server(kind, port, before=args.before, log=log)
        try:
            r = asyncio.run(run(port, proc.pid, args.rooms, log))
        finally:
            stop_server(proc, grace=30)
        name = f"before ({args.before})" if kind == "before" else "this revision"
        print(
            f"{name}: {args.rooms} rooms nobody is in: {r['cpu_pct']:.2f}% of a core over "
            f"{MEASURE_SECONDS:.0f} s, log grew {r['log_bytes']:.0f} bytes "
            f"(target: under 1%, 0 bytes); server log: {log}",
            flush=True,
        )


if __name__ == "__main__":
    main()
