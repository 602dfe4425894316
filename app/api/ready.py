"""Readiness: may the proxy send this process traffic?

Liveness (`/api/health`, app/main.py) answers from memory alone: a process
that answers it is alive, and restarting it would not help.  Readiness
(`/api/ready`) also asks the database and, with several processes, Redis,
each within READY_TIMEOUT, and says no from the moment the process is told to
stop (SIGTERM) while it hands its rooms over: a proxy checking it (Caddy's
active health check, Compose's healthcheck, deploy/) sends new players to
another replica instead.  A check that cannot finish in time counts as a
failure: a dependency that hangs is as unusable as one that refuses.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from redis.asyncio import Redis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.core import metrics

log = logging.getLogger(__name__)

#: seconds each dependency has to answer before it counts as away
READY_TIMEOUT = 2.0

router = APIRouter()

#: what a failed check counts as (app/core/metrics.py)
ERRORS = {"database": metrics.DATABASE_ERRORS, "redis": metrics.REDIS_ERRORS}


class Readiness:
    """What `/api/ready` checks, and whether the process is stopping."""

    def __init__(self, engine: AsyncEngine | None, redis: Redis | None) -> None:
        self.engine = engine
        self.redis = redis
        #: set at SIGTERM (or as the app's shutdown begins), until it starts again
        self.draining = False

    async def _database(self) -> None:
        if self.engine is not None:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))

    async def _redis(self) -> None:
        if self.redis is not None:
            await self.redis.ping()

    async def check(self) -> dict[str, str]:
        """Each dependency's state ("ok", "away" or "none"), and the whole's."""
        out: dict[str, str] = {}
        for name, probe, present in (
            ("database", self._database, self.engine is not None),
            ("redis", self._redis, self.redis is not None),
        ):
            if not present:
                out[name] = "none"
                continue
            try:
                async with asyncio.timeout(READY_TIMEOUT):
                    await probe()
                out[name] = "ok"
            except Exception as err:  # refused, reset, timed out: all mean away
                log.warning("readiness: %s away (%s)", name, type(err).__name__)
                ERRORS[name].inc()
                out[name] = "away"
        # read last: a check that was under way when SIGTERM came says so
        if self.draining:
            out["status"] = "draining"
        elif "away" in out.values():
            out["status"] = "unavailable"
        else:
            out["status"] = "ready"
        return out

    def watch_sigterm(self) -> Callable[[], None]:
        """Turn not-ready at SIGTERM, then let whoever handled it before (the
        server: uvicorn begins its graceful stop) do so.  Only the main
        thread may set a signal handler; elsewhere (an app run in a test's
        thread) the app's shutdown still sets `draining`.  Returns the undo.
        Called as the app starts, so an app started again (tests) is ready."""
        self.draining = False
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        before = signal.getsignal(signal.SIGTERM)

        def on_sigterm(sig: int, frame: FrameType | None) -> None:
            self.draining = True
            if callable(before):
                before(sig, frame)
            elif before == signal.SIG_DFL:  # what SIGTERM would have done
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.raise_signal(signal.SIGTERM)

        def undo() -> None:
            signal.signal(signal.SIGTERM, before)

        signal.signal(signal.SIGTERM, on_sigterm)
        return undo


@router.get("/api/ready")
async def ready(request: Request) -> JSONResponse:
    """200 when this process can serve a room now; 503 (with what is away,
    or "draining") when the proxy should send its traffic elsewhere."""
    readiness: Any = request.app.state.readiness
    body = await readiness.check()
    return JSONResponse(body, status_code=200 if body["status"] == "ready" else 503)
