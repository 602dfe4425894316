"""The ASGI application: HTTP routes, the room WebSocket, and the static client.

`create_app(settings, records)` builds a fresh app around one RoomManager; on
startup it checks the database is migrated and learns from `records` which
rooms are open (each rebuilt when first needed, see app/rooms/manager.py).
Records default to the database the settings name
(SQLite under data/ unless DATABASE_URL says otherwise); tests pass
MemoryRecords.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from redis.exceptions import RedisError
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api import accounts as accounts_api
from app.api import history as history_api
from app.api import push as push_api
from app.api import pwa as pwa_api
from app.api import qr as qr_api
from app.api import ready as ready_api
from app.api import records as records_api
from app.api import rooms as rooms_api
from app.api import ws as ws_api
from app.api.client import BuildHeader, build_id, serve_client
from app.api.doors import Doors
from app.api.headers import SecurityHeaders
from app.api.metrics import serve_metrics
from app.api.origins import SameOrigin
from app.bots.thinking import PoolThinker
from app.core import logs
from app.core.config import Settings, get_settings
from app.db.push import PushStore
from app.db.records import DbRecords
from app.db.setup import attach, check_schema, detach, open_records
from app.games import GAMES
from app.rooms.cluster import ClusterManager
from app.rooms.manager import RoomManager
from app.rooms.room import Seeds
from app.rooms.webpush import Nudges
from app.store.cluster import Cluster
from app.store.records import Records
from app.store.timed import TimedRecords

#: every router the app includes, in order: named here so that a reader of the
#: app (the authorization matrix, tests/api/test_authorization.py) can list
#: the routes inside them through public attributes (FastAPI keeps an included
#: router whole, behind a private class)
ROUTERS: tuple[APIRouter, ...] = (
    rooms_api.router,
    ws_api.router,
    history_api.router,
    records_api.router,
    accounts_api.router,
    qr_api.router,
    push_api.router,
    ready_api.router,
    pwa_api.router,  # before the client's files (`serve_client`), which would shadow it
)

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"


def _game_info(game: Any) -> dict[str, Any]:
    try:
        defaults: dict[str, Any] | None = game.Options().model_dump(mode="json")
    except Exception:  # an option without a default: the form must ask for it
        defaults = None
    return {
        "name": game.name,
        "title": game.title,
        "min_seats": game.min_seats,
        "max_seats": game.max_seats,
        "options_schema": game.Options.model_json_schema(),
        "options_defaults": defaults,
    }


#: seconds between freezes of the heap, and between full sweeps of it
GC_FREEZE_EVERY = 1.0
GC_SWEEP_EVERY = 900.0
#: net new container objects before a young collection (CPython's default: 700)
GC_YOUNG_THRESHOLD = 100_000


async def _gc_housekeeping(state: Any) -> None:
    """Keep the collector's passes short and rare.  A full collection scans
    every tracked object while the event loop - every room - waits; with a
    thousand rooms and their sockets that took most of a second, several times
    a minute.  Objects that have lived through a freeze interval are moved out
    of its reach (`gc.freeze`, which costs the same whatever the heap's size);
    plain garbage is still freed by reference counting, and a full sweep every
    GC_SWEEP_EVERY seconds collects any cycles that died after being frozen.

    Young collections are the other half (`_tune_gc`): a busy server has
    hundreds of actions in flight at any moment - coroutines and futures
    waiting for the group commit, new game states - all young and alive.  At
    CPython's default threshold of 700, young passes ran seventy times a second
    at 1,000 rooms, scanned those objects and promoted them, and the older
    passes then scanned them again: 16% of the server's CPU (timed with
    `gc.callbacks`), and pauses of 5 to 50 ms that put the paced p99 over
    50 ms.  At 10,000 they still ran 2.3 times a second at 1,000 rooms
    (bench/load.py at saturation), each scanning ~56,000 objects for 25 ms
    and finding no garbage: 7% of the CPU.  The young count is lowered by
    every object freed, old or frozen ones too, so a pass finds several
    times the threshold's young objects in its generation.  At 100,000 no
    young pass runs in steady play: each second's survivors are frozen
    instead, in one step whatever their number; a burst of more than that
    between two freezes is still scanned.

    One kind of garbage does come in cycles: each WebSocket leaves uvicorn's
    HTTP protocol object behind, tied to its parser (28 objects, ~1.5 KB).
    With young passes this rare, a freeze would catch those before any pass
    did, and a flood of connections would grow the heap until the next sweep.
    So a second in which sockets opened (`state.socket_sessions`, counted by
    `_SocketCounter` whatever their path) ends with a young collection before
    its freeze: a cost paid for churn, never during steady play.  Steady play
    itself makes next to no cycles: a room's dropped waits are loop timers,
    not cancelled tasks (app/rooms/timers.py), and bench/soak.py reads the
    server's RSS to keep it that way.

    Nobody there, nothing to do: a second in which no socket was open and no
    request came leaves the housekeeping asleep until one comes (`awake`,
    set by `_SocketCounter`), so a server everyone has left wakes for nothing
    (bench/idle.py).  The freeze is kept because it still pays: without it
    (one freeze at start-up and the raised threshold alone), bench/load.py at
    1,000 rooms put the paced p99 at 1.1-2.1 s against 0.46 s, and the CPU
    per action at saturation 13% higher, in the same run."""
    last_sweep = time.monotonic()
    sessions_seen = state.socket_sessions
    while True:
        await asyncio.sleep(GC_FREEZE_EVERY)
        if time.monotonic() - last_sweep >= GC_SWEEP_EVERY:
            gc.unfreeze()
            gc.collect()
            last_sweep = time.monotonic()
        sessions = state.socket_sessions
        if sessions != sessions_seen:
            sessions_seen = sessions
            gc.collect(1)
        gc.freeze()
        if not state.sockets_open and not state.awake.is_set():
            await state.awake.wait()  # nobody here: asleep until a request or socket
        state.awake.clear()


class _SocketCounter:
    """ASGI middleware, the app's outermost: counts WebSocket connections, and
    those open, for `_gc_housekeeping`, and wakes it for any request.  Socket
    messages pass straight through."""

    def __init__(self, app: ASGIApp, state: Any) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = self.state
        state.awake.set()
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        state.socket_sessions += 1
        state.sockets_open += 1
        try:
            await self.app(scope, receive, send)
        finally:
            state.sockets_open -= 1
            state.socket_sessions += 1  # its end counts too: what it leaves is garbage now


async def _redis_away(request: Request, err: Exception) -> JSONResponse:
    """Several processes and Redis unreachable (restarting, a network blip):
    a route that must ask who owns a room cannot answer.  Said plainly, as a
    503 to try again shortly, rather than a bare 500 and a traceback per
    request in the log (the outage itself is logged by the cluster's jobs)."""
    body = {"code": "unavailable", "message": "the server cannot reach its peers just now"}
    return JSONResponse({"detail": body}, status_code=503, headers={"Retry-After": "5"})


def _tune_gc() -> tuple[int, int, int]:
    """Raise the young collection threshold (see `_gc_housekeeping`); the
    thresholds it replaced, to put back when the app stops."""
    before = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, before[1], before[2])
    return before


