"""Soak: many rooms of bots and socket clients for a long while against one
real server; prints errors (which must be 0) and the server's memory (RSS)
at the start, every minute, at half time and at the end.

    .venv/bin/python bench/soak.py                      # 1,000 rooms, 10 minutes
    .venv/bin/python bench/soak.py --rooms 100 --minutes 2

The server is the real app as `make run` serves it (bench/load.py starts it:
uvicorn, SQLite migrated by Alembic, every action committed), with the
per-address limits lifted since every client comes from 127.0.0.1.  Each
room plays one of the four games round and round: two people on sockets who
answer their turns at a person's pace (0.5-2 s), the other seats bots; when a
game ends the host starts the next.  An error is any refusal of a move
chosen on the room's latest state, any socket the server closes, any failed
request, or any error or traceback in its log.  Several seats may act at once
(a Posso window), so a move can reach the room after it has moved on; that
refusal is the protocol working, and is counted apart by code.

"Flat memory" is judged by reading the figures: RSS grows while the rooms
fill and their first games run, and while each room's event history (kept
for clients resuming, at most HISTORY_MAX changes per game, in
app/rooms/delivery.py) fills - about 100,000 changes and 13 MiB of frames at
1,000 rooms, reached after five or six minutes - then should hold.  Steady
growth after that needs explaining: the last leak found this way was
cancelled timer tasks left in cycles that the server's once-a-second
gc.freeze kept (app/rooms/timers.py).  On SQLite (the default; the database
is kept beside the server's log) the write-ahead log's size is printed too:
it grew 250 MB a minute, with its shared-memory index in the server's RSS,
until the server learnt to start it over (app/db/records.py `_checkpoint_soon`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.load import _free_port, _start_server, lite_connect, stop_server

#: (game, people on sockets, bots added by the host; Big Two fills its own)
TABLES = [("bigtwo", 2, 0), ("posso", 2, 1), ("possession", 2, 1), ("possum", 2, 1)]
#: windows longer than a person's pace: a move a person sends is never overtaken
#: by a timer, so any refusal the server sends is a real error
ROOM_SETTINGS = {"bot_delay": 0.5, "posso_window": 15, "posso_answer": 60, "cut": 120}


@dataclass
class Totals:
    actions: int = 0
    games: int = 0
    #: moves the room had moved past by the time they arrived (refused, as
    #: the protocol says; counted by code, not as errors)
    overtaken: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    def error(self, what: str) -> None:
        if len(self.errors) < 50:
            self.errors.append(what)
        else:
            self.errors.append("")  # counted, not kept


class Person:
    """One socket: plays its turns at a person's pace; the host also starts
    each next game."""

    def __init__(self, room: int, host: bool, totals: Totals, rng: random.Random) -> None:
        self.room, self.host, self.totals, self.rng = room, host, totals, rng
        self.ws: Any = None
        self.next_id = 0
        self.pending: asyncio.Task[None] | None = None
        self.v = -1
        self.legal: list[Any] = []
        self.sent_at_v: dict[Any, int] = {}  # message id -> the version it was chosen at
        self.status = ""
        self.closed = False

    def on_message(self, raw: bytes) -> None:
        msg = json.loads(raw)
        for m in msg if isinstance(msg, list) else [msg]:
            self.handle(m)

    def handle(self, m: dict[str, Any]) -> None:
        chosen_at = self.sent_at_v.pop(m.get("re"), None)
        if "error" in m:
            if chosen_at is not None and m["v"] > chosen_at:  # the room moved on meanwhile
                self.totals.overtaken[m["error"]["code"]] += 1
            else:
                self.totals.error(f"room {self.room}: {m['error']}")
            return
        view = m.get("view")
        if view is None:
            return
        self.v = m["v"]
        self.legal = list(view.get("legal") or [])
        room = view.get("room")
        status = room["status"] if room else self.status
        if status == "finished" and self.status == "playing":
            self.totals.games += self.host
        self.status = status
        if self.pending is not None and not self.pending.done():
            return
        if self.legal or (self.host and status == "finished"):
            self.pending = asyncio.ensure_future(self.act())

    async def act(self) -> None:
        """After a person's pause, a move chosen from the latest view."""
        await asyncio.sleep(self.rng.uniform(0.5, 2.0))
        if self.legal:
            body: dict[str, Any] = {"action": self.rng.choice(self.legal)}
        elif self.host and self.status == "finished":
            body = {"cmd": {"type": "rematch"}}
        else:
            return
        self.next_id += 1
        self.sent_at_v[self.next_id] = self.v
        self.send({"id": self.next_id, **body})
        self.totals.actions += 1

    def send(self, body: dict[str, Any]) -> None:
        if self.ws.transport is None or self.ws.transport.is_closing():
            if not self.closed:
                self.closed = True
                self.totals.error(f"room {self.room}: the server closed a socket")
            return
        self.ws.send_text(json.dumps(body))


