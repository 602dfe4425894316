"""Readiness follows the database and Redis, and turns not-ready at SIGTERM.

A real server on PostgreSQL and Redis, each reached through a TCP proxy the
test owns (tests/proxy.py): cutting or pausing the proxy takes the service
away from this server alone, and the shared services never stop.  Liveness
(`/api/health`) stays up throughout: the process is alive, only not useful.
Each failed check counts as a database or Redis error in the metrics.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from app.api.ready import READY_TIMEOUT
from tests.db.backends import fresh_pg_database
from tests.integration.test_cluster import private_redis
from tests.integration.test_recovery import Server
from tests.proxy import TcpProxy, tcp_proxy
from tests.services import free_port

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.timeout(120)]

TOKEN = "ready-metrics-" + "r" * 30


def _ready(server: Server) -> tuple[int, dict[str, Any]]:
    r = httpx.get(f"{server.base}/api/ready", timeout=READY_TIMEOUT * 3)
    return r.status_code, r.json()


def _until(server: Server, want: int, seconds: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        status, body = _ready(server)
        if status == want:
            return body
        assert time.monotonic() < deadline, f"still {status} {body}, not {want}"
        time.sleep(0.2)


def _errors(server: Server, name: str) -> float:
    """The server's `cardroom_<name>_errors_total` (app/core/metrics.py)."""
    r = httpx.get(f"{server.base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    found = re.search(rf"^cardroom_{name}_errors_total (\S+)$", r.text, re.M)
    assert found, r.text
    return float(found[1])


@pytest.fixture
def proxied() -> Iterator[tuple[Server, TcpProxy, TcpProxy]]:
    """A server whose PostgreSQL and Redis are each behind a proxy of the test's."""
    with (
        fresh_pg_database() as url,
        private_redis() as redis,
        tcp_proxy("127.0.0.1", make_url(url).port or 5432) as pg,
        tcp_proxy("127.0.0.1", redis.port) as rd,
    ):
        through = make_url(url).set(port=pg.port).render_as_string(hide_password=False)
        env = {
            **os.environ,
            "DATABASE_URL": through,
            "REDIS_URL": f"redis://127.0.0.1:{rd.port}/0",
            "METRICS": "true",
            "METRICS_TOKEN": TOKEN,
        }
        server = Server(env, free_port())
        server.start()
        try:
            yield server, pg, rd
        finally:
            server.stop()


def test_ready_follows_the_database_and_redis(
    proxied: tuple[Server, TcpProxy, TcpProxy],
) -> None:
    server, pg, rd = proxied
    assert _until(server, 200) == {"database": "ok", "redis": "ok", "status": "ready"}
    for proxy, name in ((pg, "database"), (rd, "redis")):
        for away in (proxy.cut, proxy.pause):  # down, then hanging
            errors = _errors(server, name)
            away()
            started = time.monotonic()
            status, body = _ready(server)
            took = time.monotonic() - started
            assert (status, body[name], body["status"]) == (503, "away", "unavailable"), body
            assert took < READY_TIMEOUT * 2 + 1, f"{away.__name__}: answered after {took:.1f} s"
            assert _errors(server, name) > errors, "the failed check is not counted"
            # alive all along: nothing to restart
            assert httpx.get(f"{server.base}/api/health", timeout=2).status_code == 200
            proxy.resume()
            assert _until(server, 200)["status"] == "ready"


def test_ready_says_draining_from_sigterm_on(
    proxied: tuple[Server, TcpProxy, TcpProxy],
) -> None:
    """uvicorn stops accepting at SIGTERM; a readiness check already under
    way (here held up by a paused database) must not then answer "ready"."""
    server, pg, _ = proxied
    _until(server, 200)
    pg.pause()
    got: dict[str, Any] = {}

    def ask() -> None:
        got["status"], got["body"] = _ready(server)

    asking = threading.Thread(target=ask)
    asking.start()
    time.sleep(0.5)  # the check waits on the database
    assert server.proc is not None
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    pg.resume()  # the database answers: only the stop makes it not ready
    asking.join(READY_TIMEOUT * 3)
    assert got["status"] == 503
    assert got["body"] == {"database": "ok", "redis": "ok", "status": "draining"}
    # and the stop goes on: uvicorn ends by re-raising the SIGTERM it caught
    assert server.proc.wait(30) == -signal.SIGTERM