def _seeded(seed: int, cycle: int | None = None) -> Seeds:
    """Seeds from a generator seeded with `seed`; with `cycle`, its first
    `cycle` seeds over and over."""
    dealer = random.Random(seed)
    if cycle is None:
        return lambda: dealer.getrandbits(62)
    again = itertools.cycle([dealer.getrandbits(62) for _ in range(cycle)])
    return lambda: next(again)


#: why several processes need PostgreSQL (said once, at start-up)
UNFENCED = (
    "REDIS_URL is set (several processes) but DATABASE_URL is {dialect}: only "
    "PostgreSQL refuses an old owner's writes after another process takes a "
    "room over. Set DATABASE_URL to a PostgreSQL database, or unset REDIS_URL "
    "to run one process."
)


def _refuse_unfenced(settings: Settings, database_url: str) -> None:
    """Several processes on SQLite would have no fence at all: refuse to start
    (SystemExit: the one message, no traceback)."""
    dialect = database_url.partition(":")[0].partition("+")[0]
    if settings.redis_url and dialect != "postgresql":
        raise SystemExit(UNFENCED.format(dialect=dialect or "not set"))


async def _start_push(app: FastAPI, settings: Settings, manager: RoomManager) -> Nudges | None:
    """With a database: the VAPID key pair (made at the first start, kept in
    the database for every process, app/db/push.py) and the nudges' queue and
    workers, which the rooms hand turn nudges to.  Without one, no push."""
    maker = getattr(app.state, "db_sessionmaker", None)
    records = app.state.records
    if maker is None or not isinstance(records, DbRecords):
        return None
    store = PushStore(maker, records.writing)
    keys = await store.keys()
    nudges = Nudges(
        store, keys.private_pem, contact=settings.vapid_contact(), after=settings.push_after
    )
    await nudges.start()
    app.state.push = store
    app.state.push_public_key = keys.public_key
    app.state.nudges = nudges
    manager.nudge = nudges.send
    return nudges


