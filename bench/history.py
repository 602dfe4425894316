"""How fast are the records pages when the data has grown?

Fills a database with finished games - their rows in games, game_seats,
seat_results, and for one game in ten a ten-hand Posso score sheet
(score_hands, score_lines) - with one person, "hero", who played 10,000 of
them (ten an evening, in a thousand rooms, with a circle of forty friends),
then counts the records' sums as the migration does, and times the queries
the records routes run for that person: records, rivals, a head-to-head with
a friend, the check that a friend may see the page, the whole person page,
and a room's evening.  Prints wall-clock p50 / p99 / max per query and the
process's CPU time (all threads: the SQLite driver runs in one), with the
load average: on a shared machine the wall clock mostly measures the wait
for a core.

    .venv/bin/python bench/history.py                      # SQLite, a million games
    .venv/bin/python bench/history.py --postgres postgresql+asyncpg://postgres@127.0.0.1/postgres
    .venv/bin/python bench/history.py --games 100000 --keep   # smaller; keep the file
    .venv/bin/python bench/history.py --postgres URL --pg-database bench_history_x  # again

The rows are written straight into the tables (sqlite3 executemany, or
PostgreSQL's COPY), in the shape the app writes them: filling a million
games through the rooms would take hours.  PostgreSQL runs in a database of
its own, created here and dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import asyncpg
from sqlalchemy import event, select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import async_sessionmaker

from app.db import standings as st
from app.db.models import SeatResult
from app.db.people import person_of
from app.db.session import make_engine
from app.db.summaries import recount
from bench.db import migrate

HERO = "hero-" + "h" * 40
HERO_GAMES = 10_000
GAMES_PER_ROOM = 10
FRIENDS = 40
#: everyone else: a pool of guests who play in rooms of their own
CROWD = 200_000
START = datetime(2025, 1, 1, tzinfo=UTC)

TABLES = {
    "rooms": (
        "id",
        "code",
        "game",
        "options",
        "settings",
        "host_player_id",
        "tally",
        "closed",
        "created_at",
        "updated_at",
        "epoch",
    ),
    "players": (
        "id",
        "room_id",
        "player_id",
        "position",
        "name",
        "seat",
        "token_hash",
        "is_bot",
        "guest_id",
        "account_id",
        "present",
    ),
    "games": (
        "id",
        "room_id",
        "game",
        "options",
        "seed",
        "seats",
        "started_at",
        "finished_at",
        "result",
        "public_id",
    ),
    "game_seats": ("game_id", "seat", "player_ref", "name"),
    "seat_results": (
        "game_id",
        "seat",
        "person",
        "player_id",
        "name",
        "game",
        "room_id",
        "finished_at",
        "place",
        "score",
        "hands_won",
        "possos",
    ),
    "score_hands": ("game_id", "hand", "dealer", "requirement", "went_out", "cut", "row"),
    "score_lines": ("game_id", "hand", "seat", "points", "total", "went_out", "posso_count", "cut"),
}
JSON_COLUMNS = {"options", "settings", "tally", "seats", "result", "requirement", "cut", "row"}


class Filler:
    """Rooms of four guests playing ten games each; rows built in batches."""

    def __init__(self, games: int, seed: int) -> None:
        self.games = games
        self.rng = random.Random(seed)
        self.friends = [f"friend-{i}-" + "f" * 40 for i in range(FRIENDS)]
        self.ids = {"room": 0, "player": 0, "game": 0}

    def _next(self, kind: str) -> int:
        self.ids[kind] += 1
        return self.ids[kind]

    def batches(self) -> Iterator[dict[str, list[tuple[Any, ...]]]]:
        rooms = self.games // GAMES_PER_ROOM
        hero_rooms = set(self.rng.sample(range(rooms), HERO_GAMES // GAMES_PER_ROOM))
        batch = _empty()
        for r in range(rooms):
            guests = (
                [HERO, *self.rng.sample(self.friends, 3)]
                if r in hero_rooms
                else [f"crowd-{self.rng.randrange(CROWD)}-" + "c" * 40 for _ in range(4)]
            )
            self._room(batch, r, guests)
            if len(batch["games"]) >= 20_000:
                yield batch
                batch = _empty()
        yield batch

    def _room(self, out: dict[str, list[tuple[Any, ...]]], r: int, guests: list[str]) -> None:
        rng = self.rng
        game = "posso" if r % 10 == 0 else "bigtwo"
        room_id = self._next("room")
        when = START + timedelta(minutes=r)
        pids = [f"p{s}" for s in range(4)]
        refs = []
        for s, guest in enumerate(guests):
            ref = self._next("player")
            refs.append(ref)
            out["players"].append(
                (ref, room_id, pids[s], s, f"Name {guest[:12]}", s, "h", False, guest, None, True)
            )
        tally = dict.fromkeys(pids, 0)
        for _ in range(GAMES_PER_ROOM):
            gid = self._next("game")
            order = rng.sample(range(4), 4)
            places = [[s] for s in order]
            if game == "posso":
                scores, hands = self._sheet(out, gid)
                places = [[s] for s in sorted(range(4), key=lambda s: scores[s])]
            else:
                scores = [order.index(s) + 1 for s in range(4)]
                hands = {}
                for rank, s in enumerate(order):
                    tally[pids[s]] += (3, 2, 1, 0)[rank]
            result = {"places": places, "scores": scores}
            out["games"].append(
                # a public id of the right length, unique (never all digits)
                (
                    gid,
                    room_id,
                    game,
                    {},
                    str(rng.getrandbits(62)),
                    pids,
                    when,
                    when,
                    result,
                    f"g{gid:015d}",
                )
            )
            for s in range(4):
                name = f"Name {guests[s][:12]}"
                out["game_seats"].append((gid, s, refs[s], name))
                won, possos = hands.get(s, (None, None))
                out["seat_results"].append(
                    (
                        gid,
                        s,
                        person_of(guests[s], None),
                        pids[s],
                        name,
                        game,
                        room_id,
                        when,
                        1 + next(i for i, grp in enumerate(places) if s in grp),
                        scores[s],
                        won,
                        possos,
                    )
                )
        out["rooms"].append((room_id, f"R{r:07d}", game, {}, {}, "p0", tally, True, when, when, 0))

    def _sheet(
        self, out: dict[str, list[tuple[Any, ...]]], gid: int
    ) -> tuple[list[int], dict[int, tuple[int, int]]]:
        rng = self.rng
        totals = [0] * 4
        won = [0] * 4
        possos = [0] * 4
        for hand in range(1, 11):
            out_seat = rng.randrange(4)
            points = [0 if s == out_seat else rng.randrange(5, 120) for s in range(4)]
            taken = [rng.choice((0, 0, 0, 1)) for _ in range(4)]
            totals = [t + p for t, p in zip(totals, points, strict=True)]
            won[out_seat] += 1
            possos = [a + b for a, b in zip(possos, taken, strict=True)]
            row = {
                "hand": hand,
                "dealer": hand % 4,
                "requirement": "2 sets",
                "went_out": out_seat,
                "points": points,
                "totals": totals,
                "possos": taken,
                "cut": None,
            }
            out["score_hands"].append((gid, hand, hand % 4, "2 sets", out_seat, None, row))
            for s in range(4):
                out["score_lines"].append(
                    (gid, hand, s, points[s], totals[s], s == out_seat, taken[s], None)
                )
        return totals, {s: (won[s], possos[s]) for s in range(4)}


def _empty() -> dict[str, list[tuple[Any, ...]]]:
    return {name: [] for name in TABLES}


def _encoded(table: str, rows: list[tuple[Any, ...]], *, text_dates: bool) -> list[tuple[Any, ...]]:
    cols = TABLES[table]
    out = []
    for row in rows:
        out.append(
            tuple(
                json.dumps(v)
                if c in JSON_COLUMNS and v is not None
                else (
                    v.replace(tzinfo=None).isoformat(sep=" ")
                    if text_dates and isinstance(v, datetime)
                    else v
                )
                for c, v in zip(cols, row, strict=True)
            )
        )
    return out


def _date_text(v: datetime) -> str:
    """As SQLAlchemy stores a UTC datetime in SQLite."""
    return v.replace(tzinfo=None).isoformat(sep=" ")


def fill_sqlite(path: Path, filler: Filler) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    for batch in filler.batches():
        with db:
            for table, rows in batch.items():
                cols = TABLES[table]
                marks = ", ".join("?" * len(cols))
                db.executemany(
                    f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})",
                    _encoded(table, rows, text_dates=True),
                )
        print(f"  {filler.ids['game']:,} games", end="\r", flush=True)
    db.close()


async def fill_postgres(dsn: str, filler: Filler) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        for batch in filler.batches():
            async with conn.transaction():
                for table, rows in batch.items():
                    await conn.copy_records_to_table(
                        table,
                        records=_encoded(table, rows, text_dates=False),
                        columns=list(TABLES[table]),
                    )
            print(f"  {filler.ids['game']:,} games", end="\r", flush=True)
        for kind, table in (("room", "rooms"), ("player", "players"), ("game", "games")):
            await conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {filler.ids[kind]})"
            )
    finally:
        await conn.close()


def _p99(sorted_ms: list[float]) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(len(sorted_ms) * 0.99))]


async def summarize(url: str) -> None:
    """Count everyone's sums from the seats, as the migration does."""
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(lambda sync: recount(sync))
    finally:
        await engine.dispose()