async def open_room(
    http: httpx.AsyncClient, port: int, i: int, totals: Totals, people: list[Person]
) -> None:
    game, humans, bots = TABLES[i % len(TABLES)]
    rng = random.Random(i)
    r = await http.post(
        "/api/rooms", json={"game": game, "name": f"H{i}", "settings": ROOM_SETTINGS}
    )
    r.raise_for_status()
    tickets = [r.json()]
    for k in range(1, humans):
        j = await http.post(f"/api/rooms/{tickets[0]['code']}/join", json={"name": f"P{i}.{k}"})
        j.raise_for_status()
        tickets.append(j.json())
    mine = []
    for k, t in enumerate(tickets):
        p = Person(i, k == 0, totals, random.Random(rng.random()))
        p.ws = await lite_connect(port, f"/ws/rooms/{t['code']}", p.on_message)
        p.send({"auth": t["token"], "batch": True})
        mine.append(p)
    host = mine[0]
    for n in range(bots):
        host.send({"id": f"bot{n}", "cmd": {"type": "add_bot"}})
    host.send({"id": "start", "cmd": {"type": "start"}})
    people.extend(mine)


def rss_mib(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def log_errors(log: Path) -> list[str]:
    text = log.read_text(errors="replace")
    return [ln for ln in text.splitlines() if "Traceback" in ln or "ERROR" in ln]


def log_mib(db: Path | None) -> str:
    """The size of SQLite's write-ahead log, which must hold too (see
    app/db/records.py `_checkpoint_soon`)."""
    wal = db.with_name(db.name + "-wal") if db is not None else None
    if wal is None or not wal.exists():
        return ""
    return f", SQLite log {wal.stat().st_size / 2**20:6.1f} MiB"


async def soak(port: int, pid: int, rooms: int, minutes: float, log: Path, db: Path | None) -> int:
    totals = Totals()
    people: list[Person] = []
    # idle connections closed before uvicorn's keep-alive timeout (5 s) can close
    # them under a request being sent: at httpx's default expiry, also 5 s, a
    # room whose people waited on their sockets lost that race now and then
    limits = httpx.Limits(max_connections=50, keepalive_expiry=1.0)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", limits=limits) as http:
        sem = asyncio.Semaphore(50)

        async def one(i: int) -> None:
            async with sem:
                try:
                    await open_room(http, port, i, totals, people)
                except Exception as err:
                    totals.error(f"room {i} could not open: {err!r}")

        t0 = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(rooms)))
        print(f"{rooms} rooms open in {time.monotonic() - t0:.0f} s", flush=True)
    start = time.monotonic()
    marks = {0.0: "start", minutes / 2: "half time", minutes: "end"}
    rows: list[tuple[str, float]] = []
    minute = 0.0
    while True:
        elapsed = (time.monotonic() - start) / 60
        due = [m for m in marks if m <= elapsed and marks[m] not in dict(rows)]
        for m in sorted(due):
            rows.append((marks[m], rss_mib(pid)))
        if elapsed >= minute:
            print(
                f"{elapsed:5.1f} min: server RSS {rss_mib(pid):7.1f} MiB{log_mib(db)}, "
                f"{totals.actions} actions, {totals.games} games finished, "
                f"{len(totals.errors)} errors",
                flush=True,
            )
            minute += 1
        if elapsed >= minutes:
            break
        await asyncio.sleep(1)
    waiting = [p.pending for p in people if p.pending is not None]
    for task in waiting:  # moves still waiting for their person's pace
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    errors = len(totals.errors) + len(log_errors(log))
    print("\nRSS of the server process:")
    for name, mib in rows:
        print(f"  {name:>9}: {mib:7.1f} MiB")
    print(
        f"{rooms} rooms, {minutes:g} min: {totals.actions} actions by socket clients, "
        f"{totals.games} games finished, {errors} errors; moves overtaken by the room "
        f"(refused as the protocol says): {dict(totals.overtaken)}"
    )
    for e in [e for e in totals.errors if e][:10] + log_errors(log)[:10]:
        print("  error:", e)
    return errors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rooms", type=int, default=1000)
    ap.add_argument("--minutes", type=float, default=10.0)
    args = ap.parse_args()
    port = _free_port()
    log = Path(tempfile.mkdtemp(prefix="cardroom-soak-")) / "server.log"
    db = None
    if not os.environ.get("BENCH_DATABASE_URL"):  # SQLite, where we can watch its log
        db = log.with_name("cardroom.db")
        os.environ["BENCH_DATABASE_URL"] = f"sqlite+aiosqlite:///{db}"
    proc = _start_server("real", port, log=log)
    try:
        errors = asyncio.run(soak(port, proc.pid, args.rooms, args.minutes, log, db))
    finally:
        stop_server(proc, grace=30)
    print(f"server log: {log}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