def create_app(
    settings: Settings | None = None,
    records: Records | None = None,
    seeds: Seeds | None = None,
) -> FastAPI:
    """`seeds` gives each new game its seed (default: from `secrets`; tests
    pass a seeded generator, so a failure can name the seed that dealt it)."""
    settings = settings or get_settings()
    logs.configure(settings.log_format)  # LOG_FORMAT=json: every line as JSON
    if seeds is None and settings.deal_seed is not None:
        seeds = _seeded(settings.deal_seed, settings.deal_cycle)
    if records is None:  # the durable default: SQLite under data/, or DATABASE_URL
        _refuse_unfenced(settings, settings.resolved_database_url())
        records = open_records(settings.resolved_database_url())
    elif isinstance(records, DbRecords):
        _refuse_unfenced(settings, records.engine.url.render_as_string())
    if isinstance(records, DbRecords) and settings.test_only_unfenced_room_saves:
        log.warning("TEST_ONLY_UNFENCED_ROOM_SAVES: room saves are not fenced (tests only)")
        records.unfenced_room_saves = True
    cluster = (
        Cluster(settings.redis_url, lease_ms=int(settings.lease_seconds * 1000))
        if (settings.redis_url)
        else None
    )
    timed = TimedRecords(records)  # no room waits on storage for ever
    # strong bots think in worker processes, started at the first search and
    # stopped with the app (below)
    thinker = PoolThinker(settings.bot_workers, settings.bot_queue)
    manager = (
        ClusterManager(timed, GAMES, cluster, seeds, thinker)
        if cluster is not None
        else RoomManager(timed, GAMES, seeds, thinker=thinker)
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await check_schema(app)  # an unmigrated database is one clear error, not a later crash
        unwatch = app.state.readiness.watch_sigterm()  # not ready from SIGTERM on
        thinker.open()
        nudges = await _start_push(app, settings, manager)
        recovered = await manager.recover()
        if recovered:
            log.info("%d open room(s) to rebuild, on first use or in the background", recovered)
        gc.collect()
        gc.freeze()
        thresholds = _tune_gc()
        loop = asyncio.get_running_loop()
        housekeeping = loop.create_task(_gc_housekeeping(app.state))
        sweeping = loop.create_task(manager.sweep_idle(settings.idle_room_close_after))
        # one process rebuilds every open room; several adopt unowned ones instead
        background = settings.rebuild_in_background and cluster is None
        warming = loop.create_task(manager.warm() if background else asyncio.sleep(0))
        if isinstance(manager, ClusterManager):
            await manager.start()
        accounts = getattr(app.state, "accounts", None)
        purging = loop.create_task(
            accounts.purge_every(settings.session_purge_every)
            if accounts is not None
            else asyncio.sleep(0)
        )
        yield
        app.state.readiness.draining = True  # however the stop began
        unwatch()
        chores = (housekeeping, sweeping, warming, purging)
        for task in chores:
            task.cancel()
        # a chore cancelled inside a query still has its rollback to run:
        # let it finish before the engine below is disposed, or it waits forever
        await asyncio.gather(*chores, return_exceptions=True)
        gc.set_threshold(*thresholds)
        await manager.shutdown()  # several processes: hands every room over at once
        if nudges is not None:
            await nudges.aclose()
        await thinker.aclose()  # after the rooms: none of them waits for a search now
        await app.state.doors.aclose()
        if cluster is not None:
            await cluster.close()
        await detach(app)

    docs = settings.api_docs  # the schema maps every door: only when asked for
    app = FastAPI(
        title="Card room",
        version="0.1.0",
        lifespan=lifespan,
        docs_url="/docs" if docs else None,
        redoc_url=None,
        openapi_url="/openapi.json" if docs else None,
    )
    app.state.settings = settings
    app.state.doors = Doors(settings)
    app.add_exception_handler(RedisError, _redis_away)
    app.state.socket_sessions = 0  # WebSockets opened, for _gc_housekeeping
    app.state.sockets_open = 0
    app.state.awake = asyncio.Event()  # a request or a socket came: housekeeping runs
    static_dir = app.state.static_dir = settings.static_dir or STATIC_DIR
    # the client's build id (app/api/client.py), told to every tab
    build = app.state.build = build_id(static_dir) if static_dir.is_dir() else None
    if build is not None:
        app.add_middleware(BuildHeader, build=build)
    # inside SecurityHeaders, so that a refusal carries the headers too
    app.add_middleware(SameOrigin, public_url=settings.public_url)
    app.add_middleware(SecurityHeaders, hsts=settings.secure_cookies)
    app.add_middleware(_SocketCounter, state=app.state)
    attach(app, records)  # records, and for a database also sessions and accounts
    app.state.readiness = ready_api.Readiness(
        getattr(app.state, "db_engine", None), cluster.redis if cluster is not None else None
    )
    app.state.rooms = manager

    @app.get("/api/health")
    async def health() -> dict[str, str | None]:
        # public_url: where invite links point (PUBLIC_URL), null when unset
        return {"status": "ok", "public_url": settings.public_url.rstrip("/") or None}

    @app.get("/api/games")
    async def games() -> list[dict[str, Any]]:
        return [_game_info(g) for g in GAMES.values()]

    serve_metrics(app, settings)  # METRICS=true only
    for router in ROUTERS:
        app.include_router(router)

    if build is not None:
        serve_client(app, static_dir, build)

    return app


app = create_app()
