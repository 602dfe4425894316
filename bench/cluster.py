"""Several card room processes for bench/load.py: one PostgreSQL database of
their own, one private redis-server, N uvicorn processes; and the failover
measurement (kill -9 of a room's owner, time to its players' next view).

    .venv/bin/python bench/load.py --servers owner,spread --modes paced --rooms 1000
    .venv/bin/python bench/load.py --failover 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench import callgrind as callgrind_run

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
ADMIN_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
LEASE = os.environ.get("BENCH_LEASE_SECONDS", "3")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], what: str, within: float = 60) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited on start")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start")


async def _admin(sql: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    url = make_url(ADMIN_URL)
    conn = await asyncpg.connect(
        host=url.host, port=url.port or 5432, user=url.username, database=url.database
    )
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


class Cluster:
    """The running processes, which a failover run kills and starts again."""

    def __init__(self, n: int, callgrind: Path | None = None) -> None:
        """`callgrind`: run each process under valgrind's callgrind, its
        counts written to `<callgrind>.<pid>` (bench/load.py `--callgrind`)."""
        from sqlalchemy.engine import make_url

        self.callgrind = callgrind

        self.db = f"cardroom_bench_{secrets.token_hex(4)}"
        asyncio.run(_admin(f'CREATE DATABASE "{self.db}"'))
        self.url = make_url(ADMIN_URL).set(database=self.db).render_as_string(hide_password=False)
        self.redis_port = _free_port()
        self.redis = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.redis_port),
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        _wait_port(self.redis_port, self.redis, "redis-server")
        self.env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "DATABASE_URL": self.url,
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            # under valgrind a process runs some fifty times slower: a lease
            # made for full speed would lapse between renewals
            "LEASE_SECONDS": "60" if callgrind is not None else LEASE,
            # and a socket's first message, read late, would miss its deadline
            "AUTH_TIMEOUT": "120" if callgrind is not None else "10",
            "MAX_MESSAGES_PER_SECOND": "100000",
            # every bench client comes from 127.0.0.1
            "ROOMS_PER_HOUR": "1000000",
            "JOINS_PER_MINUTE": "1000000",
            "LOOKUPS_PER_MINUTE": "1000000",
            "MAX_SOCKETS_PER_ADDRESS": "1000000",
        }
        self.procs: list[subprocess.Popen[bytes]] = []
        try:
            done = subprocess.run(
                [PYTHON, "-m", "alembic", "upgrade", "head"],
                cwd=ROOT, env=self.env, capture_output=True, text=True,
            )  # fmt: skip
            if done.returncode != 0:
                raise RuntimeError(f"alembic upgrade failed: {done.stderr[-2000:]}")
            self.ports = [_free_port() for _ in range(n)]
            for port in self.ports:
                self.procs.append(self._start(port))
        except BaseException:
            self.stop()  # what was started, and the database
            raise

    def _start(self, port: int) -> subprocess.Popen[bytes]:
        cmd = [
            PYTHON, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1",
            "--port", str(port), "--ws", "websockets-sansio",
            "--ws-per-message-deflate", "false", "--log-level", "error",
            "--no-access-log", "--backlog", "4096",
        ]  # fmt: skip
        if self.callgrind is not None:
            cmd = callgrind_run.wrap(cmd, self.callgrind)
        proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env)
        _wait_port(port, proc, "a card room process", 600 if self.callgrind else 60)
        return proc

    def kill(self, i: int) -> None:
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait()

    def restart(self, i: int) -> None:
        self.procs[i] = self._start(self.ports[i])

    def stop(self) -> None:
        for p in [*self.procs, self.redis]:
            if p.poll() is None:
                p.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(10)
            if p.poll() is None:
                p.kill()
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)'))


@contextlib.contextmanager
def cluster_servers(
    n: int, callgrind: Path | None = None
) -> Iterator[tuple[list[subprocess.Popen[bytes]], list[int]]]:
    c = Cluster(n, callgrind)
    try:
        yield c.procs, c.ports
    finally:
        c.stop()


class _Players:
    """Four players' sockets on one process, reconnecting when one closes."""

    def __init__(self, url: str, tickets: list[dict[str, Any]]) -> None:
        from websockets.sync.client import connect

        self.connect = connect
        self.url = url
        self.tickets = tickets
        self.socks = [self._open(t) for t in tickets]
        self.views: list[dict[str, Any] | None] = [None] * len(tickets)
        #: sockets opened again since `fresh` was last cleared (after a kill)
        self.fresh: set[int] = set()

    def pump(self, i: int, wait: float = 0.01) -> bool:
        """Read socket i; True if a view came."""
        got = False
        try:
            while True:
                msg = orjson.loads(self.socks[i].recv(timeout=wait))
                wait = 0
                if "view" in msg:
                    self.views[i], got = msg["view"], True
        except TimeoutError:
            return got
        except Exception:  # closed: the room is moving; come back
            self.socks[i] = self._open(self.tickets[i])
            self.fresh.add(i)
            return got

    def _open(self, ticket: dict[str, Any]) -> Any:
        sock = self.connect(self.url)
        sock.send(orjson.dumps({"auth": ticket["token"], "batch": False}).decode())
        return sock