async def _person_page(s: Any, hero: str) -> None:
    """What GET /api/people/{id} runs (app/api/records.py), one after another."""
    await st.may_see(s, [hero], hero)
    await st.person_name(s, hero)
    await st.records(s, hero)
    await st.rivals(s, hero)
    await st.person_games(s, hero, limit=20)


async def measure(url: str, runs: int) -> None:
    engine = make_engine(url)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    hero = person_of(HERO, None)
    assert hero is not None
    async with sessions() as s:
        rivals = await st.rivals(s, hero)
        friend = rivals[0]["person"]
        room_id = await s.scalar(
            select(SeatResult.room_id).where(SeatResult.person == hero).limit(1)
        )
        records = await st.records(s, hero)
    print(
        f"hero: {records['played']:,} games, {len(rivals)} rivals, "
        f"{records['bigtwo']['series']} Big Two series"
    )
    cases: dict[str, Callable[[Any], Awaitable[Any]]] = {
        "records": lambda s: st.records(s, hero),
        "rivals": lambda s: st.rivals(s, hero),
        "head-to-head": lambda s: st.head_to_head(s, hero, friend),
        "may see (a friend)": lambda s: st.may_see(s, [friend], hero),
        "may see (a stranger)": lambda s: st.may_see(
            s, [person_of("crowd-1-" + "c" * 40, None) or ""], hero
        ),
        "name": lambda s: st.person_name(s, hero),
        "person page (all)": lambda s: _person_page(s, hero),
        "room evening": lambda s: st.evening(s, room_id),
    }
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, case in cases.items():
        times, cpu = [], []
        for _ in range(runs):
            async with sessions() as s:
                t0, c0 = time.perf_counter(), time.process_time()
                await case(s)
                times.append((time.perf_counter() - t0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
        times.sort()
        cpu.sort()
        print(
            f"  {name:22s} wall p50 {statistics.median(times):6.2f}  p99 {_p99(times):6.2f}  "
            f"max {times[-1]:6.2f} ms | cpu p50 {statistics.median(cpu):6.2f}  "
            f"p99 {_p99(cpu):6.2f} ms"
        )
    if engine.dialect.name == "postgresql":
        await server_side(engine, sessions, cases, max(10, runs // 4))
    await engine.dispose()


async def server_side(
    engine: Any, sessions: Any, cases: dict[str, Callable[[Any], Awaitable[Any]]], runs: int
) -> None:
    """PostgreSQL's own time for each case's statements (EXPLAIN ANALYZE:
    planning plus execution), which a busy client machine does not inflate."""
    seen: list[tuple[str, Any]] = []

    def note(_conn: Any, _cursor: Any, sql: str, params: Any, *_args: Any) -> None:
        seen.append((sql, params))

    print("  PostgreSQL's own time per case (EXPLAIN ANALYZE of each statement, summed):")
    for name, case in cases.items():
        seen.clear()
        event.listen(engine.sync_engine, "before_cursor_execute", note)
        try:
            async with sessions() as s:
                await case(s)
        finally:
            event.remove(engine.sync_engine, "before_cursor_execute", note)
        statements = list(seen)
        totals = []
        async with engine.connect() as conn:
            raw = (await conn.get_raw_connection()).driver_connection
            for _ in range(runs):
                ms = 0.0
                for sql, params in statements:
                    plan = await raw.fetchval(
                        "EXPLAIN (ANALYZE, FORMAT JSON) " + sql, *(params or ())
                    )
                    top = (json.loads(plan) if isinstance(plan, str) else plan)[0]
                    ms += top["Planning Time"] + top["Execution Time"]
                totals.append(ms)
        totals.sort()
        print(
            f"  {name:22s} server p50 {statistics.median(totals):6.2f}  "
            f"p99 {_p99(totals):6.2f} ms  ({len(statements)} statements)"
        )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--postgres", help="a PostgreSQL URL to create the bench database through")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--keep", action="store_true", help="keep the SQLite file / PG database")
    ap.add_argument("--sqlite-file", help="reuse (or create) this SQLite file")
    ap.add_argument("--pg-database", help="measure a database an earlier --keep run filled")
    ap.add_argument("--seed", type=int, default=30)
    args = ap.parse_args()
    filler = Filler(args.games, args.seed)
    t0 = time.perf_counter()
    if args.postgres and args.pg_database:  # filled before (--keep): measure again
        url = make_url(args.postgres).set(database=args.pg_database)
        await measure(url.render_as_string(hide_password=False), args.runs)
        return
    if args.postgres:
        base = make_url(args.postgres)
        name = f"bench_history_{secrets.token_hex(4)}"
        admin = base.set(drivername="postgresql").render_as_string(hide_password=False)
        conn = await asyncpg.connect(admin)
        await conn.execute(f'CREATE DATABASE "{name}"')
        await conn.close()
        url = base.set(database=name).render_as_string(hide_password=False)
        print(f"PostgreSQL database {name}")
        try:
            await migrate(url)
            dsn = base.set(drivername="postgresql", database=name).render_as_string(
                hide_password=False
            )
            await fill_postgres(dsn, filler)
            took = time.perf_counter() - t0
            print(f"PostgreSQL: {filler.ids['game']:,} games filled in {took:.0f} s")
            await summarize(url)
            conn = await asyncpg.connect(dsn)
            await conn.execute("VACUUM ANALYZE")
            await conn.close()
            print(f"  sums counted, vacuumed: {time.perf_counter() - t0:.0f} s")
            await measure(url, args.runs)
        finally:
            if not args.keep:
                conn = await asyncpg.connect(admin)
                await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                await conn.close()
        return
    path = Path(args.sqlite_file or Path(tempfile.mkdtemp()) / "history.db")
    url = f"sqlite+aiosqlite:///{path}"
    if not path.exists():
        await migrate(url)
        fill_sqlite(path, filler)
        print(f"SQLite: {filler.ids['game']:,} games filled in {time.perf_counter() - t0:.0f} s")
        await summarize(url)
        with sqlite3.connect(path) as db:
            db.execute("ANALYZE")
        print(f"  sums counted, analyzed: {time.perf_counter() - t0:.0f} s")
    await measure(url, args.runs)
    if not args.keep and not args.sqlite_file:
        path.unlink()


if __name__ == "__main__":
    asyncio.run(main())
