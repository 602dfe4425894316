"""A real server, as `make run` serves it, whose whole log a test reads:
its own uvicorn process on a free port, SQLite migrated by Alembic, log
level info with the access log on (everything production would log)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from tests.services import free_port, uvicorn_command

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


class LoggedServer:
    """`env`: more settings, as environment variables.  `start` again after
    `stop` restarts it on the same data, its log going on in the same file."""

    def __init__(self, data: Path, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.data = data  # DATA_DIR: the SQLite database, the log
        self.log = data / "server.log"
        self.env = {**os.environ, "DATA_DIR": str(data), "PYTHONUNBUFFERED": "1", **(env or {})}
        self.env.pop("DATABASE_URL", None)
        self.env.pop("REDIS_URL", None)
        subprocess.run(
            [str(BIN / "alembic"), "upgrade", "head"], cwd=ROOT, env=self.env, check=True,
            capture_output=True,
        )  # fmt: skip
        self.start()

    def start(self) -> None:
        env = self.env
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                uvicorn_command("app.main:app", port=self.port, log_level="info"),
                cwd=ROOT,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                if httpx.get(f"{self.base}/api/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "server did not come up"
            time.sleep(0.1)

    @contextlib.contextmanager
    def socket(self, code: str, token: str) -> Iterator[ClientConnection]:
        with connect(f"ws://127.0.0.1:{self.port}/ws/rooms/{code}", max_size=2**22) as ws:
            ws.send(json.dumps({"auth": token}))
            yield ws

    def stop(self) -> str:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.log.read_text()


@pytest.fixture
def logged_server(tmp_path: Path) -> Iterator[LoggedServer]:
    s = LoggedServer(tmp_path)
    try:
        yield s
    finally:
        if s.proc.poll() is None:
            s.stop()
