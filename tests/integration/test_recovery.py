"""A server killed mid-game loses nothing anyone saw acknowledged.

The real thing, end to end: `alembic upgrade head` on a fresh SQLite file, the
app under uvicorn as its own process, three browsers' worth of WebSockets
playing Posso, then SIGKILL (no shutdown hook runs), a new process on the same
database, the same tokens, and the game played on to its end from exactly the
position it had.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from app.bots.posso import PossoBot
from tests.services import OPEN_DOORS_ENV, free_port, uvicorn_command

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


class Server:
    def __init__(self, env: dict[str, str], port: int) -> None:
        self.env, self.port = {**OPEN_DOORS_ENV, **env}, port
        self.proc: subprocess.Popen[bytes] | None = None
        self.base = f"http://127.0.0.1:{port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            uvicorn_command("app.main:app", port=self.port),
            cwd=ROOT,
            env=self.env,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.base}/api/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.proc.poll() is None, "server exited on start"
            time.sleep(0.1)
        raise AssertionError("server did not come up")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Player:
    """One browser tab: a socket, its latest view, and the acks it got."""

    def __init__(self, server: Server, code: str, token: str) -> None:
        url = f"ws://127.0.0.1:{server.port}/ws/rooms/{code}"
        # not a context manager: each tab is closed by the test (legacy=True: websockets'
        # documented way to connect directly)
        self.ws: ClientConnection = connect(url, max_size=2**22, legacy=True)
        self.ws.send(json.dumps({"auth": token}))
        self.view: dict[str, Any] | None = None
        self.v = -1
        self.replies: dict[Any, dict[str, Any]] = {}
        self.next_id = 0

    def pump(self, wait: float = 0.0) -> None:
        """Read whatever has arrived (waiting up to `wait` for the first frame)."""
        timeout = wait
        while True:
            try:
                msg = json.loads(self.ws.recv(timeout=timeout))
            except TimeoutError:
                return
            timeout = 0.0
            if "view" in msg:
                self.view, self.v = msg["view"], msg["v"]
            if "re" in msg:
                self.replies[msg["re"]] = msg

    def send(self, body: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        self.ws.send(json.dumps({"id": rid, **body}))
        deadline = time.monotonic() + 20
        while rid not in self.replies:
            assert time.monotonic() < deadline, f"no reply to {body}"
            self.pump(wait=0.5)
        return self.replies.pop(rid)

    def game(self) -> dict[str, Any]:
        assert self.view is not None
        return dict(self.view["game"] or {})


def settle(players: list[Player]) -> None:
    """Let timers and bots run until every tab holds the same, latest version."""
    for attempt in range(400):
        for p in players:
            p.pump(wait=0.0 if attempt == 0 else 0.02)
        if len({p.v for p in players}) == 1:
            return
    raise AssertionError("tabs did not converge on one version")


#: (seat, version, action, error) for each action the server refused: when the
#: game fails to finish, the last few say why it stalled
REFUSED: list[Any] = []


def step(players: list[Player], bot: PossoBot, rng: random.Random) -> bool:
    """One action by a seat that must act; False once the game is over."""
    settle(players)
    for p in players:
        assert p.view is not None
        if p.game().get("over"):
            return False
        legal = p.view.get("legal")
        if legal:
            action = bot.choose(p.game(), legal, p.view["you"]["seat"], rng)
            reply = p.send({"action": action})
            # a timer may have moved the game on since the view we chose from;
            # what must never happen is a refusal for the room's own reasons
            assert "ok" in reply or reply["error"]["code"] != "storage_error", reply
            if "ok" not in reply:
                REFUSED.append((p.view["you"]["seat"], p.v, action, reply["error"]))
            return True
    time.sleep(0.05)  # only a timer to wait for
    return True


def without_clock(view: dict[str, Any]) -> dict[str, Any]:
    """The parts of a view that must survive a restart exactly (timers restart)."""
    game = dict(view["game"])
    return {"game": game, "you": view["you"]}


@pytest.mark.slow
def test_sigkill_mid_game_then_finish_from_the_same_position(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cardroom.db'}",
        "DATA_DIR": str(tmp_path),
        "MAX_MESSAGES_PER_SECOND": "1000",  # these players move faster than people
    }
    subprocess.run([str(BIN / "alembic"), "upgrade", "head"], cwd=ROOT, env=env, check=True)
    server = Server(env, free_port())
    server.start()
    try:
        settings = {"posso_window": 0, "posso_answer": 1, "cut": 1, "bot_delay": 0}
        options = {"start_hand": 9, "cutting": "off"}
        r = httpx.post(
            f"{server.base}/api/rooms",
            json={"game": "posso", "options": options, "name": "Ann", "settings": settings},
        )
        assert r.status_code == 200, r.text
        code = r.json()["code"]
        tokens = [r.json()["token"]]
        for name in ("Bob", "Cy"):
            j = httpx.post(f"{server.base}/api/rooms/{code}/join", json={"name": name})
            assert j.status_code == 200, j.text
            tokens.append(j.json()["token"])
        players = [Player(server, code, t) for t in tokens]
        for p in players:
            p.pump(wait=1)
        assert "ok" in players[0].send({"cmd": {"type": "start"}})

        bot, rng = PossoBot(), random.Random(5)
        for _ in range(25):
            step(players, bot, rng)
        # snapshot only where the game waits on a person: a pending room timer
        # (a Posso window) may fire - and be stored - between snapshot and kill
        for _ in range(200):
            settle(players)
            if all(p.view is not None and p.view["timer"] is None for p in players):
                break
            step(players, bot, rng)
        else:
            raise AssertionError("the game never waited on a person alone")
        before = {p.view["you"]["seat"]: without_clock(p.view) for p in players}  # type: ignore[index]
        hands = {s: sorted(v["game"]["hand"]) for s, v in before.items()}
        assert all(hands.values())

        server.kill()
        for p in players:
            p.ws.close()
        server.start()

        players = [Player(server, code, t) for t in tokens]
        for p in players:  # the room is rebuilt as the first socket asks for it
            deadline = time.monotonic() + 15
            while p.view is None and time.monotonic() < deadline:
                p.pump(wait=1)
        after = {p.view["you"]["seat"]: without_clock(p.view) for p in players}  # type: ignore[index]
        assert {s: sorted(v["game"]["hand"]) for s, v in after.items()} == hands
        assert after == before, "the recovered game differs from the one acknowledged"

        steps = 0
        while steps < 5_000 and step(players, bot, rng):
            steps += 1
        settle(players)
        final = players[0].game()
        # on failure, say where the game stood: whose turn, what phase, which timer
        where = [
            (p.view["you"], p.game().get("phase"), p.view["timer"], bool(p.view["legal"]))
            for p in players
            if p.view is not None
        ]
        assert final["over"] and final["result"] is not None, (steps, where, REFUSED[-3:])
        assert len(final["sheet"]) >= 2  # hands 9 and 10 both on the sheet
        for p in players:
            p.ws.close()
    finally:
        server.stop()
