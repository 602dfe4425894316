"""Outside services the suite may need, and what to do when one is missing:
on a laptop skip with the reason; with CI=true fail, so CI can never go green
by quietly testing less."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.config import WS_MAX_SIZE

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
POSTGRES_URL = os.environ.get(
    "TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


#: a test server's environment with the per-address limits lifted: every test
#: client comes from 127.0.0.1, far faster than people (tests/api/test_doors.py
#: tests the limits themselves)
OPEN_DOORS_ENV = {
    "ROOMS_PER_HOUR": "100000",
    "JOINS_PER_MINUTE": "100000",
    "SIGNINS_PER_MINUTE": "100000",
    "LOOKUPS_PER_MINUTE": "100000",
    "REPLAYS_PER_MINUTE": "100000",
    "MAX_SOCKETS_PER_ADDRESS": "10000",
}


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def missing(reason: str) -> None:
    """Skip (laptop) or fail (CI) a test whose service is not there."""
    if IN_CI:
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def require_postgres() -> str:
    if not _port_open("127.0.0.1", 5432):
        missing("PostgreSQL is not listening on 127.0.0.1:5432")
    return POSTGRES_URL


def require_redis() -> str:
    if not _port_open("127.0.0.1", 6379):
        missing("Redis is not listening on 127.0.0.1:6379")
    return REDIS_URL


def require_chromium() -> str:
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        missing(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    return CHROMIUM if os.path.exists(CHROMIUM) else str(shutil.which("chromium"))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on just now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def uvicorn_command(*app: str, port: int, log_level: str = "warning") -> list[str]:
    """uvicorn serving `app` (its target, then any options such as --app-dir)
    on 127.0.0.1:`port` the way `make run` serves it: the same WebSocket
    implementation, frame limit and no permessage-deflate; warnings only
    unless `log_level` says otherwise."""
    return [
        sys.executable, "-m", "uvicorn", *app,
        "--host", "127.0.0.1", "--port", str(port),
        "--ws", "websockets-sansio", "--ws-per-message-deflate", "false",
        "--ws-max-size", str(WS_MAX_SIZE),
        "--log-level", log_level,
    ]  # fmt: skip


@contextlib.contextmanager
def serving(app: Any, **options: Any) -> Iterator[str]:
    """`app` on a real uvicorn in a thread of this process, served as
    `uvicorn_command` serves it (plus `options`): its "127.0.0.1:port"."""
    import uvicorn

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=free_port(),
        ws="websockets-sansio",
        ws_per_message_deflate=False,
        ws_max_size=WS_MAX_SIZE,
        log_level="warning",
        **options,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            assert thread.is_alive(), "uvicorn stopped while starting"
            time.sleep(0.02)
        yield f"127.0.0.1:{config.port}"
    finally:
        server.should_exit = True
        thread.join(10)