def failover_main(args: argparse.Namespace) -> None:
    """One Big Two room, owned by one process, its four players' sockets on
    the other; kill -9 the owner while they play; the failover time is from
    the kill to the first view a player gets afterwards (from the process
    that took the room over).  The killed process comes back, and the next
    round kills the new owner."""
    c = Cluster(2)
    times: list[float] = []
    try:
        base = f"http://127.0.0.1:{c.ports[0]}"
        made = httpx.post(
            f"{base}/api/rooms",
            json={"game": "bigtwo", "name": "Ann", "settings": {"bot_delay": 0}},
        ).json()
        code = made["code"]
        tickets = [made] + [
            httpx.post(f"{base}/api/rooms/{code}/join", json={"name": n}).json()
            for n in ("Bob", "Cy", "Di")
        ]
        owner = 0
        for k in range(args.failover):
            other = 1 - owner
            table = _Players(f"ws://127.0.0.1:{c.ports[other]}/ws/rooms/{code}", tickets)
            socks, views, pump = table.socks, table.views, table.pump

            ready_by = time.perf_counter() + 30
            for i in range(4):
                while views[i] is None:
                    if time.perf_counter() > ready_by:
                        raise RuntimeError(f"round {k + 1}: player {i} got no view in 30 s")
                    pump(i, 0.5)
            host = views[0]
            assert host is not None
            if host["room"]["status"] != "playing":
                kind = "start" if host["room"]["status"] == "lobby" else "rematch"
                socks[0].send(orjson.dumps({"id": 1, "cmd": {"type": kind}}).decode())
            played, rematched = 0, -1
            while played < 8:  # a few moves through the relay first
                host = views[0]
                if host and host["room"]["status"] == "finished" and rematched != played:
                    rematched = played  # the game ended: the next one, then
                    socks[0].send(orjson.dumps({"id": 3, "cmd": {"type": "rematch"}}).decode())
                for i in range(4):
                    view = views[i]
                    if view and view.get("legal"):
                        views[i] = None
                        socks[i].send(orjson.dumps({"id": 2, "action": view["legal"][0]}).decode())
                        played += 1
                    pump(i)
            for i in range(4):
                pump(i)
            t0 = time.perf_counter()
            c.kill(owner)
            table.fresh.clear()
            done = False
            while not done:
                for i in range(4):
                    # a view from before the kill may still be on its way: only
                    # one on a socket opened since counts
                    if pump(i) and i in table.fresh:
                        times.append(time.perf_counter() - t0)
                        done = True
                        break
                if time.perf_counter() - t0 > 60:
                    raise RuntimeError("no view within a minute of the kill")
            print(f"  kill {k + 1}: next view after {times[-1]:.2f} s", flush=True)
            for s in socks:
                with contextlib.suppress(Exception):
                    s.close()
            c.restart(owner)
            owner = other
    finally:
        c.stop()
    xs = sorted(times)
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
    print(
        f"failover over {len(xs)} kills (lease {LEASE} s): p50 {statistics.median(xs):.2f} s, "
        f"p99 {p99:.2f} s, max {xs[-1]:.2f} s (target: lease + 2 s)"
    )
