"""How fast can the records take actions?  Appends/s for DbRecords.append_action.

Each append is its own committed transaction (the room broadcasts only after it
returns), so the numbers include the disk flush.  Two shapes are measured:
one room appending back to back (latency bound), and many rooms appending at
once, as a busy server does (where concurrent commits can share a flush).

    .venv/bin/python bench/db.py                       # SQLite in a temp dir
    .venv/bin/python bench/db.py --postgres postgresql+asyncpg://postgres@127.0.0.1/test
    .venv/bin/python bench/db.py --sqlite-sync FULL    # flush every commit to disk

PostgreSQL runs in a database of its own, created and dropped here.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncpg
from alembic import command
from alembic.config import Config
from sqlalchemy import pool
from sqlalchemy.engine import Connection, make_url

from app.db.records import DbRecords
from app.db.session import make_engine
from app.store.records import PlayerRecord, RoomRecord

ROOT = Path(__file__).resolve().parents[1]
ACTION = {"type": "discard", "card": "10H"}


async def migrate(url: str) -> None:
    engine = make_engine(url, poolclass=pool.NullPool)

    def run(conn: Connection) -> None:
        cfg = Config(str(ROOT / "alembic.ini"))
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")

    async with engine.begin() as conn:
        await conn.run_sync(run)
    await engine.dispose()


async def setup_games(rec: DbRecords, rooms: int) -> list[int]:
    ids = []
    for i in range(rooms):
        code = f"B{i:05d}"
        players = [PlayerRecord(f"p{s}", f"P{s}", "h", s) for s in range(4)]
        await rec.save_room(RoomRecord(code, "posso", {}, {}, "p0", players))
        ids.append(await rec.start_game(code, "posso", {}, i, [p.player_id for p in players]))
    return ids


async def run(url: str, label: str, rooms: int, per_room: int, sqlite_sync: str | None) -> None:
    if sqlite_sync:
        url += f"?synchronous={sqlite_sync}"
    engine = make_engine(url)
    rec = DbRecords(engine)
    try:
        one = (await setup_games(rec, 1))[0]
        lat = []
        t0 = time.perf_counter()
        for seq in range(per_room):
            t = time.perf_counter()
            await rec.append_action(one, seq, seq % 4, ACTION)
            lat.append(time.perf_counter() - t)
        single = per_room / (time.perf_counter() - t0)
        lat.sort()
        games = await setup_games(rec, rooms)

        async def room(gid: int) -> None:
            for seq in range(per_room):
                await rec.append_action(gid, seq, seq % 4, ACTION)

        t0 = time.perf_counter()
        await asyncio.gather(*(room(g) for g in games))
        many = rooms * per_room / (time.perf_counter() - t0)
        median, p99 = statistics.median(lat) * 1000, lat[int(len(lat) * 0.99)] * 1000
        print(
            f"{label:34s} one room: {single:7.0f} appends/s "
            f"(median {median:.2f} ms, p99 {p99:.2f} ms)"
            f" | {rooms} rooms at once: {many:7.0f} appends/s"
        )
    finally:
        await rec.close()


async def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--postgres", help="admin URL of a PostgreSQL server (a database is created)")
    ap.add_argument(
        "--sqlite-sync", default=None, help="override PRAGMA synchronous (FULL, NORMAL)"
    )
    ap.add_argument("--rooms", type=int, default=50)
    ap.add_argument("--actions", type=int, default=200, help="actions per room")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{tmp}/bench.db"
        await migrate(url)
        sync = args.sqlite_sync or "NORMAL (default)"
        await run(url, f"SQLite WAL synchronous={sync}", args.rooms, args.actions, args.sqlite_sync)
    if args.postgres:
        admin = make_url(args.postgres)
        name = f"cardroom_bench_{secrets.token_hex(4)}"
        conn = await asyncpg.connect(
            host=admin.host,
            port=admin.port or 5432,
            user=admin.username,
            password=admin.password,
            database=admin.database,
        )
        await conn.execute(f'CREATE DATABASE "{name}"')
        try:
            url = admin.set(database=name).render_as_string(hide_password=False)
            await migrate(url)
            await run(url, "PostgreSQL (synchronous_commit=on)", args.rooms, args.actions, None)
        finally:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await conn.close()


if __name__ == "__main__":
    asyncio.run(main())
